/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_pingpong: a two-process ping-pong over the public libfabric API,
 * the demo and latency benchmark of rdmx. It includes no provider header
 * and runs over any provider that offers FI_EP_RDM with FI_TAGGED or
 * FI_MSG (FI_PROVIDER selects one).
 *
 *   server: rdmx_pingpong [options]
 *   client: rdmx_pingpong [options] server_host
 *
 * The server needs no out-of-band channel: the client learns the server's
 * address from fi_getinfo(host, port), and sends its own address (from
 * fi_getname) in a HELLO control message; the server inserts it into its
 * AV and answers with an ACK. Both sides then ping-pong every message
 * size, and close with a FIN / FIN_ACK exchange so that neither side
 * tears down while its last message may still be in flight.
 *
 * Every received payload is checked byte by byte against a pattern that
 * depends on direction, iteration and size, and every completion is
 * checked (flags, length, tag, remote CQ data, source address). Messages
 * that fit inject_size go out with fi_[t]inject on even iterations (no
 * completion, no CQ data); all others go with fi_[t]senddata and carry a
 * per-iteration CQ data value. Any mismatch, error completion or timeout
 * exits non-zero with a message; only a full success exits 0.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define PP_NAME			"rdmx_pingpong"
#define PP_FI_VERSION		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
#define PP_DEFAULT_PORT		"47610"
#define PP_DEFAULT_ITERS	1000
#define PP_DEFAULT_WARMUP	10
#define PP_DEFAULT_TIMEOUT	10
#define PP_SIZE_ALL		UINT64_MAX
#define PP_SIZE_CAP		65536	/* largest size of -S all */
#define PP_SIZES_MAX		64
#define PP_ADDR_MAX		256
#define PP_CQ_BATCH		8
/* The completion flags checked: the kind of operation and the CQ data. */
#define PP_CQ_FLAGS		(FI_SEND | FI_RECV | FI_MSG | FI_TAGGED | \
				 FI_REMOTE_CQ_DATA | FI_RMA | FI_ATOMIC)
#define PP_ALIGN		64

/* Control messages travel with their own tag and CQ data. */
#define PP_CTRL_MAGIC		0x52504d58u	/* "XMPR" */
#define PP_CTRL_VERSION		1u
#define PP_TAG_CTRL		0x4354524c00000000ULL
#define PP_DATA_CTRL		0x43544c00u

enum pp_ctrl_type {
	PP_CTRL_HELLO = 1,	/* client → server: parameters and address */
	PP_CTRL_ACK,		/* server → client: agreed limits or refusal */
	PP_CTRL_FIN,		/* client → server: all sizes done */
	PP_CTRL_FIN_ACK,	/* server → client: safe to close */
};

enum pp_ctrl_status {
	PP_STATUS_OK = 0,
	PP_STATUS_MISMATCH,	/* client and server options disagree */
};

/* Both processes run this program on hosts of one byte order. */
struct pp_ctrl {
	uint32_t	magic;
	uint32_t	version;
	uint32_t	type;		/* enum pp_ctrl_type */
	uint32_t	status;		/* enum pp_ctrl_status */
	uint32_t	tagged;
	uint32_t	iters;
	uint32_t	warmup;
	uint32_t	addrlen;
	uint64_t	size;		/* -S value or PP_SIZE_ALL */
	uint64_t	inject_size;
	uint64_t	max_msg_size;
	uint8_t		addr[PP_ADDR_MAX];
};

/* Direction of a data message: selects pattern, tag and CQ data. */
enum pp_dir {
	PP_PING = 0,	/* client → server */
	PP_PONG = 1,	/* server → client */
};

struct pp_opts {
	bool		tagged;
	const char	*port;
	const char	*bind_addr;
	const char	*host;		/* NULL for the server */
	uint32_t	iters;
	uint32_t	warmup;
	uint64_t	size;
	int		timeout_s;
};

/* One outstanding operation; its fi_context is the op_context. */
struct pp_op {
	struct fi_context		fctx;	/* first: op_context points here */
	const char			*what;
	bool				posted;
	bool				done;
	struct fi_cq_tagged_entry	entry;
	fi_addr_t			src;
};

/* What one message looks like on the wire and in its completion. */
struct pp_msg {
	void		*buf;
	size_t		len;
	uint64_t	tag;
	uint64_t	data;
	bool		inject;		/* sent by fi_[t]inject: no completion */
	uint64_t	seed;		/* payload pattern; 0 for control */
	const char	*what;
};

struct pp {
	struct pp_opts		opts;
	struct fi_info		*info;
	struct ft_rdm		rdm;
	struct fid_mr		*mr;
	void			*desc;
	uint8_t			*mem;
	size_t			mem_len;
	uint8_t			*tx_buf;
	uint8_t			*rx_buf;
	struct pp_ctrl		*ctrl_tx;
	struct pp_ctrl		*ctrl_rx;
	fi_addr_t		peer;
	uint64_t		data_mask;
	size_t			inject_size;	/* agreed by both sides */
	size_t			max_msg_size;	/* agreed by both sides */
	struct pp_op		send_op;
	struct pp_op		recv_op;
	uint64_t		*rtt_ns;
};

const char *const ft_prog = PP_NAME;

/* ---------------------------------------------------------------------
 * Completions, posting with retry
 * ------------------------------------------------------------------- */

static void pp_report_cq_error(struct pp *pp)
{
	struct fi_cq_err_entry err;
	char text[512];

	if (!ft_cq_readerr(pp->rdm.cq, &err, text, sizeof(text)))
		fprintf(stderr, PP_NAME ": error completion (context %p, flags %s): %s\n",
			err.op_context, fi_tostr(&err.flags, FI_TYPE_CQ_EVENT_FLAGS),
			text);
}

/* Matches one completion to its operation. */
static int pp_complete(struct pp *pp, const struct fi_cq_tagged_entry *e,
		       fi_addr_t src)
{
	struct pp_op *op;

	if (e->op_context == &pp->send_op.fctx)
		op = &pp->send_op;
	else if (e->op_context == &pp->recv_op.fctx)
		op = &pp->recv_op;
	else
		return ft_fail("completion with unknown context %p (flags %s)",
			       e->op_context,
			       fi_tostr(&e->flags, FI_TYPE_CQ_EVENT_FLAGS));
	if (!op->posted || op->done)
		return ft_fail("%s: completion for an operation not outstanding "
			       "(posted %d done %d, flags %s, len %zu)", op->what,
			       op->posted, op->done,
			       fi_tostr(&e->flags, FI_TYPE_CQ_EVENT_FLAGS), e->len);
	op->entry = *e;
	op->src = src;
	op->done = true;
	return 0;
}

/* Reads the CQ once (which also drives manual progress). */
static int pp_progress(struct pp *pp)
{
	struct fi_cq_tagged_entry entries[PP_CQ_BATCH];
	fi_addr_t srcs[PP_CQ_BATCH];
	ssize_t n = fi_cq_readfrom(pp->rdm.cq, entries, PP_CQ_BATCH, srcs);
	int ret;

	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		pp_report_cq_error(pp);
		return -FI_EAVAIL;
	}
	if (n < 0)
		return ft_err("fi_cq_readfrom", n);
	for (ssize_t i = 0; i < n; i++) {
		ret = pp_complete(pp, &entries[i], srcs[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int pp_check_deadline(uint64_t deadline, const struct pp *pp,
			     const char *what)
{
	if (ft_now_ns() < deadline)
		return 0;
	return ft_fail("timed out after %d s waiting for %s", pp->opts.timeout_s,
		       what);
}

/* Progresses until op completes, or fails after the timeout. */
static int pp_wait(struct pp *pp, struct pp_op *op)
{
	uint64_t deadline = ft_deadline_ns(pp->opts.timeout_s);
	int ret;

	while (!op->done) {
		ret = pp_progress(pp);
		if (!ret)
			ret = pp_check_deadline(deadline, pp, op->what);
		if (ret)
			return ret;
	}
	op->posted = false;
	return 0;
}

typedef ssize_t (*pp_post_fn)(struct pp *pp, const struct pp_msg *msg,
			      struct pp_op *op);

static ssize_t pp_try_send(struct pp *pp, const struct pp_msg *msg,
			   struct pp_op *op)
{
	if (msg->inject)
		return pp->opts.tagged ?
		       fi_tinject(pp->rdm.ep, msg->buf, msg->len, pp->peer, msg->tag) :
		       fi_inject(pp->rdm.ep, msg->buf, msg->len, pp->peer);
	return pp->opts.tagged ?
	       fi_tsenddata(pp->rdm.ep, msg->buf, msg->len, pp->desc, msg->data,
			    pp->peer, msg->tag, &op->fctx) :
	       fi_senddata(pp->rdm.ep, msg->buf, msg->len, pp->desc, msg->data,
			   pp->peer, &op->fctx);
}

static ssize_t pp_try_recv(struct pp *pp, const struct pp_msg *msg,
			   struct pp_op *op)
{
	return pp->opts.tagged ?
	       fi_trecv(pp->rdm.ep, msg->buf, msg->len, pp->desc, FI_ADDR_UNSPEC,
			msg->tag, 0, &op->fctx) :
	       fi_recv(pp->rdm.ep, msg->buf, msg->len, pp->desc, FI_ADDR_UNSPEC,
		       &op->fctx);
}

/*
 * Posts msg with fn, progressing the CQ and retrying while the provider
 * answers -FI_EAGAIN. op is marked outstanding when a completion is
 * expected (everything but inject).
 */
static int pp_post(struct pp *pp, pp_post_fn fn, const struct pp_msg *msg,
		   struct pp_op *op, const char *call, bool completes)
{
	uint64_t deadline = ft_deadline_ns(pp->opts.timeout_s);
	ssize_t ret;

	if (op->posted)
		return ft_fail("%s: posted twice", msg->what);
	op->what = msg->what;
	op->done = false;
	op->posted = completes;
	while ((ret = fn(pp, msg, op)) == -FI_EAGAIN) {
		ret = pp_progress(pp);
		if (!ret)
			ret = pp_check_deadline(deadline, pp, call);
		if (ret)
			break;
	}
	if (ret) {
		char what[64];

		op->posted = false;
		snprintf(what, sizeof(what), "%s: %s", msg->what, call);
		return ft_err(what, ret);
	}
	return 0;
}

static int pp_send(struct pp *pp, const struct pp_msg *msg)
{
	const char *call = msg->inject ?
			   (pp->opts.tagged ? "fi_tinject" : "fi_inject") :
			   (pp->opts.tagged ? "fi_tsenddata" : "fi_senddata");

	return pp_post(pp, pp_try_send, msg, &pp->send_op, call, !msg->inject);
}

/* Posts a receive of exactly msg->len bytes into a poisoned buffer. */
static int pp_recv(struct pp *pp, const struct pp_msg *msg)
{
	memset(msg->buf, FT_POISON, msg->len + FT_GUARD);
	return pp_post(pp, pp_try_recv, msg, &pp->recv_op,
		       pp->opts.tagged ? "fi_trecv" : "fi_recv", true);
}

static uint64_t pp_kind_flag(const struct pp *pp)
{
	return pp->opts.tagged ? FI_TAGGED : FI_MSG;
}

/* Checks the completion of the send of msg, if one was expected. */
static int pp_check_send(struct pp *pp, const struct pp_msg *msg)
{
	if (msg->inject)
		return 0;
	return ft_check_cq_flags(pp->send_op.entry.flags, FI_SEND | pp_kind_flag(pp),
				 PP_CQ_FLAGS, msg->what);
}

/*
 * Checks the receive completion against the message the peer sent:
 * flags, length, tag, CQ data, source address once the peer is known.
 */
static int pp_check_recv_entry(struct pp *pp, const struct pp_msg *msg)
{
	const struct fi_cq_tagged_entry *e = &pp->recv_op.entry;
	uint64_t want = FI_RECV | pp_kind_flag(pp) |
			(msg->inject ? 0 : FI_REMOTE_CQ_DATA);
	int ret = ft_check_cq_flags(e->flags, want, PP_CQ_FLAGS, msg->what);

	if (ret)
		return ret;
	if (e->len != msg->len)
		return ft_fail("%s: completion len %zu, expected %zu", msg->what,
			       e->len, msg->len);
	if (pp->opts.tagged && e->tag != msg->tag)
		return ft_fail("%s: completion tag 0x%" PRIx64 ", expected 0x%" PRIx64,
			       msg->what, e->tag, msg->tag);
	if (!msg->inject && e->data != msg->data)
		return ft_fail("%s: remote CQ data 0x%" PRIx64 ", expected 0x%" PRIx64,
			       msg->what, e->data, msg->data);
	if (pp->peer != FI_ADDR_UNSPEC && pp->recv_op.src != pp->peer)
		return ft_fail("%s: source fi_addr %" PRIu64 ", expected %" PRIu64,
			       msg->what, pp->recv_op.src, pp->peer);
	return 0;
}

/* ---------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------- */

/* The data message of one direction, iteration and size. */
static void pp_msg_data(const struct pp *pp, enum pp_dir dir, uint32_t it,
			size_t size, struct pp_msg *msg)
{
	static const char *const names[] = { "ping", "pong" };

	msg->buf = dir == PP_PING ? (pp->opts.host ? pp->tx_buf : pp->rx_buf) :
				    (pp->opts.host ? pp->rx_buf : pp->tx_buf);
	msg->len = size;
	msg->tag = (uint64_t) dir << 63 | (uint64_t) size << 32 | it;
	msg->data = (((uint64_t) it + 1) * 0x9E3779B97F4A7C15ULL ^
		     (uint64_t) size << 8 ^ dir) & pp->data_mask;
	msg->inject = it % 2 == 0 && size <= pp->inject_size;
	msg->seed = ft_pattern_seed(dir, it, 0, size);
	msg->what = names[dir];
}

/* A control message; outgoing ones use ctrl_tx, incoming ctrl_rx. */
static void pp_msg_ctrl(const struct pp *pp, enum pp_ctrl_type type,
			bool outgoing, struct pp_msg *msg)
{
	static const char *const names[] = {
		[PP_CTRL_HELLO] = "HELLO",
		[PP_CTRL_ACK] = "ACK",
		[PP_CTRL_FIN] = "FIN",
		[PP_CTRL_FIN_ACK] = "FIN_ACK",
	};

	msg->buf = outgoing ? pp->ctrl_tx : pp->ctrl_rx;
	msg->len = sizeof(struct pp_ctrl);
	msg->tag = PP_TAG_CTRL | type;
	msg->data = (PP_DATA_CTRL | type) & pp->data_mask;
	msg->inject = false;
	msg->seed = 0;
	msg->what = names[type];
}

static void pp_ctrl_init(struct pp *pp, enum pp_ctrl_type type,
			 enum pp_ctrl_status status)
{
	struct pp_ctrl *c = pp->ctrl_tx;

	memset(c, 0, sizeof(*c));
	c->magic = PP_CTRL_MAGIC;
	c->version = PP_CTRL_VERSION;
	c->type = type;
	c->status = status;
	c->tagged = pp->opts.tagged;
	c->iters = pp->opts.iters;
	c->warmup = pp->opts.warmup;
	c->size = pp->opts.size;
	c->inject_size = pp->inject_size;
	c->max_msg_size = pp->max_msg_size;
}

/* Checks a received control message's completion and header. */
static int pp_ctrl_check(struct pp *pp, enum pp_ctrl_type type)
{
	const struct pp_ctrl *c = pp->ctrl_rx;
	struct pp_msg msg;
	int ret;

	pp_msg_ctrl(pp, type, false, &msg);
	ret = pp_check_recv_entry(pp, &msg);
	if (ret)
		return ret;
	if (c->magic != PP_CTRL_MAGIC || c->version != PP_CTRL_VERSION ||
	    c->type != type)
		return ft_fail("%s: bad control message (magic 0x%x version %u "
			       "type %u)", msg.what, c->magic, c->version, c->type);
	return 0;
}

/* Sends a control message and waits for its send completion. */
static int pp_ctrl_send(struct pp *pp, enum pp_ctrl_type type)
{
	struct pp_msg msg;
	int ret;

	pp_msg_ctrl(pp, type, true, &msg);
	ret = pp_send(pp, &msg);
	if (!ret)
		ret = pp_wait(pp, &pp->send_op);
	return ret ? ret : pp_check_send(pp, &msg);
}

/* Receives one control message of the given type. */
static int pp_ctrl_recv(struct pp *pp, enum pp_ctrl_type type)
{
	struct pp_msg msg;
	int ret;

	pp_msg_ctrl(pp, type, false, &msg);
	ret = pp_recv(pp, &msg);
	if (!ret)
		ret = pp_wait(pp, &pp->recv_op);
	return ret ? ret : pp_ctrl_check(pp, type);
}

/* The client's half of a control exchange: send req, receive the reply. */
static int pp_ctrl_request(struct pp *pp, enum pp_ctrl_type req,
			   enum pp_ctrl_type reply)
{
	struct pp_msg in;
	int ret;

	pp_msg_ctrl(pp, reply, false, &in);
	ret = pp_recv(pp, &in);
	if (!ret)
		ret = pp_ctrl_send(pp, req);
	if (!ret)
		ret = pp_wait(pp, &pp->recv_op);
	return ret ? ret : pp_ctrl_check(pp, reply);
}

/* ---------------------------------------------------------------------
 * Sizes and statistics
 * ------------------------------------------------------------------- */

/* Fills sizes[] for -S all: 0, 1, then 2^k and 3*2^(k-1) up to cap, cap. */
static size_t pp_sizes(const struct pp *pp, size_t *sizes)
{
	size_t cap = pp->max_msg_size < PP_SIZE_CAP ? pp->max_msg_size : PP_SIZE_CAP;
	size_t n = 0;

	if (pp->opts.size != PP_SIZE_ALL) {
		sizes[n++] = pp->opts.size;
		return n;
	}
	sizes[n++] = 0;
	for (size_t p = 1; p <= cap; p *= 2) {
		sizes[n++] = p;
		if (p >= 2 && p + p / 2 <= cap)
			sizes[n++] = p + p / 2;
	}
	if (sizes[n - 1] != cap)
		sizes[n++] = cap;
	return n;
}

static void pp_print_header(const struct pp *pp)
{
	printf(PP_NAME ": provider %s, fabric %s, domain %s, %s, inject_size %zu, "
	       "max_msg_size %zu\n", pp->info->fabric_attr->prov_name,
	       pp->info->fabric_attr->name, pp->info->domain_attr->name,
	       pp->opts.tagged ? "tagged" : "msg", pp->inject_size,
	       pp->max_msg_size);
	printf("%10s %8s %12s %12s %12s\n", "bytes", "iters", "median_us",
	       "p99_us", "MB/s");
}

/* Prints one row: half round-trip latencies, bandwidth from the median. */
static void pp_print_row(const struct pp *pp, size_t size)
{
	uint32_t n = pp->opts.iters;
	double median = ft_median(pp->rtt_ns, n) / 2000.0;
	double p99 = ft_p99(pp->rtt_ns, n) / 2000.0;

	printf("%10zu %8u %12.2f %12.2f %12.2f\n", size, n, median, p99,
	       size / median);
	fflush(stdout);
}

/* ---------------------------------------------------------------------
 * The ping-pong
 * ------------------------------------------------------------------- */

/* One client round trip; stores its time when rtt is not NULL. */
static int pp_client_iter(struct pp *pp, uint32_t it, size_t size, uint64_t *rtt)
{
	struct pp_msg ping, pong;
	uint64_t t0;
	int ret;

	pp_msg_data(pp, PP_PING, it, size, &ping);
	pp_msg_data(pp, PP_PONG, it, size, &pong);
	ft_pattern_fill(ping.buf, size, ping.seed);
	ret = pp_recv(pp, &pong);
	if (ret)
		return ret;
	t0 = ft_now_ns();
	ret = pp_send(pp, &ping);
	if (!ret)
		ret = pp_wait(pp, &pp->recv_op);
	if (ret)
		return ret;
	if (rtt)
		*rtt = ft_now_ns() - t0;
	if (!ping.inject)
		ret = pp_wait(pp, &pp->send_op);
	if (!ret)
		ret = pp_check_send(pp, &ping);
	if (!ret)
		ret = pp_check_recv_entry(pp, &pong);
	return ret ? ret : ft_pattern_check(pong.buf, size, pong.seed, FT_GUARD,
					    pong.what);
}

/*
 * One server round trip. The pong is prepared before the ping arrives and
 * the ping is verified after the pong left, so checking stays off the
 * timed path.
 */
static int pp_server_iter(struct pp *pp, uint32_t it, size_t size)
{
	struct pp_msg ping, pong;
	int ret;

	pp_msg_data(pp, PP_PING, it, size, &ping);
	pp_msg_data(pp, PP_PONG, it, size, &pong);
	ft_pattern_fill(pong.buf, size, pong.seed);
	ret = pp_recv(pp, &ping);
	if (!ret)
		ret = pp_wait(pp, &pp->recv_op);
	if (!ret)
		ret = pp_check_recv_entry(pp, &ping);
	if (!ret)
		ret = pp_send(pp, &pong);
	if (!ret)
		ret = ft_pattern_check(ping.buf, size, ping.seed, FT_GUARD, ping.what);
	if (!ret && !pong.inject)
		ret = pp_wait(pp, &pp->send_op);
	return ret ? ret : pp_check_send(pp, &pong);
}

static int pp_run_size(struct pp *pp, size_t size)
{
	uint32_t total = pp->opts.warmup + pp->opts.iters;
	int ret = 0;

	for (uint32_t it = 0; !ret && it < total; it++) {
		uint64_t *rtt = it >= pp->opts.warmup ?
				&pp->rtt_ns[it - pp->opts.warmup] : NULL;

		ret = pp->opts.host ? pp_client_iter(pp, it, size, rtt) :
				      pp_server_iter(pp, it, size);
		if (ret)
			fprintf(stderr, PP_NAME ": failed at size %zu, iteration %u\n",
				size, it);
	}
	if (!ret && pp->opts.host)
		pp_print_row(pp, size);
	return ret;
}

/* Runs every size; returns how many through *count_p. */
static int pp_run(struct pp *pp, size_t *count_p)
{
	size_t sizes[PP_SIZES_MAX];
	size_t n = pp_sizes(pp, sizes);
	int ret = 0;

	if (pp->opts.size != PP_SIZE_ALL && pp->opts.size > pp->max_msg_size)
		return ft_fail("-S %" PRIu64 " exceeds max_msg_size %zu",
			       pp->opts.size, pp->max_msg_size);
	if (pp->opts.host)
		pp_print_header(pp);
	for (size_t i = 0; !ret && i < n; i++)
		ret = pp_run_size(pp, sizes[i]);
	*count_p = n;
	return ret;
}

/* ---------------------------------------------------------------------
 * Setup and teardown
 * ------------------------------------------------------------------- */

static struct fi_info *pp_hints(const struct pp_opts *opts)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = (opts->tagged ? FI_TAGGED : FI_MSG) | FI_SOURCE;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->cq_data_size = 4;
	return hints;
}

/* The client's -b: a source address taken from fi_getinfo(FI_SOURCE). */
static int pp_hints_src(struct fi_info *hints, const char *bind_addr)
{
	struct fi_info *src;
	int ret = fi_getinfo(PP_FI_VERSION, bind_addr, "0", FI_SOURCE, hints, &src);

	if (ret)
		return ft_err("fi_getinfo (-b source address)", ret);
	if (!src->src_addr) {
		fi_freeinfo(src);
		return ft_fail("the provider returned no address for -b %s", bind_addr);
	}
	hints->src_addr = malloc(src->src_addrlen);
	if (!hints->src_addr) {
		fi_freeinfo(src);
		return -FI_ENOMEM;
	}
	memcpy(hints->src_addr, src->src_addr, src->src_addrlen);
	hints->src_addrlen = src->src_addrlen;
	hints->addr_format = src->addr_format;
	fi_freeinfo(src);
	return 0;
}

static int pp_getinfo(struct pp *pp)
{
	struct fi_info *hints = pp_hints(&pp->opts);
	const struct pp_opts *o = &pp->opts;
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	if (o->host) {
		ret = o->bind_addr ? pp_hints_src(hints, o->bind_addr) : 0;
		if (!ret)
			ret = fi_getinfo(PP_FI_VERSION, o->host, o->port, 0, hints,
					 &pp->info);
	} else {
		/* No -b: as a server that names no address, reachable at all. */
		ret = fi_getinfo(PP_FI_VERSION, o->bind_addr, o->port, FI_SOURCE,
				 hints, &pp->info);
	}
	fi_freeinfo(hints);
	if (ret)
		return ft_err("fi_getinfo", ret);
	if (o->host && !pp->info->dest_addr)
		return ft_fail("provider %s returned no dest_addr for %s:%s",
			       pp->info->fabric_attr->prov_name, o->host, o->port);
	return 0;
}

/* Rounds a buffer length up to a cache line, keeping the next one aligned. */
static size_t pp_align(size_t len)
{
	return (len + PP_ALIGN - 1) & ~(size_t) (PP_ALIGN - 1);
}

/* One area for every buffer, registered once if the provider asks. */
static int pp_alloc_buffers(struct pp *pp)
{
	size_t data_len = pp_align((pp->max_msg_size < PP_SIZE_CAP ?
				    pp->max_msg_size : PP_SIZE_CAP) + FT_GUARD);
	size_t ctrl_len = pp_align(sizeof(struct pp_ctrl) + FT_GUARD);
	int ret;

	pp->mem_len = 2 * data_len + 2 * ctrl_len;
	if (posix_memalign((void **) &pp->mem, 4096, pp->mem_len))
		return -FI_ENOMEM;
	memset(pp->mem, 0, pp->mem_len);
	pp->tx_buf = pp->mem;
	pp->rx_buf = pp->tx_buf + data_len;
	pp->ctrl_tx = (struct pp_ctrl *) (pp->rx_buf + data_len);
	pp->ctrl_rx = (struct pp_ctrl *) ((uint8_t *) pp->ctrl_tx + ctrl_len);
	pp->rtt_ns = calloc(pp->opts.iters, sizeof(*pp->rtt_ns));
	if (!pp->rtt_ns)
		return -FI_ENOMEM;
	if (!(pp->info->domain_attr->mr_mode & FI_MR_LOCAL))
		return 0;
	ret = fi_mr_reg(pp->rdm.domain, pp->mem, pp->mem_len, FI_SEND | FI_RECV, 0, 0,
			0, &pp->mr, NULL);
	if (ret)
		return ft_err("fi_mr_reg", ret);
	pp->desc = fi_mr_desc(pp->mr);
	return 0;
}

static int pp_open(struct pp *pp)
{
	size_t cq_data_size;
	int ret;

	ret = pp_getinfo(pp);
	if (ret)
		return ret;
	cq_data_size = pp->info->domain_attr->cq_data_size;
	pp->data_mask = cq_data_size >= 8 ? UINT64_MAX :
			(UINT64_C(1) << (8 * cq_data_size)) - 1;
	pp->inject_size = pp->info->tx_attr->inject_size;
	pp->max_msg_size = pp->info->ep_attr->max_msg_size;

	ret = ft_rdm_open(&pp->rdm, pp->info, 0);
	if (!ret)
		ret = pp_alloc_buffers(pp);
	return ret ? ret : ft_rdm_enable(&pp->rdm, pp->info);
}

/* Closes everything in the reverse order of pp_open; 0 or an error. */
static int pp_close(struct pp *pp)
{
	int status = 0;

	ft_rdm_close_ep(&pp->rdm, &status);
	ft_close_fid(pp->mr ? &pp->mr->fid : NULL, "fi_close (mr)", &status);
	ft_rdm_close(&pp->rdm, &status);
	free(pp->rtt_ns);
	free(pp->mem);
	fi_freeinfo(pp->info);
	return status;
}

/* The server accepts the client's HELLO and agrees on limits. */
static int pp_server_accept(struct pp *pp)
{
	const struct pp_ctrl *hello = pp->ctrl_rx;
	enum pp_ctrl_status status = PP_STATUS_OK;
	int ret;

	ret = pp_ctrl_recv(pp, PP_CTRL_HELLO);
	if (ret)
		return ret;
	if (hello->addrlen == 0 || hello->addrlen > PP_ADDR_MAX)
		return ft_fail("HELLO carries a %u-byte address", hello->addrlen);
	ret = ft_rdm_insert(&pp->rdm, hello->addr, &pp->peer, "fi_av_insert");
	if (ret)
		return ret;
	if (hello->tagged != pp->opts.tagged || hello->iters != pp->opts.iters ||
	    hello->warmup != pp->opts.warmup || hello->size != pp->opts.size) {
		status = PP_STATUS_MISMATCH;
	} else {
		if (hello->inject_size < pp->inject_size)
			pp->inject_size = hello->inject_size;
		if (hello->max_msg_size < pp->max_msg_size)
			pp->max_msg_size = hello->max_msg_size;
	}
	pp_ctrl_init(pp, PP_CTRL_ACK, status);
	ret = pp_ctrl_send(pp, PP_CTRL_ACK);
	if (!ret && status != PP_STATUS_OK)
		ret = ft_fail("the client's options differ (-m, -n, -w or -S): "
			      "client %s -n %u -w %u, server %s -n %u -w %u",
			      hello->tagged ? "tagged" : "msg", hello->iters,
			      hello->warmup, pp->opts.tagged ? "tagged" : "msg",
			      pp->opts.iters, pp->opts.warmup);
	return ret;
}

/* The client introduces itself and takes the agreed limits. */
static int pp_client_connect(struct pp *pp)
{
	const struct pp_ctrl *ack = pp->ctrl_rx;
	size_t len = PP_ADDR_MAX;
	int ret;

	ret = ft_rdm_insert(&pp->rdm, pp->info->dest_addr, &pp->peer, "fi_av_insert");
	if (ret)
		return ret;
	pp_ctrl_init(pp, PP_CTRL_HELLO, PP_STATUS_OK);
	ret = fi_getname(&pp->rdm.ep->fid, pp->ctrl_tx->addr, &len);
	if (ret)
		return ft_err("fi_getname", ret);
	pp->ctrl_tx->addrlen = (uint32_t) len;
	ret = pp_ctrl_request(pp, PP_CTRL_HELLO, PP_CTRL_ACK);
	if (ret)
		return ret;
	if (ack->status != PP_STATUS_OK)
		return ft_fail("the server refused: its -m, -n, -w or -S differ");
	if (ack->inject_size > pp->inject_size || ack->max_msg_size > pp->max_msg_size)
		return ft_fail("the server agreed to limits above ours");
	pp->inject_size = ack->inject_size;
	pp->max_msg_size = ack->max_msg_size;
	return 0;
}

static int pp_finish(struct pp *pp)
{
	int ret;

	if (pp->opts.host) {
		pp_ctrl_init(pp, PP_CTRL_FIN, PP_STATUS_OK);
		return pp_ctrl_request(pp, PP_CTRL_FIN, PP_CTRL_FIN_ACK);
	}
	ret = pp_ctrl_recv(pp, PP_CTRL_FIN);
	if (ret)
		return ret;
	pp_ctrl_init(pp, PP_CTRL_FIN_ACK, PP_STATUS_OK);
	return pp_ctrl_send(pp, PP_CTRL_FIN_ACK);
}

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

static void pp_usage(void)
{
	fprintf(stderr,
		"usage: " PP_NAME " [options]              (server)\n"
		"       " PP_NAME " [options] server_host  (client)\n"
		"  -m tagged|msg  interface (default tagged)\n"
		"  -p port        server port (default " PP_DEFAULT_PORT "; 0 lets the "
		"server pick one and print it)\n"
		"  -b addr        local address to bind (server default: none, so every address)\n"
		"  -n iters       timed iterations per size (default %d)\n"
		"  -w warmup      untimed iterations per size (default %d)\n"
		"  -S size|all    one message size, or 0 B up to 64 KiB (default all)\n"
		"  -t seconds     timeout of every wait (default %d)\n"
		"Both sides must use the same -m, -n, -w and -S.\n",
		PP_DEFAULT_ITERS, PP_DEFAULT_WARMUP, PP_DEFAULT_TIMEOUT);
}

static int pp_parse_opts(int argc, char **argv, struct pp_opts *o)
{
	uint64_t v;
	int c;

	*o = (struct pp_opts) {
		.tagged = true,
		.port = PP_DEFAULT_PORT,
		.iters = PP_DEFAULT_ITERS,
		.warmup = PP_DEFAULT_WARMUP,
		.size = PP_SIZE_ALL,
		.timeout_s = PP_DEFAULT_TIMEOUT,
	};
	while ((c = getopt(argc, argv, "m:p:b:n:w:S:t:h")) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "tagged") && strcmp(optarg, "msg")) {
				pp_usage();
				return -1;
			}
			o->tagged = !strcmp(optarg, "tagged");
			break;
		case 'p':
			o->port = optarg;
			break;
		case 'b':
			o->bind_addr = optarg;
			break;
		case 'n':
			if (ft_parse_num(optarg, 1, 10000000, &v))
				return -1;
			o->iters = (uint32_t) v;
			break;
		case 'w':
			if (ft_parse_num(optarg, 0, 10000000, &v))
				return -1;
			o->warmup = (uint32_t) v;
			break;
		case 'S':
			if (!strcmp(optarg, "all"))
				o->size = PP_SIZE_ALL;
			else if (ft_parse_num(optarg, 0, UINT32_MAX, &o->size))
				return -1;
			break;
		case 't':
			if (ft_parse_timeout(optarg, &o->timeout_s))
				return -1;
			break;
		default:
			pp_usage();
			return -1;
		}
	}
	if (ft_parse_host(argc, argv, &o->host)) {
		pp_usage();
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct pp pp = { .peer = FI_ADDR_UNSPEC };
	size_t sizes = 0;
	int ret, close_ret;

	if (pp_parse_opts(argc, argv, &pp.opts))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);

	ret = pp_open(&pp);
	if (!ret && !pp.opts.host)
		ret = ft_rdm_print_listening(&pp.rdm, "provider %s",
					     pp.info->fabric_attr->prov_name);
	if (!ret)
		ret = pp.opts.host ? pp_client_connect(&pp) : pp_server_accept(&pp);
	if (!ret)
		ret = pp_run(&pp, &sizes);
	if (!ret)
		ret = pp_finish(&pp);
	close_ret = pp_close(&pp);
	if (ret || close_ret) {
		fprintf(stderr, PP_NAME ": FAIL\n");
		return 1;
	}
	printf(PP_NAME ": PASS (%s, %zu size%s)\n", pp.opts.tagged ? "tagged" : "msg",
	       sizes, sizes == 1 ? "" : "s");
	return 0;
}
