/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_bench: the benchmark program of rdmx, over the public libfabric
 * API only. It includes no provider header and runs over any provider
 * that offers FI_EP_RDM with FI_TAGGED (FI_PROVIDER selects one, -P picks
 * one provider name among several, e.g. "udp;ofi_rxd").
 *
 *   server: rdmx_bench [-p port] [-b addr] [-P prov_name]
 *   client: rdmx_bench [options] server_host
 *
 * The conventions are rdmx_pingpong's: the server prints "listening on
 * <addr> port <n> (provider <name>)" (-p 0 lets it pick a port), the
 * client learns the server's address from fi_getinfo(host, port) and
 * sends its own in a HELLO that also carries every parameter of the run,
 * so the server needs none but its address. A FIN / FIN_ACK exchange
 * ends the run.
 *
 * Tests (-T, a comma-separated list):
 *   lat   tagged ping-pong; median and p99 of the half round trip, each
 *         iteration timed with CLOCK_MONOTONIC.
 *   bw    windowed unidirectional bandwidth (client to server): W sends
 *         in flight, the receiver pre-posts the window's receives before
 *         acknowledging the previous window; MB/s (1e6 bytes per second),
 *         median over repetitions.
 *   bibw  both directions at once; MB/s counts both directions.
 *   rate  bw with a window of 256 small messages; messages per second.
 *
 * A size above the agreed max_msg_size is skipped by both sides and
 * reported as n/a. Every wait busy-polls fi_cq_read (which also drives
 * manual progress) and times out after -t seconds; any error or timeout
 * exits non-zero with a message. -c checks every payload byte (off by
 * default, it costs time on the measured path).
 *
 * This file sets up, drives completions, posts and waits, carries the
 * control messages and parses options; rdmx_bench_tests.c holds the
 * tests and their output; rdmx_bench.h what both share.
 *
 * Output: one machine-readable line per result on stdout, e.g.
 *   RESULT test=lat size=8 median_us=4.12 p99_us=6.50 iters=10000 prov=rdmx
 *   RESULT test=bw size=65536 mbps=1234.5 ... prov=rdmx
 *   RESULT test=bw size=1048576 mbps=n/a max_msg_size=65443 prov=rdmx
 * plus human-readable rows.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "rdmx_bench.h"

const char *const ft_prog = RB_NAME;

/* ---------------------------------------------------------------------
 * Completions, posting with retry, waiting
 * ------------------------------------------------------------------- */

static void rb_report_cq_error(struct rb *rb)
{
	struct fi_cq_err_entry err;
	char text[512];

	if (!ft_cq_readerr(rb->rdm.cq, &err, text, sizeof(text)))
		fprintf(stderr, RB_NAME ": %s: error completion (flags %s): %s\n", rb->what,
			fi_tostr(&err.flags, FI_TYPE_CQ_EVENT_FLAGS), text);
}

/* The operation an op_context names, or NULL if it is none of ours. */
static struct rb_op *rb_op_of(struct rb *rb, void *ctx)
{
	struct rb_op *op = ctx;

	if (op == &rb->ctrl_tx_op || op == &rb->ctrl_rx_op)
		return op;
	if (op >= rb->tx_ops && op < rb->tx_ops + RB_WINDOW_MAX &&
	    (uintptr_t) ((char *) op - (char *) rb->tx_ops) % sizeof(*op) == 0)
		return op;
	if (op >= rb->rx_ops && op < rb->rx_ops + RB_WINDOW_MAX &&
	    (uintptr_t) ((char *) op - (char *) rb->rx_ops) % sizeof(*op) == 0)
		return op;
	return NULL;
}

/* Marks one completion's operation done, checking what can be checked. */
static int rb_complete(struct rb *rb, const struct fi_cq_tagged_entry *e)
{
	struct rb_op *op = rb_op_of(rb, e->op_context);

	if (!op)
		return ft_fail("%s: completion with unknown context %p (flags %s)",
			       rb->what, e->op_context,
			       fi_tostr(&e->flags, FI_TYPE_CQ_EVENT_FLAGS));
	if (!op->posted || op->done)
		return ft_fail("%s: completion for an operation not outstanding "
			       "(flags %s)", rb->what,
			       fi_tostr(&e->flags, FI_TYPE_CQ_EVENT_FLAGS));
	if (op->is_rx != !!(e->flags & FI_RECV))
		return ft_fail("%s: %s operation completed with flags %s", rb->what,
			       op->is_rx ? "receive" : "send",
			       fi_tostr(&e->flags, FI_TYPE_CQ_EVENT_FLAGS));
	if (op->is_rx && (e->len != op->len || e->tag != op->tag))
		return ft_fail("%s: received len %zu tag 0x%" PRIx64 ", expected len "
			       "%zu tag 0x%" PRIx64, rb->what, e->len, e->tag,
			       op->len, op->tag);
	op->done = true;
	op->posted = false;
	op->got_len = e->len;
	if (op != &rb->ctrl_tx_op && op != &rb->ctrl_rx_op) {
		if (op->is_rx)
			rb->rx_done++;
		else
			rb->tx_done++;
	}
	return 0;
}

/*
 * Reads the CQ once (which also drives manual progress); with -M sread,
 * sleeps in fi_cq_sread until something comes or RB_SREAD_MS pass.
 */
static int rb_progress(struct rb *rb)
{
	struct fi_cq_tagged_entry entries[RB_CQ_BATCH];
	ssize_t n = rb->opts.sread ?
		    fi_cq_sread(rb->rdm.cq, entries, RB_CQ_BATCH, NULL, RB_SREAD_MS) :
		    fi_cq_read(rb->rdm.cq, entries, RB_CQ_BATCH);
	int ret;

	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		rb_report_cq_error(rb);
		return -FI_EAVAIL;
	}
	if (n < 0)
		return ft_err("fi_cq_read", n);
	for (ssize_t i = 0; i < n; i++) {
		ret = rb_complete(rb, &entries[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Progresses until *count reaches target (a data counter) or, with
 * count NULL, until op is done; fails after the timeout. The clock is
 * read only every 64 empty polls.
 */
int rb_wait(struct rb *rb, const uint64_t *count, uint64_t target,
		   const struct rb_op *op, const char *for_what)
{
	uint64_t deadline = 0;
	unsigned spins = 0;
	int ret;

	while (count ? *count < target : !op->done) {
		ret = rb_progress(rb);
		if (ret)
			return ret;
		if (++spins % 64)
			continue;
		if (!deadline) {
			deadline = ft_deadline_ns(rb->opts.timeout_s);
		} else if (ft_now_ns() > deadline) {
			return ft_fail("%s: timed out after %d s waiting for %s "
				       "(sends done %" PRIu64 ", receives done %" PRIu64
				       ")", rb->what, rb->opts.timeout_s, for_what,
				       rb->tx_done, rb->rx_done);
		}
	}
	return 0;
}

int rb_wait_op(struct rb *rb, const struct rb_op *op, const char *for_what)
{
	return rb_wait(rb, NULL, 0, op, for_what);
}

/* Retries a post while the provider answers -FI_EAGAIN, progressing. */
static int rb_retry(struct rb *rb, ssize_t ret, uint64_t *deadline,
		    const char *call)
{
	if (ret != -FI_EAGAIN)
		return ret ? ft_err(call, ret) : 0;
	if (!*deadline)
		*deadline = ft_deadline_ns(rb->opts.timeout_s);
	else if (ft_now_ns() > *deadline)
		return ft_fail("%s: %s kept returning -FI_EAGAIN for %d s", rb->what,
			       call, rb->opts.timeout_s);
	ret = rb_progress(rb);
	return ret ? (int) ret : -FI_EAGAIN;
}

int rb_post_send(struct rb *rb, struct rb_op *op, void *buf, size_t len,
			void *desc, uint64_t tag)
{
	uint64_t deadline = 0;
	int ret;

	if (op->posted)
		return ft_fail("%s: send posted twice", rb->what);
	op->is_rx = false;
	op->done = false;
	op->posted = true;
	do {
		ret = rb_retry(rb, fi_tsend(rb->rdm.ep, buf, len, desc, rb->peer, tag,
					    &op->fctx), &deadline, "fi_tsend");
	} while (ret == -FI_EAGAIN);
	if (ret)
		op->posted = false;
	return ret;
}

/* fi_tinject: no completion; the op is not used. */
int rb_post_inject(struct rb *rb, void *buf, size_t len, uint64_t tag)
{
	uint64_t deadline = 0;
	int ret;

	do {
		ret = rb_retry(rb, fi_tinject(rb->rdm.ep, buf, len, rb->peer, tag),
			       &deadline, "fi_tinject");
	} while (ret == -FI_EAGAIN);
	return ret;
}

int rb_post_recv(struct rb *rb, struct rb_op *op, void *buf, size_t len,
			void *desc, uint64_t tag)
{
	uint64_t deadline = 0;
	int ret;

	if (op->posted)
		return ft_fail("%s: receive posted twice", rb->what);
	op->is_rx = true;
	op->done = false;
	op->posted = true;
	op->len = len;
	op->tag = tag;
	do {
		ret = rb_retry(rb, fi_trecv(rb->rdm.ep, buf, len, desc, FI_ADDR_UNSPEC,
					    tag, 0, &op->fctx), &deadline, "fi_trecv");
	} while (ret == -FI_EAGAIN);
	if (ret)
		op->posted = false;
	return ret;
}

/* ---------------------------------------------------------------------
 * Control messages
 * ------------------------------------------------------------------- */

static const char *const rb_ctrl_names[RB_CTRL_NTYPES] = {
	[RB_CTRL_HELLO] = "HELLO",
	[RB_CTRL_WELCOME] = "WELCOME",
	[RB_CTRL_READY] = "READY",
	[RB_CTRL_GO] = "GO",
	[RB_CTRL_ACK] = "ACK",
	[RB_CTRL_FIN] = "FIN",
	[RB_CTRL_FIN_ACK] = "FIN_ACK",
};

/* HELLO, WELCOME carry an rb_ctrl; the others one 64-bit word. */
static bool rb_ctrl_is_big(enum rb_ctrl_type type)
{
	return type == RB_CTRL_HELLO || type == RB_CTRL_WELCOME;
}

/* Posts the receive of one control message. */
int rb_ctrl_post_recv(struct rb *rb, enum rb_ctrl_type type)
{
	bool big = rb_ctrl_is_big(type);

	return rb_post_recv(rb, &rb->ctrl_rx_op,
			    big ? (void *) rb->ctrl_rx : (void *) rb->word_rx,
			    big ? sizeof(*rb->ctrl_rx) : sizeof(*rb->word_rx),
			    rb->ctrl_desc, RB_TAG_CTRL | type);
}

/*
 * Sends one control message (a small one carries value), after the
 * previous control send completed; does not wait for this one.
 */
int rb_ctrl_send(struct rb *rb, enum rb_ctrl_type type, uint64_t value)
{
	bool big = rb_ctrl_is_big(type);
	int ret;

	if (rb->ctrl_tx_op.posted) {
		ret = rb_wait_op(rb, &rb->ctrl_tx_op, "a control send");
		if (ret)
			return ret;
	}
	if (big) {
		rb->ctrl_tx->magic = RB_CTRL_MAGIC;
		rb->ctrl_tx->version = RB_CTRL_VERSION;
		rb->ctrl_tx->type = type;
	} else {
		*rb->word_tx = value;
	}
	return rb_post_send(rb, &rb->ctrl_tx_op,
			    big ? (void *) rb->ctrl_tx : (void *) rb->word_tx,
			    big ? sizeof(*rb->ctrl_tx) : sizeof(*rb->word_tx),
			    rb->ctrl_desc, RB_TAG_CTRL | type);
}

/* Waits for the control receive posted for type; checks its value. */
int rb_ctrl_wait_recv(struct rb *rb, enum rb_ctrl_type type, uint64_t value)
{
	char for_what[32];
	int ret;

	snprintf(for_what, sizeof(for_what), "%s from the peer", rb_ctrl_names[type]);
	ret = rb_wait_op(rb, &rb->ctrl_rx_op, for_what);
	if (ret)
		return ret;
	if (rb_ctrl_is_big(type)) {
		const struct rb_ctrl *c = rb->ctrl_rx;

		if (c->magic != RB_CTRL_MAGIC || c->version != RB_CTRL_VERSION ||
		    c->type != type)
			return ft_fail("%s: bad control message (magic 0x%x version "
				       "%u type %u)", rb_ctrl_names[type], c->magic,
				       c->version, c->type);
	} else if (*rb->word_rx != value) {
		return ft_fail("%s: %s carries %" PRIu64 ", expected %" PRIu64,
			       rb->what, rb_ctrl_names[type], *rb->word_rx, value);
	}
	return 0;
}

/* Waits for the last control send, so its buffer and op are free. */
static int rb_ctrl_flush(struct rb *rb)
{
	if (!rb->ctrl_tx_op.posted)
		return 0;
	return rb_wait_op(rb, &rb->ctrl_tx_op, "a control send");
}

/* ---------------------------------------------------------------------
 * Setup and teardown
 * ------------------------------------------------------------------- */

static struct fi_info *rb_hints(void)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	/* No msg_order: rdmx offers none yet, and the tests need none. */
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	return hints;
}

/* Picks the entry of -P's provider name, or the first one. */
static int rb_pick(struct rb *rb)
{
	const char *want = rb->opts.prov_name;

	for (struct fi_info *fi = rb->info; fi; fi = fi->next) {
		if (!want || !strcmp(fi->fabric_attr->prov_name, want)) {
			rb->fi = fi;
			return 0;
		}
	}
	fprintf(stderr, RB_NAME ": provider %s not offered; fi_getinfo gave:", want);
	for (struct fi_info *fi = rb->info; fi; fi = fi->next)
		fprintf(stderr, " %s", fi->fabric_attr->prov_name);
	fputc('\n', stderr);
	return -FI_ENODATA;
}

static int rb_getinfo_at(struct rb *rb, const char *service)
{
	struct fi_info *hints = rb_hints();
	const struct rb_opts *o = &rb->opts;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	fi_freeinfo(rb->info);
	rb->info = NULL;
	if (o->host)
		ret = fi_getinfo(RB_FI_VERSION, o->host, service, 0, hints, &rb->info);
	else
		ret = fi_getinfo(RB_FI_VERSION, o->bind_addr ? o->bind_addr : "127.0.0.1",
				 service, FI_SOURCE, hints, &rb->info);
	fi_freeinfo(hints);
	if (ret)
		return ft_err("fi_getinfo", ret);
	return rb_pick(rb);
}

static int rb_getinfo(struct rb *rb)
{
	char service[16];
	int ret = rb_getinfo_at(rb, rb->opts.port);

	if (ret)
		return ret;
	/*
	 * A provider with string addresses (shm: "fi_ns://host:port") does not
	 * pick a port for -p 0; the server picks one from its pid instead.
	 */
	if (!rb->opts.host && !strcmp(rb->opts.port, "0") &&
	    rb->fi->addr_format == FI_ADDR_STR) {
		snprintf(service, sizeof(service), "%d", 20000 + (int) (getpid() % 40000));
		ret = rb_getinfo_at(rb, service);
		if (ret)
			return ret;
	}
	if (rb->opts.host && !rb->fi->dest_addr)
		return ft_fail("provider %s returned no dest_addr for %s:%s",
			       rb_prov(rb), rb->opts.host, rb->opts.port);
	return 0;
}

static size_t rb_align(size_t len)
{
	return (len + RB_ALIGN - 1) & ~(size_t) (RB_ALIGN - 1);
}

/* Registers mem if the provider asks for local registration. */
static int rb_reg(struct rb *rb, void *mem, size_t len, struct fid_mr **mr_p,
		  void **desc_p)
{
	int ret;

	if (!(rb->fi->domain_attr->mr_mode & FI_MR_LOCAL))
		return 0;
	ret = fi_mr_reg(rb->rdm.domain, mem, len, FI_SEND | FI_RECV, 0, 0, 0, mr_p, NULL);
	if (ret)
		return ft_err("fi_mr_reg", ret);
	*desc_p = fi_mr_desc(*mr_p);
	return 0;
}

/* Control messages: two rb_ctrl and two words, registered once. */
static int rb_alloc_ctrl(struct rb *rb)
{
	size_t big = rb_align(sizeof(struct rb_ctrl));
	size_t len = 2 * big + 2 * RB_ALIGN;

	if (posix_memalign((void **) &rb->ctrl_mem, RB_ALIGN, len))
		return -FI_ENOMEM;
	memset(rb->ctrl_mem, 0, len);
	rb->ctrl_tx = (struct rb_ctrl *) rb->ctrl_mem;
	rb->ctrl_rx = (struct rb_ctrl *) (rb->ctrl_mem + big);
	rb->word_tx = (uint64_t *) (rb->ctrl_mem + 2 * big);
	rb->word_rx = (uint64_t *) (rb->ctrl_mem + 2 * big + RB_ALIGN);
	rb->tx_ops = calloc(RB_WINDOW_MAX, sizeof(*rb->tx_ops));
	rb->rx_ops = calloc(RB_WINDOW_MAX, sizeof(*rb->rx_ops));
	if (!rb->tx_ops || !rb->rx_ops)
		return -FI_ENOMEM;
	return rb_reg(rb, rb->ctrl_mem, len, &rb->ctrl_mr, &rb->ctrl_desc);
}

/*
 * Data buffers, once the run is agreed: one tx and one rx area, as large
 * as the largest message, or with -c the largest window of slots. The
 * pages are touched now, not during a measurement.
 */
static int rb_alloc_data(struct rb *rb)
{
	const struct rb_params *p = rb->params;
	size_t need = 1;

	for (uint32_t i = 0; i < p->ntests; i++) {
		enum rb_test t = (enum rb_test) p->tests[i];
		uint64_t sizes[RB_SIZES_MAX];
		size_t n = rb_sizes(p, t, sizes);

		for (size_t j = 0; j < n; j++) {
			struct rb_plan plan;
			size_t len;

			rb_plan(rb, t, sizes[j], &plan);
			if (plan.skip)
				continue;
			len = p->verify ? (size_t) plan.window * plan.size : plan.size;
			if (len > need)
				need = len;
		}
	}
	rb->buf_len = rb_align(need);
	if (posix_memalign((void **) &rb->data_mem, RB_ALIGN, 2 * rb->buf_len))
		return -FI_ENOMEM;
	memset(rb->data_mem, 0x5a, 2 * rb->buf_len);
	rb->tx_buf = rb->data_mem;
	rb->rx_buf = rb->data_mem + rb->buf_len;
	return rb_reg(rb, rb->data_mem, 2 * rb->buf_len, &rb->data_mr, &rb->data_desc);
}

/*
 * -D: receives from the peer for tags it never sends, posted before any
 * test's; they stay posted until the endpoint closes, so every message
 * of the run is matched past them.
 */
static int rb_post_decoys(struct rb *rb)
{
	uint32_t n = rb->params->decoys;

	rb->decoy_ctx = calloc(n ? n : 1, sizeof(*rb->decoy_ctx));
	if (!rb->decoy_ctx)
		return -FI_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t deadline = 0;
		int ret;

		do {
			ret = rb_retry(rb, fi_trecv(rb->rdm.ep, rb->rx_buf, 1, rb->data_desc,
						    rb->peer, RB_TAG_DECOY | i, 0,
						    &rb->decoy_ctx[i]),
				       &deadline, "fi_trecv (decoy)");
		} while (ret == -FI_EAGAIN);
		if (ret)
			return ret;
	}
	return 0;
}

static int rb_open(struct rb *rb)
{
	int ret;

	ret = rb_getinfo(rb);
	if (ret)
		return ret;
	rb->inject_size = rb->fi->tx_attr->inject_size;
	rb->max_msg_size = rb->fi->ep_attr->max_msg_size;

	rb->rdm.cq_wait = rb->opts.sread ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
	ret = ft_rdm_open(&rb->rdm, rb->fi, 4 * RB_WINDOW_MAX);
	if (!ret)
		ret = rb_alloc_ctrl(rb);
	return ret ? ret : ft_rdm_enable(&rb->rdm, rb->fi);
}

/* Closes everything in the reverse order of rb_open; 0 or an error. */
static int rb_close(struct rb *rb)
{
	int status = 0;

	ft_rdm_close_ep(&rb->rdm, &status);
	ft_close_fid(rb->data_mr ? &rb->data_mr->fid : NULL, "fi_close (mr)", &status);
	ft_close_fid(rb->ctrl_mr ? &rb->ctrl_mr->fid : NULL, "fi_close (mr)", &status);
	ft_rdm_close(&rb->rdm, &status);
	free(rb->samples);
	free(rb->decoy_ctx);
	free(rb->tx_ops);
	free(rb->rx_ops);
	free(rb->data_mem);
	free(rb->ctrl_mem);
	fi_freeinfo(rb->info);
	return status;
}

/* Whether the client's parameters are ones this program can run. */
static int rb_params_check(const struct rb_params *p)
{
	if (!p->ntests || p->ntests > RB_NTESTS || p->nsizes > RB_SIZES_MAX ||
	    p->window > RB_WINDOW_MAX)
		return ft_fail("HELLO: bad parameters (%u tests, %u sizes, window %u)",
			       p->ntests, p->nsizes, p->window);
	for (uint32_t i = 0; i < p->ntests; i++) {
		if (p->tests[i] >= RB_NTESTS)
			return ft_fail("HELLO: unknown test %u", p->tests[i]);
	}
	for (uint32_t i = 0; i < p->nsizes; i++) {
		if (p->sizes[i] > RB_SIZE_LIMIT)
			return ft_fail("HELLO: size %" PRIu64 " too large", p->sizes[i]);
	}
	return 0;
}

/* The server takes the client's HELLO: its address and the run. */
static int rb_server_accept(struct rb *rb)
{
	const struct rb_ctrl *hello = rb->ctrl_rx;
	int ret;

	rb->what = "HELLO";
	ret = rb_ctrl_post_recv(rb, RB_CTRL_HELLO);
	if (!ret)
		ret = rb_ctrl_wait_recv(rb, RB_CTRL_HELLO, 0);
	if (ret)
		return ret;
	if (hello->addrlen == 0 || hello->addrlen > RB_ADDR_MAX)
		return ft_fail("HELLO carries a %u-byte address", hello->addrlen);
	ret = rb_params_check(&hello->params);
	if (ret)
		return ret;
	rb->opts.params = hello->params;
	if (hello->inject_size < rb->inject_size)
		rb->inject_size = hello->inject_size;
	if (hello->max_msg_size < rb->max_msg_size)
		rb->max_msg_size = hello->max_msg_size;
	ret = ft_rdm_insert(&rb->rdm, hello->addr, &rb->peer, "fi_av_insert");
	if (ret)
		return ret;
	rb->ctrl_tx->inject_size = rb->inject_size;
	rb->ctrl_tx->max_msg_size = rb->max_msg_size;
	ret = rb_ctrl_send(rb, RB_CTRL_WELCOME, 0);
	return ret ? ret : rb_ctrl_flush(rb);
}

/* The client introduces itself and takes the agreed limits. */
static int rb_client_connect(struct rb *rb)
{
	const struct rb_ctrl *welcome = rb->ctrl_rx;
	size_t len = RB_ADDR_MAX;
	int ret;

	rb->what = "HELLO";
	ret = ft_rdm_insert(&rb->rdm, rb->fi->dest_addr, &rb->peer, "fi_av_insert");
	if (ret)
		return ret;
	ret = fi_getname(&rb->rdm.ep->fid, rb->ctrl_tx->addr, &len);
	if (ret)
		return ft_err("fi_getname", ret);
	rb->ctrl_tx->addrlen = (uint32_t) len;
	rb->ctrl_tx->inject_size = rb->inject_size;
	rb->ctrl_tx->max_msg_size = rb->max_msg_size;
	rb->ctrl_tx->params = rb->opts.params;
	ret = rb_ctrl_post_recv(rb, RB_CTRL_WELCOME);
	if (!ret)
		ret = rb_ctrl_send(rb, RB_CTRL_HELLO, 0);
	if (!ret)
		ret = rb_ctrl_wait_recv(rb, RB_CTRL_WELCOME, 0);
	if (!ret)
		ret = rb_ctrl_flush(rb);
	if (ret)
		return ret;
	if (welcome->inject_size > rb->inject_size ||
	    welcome->max_msg_size > rb->max_msg_size)
		return ft_fail("the server agreed to limits above ours");
	rb->inject_size = welcome->inject_size;
	rb->max_msg_size = welcome->max_msg_size;
	return 0;
}

static int rb_finish(struct rb *rb)
{
	int ret;

	if (rb->opts.host) {
		ret = rb_ctrl_post_recv(rb, RB_CTRL_FIN_ACK);
		if (!ret)
			ret = rb_ctrl_send(rb, RB_CTRL_FIN, 0);
		if (!ret)
			ret = rb_ctrl_wait_recv(rb, RB_CTRL_FIN_ACK, 0);
		return ret ? ret : rb_ctrl_flush(rb);
	}
	ret = rb_ctrl_post_recv(rb, RB_CTRL_FIN);
	if (!ret)
		ret = rb_ctrl_wait_recv(rb, RB_CTRL_FIN, 0);
	if (!ret)
		ret = rb_ctrl_send(rb, RB_CTRL_FIN_ACK, 0);
	return ret ? ret : rb_ctrl_flush(rb);
}

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

static void rb_usage(void)
{
	fprintf(stderr,
		"usage: " RB_NAME " [-p port] [-b addr] [-P prov]   (server)\n"
		"       " RB_NAME " [options] server_host          (client)\n"
		"  -T tests       comma-separated: lat,bw,bibw,rate (default lat)\n"
		"  -S sizes       comma-separated message sizes (default: 1 B up to\n"
		"                 4 MiB by powers of 2; rate up to 4 KiB)\n"
		"  -n count       lat: iterations (10000, fewer above 64 KiB);\n"
		"                 bw, bibw, rate: most windows per repetition (100,\n"
		"                 rate 200; fewer so a repetition moves ~64 MiB)\n"
		"  -w count       warmup iterations or windows (lat 100, others\n"
		"                 a quarter of a repetition)\n"
		"  -W window      sends in flight (bw, bibw 64; rate 256; max %d)\n"
		"  -r reps        repetitions of bw, bibw, rate (default %d)\n"
		"  -c             check every payload byte (-W capped to %llu MiB)\n"
		"  -I             lat: fi_tinject for sizes up to inject_size\n"
		"  -D count       both sides first post count receives for tags\n"
		"                 never sent (from the peer): every message is\n"
		"                 matched past them (matching cost; default 0)\n"
		"  -p port        server port (default " RB_DEFAULT_PORT "; 0: the server\n"
		"                 picks one and prints it)\n"
		"  -b addr        local address to bind (server default 127.0.0.1)\n"
		"  -P prov        use the fi_getinfo entry of this provider name\n"
		"                 (e.g. \"udp;ofi_rxd\"; default: the first)\n"
		"  -t seconds     timeout of every wait (default %d)\n"
		"  -M method      how completions are waited for: spin (fi_cq_read,\n"
		"                 the default) or sread (fi_cq_sread: the CQ has a\n"
		"                 wait object and the process sleeps)\n"
		"The server takes every test parameter from the client; give -M\n"
		"to each side.\n",
		RB_WINDOW_MAX, RB_DEFAULT_REPS,
		(unsigned long long) (RB_VERIFY_BUDGET >> 20), RB_DEFAULT_TIMEOUT);
}

/* Splits a comma-separated list in place; calls fn on each item. */
static int rb_parse_list(char *list, int (*fn)(const char *item, struct rb_params *p),
			 struct rb_params *p)
{
	char *save = NULL;

	for (char *item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (fn(item, p))
			return -1;
	}
	return 0;
}

static int rb_parse_test(const char *item, struct rb_params *p)
{
	for (uint32_t t = 0; t < RB_NTESTS; t++) {
		if (strcmp(item, rb_tests[t].name))
			continue;
		if (p->ntests == RB_NTESTS) {
			fprintf(stderr, RB_NAME ": -T lists too many tests\n");
			return -1;
		}
		p->tests[p->ntests++] = t;
		return 0;
	}
	fprintf(stderr, RB_NAME ": unknown test '%s' (lat, bw, bibw, rate)\n", item);
	return -1;
}

static int rb_parse_size(const char *item, struct rb_params *p)
{
	if (p->nsizes == RB_SIZES_MAX) {
		fprintf(stderr, RB_NAME ": -S lists more than %d sizes\n", RB_SIZES_MAX);
		return -1;
	}
	return ft_parse_num(item, 0, RB_SIZE_LIMIT, &p->sizes[p->nsizes++]);
}

static int rb_parse_opts(int argc, char **argv, struct rb_opts *o)
{
	struct rb_params *p = &o->params;
	uint64_t v;
	int c;

	*o = (struct rb_opts) {
		.port = RB_DEFAULT_PORT,
		.timeout_s = RB_DEFAULT_TIMEOUT,
		.params.warmup = RB_WARMUP_DEFAULT,
	};
	while ((c = getopt(argc, argv, "T:S:n:w:W:r:cID:p:b:P:t:M:h")) != -1) {
		switch (c) {
		case 'T':
			if (rb_parse_list(optarg, rb_parse_test, p))
				return -1;
			break;
		case 'S':
			if (rb_parse_list(optarg, rb_parse_size, p))
				return -1;
			break;
		case 'n':
			if (ft_parse_num(optarg, 1, 100000000, &v))
				return -1;
			p->iters = (uint32_t) v;
			break;
		case 'w':
			if (ft_parse_num(optarg, 0, 100000000, &v))
				return -1;
			p->warmup = (uint32_t) v;
			break;
		case 'W':
			if (ft_parse_num(optarg, 1, RB_WINDOW_MAX, &v))
				return -1;
			p->window = (uint32_t) v;
			break;
		case 'r':
			if (ft_parse_num(optarg, 1, 1000, &v))
				return -1;
			p->reps = (uint32_t) v;
			break;
		case 'c':
			p->verify = 1;
			break;
		case 'I':
			p->inject = 1;
			break;
		case 'D':
			if (ft_parse_num(optarg, 0, RB_DECOYS_MAX, &v))
				return -1;
			p->decoys = (uint32_t) v;
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'b':
			o->bind_addr = optarg;
			break;
		case 'P':
			o->prov_name = optarg;
			break;
		case 't':
			if (ft_parse_timeout(optarg, &o->timeout_s))
				return -1;
			break;
		case 'M':
			if (strcmp(optarg, "spin") && strcmp(optarg, "sread")) {
				fprintf(stderr, RB_NAME ": -M spin or sread\n");
				return -1;
			}
			o->sread = !strcmp(optarg, "sread");
			break;
		default:
			rb_usage();
			return -1;
		}
	}
	if (ft_parse_host(argc, argv, &o->host)) {
		rb_usage();
		return -1;
	}
	if (!p->ntests)
		p->tests[p->ntests++] = RB_LAT;
	return 0;
}

int main(int argc, char **argv)
{
	struct rb rb = { .peer = FI_ADDR_UNSPEC, .what = "setup" };
	char prov[64] = "no provider";
	int ret, close_ret;

	if (rb_parse_opts(argc, argv, &rb.opts))
		return 2;
	rb.params = &rb.opts.params;
	setvbuf(stdout, NULL, _IOLBF, 0);

	ret = rb_open(&rb);
	if (rb.fi)
		snprintf(prov, sizeof(prov), "%s", rb_prov(&rb));
	if (!ret && !rb.opts.host)
		ret = ft_rdm_print_listening(&rb.rdm, "provider %s", rb_prov(&rb));
	if (!ret)
		ret = rb.opts.host ? rb_client_connect(&rb) : rb_server_accept(&rb);
	if (!ret)
		ret = rb_alloc_data(&rb);
	if (!ret)
		ret = rb_post_decoys(&rb);
	if (!ret)
		ret = rb_run(&rb);
	if (!ret)
		ret = rb_finish(&rb);
	close_ret = rb_close(&rb);
	if (ret || close_ret) {
		fprintf(stderr, RB_NAME ": FAIL (%s)\n", prov);
		return 1;
	}
	printf(RB_NAME ": PASS (%s)\n", prov);
	return 0;
}
