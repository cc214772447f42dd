/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_stream: a streaming functional test over the public libfabric API
 * (plus the optional rdmx counters extension, <rdma/fi_ext_rdmx.h>). A
 * sender streams tagged messages to one or more receivers with many sends
 * in flight; every message is checked exactly once, byte for byte. It
 * reaches what a ping-pong never does: unexpected messages, receiver-not-
 * ready flow control, -FI_EAGAIN, loss recovery, and a receiver that dies
 * mid-run.
 *
 *   receiver: rdmx_stream -r [-b addr] [-p port] [-s senders] [--window W]
 *                         [--hold-ms N] [--ordered] [--max-size N] [--untagged]
 *                         [--ctrl-completion default|transmit|delivery]
 *                         [-t timeout_s]
 *   sender:   rdmx_stream -p port[,port...] [-n count] [--sizes mixed|small|max|zero]
 *                         [--completion delivery|inject] [--window W]
 *                         [--seed S] [--expect-rnr] [--expect-eagain]
 *                         [--dead K] [--linger-ms N] [--max-size N]
 *                         [--untagged] [--ctrl-completion L] [-t timeout_s] host
 *
 * Handshake: the sender posts its control receives, then sends each
 * receiver a HELLO carrying its address (fi_getname), the message count,
 * the seed, the size mix and its max_msg_size. The receiver inserts the
 * address into its AV and answers ACCEPT with the id the sender puts in
 * its data tags and the agreed max_msg_size (the smaller of both sides).
 *
 * Data: message i to a receiver has tag id << 40 | i, a length computed
 * from (seed, i, size mix, max_msg_size) and a payload computed from
 * (seed, i, length), so the receiver knows each message's exact length and
 * every byte before it arrives. Messages may arrive in any order: the
 * receiver keeps a window of wildcard tagged receives posted and a bitmap
 * of the messages seen, so an unknown tag, a message seen twice, a wrong
 * length, a wrong byte, a byte written past the message, a wrong source or
 * a message still missing at the timeout fails the run. When all of a
 * sender's messages arrived, the receiver sends it DONE (messages and
 * bytes received) and waits for that send's completion before closing;
 * the sender checks the DONE against what it sent.
 *
 * Completions: control messages ask for FI_DELIVERY_COMPLETE unless
 * --ctrl-completion says default (no flag: whatever the provider's
 * default level is, the way a program that exits once its last send
 * completed relies on it) or transmit (FI_TRANSMIT_COMPLETE). Data
 * sends do too by default (--completion delivery), so a send completes
 * once the receiver took the message and a lost receiver shows up as
 * error completions; --completion inject asks FI_INJECT_COMPLETE in the
 * tx op_flags (rdmx completes a send up to inject_size when it is
 * posted), so that path is checked end to end as well, through the
 * receiver's bitmap and its DONE.
 *
 * --ordered (receiver, one sender): send-after-send order. The receiver
 * numbers its data receives in the order it posts them; the n-th posted
 * receive must take the n-th message sent (FI_ORDER_SAS), whatever order
 * the completions of different sizes come in.
 *
 * --untagged (both sides): data travels as untagged messages (fi_senddata,
 * fi_recv) carrying what would have been the tag as remote CQ data.
 *
 * --max-size N (both sides): the largest message of any size mix (default
 * 65536; the agreed value is also capped by max_msg_size). The receiver
 * keeps --window buffers of that size.
 *
 * --dead K: receiver K (0-based in the -p list) is expected to die mid-run.
 * Its sends must then fail with FI_EHOSTUNREACH, nothing else may fail;
 * the sender stops sending to it, prints the time from the first send to
 * K that went unanswered to that send's error completion
 * (time_to_error_ms=N), and still completes everything to the others.
 *
 * Every wait fails after -t seconds (default 60) without a completion,
 * naming what it waited for. Exit status: 0 with a last line
 * "rdmx_stream: PASS ..." on full success, 1 on any failure, 2 on bad
 * options.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_rdmx.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define ST_NAME			"rdmx_stream"
#define ST_FI_VERSION		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
#define ST_DEFAULT_PORT		"47620"
#define ST_DEFAULT_COUNT	10000
#define ST_DEFAULT_TIMEOUT	60
#define ST_DEFAULT_TX_WINDOW	64	/* sends in flight per receiver */
#define ST_DEFAULT_RX_WINDOW	256	/* data receives kept posted */
#define ST_DEFAULT_LINGER_MS	250
#define ST_COUNT_MAX		100000000ULL	/* bounds the receiver's bitmap */
#define ST_SIZE_CAP		65536	/* default largest message of any size mix */
#define ST_PEERS_MAX		16
#define ST_ADDR_MAX		256
#define ST_CQ_BATCH		16
/* The completion flags checked: the kind of operation. */
#define ST_CQ_FLAGS		(FI_SEND | FI_RECV | FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC)
#define ST_ALIGN		64
#define ST_REPORTS		10	/* receiver progress lines per sender */

/* Tags: bit 63 marks control messages; data carries id << 40 | index. */
#define ST_TAG_CTRL		(1ULL << 63)
#define ST_TAG_ID_SHIFT		40
#define ST_TAG_MSG_MASK		((1ULL << ST_TAG_ID_SHIFT) - 1)
#define ST_TAG_DATA_IGNORE	(ST_TAG_CTRL - 1)	/* any data tag */
#define ST_TAG_INDEX_IGNORE	0xffffffffULL		/* any peer index */

#define ST_CTRL_MAGIC		0x52545358u	/* "XSTR" */
#define ST_CTRL_VERSION		1u

enum st_ctrl_type {
	ST_CTRL_HELLO = 1,	/* sender → receiver: stream parameters, address */
	ST_CTRL_ACCEPT,		/* receiver → sender: id and agreed max_msg_size */
	ST_CTRL_DONE,		/* receiver → sender: everything arrived */
	ST_CTRL_TYPES,
};

enum st_completion {
	ST_COMPLETION_DELIVERY,	/* tx op_flags FI_DELIVERY_COMPLETE */
	ST_COMPLETION_INJECT,	/* tx op_flags FI_INJECT_COMPLETE */
	ST_COMPLETION_CNT,
};

static const char *const st_completion_names[ST_COMPLETION_CNT] = {
	[ST_COMPLETION_DELIVERY] = "delivery",
	[ST_COMPLETION_INJECT] = "inject",
};

/* The completion level of control sends (--ctrl-completion). */
enum st_ctrl_level {
	ST_CTRL_LEVEL_DELIVERY,	/* FI_DELIVERY_COMPLETE */
	ST_CTRL_LEVEL_DEFAULT,	/* no flag: the provider's default */
	ST_CTRL_LEVEL_TRANSMIT,	/* FI_TRANSMIT_COMPLETE */
	ST_CTRL_LEVELS,
};

static const char *const st_ctrl_level_names[ST_CTRL_LEVELS] = {
	[ST_CTRL_LEVEL_DELIVERY] = "delivery",
	[ST_CTRL_LEVEL_DEFAULT] = "default",
	[ST_CTRL_LEVEL_TRANSMIT] = "transmit",
};

static const uint64_t st_ctrl_level_flags[ST_CTRL_LEVELS] = {
	[ST_CTRL_LEVEL_DELIVERY] = FI_DELIVERY_COMPLETE,
	[ST_CTRL_LEVEL_DEFAULT] = 0,
	[ST_CTRL_LEVEL_TRANSMIT] = FI_TRANSMIT_COMPLETE,
};

enum st_sizes {
	ST_SIZES_MIXED,		/* 0..max, mostly small, the edges included */
	ST_SIZES_SMALL,		/* 0..64 bytes */
	ST_SIZES_MAX,		/* every message max_msg_size */
	ST_SIZES_ZERO,		/* every message 0 bytes */
	ST_SIZES_CNT,
};

static const char *const st_sizes_names[ST_SIZES_CNT] = {
	[ST_SIZES_MIXED] = "mixed",
	[ST_SIZES_SMALL] = "small",
	[ST_SIZES_MAX] = "max",
	[ST_SIZES_ZERO] = "zero",
};

static const char *const st_ctrl_names[ST_CTRL_TYPES] = {
	[ST_CTRL_HELLO] = "HELLO",
	[ST_CTRL_ACCEPT] = "ACCEPT",
	[ST_CTRL_DONE] = "DONE",
};

/* A control message. Both processes run on hosts of one byte order. */
struct st_ctrl {
	uint32_t	magic;
	uint32_t	version;
	uint32_t	type;		/* enum st_ctrl_type */
	uint32_t	index;		/* the receiver's position in -p */
	uint32_t	id;		/* ACCEPT: id in the sender's data tags */
	uint32_t	sizes;		/* enum st_sizes */
	uint32_t	addrlen;
	uint32_t	reserved;
	uint64_t	count;		/* HELLO: to send; DONE: received */
	uint64_t	seed;
	uint64_t	max_msg_size;	/* HELLO: the sender's; ACCEPT: agreed */
	uint64_t	bytes;		/* DONE: payload bytes received */
	uint8_t		addr[ST_ADDR_MAX];
};

struct st_opts {
	bool		receiver;
	const char	*bind_addr;
	const char	*ports[ST_PEERS_MAX];
	uint32_t	nports;
	const char	*host;
	uint32_t	senders;
	uint64_t	count;
	enum st_sizes	sizes;
	enum st_completion completion;
	enum st_ctrl_level ctrl_level;	/* control sends */
	uint32_t	window;		/* 0: the role's default */
	uint64_t	seed;
	uint64_t	hold_ms;
	uint64_t	linger_ms;
	bool		expect_rnr;
	bool		expect_eagain;
	int		dead;		/* -1: no receiver is expected to die */
	int		timeout_s;
	bool		ordered;	/* receiver: check send-after-send order */
	bool		untagged;	/* data: fi_senddata / fi_recv */
	uint64_t	max_size;	/* largest message of any size mix */
};

enum st_op_kind {
	ST_OP_DATA_TX,
	ST_OP_DATA_RX,
	ST_OP_CTRL_TX,
	ST_OP_CTRL_RX,
	ST_OP_KINDS,
};

static const char *const st_op_names[ST_OP_KINDS] = {
	[ST_OP_DATA_TX] = "data send",
	[ST_OP_DATA_RX] = "data receive",
	[ST_OP_CTRL_TX] = "control send",
	[ST_OP_CTRL_RX] = "control receive",
};

/* One operation; its fi_context is the op_context. */
struct st_op {
	struct fi_context		fctx;	/* first: op_context points here */
	enum st_op_kind			kind;
	uint32_t			peer;	/* index in st.peers (not DATA_RX) */
	bool				posted;	/* in the provider's hands */
	bool				done;	/* control: completion not yet used */
	uint8_t				*buf;
	size_t				len;	/* DATA_TX: the message's length */
	uint64_t			msg;	/* DATA_TX: the message's index;
						   DATA_RX: its posting order */
	uint64_t			filled;	/* DATA_TX: index + 1 of the payload in buf */
	uint64_t			post_ns;
	struct fi_cq_tagged_entry	entry;	/* CTRL_RX: its completion */
};

/* The other side of one stream: a receiver (sender role) or a sender. */
struct st_peer {
	fi_addr_t	addr;
	uint32_t	index;		/* the receiver's position in -p */
	uint32_t	id;		/* tag id of the stream's data */

	uint64_t	count;
	uint64_t	seed;
	enum st_sizes	sizes;
	size_t		max_msg_size;	/* agreed by both sides */
	uint64_t	total_bytes;	/* sender: payload bytes of the stream */

	uint64_t	next;		/* sender: next message to post */
	uint64_t	msgs;		/* completed sends / messages received */
	uint64_t	bytes;
	uint64_t	first_ns, last_ns;
	uint64_t	next_report;	/* receiver: messages at the next line */
	uint64_t	*seen;		/* receiver: bitmap by message index */

	struct st_op	*tx;		/* sender: the window of sends */
	uint32_t	*free_tx;	/* sender: stack of free window slots */
	uint32_t	nfree;
	uint32_t	outstanding;

	struct st_ctrl	*ctrl_out;	/* HELLO, or ACCEPT then DONE */
	struct st_ctrl	*accept_in;	/* sender: ACCEPT */
	struct st_ctrl	*done_in;	/* sender: DONE */
	struct st_op	ctrl_tx, accept_rx, done_rx;
	bool		done;		/* sender: DONE checked; receiver: sent */

	bool		dead;		/* sender: --dead K failed */
	uint64_t	errors;
	uint64_t	err_msg;	/* the earliest posted send that failed */
	uint64_t	err_post_ns, err_ns;
};

struct st {
	struct st_opts		opts;
	struct fi_info		*info;
	struct ft_rdm		rdm;
	struct fid_mr		*mr;
	void			*desc;
	uint8_t			*mem;
	size_t			mem_len, mem_used;
	size_t			max_msg_size;	/* this side's, capped */
	uint32_t		window;
	struct st_peer		peers[ST_PEERS_MAX];
	uint32_t		npeers;
	struct st_op		*rx;		/* receiver: the data window */
	bool			rx_window_up;	/* receiver: the window was posted */
	bool			rx_unposted;	/* receiver: some of it to repost */
	struct st_op		hello_rx;
	struct st_ctrl		*hello;
	uint64_t		eagain;		/* posts answered -FI_EAGAIN */
	uint64_t		rx_posted;	/* receiver: data receives posted */
	uint64_t		last_event_ns;	/* last completion or start */
	uint64_t		start_ns, end_ns;	/* sender: the stream */
	char			pass[256];	/* the PASS line, printed at exit */
};

const char *const ft_prog = ST_NAME;

static double st_seconds(uint64_t from_ns, uint64_t to_ns)
{
	return to_ns > from_ns ? (double) (to_ns - from_ns) / 1e9 : 0.0;
}

static double st_mbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double) bytes / seconds / 1e6 : 0.0;
}

/* ---------------------------------------------------------------------
 * Message lengths and payloads
 * ------------------------------------------------------------------- */

static size_t st_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * The length of message i: mixed gives 0 and max once in a hundred each,
 * else up to 256 bytes (60%), up to 4 KiB (30%) or up to max (8%).
 */
static size_t st_msg_len(enum st_sizes sizes, uint64_t seed, uint64_t i, size_t max)
{
	uint64_t h = ft_mix(seed ^ ft_mix(i + 0x9E3779B97F4A7C15ULL));
	uint64_t pick = h % 100, r = h >> 8;

	if (sizes == ST_SIZES_MAX)
		return max;
	if (sizes == ST_SIZES_ZERO)
		return 0;
	if (sizes == ST_SIZES_SMALL)
		return r % (st_min(64, max) + 1);
	if (pick == 0)
		return 0;
	if (pick == 99)
		return max;
	return r % (st_min(pick < 61 ? 256 : pick < 91 ? 4096 : max, max) + 1);
}

/* FI_MSG or FI_TAGGED: what data completions say they were. */
static uint64_t st_data_kind(const struct st *st)
{
	return st->opts.untagged ? FI_MSG : FI_TAGGED;
}

/* The payload pattern of message i, which also depends on its length. */
static uint64_t st_msg_seed(uint64_t seed, uint64_t i, size_t len)
{
	return ft_mix(seed ^ ft_mix(i * 0xD1B54A32D192ED03ULL + len));
}

/* ---------------------------------------------------------------------
 * Completions
 * ------------------------------------------------------------------- */

static ssize_t st_repost_rx(struct st *st, struct st_op *op)
{
	ssize_t ret = st->opts.untagged ?
		fi_recv(st->rdm.ep, op->buf, st->max_msg_size, st->desc, FI_ADDR_UNSPEC,
			&op->fctx) :
		fi_trecv(st->rdm.ep, op->buf, st->max_msg_size, st->desc,
			 FI_ADDR_UNSPEC, 0, ST_TAG_DATA_IGNORE, &op->fctx);

	op->posted = !ret;
	if (!ret)
		op->msg = st->rx_posted++;
	return ret;
}

/* Prints a progress line each time a tenth of a sender's stream arrived. */
static void st_rx_report(struct st_peer *p)
{
	if (p->msgs < p->next_report)
		return;
	printf(ST_NAME ": sender %u: received %" PRIu64 " of %" PRIu64 " messages\n",
	       p->id, p->msgs, p->count);
	p->next_report += p->count / ST_REPORTS ? p->count / ST_REPORTS : 1;
}

/* Verifies one data message against the stream it belongs to. */
static int st_rx_data(struct st *st, struct st_op *op,
		      const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
	uint64_t tag = st->opts.untagged ? e->data : e->tag;
	uint64_t id = tag >> ST_TAG_ID_SHIFT, i = tag & ST_TAG_MSG_MASK;
	struct st_peer *p = id && id <= st->npeers ? &st->peers[id - 1] : NULL;
	char what[64];
	size_t len;
	ssize_t ret;

	ret = ft_check_cq_flags(e->flags, FI_RECV | st_data_kind(st), ST_CQ_FLAGS,
				"data receive");
	if (!ret && st->opts.untagged && !(e->flags & FI_REMOTE_CQ_DATA))
		ret = ft_fail("untagged data receive without FI_REMOTE_CQ_DATA");
	if (ret)
		return (int) ret;
	if (!p)
		return ft_fail("message with tag 0x%" PRIx64 ": no sender has id %" PRIu64,
			       tag, id);
	if (i >= p->count)
		return ft_fail("sender %u: message %" PRIu64 " beyond its %" PRIu64
			       " messages", p->id, i, p->count);
	if (p->seen[i / 64] & (1ULL << (i % 64)))
		return ft_fail("sender %u: message %" PRIu64 " received twice", p->id, i);
	if (st->opts.ordered && i != op->msg)
		return ft_fail("sender %u: message %" PRIu64 " matched the receive posted "
			       "%" PRIu64 "th: send-after-send order broken", p->id, i,
			       op->msg + 1);
	len = st_msg_len(p->sizes, p->seed, i, p->max_msg_size);
	if (e->len != len)
		return ft_fail("sender %u: message %" PRIu64 " is %zu bytes, expected %zu",
			       p->id, i, e->len, len);
	snprintf(what, sizeof(what), "sender %u message %" PRIu64, p->id, i);
	ret = ft_pattern_check(op->buf, len, st_msg_seed(p->seed, i, len), FT_GUARD, what);
	if (ret)
		return (int) ret;
	if (src != p->addr)
		return ft_fail("sender %u: message %" PRIu64 " from fi_addr %" PRIu64
			       ", expected %" PRIu64, p->id, i, src, p->addr);
	p->seen[i / 64] |= 1ULL << (i % 64);
	p->msgs++;
	p->bytes += len;
	p->last_ns = st->last_event_ns;
	if (!p->first_ns)
		p->first_ns = p->last_ns;
	st_rx_report(p);

	memset(op->buf, FT_POISON, len + FT_GUARD);
	ret = st_repost_rx(st, op);
	if (ret == -FI_EAGAIN) {
		st->eagain++;
		st->rx_unposted = true;	/* the main loop reposts it */
		return 0;
	}
	return ret ? ft_err("fi_trecv (data)", ret) : 0;
}

/* A send completed: its window slot is free again. */
static void st_tx_release(struct st_peer *p, struct st_op *op)
{
	p->outstanding--;
	p->free_tx[p->nfree++] = (uint32_t) (op - p->tx);
}

static int st_tx_data(struct st *st, struct st_op *op,
		      const struct fi_cq_tagged_entry *e)
{
	struct st_peer *p = &st->peers[op->peer];

	st_tx_release(p, op);
	p->msgs++;
	p->bytes += op->len;
	p->last_ns = st->last_event_ns;
	return ft_check_cq_flags(e->flags, FI_SEND | st_data_kind(st), ST_CQ_FLAGS,
				 "data send");
}

/* Matches one completion to its operation. */
static int st_complete(struct st *st, const struct fi_cq_tagged_entry *e,
		       fi_addr_t src)
{
	struct st_op *op = e->op_context;

	if (!op || !op->posted)
		return ft_fail("completion for an operation not outstanding "
			       "(context %p, flags %s, len %zu)", e->op_context,
			       fi_tostr(&e->flags, FI_TYPE_CQ_EVENT_FLAGS), e->len);
	op->posted = false;
	switch (op->kind) {
	case ST_OP_DATA_RX:
		return st_rx_data(st, op, e, src);
	case ST_OP_DATA_TX:
		return st_tx_data(st, op, e);
	default:
		op->entry = *e;
		op->done = true;
		return 0;
	}
}

/*
 * A send to the receiver --dead names failed with FI_EHOSTUNREACH: the
 * receiver is dead; remember the earliest posted send that failed.
 */
static void st_tx_failed(struct st *st, struct st_op *op)
{
	struct st_peer *p = &st->peers[op->peer];

	if (!p->errors || op->post_ns < p->err_post_ns) {
		p->err_msg = op->msg;
		p->err_post_ns = op->post_ns;
		p->err_ns = st->last_event_ns;
	}
	p->errors++;
	p->dead = true;
	st_tx_release(p, op);
}

/* Reads one error entry: tolerated only for sends to the dead receiver. */
static int st_cq_error(struct st *st)
{
	struct fi_cq_err_entry err;
	char text[512];
	int ret = ft_cq_readerr(st->rdm.cq, &err, text, sizeof(text));
	struct st_op *op;

	if (ret)
		return ret;
	op = err.op_context;
	if (op && op->posted && op->kind == ST_OP_DATA_TX &&
	    (int) op->peer == st->opts.dead && err.err == FI_EHOSTUNREACH) {
		op->posted = false;
		st_tx_failed(st, op);
		return 0;
	}
	fprintf(stderr, ST_NAME ": error completion (%s, peer %u, flags %s): %s\n",
		op ? st_op_names[op->kind] : "unknown operation",
		op ? op->peer : 0, fi_tostr(&err.flags, FI_TYPE_CQ_EVENT_FLAGS), text);
	return -FI_EIO;
}

/* Reads the CQ once, which also drives the provider's manual progress. */
static int st_progress(struct st *st)
{
	struct fi_cq_tagged_entry entries[ST_CQ_BATCH];
	fi_addr_t srcs[ST_CQ_BATCH];
	ssize_t n = fi_cq_readfrom(st->rdm.cq, entries, ST_CQ_BATCH, srcs);
	int ret;

	if (n == -FI_EAGAIN)
		return 0;
	st->last_event_ns = ft_now_ns();
	if (n == -FI_EAVAIL)
		return st_cq_error(st);
	if (n < 0)
		return ft_err("fi_cq_readfrom", n);
	for (ssize_t i = 0; i < n; i++) {
		ret = st_complete(st, &entries[i], srcs[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Progresses once; fails when nothing completed for the timeout. */
static int st_poll(struct st *st, const char *what)
{
	int ret = st_progress(st);

	if (ret)
		return ret;
	if (ft_now_ns() - st->last_event_ns >= (uint64_t) st->opts.timeout_s * 1000000000ULL)
		return ft_fail("timed out: no completion for %d s while waiting for %s",
			       st->opts.timeout_s, what);
	return 0;
}

/* ---------------------------------------------------------------------
 * Control messages
 * ------------------------------------------------------------------- */

static uint64_t st_ctrl_tag(enum st_ctrl_type type, uint32_t index)
{
	return ST_TAG_CTRL | (uint64_t) type << 32 | index;
}

/*
 * Posts a control send or receive once. A control send completes as
 * --ctrl-completion says (by default once the peer took it): the
 * receiver closes when its DONE did.
 */
static ssize_t st_ctrl_post_once(struct st *st, struct st_op *op,
				 struct st_ctrl *buf, fi_addr_t addr, uint64_t tag,
				 uint64_t ignore)
{
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(*buf) };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov,
		.desc = &st->desc,
		.iov_count = 1,
		.addr = addr,
		.tag = tag,
		.context = &op->fctx,
	};

	if (op->kind == ST_OP_CTRL_RX)
		return fi_trecv(st->rdm.ep, buf, sizeof(*buf), st->desc, addr, tag, ignore,
				&op->fctx);
	return fi_tsendmsg(st->rdm.ep, &msg, FI_COMPLETION |
			   st_ctrl_level_flags[st->opts.ctrl_level]);
}

/* Posts a control send or receive, progressing while it gets -FI_EAGAIN. */
static int st_ctrl_post(struct st *st, struct st_op *op, struct st_ctrl *buf,
			fi_addr_t addr, uint64_t tag, uint64_t ignore)
{
	const char *call = op->kind == ST_OP_CTRL_TX ? "fi_tsendmsg (control)" :
						       "fi_trecv (control)";
	ssize_t ret;

	op->done = false;
	op->posted = true;
	while ((ret = st_ctrl_post_once(st, op, buf, addr, tag, ignore)) == -FI_EAGAIN) {
		st->eagain++;
		ret = st_poll(st, call);
		if (ret)
			break;
	}
	if (ret) {
		op->posted = false;
		return ft_err(call, ret);
	}
	return 0;
}

static void st_ctrl_init(struct st_ctrl *c, enum st_ctrl_type type, uint32_t index)
{
	memset(c, 0, sizeof(*c));
	c->magic = ST_CTRL_MAGIC;
	c->version = ST_CTRL_VERSION;
	c->type = type;
	c->index = index;
}

static int st_ctrl_send(struct st *st, struct st_peer *p, enum st_ctrl_type type)
{
	return st_ctrl_post(st, &p->ctrl_tx, p->ctrl_out, p->addr,
			    st_ctrl_tag(type, p->index), 0);
}

/* Checks a received control message's completion and header. */
static int st_ctrl_check(const struct st_op *op, const struct st_ctrl *c,
			 enum st_ctrl_type type)
{
	const char *what = st_ctrl_names[type];
	int ret = ft_check_cq_flags(op->entry.flags, FI_RECV | FI_TAGGED, ST_CQ_FLAGS, what);

	if (ret)
		return ret;
	if (op->entry.len != sizeof(*c))
		return ft_fail("%s: %zu bytes, expected %zu", what, op->entry.len,
			       sizeof(*c));
	if (c->magic != ST_CTRL_MAGIC || c->version != ST_CTRL_VERSION ||
	    c->type != type)
		return ft_fail("%s: bad control message (magic 0x%x version %u type %u)",
			       what, c->magic, c->version, c->type);
	return 0;
}

/* ---------------------------------------------------------------------
 * Counters of the rdmx extension
 * ------------------------------------------------------------------- */

#define ST_STAT(field)	{ #field, offsetof(struct fi_rdmx_ep_stats, field) }

static const struct {
	const char	*name;
	size_t		off;
} st_stat_fields[] = {
	ST_STAT(rx_malformed), ST_STAT(rx_dropped), ST_STAT(rx_unexpected),
	ST_STAT(rx_no_recv), ST_STAT(tx_errors), ST_STAT(retransmits),
	ST_STAT(fast_retransmits), ST_STAT(duplicates), ST_STAT(acks_sent),
	ST_STAT(rnr_sent), ST_STAT(rnr_received), ST_STAT(rnr_completions),
	ST_STAT(rnr_backoffs), ST_STAT(eagain), ST_STAT(peers_unreachable),
	ST_STAT(rx_unauth), ST_STAT(challenges), ST_STAT(rx_stale),
	ST_STAT(budget_used), ST_STAT(budget_peak), ST_STAT(budget_refused),
	ST_STAT(anon_peers),
};

/* Reads and prints the provider's counters; false when it has none. */
static bool st_stats(struct st *st, struct fi_rdmx_ep_stats *stats)
{
	struct fi_rdmx_ep_ops *ops = NULL;
	int ret = fi_open_ops(&st->rdm.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL);

	if (ret || !ops || ops->size < sizeof(*ops) ||
	    ops->query_stats(st->rdm.ep, stats)) {
		printf(ST_NAME ": counters: not available from provider %s (%s); "
		       "their checks are skipped\n", st->info->fabric_attr->prov_name,
		       ret ? fi_strerror(-ret) : "no query_stats");
		return false;
	}
	printf(ST_NAME ": counters:");
	for (size_t i = 0; i < sizeof(st_stat_fields) / sizeof(st_stat_fields[0]); i++)
		printf(" %s=%" PRIu64, st_stat_fields[i].name,
		       *(const uint64_t *) ((const char *) stats + st_stat_fields[i].off));
	printf("\n");
	return true;
}

/* ---------------------------------------------------------------------
 * Receiver
 * ------------------------------------------------------------------- */

/* Takes a sender in from its HELLO and answers ACCEPT. */
static int st_accept_sender(struct st *st)
{
	const struct st_ctrl *h = st->hello;
	struct st_peer *p = &st->peers[st->npeers];
	int ret = st_ctrl_check(&st->hello_rx, h, ST_CTRL_HELLO);

	if (ret)
		return ret;
	st->hello_rx.done = false;
	if (!h->count || h->count > ST_COUNT_MAX || h->sizes >= ST_SIZES_CNT ||
	    !h->max_msg_size || !h->addrlen || h->addrlen > ST_ADDR_MAX)
		return ft_fail("HELLO with bad parameters: count %" PRIu64 " sizes %u "
			       "max_msg_size %" PRIu64 " addrlen %u", h->count,
			       h->sizes, h->max_msg_size, h->addrlen);
	ret = ft_rdm_insert(&st->rdm, h->addr, &p->addr, "fi_av_insert (sender)");
	if (ret)
		return ret;
	p->index = h->index;
	p->id = st->npeers + 1;
	p->count = h->count;
	p->seed = h->seed;
	p->sizes = (enum st_sizes) h->sizes;
	p->max_msg_size = st_min(st->max_msg_size, h->max_msg_size);
	p->next_report = p->count / ST_REPORTS ? p->count / ST_REPORTS : 1;
	p->seen = calloc((p->count + 63) / 64, sizeof(*p->seen));
	if (!p->seen)
		return -FI_ENOMEM;
	st->npeers++;
	printf(ST_NAME ": sender %u joined: %" PRIu64 " messages, sizes %s, seed %"
	       PRIu64 ", max_msg_size %zu\n", p->id, p->count,
	       st_sizes_names[p->sizes], p->seed, p->max_msg_size);

	st_ctrl_init(p->ctrl_out, ST_CTRL_ACCEPT, p->index);
	p->ctrl_out->id = p->id;
	p->ctrl_out->count = p->count;
	p->ctrl_out->seed = p->seed;
	p->ctrl_out->sizes = p->sizes;
	p->ctrl_out->max_msg_size = p->max_msg_size;
	ret = st_ctrl_send(st, p, ST_CTRL_ACCEPT);
	if (!ret && st->npeers < st->opts.senders)
		ret = st_ctrl_post(st, &st->hello_rx, st->hello, FI_ADDR_UNSPEC,
				   st_ctrl_tag(ST_CTRL_HELLO, 0), ST_TAG_INDEX_IGNORE);
	return ret;
}

/* Posts the window of data receives, or reposts those left out. */
static int st_rx_post_window(struct st *st)
{
	st->rx_window_up = true;
	st->rx_unposted = false;
	for (uint32_t i = 0; i < st->window; i++) {
		struct st_op *op = &st->rx[i];
		ssize_t ret;

		if (op->posted)
			continue;
		ret = st_repost_rx(st, op);
		if (ret == -FI_EAGAIN) {
			st->eagain++;
			st->rx_unposted = true;	/* the rest at the next pass */
			return 0;
		}
		if (ret)
			return ft_err("fi_trecv (data)", ret);
	}
	return 0;
}

/* Sends DONE to each sender whose stream is complete. */
static int st_rx_send_dones(struct st *st)
{
	int ret;

	for (uint32_t i = 0; i < st->npeers; i++) {
		struct st_peer *p = &st->peers[i];

		if (p->done || p->msgs < p->count || p->ctrl_tx.posted)
			continue;
		st_ctrl_init(p->ctrl_out, ST_CTRL_DONE, p->index);
		p->ctrl_out->id = p->id;
		p->ctrl_out->count = p->msgs;
		p->ctrl_out->bytes = p->bytes;
		p->done = true;
		printf(ST_NAME ": sender %u: all %" PRIu64 " messages (%" PRIu64
		       " bytes) in %.3f s, %.2f MB/s; sending DONE\n", p->id, p->msgs,
		       p->bytes, st_seconds(p->first_ns, p->last_ns),
		       st_mbps(p->bytes, st_seconds(p->first_ns, p->last_ns)));
		ret = st_ctrl_send(st, p, ST_CTRL_DONE);
		if (ret)
			return ret;
	}
	return 0;
}

static bool st_rx_finished(const struct st *st)
{
	if (st->npeers < st->opts.senders)
		return false;
	for (uint32_t i = 0; i < st->npeers; i++) {
		if (!st->peers[i].done || st->peers[i].ctrl_tx.posted)
			return false;
	}
	return true;
}

static const char *st_rx_waiting_for(const struct st *st)
{
	if (st->npeers < st->opts.senders)
		return "a sender's HELLO";
	for (uint32_t i = 0; i < st->npeers; i++) {
		if (st->peers[i].msgs < st->peers[i].count)
			return "data messages (some are missing)";
	}
	return "the completion of DONE";
}

/* After a failure: how much of a sender's stream arrived, what is missing. */
static void st_rx_report_missing(const struct st_peer *p)
{
	uint64_t first = p->count;

	for (uint64_t i = 0; i < p->count; i++) {
		if (!(p->seen[i / 64] & (1ULL << (i % 64)))) {
			first = i;
			break;
		}
	}
	fprintf(stderr, ST_NAME ": sender %u: %" PRIu64 " of %" PRIu64 " messages "
		"received", p->id, p->msgs, p->count);
	if (first < p->count)
		fprintf(stderr, "; %" PRIu64 " missing, the first is message %" PRIu64,
			p->count - p->msgs, first);
	fputc('\n', stderr);
}

/*
 * The receiver: takes senders in, holds back its receives for --hold-ms
 * after the first HELLO (while still progressing), then keeps the window
 * posted until every stream is complete and every DONE acknowledged.
 */
static int st_receiver_run(struct st *st)
{
	uint64_t hold_end = 0;
	int ret;

	ret = st_ctrl_post(st, &st->hello_rx, st->hello, FI_ADDR_UNSPEC,
			   st_ctrl_tag(ST_CTRL_HELLO, 0), ST_TAG_INDEX_IGNORE);
	while (!ret && !st_rx_finished(st)) {
		ret = st_poll(st, st_rx_waiting_for(st));
		if (!ret && st->hello_rx.done) {
			ret = st_accept_sender(st);
			if (!hold_end)
				hold_end = ft_now_ns() + st->opts.hold_ms * 1000000ULL;
		}
		if (!ret && st->npeers && (!st->rx_window_up || st->rx_unposted) &&
		    ft_now_ns() >= hold_end) {
			if (!st->rx_window_up)
				st->last_event_ns = ft_now_ns();	/* the hold is not idle */
			ret = st_rx_post_window(st);
		}
		if (!ret)
			ret = st_rx_send_dones(st);
	}
	for (uint32_t i = 0; ret && i < st->npeers; i++)
		st_rx_report_missing(&st->peers[i]);
	return ret;
}

static int st_receiver_report(struct st *st)
{
	struct fi_rdmx_ep_stats stats;
	uint64_t msgs = 0, bytes = 0, first = UINT64_MAX, last = 0;
	double secs;

	for (uint32_t i = 0; i < st->npeers; i++) {
		const struct st_peer *p = &st->peers[i];

		msgs += p->msgs;
		bytes += p->bytes;
		if (p->first_ns && p->first_ns < first)
			first = p->first_ns;
		if (p->last_ns > last)
			last = p->last_ns;
	}
	st_stats(st, &stats);
	secs = first == UINT64_MAX ? 0 : st_seconds(first, last);
	snprintf(st->pass, sizeof(st->pass), "receiver: %" PRIu64 " messages, %"
		 PRIu64 " bytes, %.3f s, %.2f MB/s from %u sender%s, each exactly once",
		 msgs, bytes, secs, st_mbps(bytes, secs), st->npeers,
		 st->npeers == 1 ? "" : "s");
	return 0;
}

/* ---------------------------------------------------------------------
 * Sender
 * ------------------------------------------------------------------- */

/* Sends HELLO to every receiver and takes in each ACCEPT. */
static int st_sender_connect(struct st *st)
{
	size_t len;
	int ret;

	for (uint32_t r = 0; r < st->npeers; r++) {
		struct st_peer *p = &st->peers[r];

		ret = st_ctrl_post(st, &p->accept_rx, p->accept_in, FI_ADDR_UNSPEC,
				   st_ctrl_tag(ST_CTRL_ACCEPT, r), 0);
		if (!ret)
			ret = st_ctrl_post(st, &p->done_rx, p->done_in, FI_ADDR_UNSPEC,
					   st_ctrl_tag(ST_CTRL_DONE, r), 0);
		if (ret)
			return ret;
		st_ctrl_init(p->ctrl_out, ST_CTRL_HELLO, r);
		p->ctrl_out->count = p->count;
		p->ctrl_out->seed = p->seed;
		p->ctrl_out->sizes = p->sizes;
		p->ctrl_out->max_msg_size = st->max_msg_size;
		len = sizeof(p->ctrl_out->addr);
		ret = fi_getname(&st->rdm.ep->fid, p->ctrl_out->addr, &len);
		if (ret)
			return ft_err("fi_getname", ret);
		p->ctrl_out->addrlen = (uint32_t) len;
		ret = st_ctrl_send(st, p, ST_CTRL_HELLO);
		if (ret)
			return ret;
	}
	for (uint32_t r = 0; r < st->npeers; r++) {
		struct st_peer *p = &st->peers[r];
		const struct st_ctrl *a = p->accept_in;

		while (!p->accept_rx.done || p->ctrl_tx.posted) {
			ret = st_poll(st, "ACCEPT from every receiver");
			if (ret)
				return ret;
		}
		ret = st_ctrl_check(&p->accept_rx, a, ST_CTRL_ACCEPT);
		if (ret)
			return ret;
		if (a->index != r || !a->id || a->id > (1u << (63 - ST_TAG_ID_SHIFT)) - 1 ||
		    !a->max_msg_size || a->max_msg_size > st->max_msg_size)
			return ft_fail("receiver %u: bad ACCEPT (index %u id %u "
				       "max_msg_size %" PRIu64 ")", r, a->index, a->id,
				       a->max_msg_size);
		p->id = a->id;
		p->max_msg_size = a->max_msg_size;
		for (uint64_t i = 0; i < p->count; i++)
			p->total_bytes += st_msg_len(p->sizes, p->seed, i, p->max_msg_size);
		printf(ST_NAME ": receiver %u (port %s) accepted: id=%u messages=%" PRIu64
		       " bytes=%" PRIu64 " sizes=%s max_msg_size=%zu completion=%s\n",
		       r, st->opts.ports[r], p->id, p->count,
		       p->total_bytes, st_sizes_names[p->sizes], p->max_msg_size,
		       st_completion_names[st->opts.completion]);
	}
	return 0;
}

static bool st_tx_can_post(const struct st_peer *p)
{
	return !p->dead && p->next < p->count && p->nfree;
}

/* Posts the next message to p once; -FI_EAGAIN leaves it for later. */
static ssize_t st_tx_post(struct st *st, struct st_peer *p)
{
	uint32_t slot = p->free_tx[p->nfree - 1];
	struct st_op *op = &p->tx[slot];
	uint64_t i = p->next, tag;
	ssize_t ret;

	if (op->filled != i + 1) {
		op->msg = i;
		op->len = st_msg_len(p->sizes, p->seed, i, p->max_msg_size);
		ft_pattern_fill(op->buf, op->len, st_msg_seed(p->seed, i, op->len));
		op->filled = i + 1;
	}
	op->post_ns = ft_now_ns();
	op->posted = true;
	tag = (uint64_t) p->id << ST_TAG_ID_SHIFT | i;
	ret = st->opts.untagged ?
		fi_senddata(st->rdm.ep, op->buf, op->len, st->desc, tag, p->addr,
			    &op->fctx) :
		fi_tsend(st->rdm.ep, op->buf, op->len, st->desc, p->addr, tag, &op->fctx);
	if (ret) {
		op->posted = false;
		return ret;
	}
	if (!p->first_ns)
		p->first_ns = op->post_ns;
	p->nfree--;
	p->outstanding++;
	p->next++;
	return 0;
}

/* Posts round-robin, one message per receiver in turn, while any can take one. */
static int st_tx_post_all(struct st *st, uint32_t *rr)
{
	uint32_t idle = 0;

	while (idle < st->npeers) {
		struct st_peer *p = &st->peers[*rr];
		ssize_t ret;

		*rr = (*rr + 1) % st->npeers;
		if (!st_tx_can_post(p)) {
			idle++;
			continue;
		}
		ret = st_tx_post(st, p);
		if (ret == -FI_EAGAIN) {
			st->eagain++;
			return 0;	/* progress first */
		}
		if (ret)
			return ft_err("fi_tsend (data)", ret);
		idle = 0;
	}
	return 0;
}

/* Checks a receiver's DONE against what was sent to it. */
static int st_tx_check_done(struct st_peer *p)
{
	const struct st_ctrl *d = p->done_in;
	int ret;

	p->done_rx.done = false;
	ret = st_ctrl_check(&p->done_rx, d, ST_CTRL_DONE);
	if (ret)
		return ret;
	if (d->index != p->index || d->count != p->count || d->bytes != p->total_bytes)
		return ft_fail("receiver %u: DONE reports %" PRIu64 " messages, %" PRIu64
			       " bytes (index %u); sent %" PRIu64 ", %" PRIu64, p->index,
			       d->count, d->bytes, d->index, p->count, p->total_bytes);
	p->done = true;
	return 0;
}

static bool st_tx_finished(const struct st *st)
{
	for (uint32_t r = 0; r < st->npeers; r++) {
		const struct st_peer *p = &st->peers[r];

		if (p->outstanding || (!p->dead && (p->next < p->count || !p->done)))
			return false;
	}
	return true;
}

/* Streams to every receiver until all is sent, completed and DONE. */
static int st_sender_stream(struct st *st)
{
	uint32_t rr = 0;
	int ret = 0;

	st->start_ns = ft_now_ns();
	while (!ret && !st_tx_finished(st)) {
		ret = st_poll(st, "send completions and DONE from the receivers");
		for (uint32_t r = 0; !ret && r < st->npeers; r++) {
			if (st->peers[r].done_rx.done)
				ret = st_tx_check_done(&st->peers[r]);
		}
		if (!ret)
			ret = st_tx_post_all(st, &rr);
	}
	st->end_ns = ft_now_ns();
	if (ret) {
		for (uint32_t r = 0; r < st->npeers; r++) {
			const struct st_peer *p = &st->peers[r];

			fprintf(stderr, ST_NAME ": receiver %u: %" PRIu64 " of %" PRIu64
				" posted, %" PRIu64 " completed, %u outstanding, %" PRIu64
				" failed, DONE %s\n", r, p->next, p->count, p->msgs,
				p->outstanding, p->errors, p->done ? "received" : "not received");
		}
		return ret;
	}
	/*
	 * The receivers close once their DONE is acknowledged; should our
	 * acknowledgement be lost, they resend DONE, so keep progressing a
	 * while to acknowledge it again rather than leave them to fail it.
	 */
	for (uint64_t until = ft_now_ns() + st->opts.linger_ms * 1000000ULL;
	     !ret && ft_now_ns() < until;)
		ret = st_progress(st);
	return ret;
}

/* The checks of --dead: errors only to K, and when they came. */
static int st_sender_check_dead(struct st *st)
{
	const struct st_peer *p;
	uint64_t ms;

	if (st->opts.dead < 0)
		return 0;
	p = &st->peers[st->opts.dead];
	if (!p->dead)
		return ft_fail("receiver %d never failed: expected FI_EHOSTUNREACH error "
			       "completions for its sends (was it killed mid-run?)",
			       st->opts.dead);
	ms = (p->err_ns - p->err_post_ns) / 1000000;
	printf(ST_NAME ": receiver %d unreachable after %" PRIu64 " of %" PRIu64
	       " messages: %" PRIu64 " sends failed with FI_EHOSTUNREACH; the first "
	       "unanswered send (message %" PRIu64 ") failed %" PRIu64 " ms after it "
	       "was posted (time_to_error_ms=%" PRIu64 ")\n", st->opts.dead, p->msgs,
	       p->count, p->errors, p->err_msg, ms, ms);
	return 0;
}

static int st_sender_report(struct st *st)
{
	struct fi_rdmx_ep_stats stats;
	uint64_t msgs = 0, bytes = 0;
	bool have_stats;
	double secs = st_seconds(st->start_ns, st->end_ns);
	int ret = st_sender_check_dead(st);

	for (uint32_t r = 0; r < st->npeers; r++) {
		const struct st_peer *p = &st->peers[r];

		msgs += p->msgs;
		bytes += p->bytes;
		if (!p->dead)
			printf(ST_NAME ": receiver %u: %" PRIu64 " messages, %" PRIu64
			       " bytes, DONE matches\n", r, p->msgs, p->bytes);
	}
	printf(ST_NAME ": -FI_EAGAIN returned %" PRIu64 " times\n", st->eagain);
	have_stats = st_stats(st, &stats);
	if (st->opts.expect_eagain && !st->eagain)
		ret = ft_fail("--expect-eagain: no post returned -FI_EAGAIN");
	if (st->opts.expect_rnr && have_stats &&
	    (!stats.rnr_received || (!stats.rnr_backoffs && !stats.rnr_completions)))
		ret = ft_fail("--expect-rnr: rnr_received=%" PRIu64 " rnr_backoffs=%"
			      PRIu64 " rnr_completions=%" PRIu64 ": no RNR flow control "
			      "happened", stats.rnr_received, stats.rnr_backoffs,
			      stats.rnr_completions);
	if (ret)
		return ret;
	snprintf(st->pass, sizeof(st->pass), "sender: %" PRIu64 " messages, %" PRIu64
		 " bytes, %.3f s, %.2f MB/s to %u receiver%s%s", msgs, bytes, secs,
		 st_mbps(bytes, secs), st->npeers, st->npeers == 1 ? "" : "s",
		 st->opts.dead >= 0 ? " (one died as expected)" : "");
	return 0;
}

/* ---------------------------------------------------------------------
 * Setup and teardown
 * ------------------------------------------------------------------- */

static struct fi_info *st_hints(const struct st_opts *o)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->tx_attr->op_flags = o->completion == ST_COMPLETION_DELIVERY ?
				   FI_DELIVERY_COMPLETE : FI_INJECT_COMPLETE;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED | FI_SOURCE | (o->untagged ? FI_MSG : 0);
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	return hints;
}

/* Resolves host:port of receiver r and inserts it into the AV. */
static int st_insert_receiver(struct st *st, struct fi_info *hints, uint32_t r)
{
	struct fi_info *info = NULL;
	int ret = r ? fi_getinfo(ST_FI_VERSION, st->opts.host, st->opts.ports[r], 0,
				 hints, &info) : 0;

	if (ret)
		return ft_err("fi_getinfo (receiver address)", ret);
	if (!r)
		info = st->info;
	if (!info->dest_addr)
		ret = ft_fail("no dest_addr for %s port %s", st->opts.host,
			      st->opts.ports[r]);
	else if (fi_av_insert(st->rdm.av, info->dest_addr, 1, &st->peers[r].addr, 0,
			      NULL) != 1)
		ret = ft_fail("fi_av_insert of %s port %s failed", st->opts.host,
			      st->opts.ports[r]);
	if (r)
		fi_freeinfo(info);
	return ret;
}

static uint8_t *st_carve(struct st *st, size_t len)
{
	uint8_t *p = st->mem + st->mem_used;

	st->mem_used += (len + ST_ALIGN - 1) & ~(size_t) (ST_ALIGN - 1);
	return p;
}

/* One area for every buffer (registered once if the provider asks). */
static int st_alloc(struct st *st)
{
	size_t ctrl = (sizeof(struct st_ctrl) + ST_ALIGN - 1) & ~(size_t) (ST_ALIGN - 1);
	size_t data = (st->max_msg_size + FT_GUARD + ST_ALIGN - 1) & ~(size_t) (ST_ALIGN - 1);
	uint32_t npeers = st->opts.receiver ? st->opts.senders : st->opts.nports;
	size_t nbufs = st->opts.receiver ? st->window : (size_t) npeers * st->window;
	int ret;

	st->mem_len = (3 * (size_t) npeers + 1) * ctrl + nbufs * data;
	if (posix_memalign((void **) &st->mem, 4096, st->mem_len))
		return -FI_ENOMEM;
	memset(st->mem, FT_POISON, st->mem_len);
	st->hello = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
	st->hello_rx.kind = ST_OP_CTRL_RX;
	for (uint32_t r = 0; r < npeers; r++) {
		struct st_peer *p = &st->peers[r];

		p->ctrl_out = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
		p->accept_in = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
		p->done_in = (struct st_ctrl *) st_carve(st, sizeof(struct st_ctrl));
		p->ctrl_tx = (struct st_op) { .kind = ST_OP_CTRL_TX, .peer = r };
		p->accept_rx = (struct st_op) { .kind = ST_OP_CTRL_RX, .peer = r };
		p->done_rx = (struct st_op) { .kind = ST_OP_CTRL_RX, .peer = r };
		if (st->opts.receiver)
			continue;
		p->tx = calloc(st->window, sizeof(*p->tx));
		p->free_tx = calloc(st->window, sizeof(*p->free_tx));
		if (!p->tx || !p->free_tx)
			return -FI_ENOMEM;
		for (uint32_t i = 0; i < st->window; i++) {
			p->tx[i] = (struct st_op) { .kind = ST_OP_DATA_TX, .peer = r,
						    .buf = st_carve(st, data) };
			p->free_tx[p->nfree++] = st->window - 1 - i;
		}
	}
	if (st->opts.receiver) {
		st->rx = calloc(st->window, sizeof(*st->rx));
		if (!st->rx)
			return -FI_ENOMEM;
		for (uint32_t i = 0; i < st->window; i++)
			st->rx[i] = (struct st_op) { .kind = ST_OP_DATA_RX,
						     .buf = st_carve(st, data) };
	}
	if (!(st->info->domain_attr->mr_mode & FI_MR_LOCAL))
		return 0;
	ret = fi_mr_reg(st->rdm.domain, st->mem, st->mem_len, FI_SEND | FI_RECV, 0, 0, 0,
			&st->mr, NULL);
	if (ret)
		return ft_err("fi_mr_reg", ret);
	st->desc = fi_mr_desc(st->mr);
	return 0;
}

/* Gets the fi_info: the bound address (receiver) or receiver 0 (sender). */
static int st_getinfo(struct st *st, struct fi_info *hints)
{
	const struct st_opts *o = &st->opts;
	int ret = o->receiver ?
		  fi_getinfo(ST_FI_VERSION, o->bind_addr, o->ports[0], FI_SOURCE, hints,
			     &st->info) :
		  fi_getinfo(ST_FI_VERSION, o->host, o->ports[0], 0, hints, &st->info);

	if (ret)
		return ft_err("fi_getinfo", ret);
	st->max_msg_size = st_min(st->info->ep_attr->max_msg_size, o->max_size);
	st->window = o->window ? o->window :
		     o->receiver ? ST_DEFAULT_RX_WINDOW : ST_DEFAULT_TX_WINDOW;
	if (o->receiver && st->window + 2 > st->info->rx_attr->size)
		return ft_fail("--window %u leaves no room in rx_attr->size %zu",
			       st->window, st->info->rx_attr->size);
	return 0;
}

static int st_open(struct st *st)
{
	struct fi_info *hints = st_hints(&st->opts);
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	ret = st_getinfo(st, hints);
	if (!ret)
		ret = ft_rdm_open(&st->rdm, st->info, 0);
	if (!ret)
		ret = st_alloc(st);
	if (!ret)
		ret = ft_rdm_enable(&st->rdm, st->info);
	for (uint32_t r = 0; !ret && !st->opts.receiver && r < st->opts.nports; r++) {
		ret = st_insert_receiver(st, hints, r);
		st->npeers++;
	}
	fi_freeinfo(hints);
	st->last_event_ns = ft_now_ns();
	return ret;
}

/* Closes everything in the reverse order of st_open; 0 or an error. */
static int st_close(struct st *st)
{
	int status = 0;

	ft_rdm_close_ep(&st->rdm, &status);
	ft_close_fid(st->mr ? &st->mr->fid : NULL, "fi_close (mr)", &status);
	ft_rdm_close(&st->rdm, &status);
	for (uint32_t r = 0; r < ST_PEERS_MAX; r++) {
		free(st->peers[r].seen);
		free(st->peers[r].tx);
		free(st->peers[r].free_tx);
	}
	free(st->rx);
	free(st->mem);
	fi_freeinfo(st->info);
	return status;
}

/* ---------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------- */

static void st_usage(void)
{
	fprintf(stderr,
		"usage: " ST_NAME " -r [options]                    (receiver)\n"
		"       " ST_NAME " -p port[,port...] [options] host (sender)\n"
		"  -p port         receiver: port to bind (default " ST_DEFAULT_PORT
		", 0 picks one\n"
		"                  and prints it); sender: the receivers' ports\n"
		"  -t seconds      fail after this long without a completion (default %d)\n"
		"  --window W      receiver: data receives kept posted (default %d);\n"
		"                  sender: sends in flight per receiver (default %d)\n"
		"  --max-size N    largest message of a size mix (default %d)\n"
		"  --untagged      data as untagged messages (fi_senddata, fi_recv)\n"
		"  --ctrl-completion default|transmit|delivery  completion level of\n"
		"                  control sends (default delivery)\n"
		"receiver:\n"
		"  -b addr         address to bind (default 127.0.0.1)\n"
		"  -s senders      senders to expect (default 1)\n"
		"  --hold-ms N     post no data receive for N ms after the first HELLO\n"
		"  --ordered       the n-th receive posted must take the n-th message\n"
		"sender:\n"
		"  -n count        messages to each receiver (default %d)\n"
		"  --sizes mixed|small|max|zero  message lengths (default mixed)\n"
		"  --completion delivery|inject  data sends complete when the\n"
		"                  receiver took them, or once posted\n"
		"                  (FI_INJECT_COMPLETE; default delivery)\n"
		"  --seed S        seed of lengths and payloads (default 1)\n"
		"  --dead K        receiver K (0-based in -p) dies mid-run\n"
		"  --expect-rnr    fail unless the RNR counters moved\n"
		"  --expect-eagain fail unless a post returned -FI_EAGAIN\n"
		"  --linger-ms N   keep progressing N ms after the end (default %d)\n",
		ST_DEFAULT_TIMEOUT, ST_DEFAULT_RX_WINDOW, ST_DEFAULT_TX_WINDOW,
		ST_SIZE_CAP, ST_DEFAULT_COUNT, ST_DEFAULT_LINGER_MS);
}

/* Splits "p0,p1,..." in place into o->ports. */
static int st_parse_ports(char *list, struct st_opts *o)
{
	uint64_t v;

	o->nports = 0;
	for (char *save = NULL, *s = strtok_r(list, ",", &save); s;
	     s = strtok_r(NULL, ",", &save)) {
		if (o->nports == ST_PEERS_MAX || ft_parse_num(s, 0, 65535, &v)) {
			fprintf(stderr, ST_NAME ": -p takes 1 to %d ports\n", ST_PEERS_MAX);
			return -1;
		}
		o->ports[o->nports++] = s;
	}
	return o->nports ? 0 : -1;
}

/* Finds s among n names; its index, or -1 after a message. */
static int st_parse_name(const char *opt, const char *s,
			 const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(s, names[i]))
			return i;
	}
	fprintf(stderr, ST_NAME ": --%s %s: unknown\n", opt, s);
	return -1;
}

enum {
	ST_OPT_HOLD = 256, ST_OPT_SIZES, ST_OPT_WINDOW, ST_OPT_SEED, ST_OPT_RNR,
	ST_OPT_EAGAIN, ST_OPT_DEAD, ST_OPT_LINGER, ST_OPT_COMPLETION, ST_OPT_ORDERED,
	ST_OPT_MAX_SIZE, ST_OPT_UNTAGGED, ST_OPT_CTRL_COMPLETION,
};

static const struct option st_long_opts[] = {
	{ "hold-ms", required_argument, NULL, ST_OPT_HOLD },
	{ "sizes", required_argument, NULL, ST_OPT_SIZES },
	{ "window", required_argument, NULL, ST_OPT_WINDOW },
	{ "seed", required_argument, NULL, ST_OPT_SEED },
	{ "expect-rnr", no_argument, NULL, ST_OPT_RNR },
	{ "expect-eagain", no_argument, NULL, ST_OPT_EAGAIN },
	{ "dead", required_argument, NULL, ST_OPT_DEAD },
	{ "linger-ms", required_argument, NULL, ST_OPT_LINGER },
	{ "completion", required_argument, NULL, ST_OPT_COMPLETION },
	{ "ordered", no_argument, NULL, ST_OPT_ORDERED },
	{ "max-size", required_argument, NULL, ST_OPT_MAX_SIZE },
	{ "untagged", no_argument, NULL, ST_OPT_UNTAGGED },
	{ "ctrl-completion", required_argument, NULL, ST_OPT_CTRL_COMPLETION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Checks that the options fit the role; 0 or -1. */
static int st_check_role(struct st_opts *o, bool receiver_only, bool sender_only,
			 char *ports)
{
	if (o->receiver ? o->host != NULL || sender_only :
			  !o->host || receiver_only || !ports) {
		fprintf(stderr, ST_NAME ": %s\n", o->receiver ?
			"a receiver (-r) takes no host and no sender option" :
			"a sender needs -p and a host, and takes no receiver option");
		return -1;
	}
	if (o->receiver && o->ordered && o->senders != 1) {
		fprintf(stderr, ST_NAME ": --ordered takes one sender\n");
		return -1;
	}
	if (o->receiver) {
		o->ports[0] = ports ? ports : ST_DEFAULT_PORT;
		o->nports = 1;
		return 0;
	}
	if (st_parse_ports(ports, o))
		return -1;
	if (o->dead >= (int) o->nports) {
		fprintf(stderr, ST_NAME ": --dead %d: there are %u receivers\n", o->dead,
			o->nports);
		return -1;
	}
	if (o->dead >= 0 && o->completion != ST_COMPLETION_DELIVERY) {
		fprintf(stderr, ST_NAME ": --dead needs --completion delivery: only "
			"then do failed sends complete with an error\n");
		return -1;
	}
	return 0;
}

static int st_parse_opts(int argc, char **argv, struct st_opts *o)
{
	bool receiver_only = false, sender_only = false;
	char *ports = NULL;
	uint64_t v;
	int c, ret = 0;

	*o = (struct st_opts) {
		.bind_addr = "127.0.0.1",
		.senders = 1,
		.count = ST_DEFAULT_COUNT,
		.seed = 1,
		.linger_ms = ST_DEFAULT_LINGER_MS,
		.dead = -1,
		.timeout_s = ST_DEFAULT_TIMEOUT,
		.max_size = ST_SIZE_CAP,
	};
	while (!ret && (c = getopt_long(argc, argv, "rb:p:n:s:t:h", st_long_opts,
					NULL)) != -1) {
		v = 0;
		switch (c) {
		case 'r':
			o->receiver = true;
			break;
		case 'b':
			o->bind_addr = optarg;
			receiver_only = true;
			break;
		case 'p':
			ports = optarg;
			break;
		case 's':
			ret = ft_parse_num(optarg, 1, ST_PEERS_MAX, &v);
			o->senders = (uint32_t) v;
			receiver_only = true;
			break;
		case ST_OPT_HOLD:
			ret = ft_parse_num(optarg, 0, 3600000, &o->hold_ms);
			receiver_only = true;
			break;
		case 'n':
			ret = ft_parse_num(optarg, 1, ST_COUNT_MAX, &o->count);
			sender_only = true;
			break;
		case ST_OPT_SIZES:
			c = st_parse_name("sizes", optarg, st_sizes_names, ST_SIZES_CNT);
			o->sizes = (enum st_sizes) c;
			ret = c < 0 ? -1 : 0;
			sender_only = true;
			break;
		case ST_OPT_COMPLETION:
			c = st_parse_name("completion", optarg, st_completion_names,
					  ST_COMPLETION_CNT);
			o->completion = (enum st_completion) c;
			ret = c < 0 ? -1 : 0;
			sender_only = true;
			break;
		case ST_OPT_SEED:
			ret = ft_parse_num(optarg, 0, UINT64_MAX, &o->seed);
			sender_only = true;
			break;
		case ST_OPT_DEAD:
			ret = ft_parse_num(optarg, 0, ST_PEERS_MAX - 1, &v);
			o->dead = (int) v;
			sender_only = true;
			break;
		case ST_OPT_LINGER:
			ret = ft_parse_num(optarg, 0, 60000, &o->linger_ms);
			sender_only = true;
			break;
		case ST_OPT_RNR:
			o->expect_rnr = sender_only = true;
			break;
		case ST_OPT_EAGAIN:
			o->expect_eagain = sender_only = true;
			break;
		case ST_OPT_ORDERED:
			o->ordered = receiver_only = true;
			break;
		case ST_OPT_MAX_SIZE:
			ret = ft_parse_num(optarg, 1, 1ULL << 31, &o->max_size);
			break;
		case ST_OPT_UNTAGGED:
			o->untagged = true;
			break;
		case ST_OPT_CTRL_COMPLETION:
			c = st_parse_name("ctrl-completion", optarg, st_ctrl_level_names,
					  ST_CTRL_LEVELS);
			o->ctrl_level = (enum st_ctrl_level) c;
			ret = c < 0 ? -1 : 0;
			break;
		case ST_OPT_WINDOW:
			ret = ft_parse_num(optarg, 1, 65536, &v);
			o->window = (uint32_t) v;
			break;
		case 't':
			ret = ft_parse_timeout(optarg, &o->timeout_s);
			break;
		default:
			ret = -1;
		}
	}
	if (!ret)
		ret = ft_parse_host(argc, argv, &o->host);
	if (!ret)
		ret = st_check_role(o, receiver_only, sender_only, ports);
	if (ret)
		st_usage();
	return ret;
}

int main(int argc, char **argv)
{
	struct st st = { 0 };
	int ret, close_ret;

	if (st_parse_opts(argc, argv, &st.opts))
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (uint32_t r = 0; r < st.opts.nports && !st.opts.receiver; r++) {
		st.peers[r].index = r;
		st.peers[r].count = st.opts.count;
		st.peers[r].seed = st.opts.seed;
		st.peers[r].sizes = st.opts.sizes;
	}

	ret = st_open(&st);
	if (!ret && st.opts.receiver) {
		ret = ft_rdm_print_listening(&st.rdm, "provider %s, pid %ld, max_msg_size %zu",
					     st.info->fabric_attr->prov_name,
					     (long) getpid(), st.max_msg_size);
		if (!ret)
			ret = st_receiver_run(&st);
		if (!ret)
			ret = st_receiver_report(&st);
	} else if (!ret) {
		ret = st_sender_connect(&st);
		if (!ret)
			ret = st_sender_stream(&st);
		if (!ret)
			ret = st_sender_report(&st);
	}
	if (ret && st.rdm.ep) {
		struct fi_rdmx_ep_stats stats;

		st_stats(&st, &stats);	/* the provider's view of the failure */
	}
	close_ret = st_close(&st);
	if (ret || close_ret) {
		fprintf(stderr, ST_NAME ": FAIL\n");
		return 1;
	}
	printf(ST_NAME ": PASS %s\n", st.pass);
	return 0;
}
