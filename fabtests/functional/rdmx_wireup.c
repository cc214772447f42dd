/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wireup: sends posted before their receiver exists. The sender
 * resolves the receiver's host and port, inserts it into its AV and posts
 * every tagged send at once (-n, default 1000; every hundredth one a
 * 200,000-byte long message, the others up to 3000 bytes), then waits for
 * their completions, which ask for FI_DELIVERY_COMPLETE. It counts each
 * post that returned -FI_EAGAIN: with --no-eagain (rdmx: sends to a peer
 * not yet connected wait on its pending queue) any fails the run. The
 * receiver may start seconds later on that port: it keeps wildcard
 * receives posted and checks that the n-th one it posted took message n
 * (send-after-send order), with its length and every byte.
 *
 * A receiver with --linger keeps answering after its PASS line until it
 * is killed. A sender with --restart (rdmx only: it watches the peer
 * through rdmx_peer_ops) plays a receiver that dies and comes back:
 * round 1 as above, then it sleeps, without progress, until SIGUSR1 (the
 * script killed the receiver), posts the count again, stopping once the
 * callback reported DISCONNECTED (a later send starts a new handshake),
 * and needs every send it posted (at least the first) to fail with
 * FI_EHOSTUNREACH and the callback to report DISCONNECTED once, both
 * within --within-ms of that signal; it sleeps until a second SIGUSR1 (a
 * new receiver runs on the port) and round 3 must deliver the count
 * again to the new receiver, after a second CONNECTED.
 *
 *   receiver: rdmx_wireup -r [-b addr] -p port [-n count] [--linger] [-t timeout_s]
 *   sender:   rdmx_wireup -p port [-n count] [--no-eagain]
 *                         [--restart --within-ms ms] [-t timeout_s] host
 *
 * Exit status: 0 with a last line "rdmx_wireup: PASS ...", 1 on failure,
 * 2 on bad options.
 */
#include <errno.h>
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

#define WU_NAME		"rdmx_wireup"
#define WU_VERSION	FI_VERSION(1, 17)
#define WU_LONG		200000
#define WU_WINDOW	64
#define WU_ANY_TAG	(~0ULL)

const char *const ft_prog = WU_NAME;

struct wu_opts {
	bool		receiver;
	bool		no_eagain;
	bool		linger;
	bool		restart;
	uint64_t	within_ms;
	const char	*bind_addr;
	const char	*port;
	const char	*host;
	uint64_t	count;
	int		timeout_s;
};

struct wu_rx {
	struct fi_context	ctx;	/* first: op_context points here */
	uint64_t		posted;	/* its rank among the receives posted */
	uint8_t			*buf;
};

/* The length of message i. */
static size_t wu_len(uint64_t i)
{
	return i % 100 == 99 ? WU_LONG : 1 + ft_mix(i) % 3000;
}

static uint64_t wu_seed(uint64_t i)
{
	return ft_pattern_seed(0, i, 0, wu_len(i));
}

/*
 * Reads one completion within the deadline; 1, 0 or an error. With
 * want_err, only error completions of that code count (1), anything else
 * fails.
 */
static int wu_read(struct ft_rdm *rdm, struct fi_cq_tagged_entry *e, uint64_t deadline,
		   const char *what, int want_err)
{
	struct fi_cq_err_entry err;
	char text[256];
	ssize_t ret = fi_cq_read(rdm->cq, e, 1);

	if (ret == 1)
		return want_err ? ft_fail("%s: completed without the error expected", what) : 1;
	if (ret == -FI_EAVAIL) {
		if (ft_cq_readerr(rdm->cq, &err, text, sizeof(text)))
			return -FI_EIO;
		if (want_err && err.err == want_err)
			return 1;
		return ft_fail("%s: error completion: %s", what, text);
	}
	if (ret != -FI_EAGAIN)
		return ft_err("fi_cq_read", ret);
	return ft_now_ns() > deadline ? ft_fail("%s: timed out", what) : 0;
}

/* Each payload, kept until its send completed, and its context. */
struct wu_sends {
	uint8_t			**own;
	struct fi_context	*ctx;
};

/* What the rdmx_peer_ops callback saw of the receiver. */
struct wu_peer {
	int		connected;
	int		disconnected;
	int		err;
	uint64_t	disconnected_ns;
};

/*
 * One round of sends: what each completion must be (want 0: delivered,
 * else that error), and, when stop is set, that no send is posted once
 * the callback reported the receiver DISCONNECTED: a send posted after
 * that starts a new handshake (fi_ext_rdmx.h), which is round 3's part.
 */
struct wu_round {
	const char		*what;
	int			want;
	const struct wu_peer	*stop;
	uint64_t		posted;
};

static bool wu_round_stopped(const struct wu_round *r)
{
	return r->stop && r->stop->disconnected;
}

/*
 * Posts the count sends to dest (fewer if the round stopped) and waits
 * until each posted one completed as r->want says. 0 or an error.
 */
static int wu_round(struct ft_rdm *rdm, const struct wu_sends *sends, fi_addr_t dest,
		    const struct wu_opts *o, struct wu_round *r)
{
	uint64_t eagain = 0, done = 0, deadline;
	int ret = 0;

	for (uint64_t i = 0; !ret && i < o->count && !wu_round_stopped(r); i++) {
		while ((ret = (int) fi_tsend(rdm->ep, sends->own[i], wu_len(i), NULL, dest, i,
					     &sends->ctx[i])) == -FI_EAGAIN) {
			struct fi_cq_tagged_entry e;

			eagain++;
			ret = wu_read(rdm, &e, UINT64_MAX, r->what, r->want);
			if (ret < 0)
				return ret;
			done += (uint64_t) ret;
			ret = -FI_EAGAIN;
			if (wu_round_stopped(r))
				break;
		}
		if (ret == -FI_EAGAIN)
			ret = 0;
		else if (ret)
			ft_err("fi_tsend", ret);
		else
			r->posted++;
	}
	printf(WU_NAME ": %s: posted %" PRIu64 " sends, %" PRIu64 " -FI_EAGAIN\n", r->what,
	       r->posted, eagain);
	if (!ret && o->no_eagain && eagain)
		ret = ft_fail("%" PRIu64 " posts returned -FI_EAGAIN", eagain);
	deadline = ft_deadline_ns(o->timeout_s);
	while (!ret && done < r->posted) {
		struct fi_cq_tagged_entry e;

		ret = wu_read(rdm, &e, deadline, r->what, r->want);
		if (ret == 1) {
			done++;
			ret = 0;
		}
	}
	return ret;
}

static void wu_on_peer(struct fid_ep *ep, fi_addr_t addr, enum fi_rdmx_peer_state state,
		       int err, void *arg)
{
	struct wu_peer *peer = arg;

	(void) ep; (void) addr;
	if (state == FI_RDMX_PEER_CONNECTED)
		peer->connected++;
	if (state == FI_RDMX_PEER_DISCONNECTED) {
		peer->disconnected++;
		peer->err = err;
		peer->disconnected_ns = ft_now_ns();
	}
}

/*
 * Says what it waits for, then sleeps until SIGUSR1 (blocked from the
 * start, so none is missed), without progress: the end of the receiver
 * killed meanwhile is seen by the calls of the round that follows, after
 * its first send is posted, however long the script takes to signal.
 */
static int wu_wait_signal(const struct wu_opts *o, const char *why)
{
	struct timespec limit = { .tv_sec = o->timeout_s };
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	printf(WU_NAME ": pid %d waits for SIGUSR1: %s\n", (int) getpid(), why);
	if (sigtimedwait(&usr1, NULL, &limit) < 0)
		return ft_fail("no SIGUSR1 in %d s (%s): %s", o->timeout_s, why,
			       strerror(errno));
	return 0;
}

/* Checks what query says of the receiver: its state and level. */
static int wu_check_peer(struct ft_rdm *rdm, struct fi_rdmx_peer_ops *ops, fi_addr_t dest,
			 enum fi_rdmx_peer_state want)
{
	struct fi_rdmx_peer_attr attr;
	int ret = ops->query(rdm->ep, dest, &attr);

	if (ret)
		return ft_err("rdmx_peer_ops query", ret);
	if (attr.state != want)
		return ft_fail("the receiver is in state %d, not %d", attr.state, want);
	return 0;
}

/*
 * --restart, after round 1: the receiver is killed, the sends fail and
 * the peer is DISCONNECTED in time; a new receiver takes round 3.
 */
static int wu_restart(struct ft_rdm *rdm, const struct wu_sends *sends, fi_addr_t dest,
		      const struct wu_opts *o, struct fi_rdmx_peer_ops *ops,
		      const struct wu_peer *peer)
{
	struct wu_round r2 = { .what = "round 2", .want = FI_EHOSTUNREACH, .stop = peer };
	struct wu_round r3 = { .what = "round 3" };
	uint64_t t0, failed_ms, disc_ms;
	int ret = wu_wait_signal(o, "the receiver to be killed");

	t0 = ft_now_ns();
	if (!ret)
		ret = wu_round(rdm, sends, dest, o, &r2);
	if (ret)
		return ret;
	failed_ms = (ft_now_ns() - t0) / 1000000;
	if (!r2.posted)
		return ft_fail("round 2 posted no send before the DISCONNECTED");
	if (peer->disconnected != 1 || peer->err != FI_EHOSTUNREACH)
		return ft_fail("the callback saw %d DISCONNECTED (err %d), want 1 (FI_EHOSTUNREACH)",
			       peer->disconnected, peer->err);
	disc_ms = (peer->disconnected_ns - t0) / 1000000;
	printf(WU_NAME ": round 2: %" PRIu64 " sends failed with FI_EHOSTUNREACH "
	       "(disconnected_ms=%" PRIu64 " failed_ms=%" PRIu64 ")\n", r2.posted, disc_ms,
	       failed_ms);
	if (disc_ms > o->within_ms || failed_ms > o->within_ms)
		return ft_fail("later than %" PRIu64 " ms", o->within_ms);
	ret = wu_check_peer(rdm, ops, dest, FI_RDMX_PEER_DISCONNECTED);
	if (!ret)
		ret = wu_wait_signal(o, "a new receiver");
	if (!ret)
		ret = wu_round(rdm, sends, dest, o, &r3);
	if (!ret && peer->connected != 2)
		ret = ft_fail("the callback saw %d CONNECTED, want 2", peer->connected);
	return ret ? ret : wu_check_peer(rdm, ops, dest, FI_RDMX_PEER_CONNECTED);
}

static int wu_sender(struct ft_rdm *rdm, const struct fi_info *info, const struct wu_opts *o)
{
	struct wu_sends sends = {
		.own = calloc(o->count, sizeof(*sends.own)),
		.ctx = calloc(o->count, sizeof(*sends.ctx)),
	};
	struct wu_round r1 = { .what = "round 1" };
	struct fi_rdmx_peer_ops *ops = NULL;
	struct wu_peer peer = { 0 };
	fi_addr_t dest;
	int ret = -FI_ENOMEM;

	if (!sends.own || !sends.ctx)
		goto out;
	ret = ft_rdm_insert(rdm, info->dest_addr, &dest, "the receiver's address");
	for (uint64_t i = 0; !ret && i < o->count; i++) {
		/* Every send keeps its bytes until it completes (delivery complete). */
		sends.own[i] = malloc(wu_len(i));
		if (!sends.own[i])
			ret = -FI_ENOMEM;
		else
			ft_pattern_fill(sends.own[i], wu_len(i), wu_seed(i));
	}
	if (!ret && o->restart) {
		ret = fi_open_ops(&rdm->domain->fid, FI_RDMX_PEER_OPS, 0, (void **) &ops, NULL);
		if (!ret)
			ret = ops->set_callback(rdm->ep, wu_on_peer, &peer);
		if (ret)
			ft_err("rdmx_peer_ops", ret);
	}
	if (!ret)
		ret = wu_round(rdm, &sends, dest, o, &r1);
	if (!ret)
		printf(WU_NAME ": round 1: %" PRIu64 " sends delivered\n", o->count);
	if (!ret && o->restart)
		ret = wu_restart(rdm, &sends, dest, o, ops, &peer);
	if (!ret)
		printf(WU_NAME ": PASS sender: %" PRIu64 " sends delivered%s\n", o->count,
		       o->restart ? " to each receiver" : "");
out:
	for (uint64_t i = 0; sends.own && i < o->count; i++)
		free(sends.own[i]);
	free(sends.own);
	free(sends.ctx);
	return ret;
}

static int wu_post(struct ft_rdm *rdm, struct wu_rx *rx, uint64_t *posted)
{
	int ret = (int) fi_trecv(rdm->ep, rx->buf, WU_LONG + 16, NULL, FI_ADDR_UNSPEC, 0,
				 WU_ANY_TAG, &rx->ctx);

	if (ret)
		return ft_err("fi_trecv", ret);
	rx->posted = (*posted)++;
	return 0;
}

static int wu_check(const struct fi_cq_tagged_entry *e, const struct wu_rx *rx)
{
	char what[64];

	if (e->tag != rx->posted)
		return ft_fail("the receive posted %" PRIu64 "th took message %" PRIu64
			       ": send-after-send order broken", rx->posted + 1,
			       (uint64_t) e->tag);
	if (e->len != wu_len(e->tag))
		return ft_fail("message %" PRIu64 " is %zu bytes, expected %zu",
			       (uint64_t) e->tag, e->len, wu_len(e->tag));
	snprintf(what, sizeof(what), "message %" PRIu64, (uint64_t) e->tag);
	return ft_pattern_check(rx->buf, e->len, wu_seed(e->tag), 16, what);
}

static int wu_receiver(struct ft_rdm *rdm, const struct wu_opts *o)
{
	struct wu_rx *rx = calloc(WU_WINDOW, sizeof(*rx));
	uint64_t posted = 0, got = 0, deadline = ft_deadline_ns(o->timeout_s);
	int ret = rx ? ft_rdm_print_listening(rdm, "count %" PRIu64 ", pid %d", o->count,
						 (int) getpid()) : -FI_ENOMEM;

	for (size_t i = 0; !ret && i < WU_WINDOW && posted < o->count; i++) {
		rx[i].buf = malloc(WU_LONG + 16);
		if (!rx[i].buf)
			ret = -FI_ENOMEM;
		else
			memset(rx[i].buf, FT_POISON, WU_LONG + 16);
		if (!ret)
			ret = wu_post(rdm, &rx[i], &posted);
	}
	while (!ret && got < o->count) {
		struct fi_cq_tagged_entry e;
		struct wu_rx *r;

		ret = wu_read(rdm, &e, deadline, "messages", 0);
		if (ret != 1)
			continue;
		r = e.op_context;
		ret = wu_check(&e, r);
		got++;
		memset(r->buf, FT_POISON, WU_LONG + 16);
		if (!ret && posted < o->count)
			ret = wu_post(rdm, r, &posted);
	}
	if (!ret)
		printf(WU_NAME ": PASS receiver: %" PRIu64 " messages in order\n", got);
	/* --linger: answers the sender (pings) until killed; not killed, fails. */
	while (!ret && o->linger) {
		struct fi_cq_tagged_entry e;

		ret = wu_read(rdm, &e, deadline, "the end of lingering", 0);
	}
	for (size_t i = 0; rx && i < WU_WINDOW; i++)
		free(rx[i].buf);
	free(rx);
	return ret;
}

static int wu_parse(int argc, char **argv, struct wu_opts *o)
{
	static const struct option longs[] = {
		{ "no-eagain", no_argument, NULL, 'E' },
		{ "linger", no_argument, NULL, 'L' },
		{ "restart", no_argument, NULL, 'R' },
		{ "within-ms", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct wu_opts) { .count = 1000, .timeout_s = 60 };
	while (!ret && (c = getopt_long(argc, argv, "rb:p:n:t:", longs, NULL)) != -1) {
		if (c == 'r')
			o->receiver = true;
		else if (c == 'b')
			o->bind_addr = optarg;
		else if (c == 'p')
			o->port = optarg;
		else if (c == 'E')
			o->no_eagain = true;
		else if (c == 'L')
			o->linger = true;
		else if (c == 'R')
			o->restart = true;
		else if (c == 'W')
			ret = ft_parse_num(optarg, 1, 3600000, &o->within_ms);
		else if (c == 'n')
			ret = ft_parse_num(optarg, 1, 1000000, &o->count);
		else if (c == 't')
			ret = ft_parse_timeout(optarg, &o->timeout_s);
		else
			ret = -1;
	}
	if (ret)
		return -1;
	if (ft_parse_host(argc, argv, &o->host) || !o->port || !o->receiver == !o->host)
		return -1;
	/* --linger is the receiver's, --restart (with --within-ms) the sender's. */
	if ((o->linger && !o->receiver) || (o->restart && o->receiver) ||
	    o->restart != (o->within_ms > 0))
		return -1;
	return 0;
}

/* The side o asks for (ft_rdm_run_fn). */
static int wu_run(struct ft_rdm *rdm, const struct fi_info *info, const void *arg,
		  int *status)
{
	const struct wu_opts *o = arg;

	(void) status;
	return o->receiver ? wu_receiver(rdm, o) : wu_sender(rdm, info, o);
}

int main(int argc, char **argv)
{
	struct wu_opts o;
	sigset_t usr1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wu_parse(argc, argv, &o)) {
		fprintf(stderr, "usage: " WU_NAME " -r [-b addr] -p port [-n count] [--linger] [-t s]\n"
			"       " WU_NAME " -p port [-n count] [--no-eagain]\n"
			"                   [--restart --within-ms ms] [-t s] host\n");
		return 2;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* Before libfabric starts a thread: all of them keep it blocked. */
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	return ft_rdm_run(WU_NAME, WU_VERSION, o.bind_addr, o.host, o.port, wu_run, &o);
}
