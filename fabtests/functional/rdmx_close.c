/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_close: an endpoint that closes in order is seen by its peer at
 * once (rdmx only: it watches the peer through rdmx_peer_ops).
 *
 * The client sends the server RC_SMALL small messages, each completing
 * once the server took it (FI_DELIVERY_COMPLETE), then RC_PENDING long
 * messages the server never receives (their sends wait for the server's
 * clear to send), then GO. The server takes the small messages and GO,
 * prints its CLOCK_MONOTONIC time (closing_ns=N) and calls fi_close on
 * its endpoint, and prints how long that took (close_us=N).
 *
 * The client then needs, within --within-ms of that time (the script
 * compares the two clocks, which are the same clock on one host): GO
 * completed without an error, every pending send failed with
 * FI_ECONNRESET, and the rdmx_peer_ops callback reported
 * FI_RDMX_PEER_CLOSED with FI_ECONNRESET. It prints seen_ns=N, the time
 * of the first of these. A new send to the server posted after that must
 * fail with FI_ECONNRESET too, within --within-ms of its posting
 * (new_send_ms=N), and query must say CLOSED.
 *
 * With --again (and a second server started by the script on the same
 * port once the client printed "waits for SIGUSR1"), the client removes
 * the server's address from its AV and inserts it again: the same
 * exchange must then reach the new server (a new session), whose close
 * is seen in turn.
 *
 *   server: rdmx_close -r [-b addr] -p port [-t timeout_s]
 *   client: rdmx_close -p port [--within-ms ms] [--again] [-t timeout_s] host
 *
 * Exit status: 0 with a last line "rdmx_close: PASS ...", 1 on failure,
 * 2 on bad options.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fi_ext_rdmx.h>
#include <rdma/fi_tagged.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define RC_NAME		"rdmx_close"
#define RC_VERSION	FI_VERSION(1, 17)
#define RC_SMALL	100
#define RC_SMALL_LEN	512
#define RC_PENDING	8
#define RC_LONG		(1 << 20)
#define RC_TAG_SMALL	1ULL
#define RC_TAG_PENDING	2ULL
#define RC_TAG_GO	3ULL

const char *const ft_prog = RC_NAME;

struct rc_opts {
	bool		server;
	bool		again;
	const char	*bind_addr;
	const char	*port;
	const char	*host;
	uint64_t	within_ms;
	int		timeout_s;
};

/* What the rdmx_peer_ops callback saw of the server. */
struct rc_peer {
	int		closed;
	int		other;		/* any other change after CONNECTED */
	int		err;
	uint64_t	closed_ns;
};

static volatile sig_atomic_t rc_signals;

static void rc_on_usr1(int sig)
{
	(void) sig;
	rc_signals++;
}

static void rc_on_peer(struct fid_ep *ep, fi_addr_t addr, enum fi_rdmx_peer_state state,
		       int err, void *arg)
{
	struct rc_peer *peer = arg;

	(void) ep; (void) addr;
	if (state == FI_RDMX_PEER_CLOSED) {
		peer->closed++;
		peer->err = err;
		peer->closed_ns = ft_now_ns();
	} else if (state != FI_RDMX_PEER_CONNECTED) {
		peer->other++;
	}
}

/*
 * Reads one completion or error entry before the deadline: 1 with *e (or
 * *err, *is_err set), 0 when none yet, or an error.
 */
static int rc_read(struct ft_rdm *rdm, struct fi_cq_tagged_entry *e,
		   struct fi_cq_err_entry *err, bool *is_err, uint64_t deadline,
		   const char *what)
{
	char text[256];
	ssize_t ret = fi_cq_read(rdm->cq, e, 1);

	*is_err = false;
	if (ret == 1)
		return 1;
	if (ret == -FI_EAVAIL) {
		if (ft_cq_readerr(rdm->cq, err, text, sizeof(text)))
			return -FI_EIO;
		*is_err = true;
		return 1;
	}
	if (ret != -FI_EAGAIN)
		return ft_err("fi_cq_read", ret);
	return ft_now_ns() > deadline ? ft_fail("timed out waiting for %s", what) : 0;
}

/* Posts a tagged send, progressing while it gets -FI_EAGAIN. */
static int rc_send(struct ft_rdm *rdm, const void *buf, size_t len, fi_addr_t dest,
		   uint64_t tag, struct fi_context *ctx)
{
	ssize_t ret;

	while ((ret = fi_tsend(rdm->ep, buf, len, NULL, dest, tag, ctx)) == -FI_EAGAIN)
		(void) fi_cq_read(rdm->cq, NULL, 0);
	return ret ? ft_err("fi_tsend", ret) : 0;
}

/* ---------------------------------------------------------------------
 * Server
 * ------------------------------------------------------------------- */

/* Takes the small messages and GO; then closes and says when. */
static int rc_server(struct ft_rdm *rdm, const struct rc_opts *o, int *status)
{
	static uint8_t bufs[RC_SMALL + 1][RC_SMALL_LEN];
	static struct fi_context ctx[RC_SMALL + 1];
	uint64_t deadline = ft_deadline_ns(o->timeout_s), t0;
	int got = 0, ret;

	ret = ft_rdm_print_listening(rdm, "pid %d", (int) getpid());
	for (int i = 0; !ret && i <= RC_SMALL; i++) {
		ret = (int) fi_trecv(rdm->ep, bufs[i], RC_SMALL_LEN, NULL, FI_ADDR_UNSPEC,
				     i < RC_SMALL ? RC_TAG_SMALL : RC_TAG_GO, 0, &ctx[i]);
		if (ret)
			ft_err("fi_trecv", ret);
	}
	while (!ret && got <= RC_SMALL) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		bool is_err;

		ret = rc_read(rdm, &e, &err, &is_err, deadline, "the client's messages");
		if (ret == 1 && is_err)
			return ft_fail("error completion on the server");
		if (ret == 1) {
			got++;
			ret = 0;
		}
	}
	if (ret)
		return ret;
	t0 = ft_now_ns();
	printf(RC_NAME ": server took %d messages and GO; closing (closing_ns=%" PRIu64 ")\n",
	       RC_SMALL, t0);
	ft_rdm_close_ep(rdm, status);
	rdm->ep = NULL;
	printf(RC_NAME ": fi_close of the endpoint took close_us=%" PRIu64 "\n",
	       (ft_now_ns() - t0) / 1000);
	if (!*status)
		printf(RC_NAME ": PASS server\n");
	return 0;
}

/* ---------------------------------------------------------------------
 * Client
 * ------------------------------------------------------------------- */

struct rc_client {
	struct ft_rdm		*rdm;
	const struct rc_opts	*o;
	fi_addr_t		dest;
	struct fi_rdmx_peer_ops	*ops;
	struct rc_peer		peer;
	uint8_t			*small, *lng;
	struct fi_context	small_ctx[RC_SMALL], pend_ctx[RC_PENDING];
	struct fi_context	go_ctx, new_ctx;
};

static int rc_check_state(struct rc_client *c, enum fi_rdmx_peer_state want)
{
	struct fi_rdmx_peer_attr attr;
	int ret = c->ops->query(c->rdm->ep, c->dest, &attr);

	if (ret)
		return ft_err("rdmx_peer_ops query", ret);
	if (attr.state != want)
		return ft_fail("the server is in state %d, not %d", attr.state, want);
	if (want == FI_RDMX_PEER_CONNECTED && !(attr.features & FI_RDMX_PEER_FEAT_CLOSE))
		return ft_fail("the server does not announce FI_RDMX_PEER_FEAT_CLOSE");
	return 0;
}

/* The small messages, each completing once the server took it. */
static int rc_client_small(struct rc_client *c)
{
	uint64_t deadline = ft_deadline_ns(c->o->timeout_s);
	int done = 0, ret = 0;

	for (int i = 0; !ret && i < RC_SMALL; i++)
		ret = rc_send(c->rdm, c->small, RC_SMALL_LEN, c->dest, RC_TAG_SMALL,
			      &c->small_ctx[i]);
	while (!ret && done < RC_SMALL) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		bool is_err;

		ret = rc_read(c->rdm, &e, &err, &is_err, deadline, "the small sends");
		if (ret == 1 && is_err)
			return ft_fail("a small send failed: %s", fi_strerror(err.err));
		if (ret == 1) {
			done++;
			ret = 0;
		}
	}
	return ret ? ret : rc_check_state(c, FI_RDMX_PEER_CONNECTED);
}

/*
 * The pending long sends, then GO: waits until GO completed and every
 * pending send failed with FI_ECONNRESET; *seen_ns: the first sign.
 */
static int rc_client_close_seen(struct rc_client *c, uint64_t *seen_ns)
{
	uint64_t deadline = ft_deadline_ns(c->o->timeout_s);
	int reset = 0, go = 0, ret = 0;

	*seen_ns = 0;
	for (int i = 0; !ret && i < RC_PENDING; i++)
		ret = rc_send(c->rdm, c->lng, RC_LONG, c->dest, RC_TAG_PENDING, &c->pend_ctx[i]);
	if (!ret)
		ret = rc_send(c->rdm, c->small, RC_SMALL_LEN, c->dest, RC_TAG_GO, &c->go_ctx);
	while (!ret && (reset < RC_PENDING || !go || !c->peer.closed)) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err;
		bool is_err;

		ret = rc_read(c->rdm, &e, &err, &is_err, deadline,
			      "the server's close to be seen");
		if (ret != 1)
			continue;
		ret = 0;
		if (!is_err && e.op_context == &c->go_ctx) {
			go = 1;
		} else if (is_err && err.op_context != &c->go_ctx &&
			   err.err == FI_ECONNRESET) {
			if (!*seen_ns)
				*seen_ns = ft_now_ns();
			reset++;
		} else {
			ret = ft_fail("unexpected %s completion (%s)", is_err ? "error" : "a",
				      is_err ? fi_strerror(err.err) : "success");
		}
	}
	if (ret)
		return ret;
	if (c->peer.closed != 1 || c->peer.err != FI_ECONNRESET || c->peer.other)
		return ft_fail("the callback saw %d CLOSED (err %d) and %d other changes",
			       c->peer.closed, c->peer.err, c->peer.other);
	if (c->peer.closed_ns < *seen_ns)
		*seen_ns = c->peer.closed_ns;
	return rc_check_state(c, FI_RDMX_PEER_CLOSED);
}

/* A send posted after the close fails with FI_ECONNRESET in time. */
static int rc_client_new_send(struct rc_client *c)
{
	uint64_t t0 = ft_now_ns(), deadline = ft_deadline_ns(c->o->timeout_s), ms;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	bool is_err;
	int ret = rc_send(c->rdm, c->small, RC_SMALL_LEN, c->dest, RC_TAG_SMALL, &c->new_ctx);

	while (!ret)
		ret = rc_read(c->rdm, &e, &err, &is_err, deadline, "the new send");
	if (ret < 0)
		return ret;
	if (!is_err || err.err != FI_ECONNRESET || err.op_context != &c->new_ctx)
		return ft_fail("the new send: %s, want FI_ECONNRESET",
			       is_err ? fi_strerror(err.err) : "success");
	ms = (ft_now_ns() - t0) / 1000000;
	printf(RC_NAME ": a send posted after the close failed with FI_ECONNRESET "
	       "(new_send_ms=%" PRIu64 ")\n", ms);
	if (ms > c->o->within_ms)
		return ft_fail("later than %" PRIu64 " ms", c->o->within_ms);
	return rc_check_state(c, FI_RDMX_PEER_CLOSED);
}

/* --again: a new server on the port is a new session once re-inserted. */
static int rc_client_again(struct rc_client *c, const struct fi_info *info)
{
	uint64_t deadline = ft_deadline_ns(c->o->timeout_s), seen_ns;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	bool is_err;
	int ret = 0;

	printf(RC_NAME ": pid %d waits for SIGUSR1: a new server\n", (int) getpid());
	while (!rc_signals && !ret)
		ret = rc_read(c->rdm, &e, &err, &is_err, deadline, "SIGUSR1") == 1 ?
		      ft_fail("a completion while waiting") : 0;
	if (!ret && fi_av_remove(c->rdm->av, &c->dest, 1, 0))
		ret = ft_fail("fi_av_remove failed");
	if (!ret)
		ret = ft_rdm_insert(c->rdm, info->dest_addr, &c->dest, "the server again");
	c->peer.closed = 0;
	if (!ret)
		ret = rc_client_small(c);
	if (!ret)
		ret = rc_client_close_seen(c, &seen_ns);
	if (!ret)
		printf(RC_NAME ": the new server at the same address took %d messages "
		       "and GO, and its close was seen too\n", RC_SMALL);
	return ret;
}

static int rc_client(struct ft_rdm *rdm, const struct fi_info *info, const struct rc_opts *o)
{
	static struct rc_client c;
	uint64_t seen_ns = 0;
	int ret;

	c.rdm = rdm;
	c.o = o;
	c.small = malloc(RC_SMALL_LEN);
	c.lng = malloc(RC_LONG);
	if (!c.small || !c.lng) {
		ret = -FI_ENOMEM;
		goto out;
	}
	ft_pattern_fill(c.small, RC_SMALL_LEN, 1);
	ft_pattern_fill(c.lng, RC_LONG, 2);
	ret = fi_open_ops(&rdm->domain->fid, FI_RDMX_PEER_OPS, 0, (void **) &c.ops, NULL);
	if (!ret)
		ret = c.ops->set_callback(rdm->ep, rc_on_peer, &c.peer);
	if (ret) {
		ft_err("rdmx_peer_ops", ret);
		goto out;
	}
	ret = ft_rdm_insert(rdm, info->dest_addr, &c.dest, "the server's address");
	if (!ret)
		ret = rc_client_small(&c);
	if (!ret)
		ret = rc_client_close_seen(&c, &seen_ns);
	if (!ret)
		printf(RC_NAME ": GO delivered, %d pending sends failed with FI_ECONNRESET, "
		       "peer CLOSED (seen_ns=%" PRIu64 ")\n", RC_PENDING, seen_ns);
	if (!ret)
		ret = rc_client_new_send(&c);
	if (!ret && o->again)
		ret = rc_client_again(&c, info);
	if (!ret)
		printf(RC_NAME ": PASS client\n");
out:
	free(c.small);
	free(c.lng);
	return ret;
}

static int rc_parse(int argc, char **argv, struct rc_opts *o)
{
	static const struct option longs[] = {
		{ "within-ms", required_argument, NULL, 'W' },
		{ "again", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct rc_opts) { .within_ms = 100, .timeout_s = 30 };
	while (!ret && (c = getopt_long(argc, argv, "rb:p:t:", longs, NULL)) != -1) {
		if (c == 'r')
			o->server = true;
		else if (c == 'b')
			o->bind_addr = optarg;
		else if (c == 'p')
			o->port = optarg;
		else if (c == 'W')
			ret = ft_parse_num(optarg, 1, 3600000, &o->within_ms);
		else if (c == 'A')
			o->again = true;
		else if (c == 't')
			ret = ft_parse_timeout(optarg, &o->timeout_s);
		else
			ret = -1;
	}
	if (ret || ft_parse_host(argc, argv, &o->host) || !o->port ||
	    !o->server == !o->host || (o->again && o->server))
		return -1;
	return 0;
}

/* The side o asks for (ft_rdm_run_fn). */
static int rc_run(struct ft_rdm *rdm, const struct fi_info *info, const void *arg,
		  int *status)
{
	const struct rc_opts *o = arg;

	return o->server ? rc_server(rdm, o, status) : rc_client(rdm, info, o);
}

int main(int argc, char **argv)
{
	struct rc_opts o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rc_parse(argc, argv, &o)) {
		fprintf(stderr, "usage: " RC_NAME " -r [-b addr] -p port [-t s]\n"
			"       " RC_NAME " -p port [--within-ms ms] [--again] [-t s] host\n");
		return 2;
	}
	signal(SIGUSR1, rc_on_usr1);
	return ft_rdm_run(RC_NAME, RC_VERSION, o.bind_addr, o.host, o.port, rc_run, &o);
}
