/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_stream: messages and payloads, completions, control messages. */
#include "stream.h"

static const uint64_t st_ctrl_level_flags[ST_CTRL_LEVELS] = {
	[ST_CTRL_LEVEL_DELIVERY] = FI_DELIVERY_COMPLETE,
	[ST_CTRL_LEVEL_DEFAULT] = 0,
	[ST_CTRL_LEVEL_TRANSMIT] = FI_TRANSMIT_COMPLETE,
};

static const char *const st_ctrl_names[ST_CTRL_TYPES] = {
	[ST_CTRL_HELLO] = "HELLO",
	[ST_CTRL_ACCEPT] = "ACCEPT",
	[ST_CTRL_DONE] = "DONE",
};

static const char *const st_op_names[ST_OP_KINDS] = {
	[ST_OP_DATA_TX] = "data send",
	[ST_OP_DATA_RX] = "data receive",
	[ST_OP_CTRL_TX] = "control send",
	[ST_OP_CTRL_RX] = "control receive",
};

size_t st_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

/*
 * The length of message i: mixed gives 0 and max once in a hundred each,
 * else up to 256 bytes (60%), up to 4 KiB (30%) or up to max (8%).
 */
size_t st_msg_len(enum st_sizes sizes, uint64_t seed, uint64_t i, size_t max)
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
uint64_t st_msg_seed(uint64_t seed, uint64_t i, size_t len)
{
	return ft_mix(seed ^ ft_mix(i * 0xD1B54A32D192ED03ULL + len));
}

ssize_t st_repost_rx(struct st *st, struct st_op *op)
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
int st_progress(struct st *st)
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
int st_poll(struct st *st, const char *what)
{
	int ret = st_progress(st);

	if (ret)
		return ret;
	if (ft_now_ns() - st->last_event_ns >= (uint64_t) st->opts.timeout_s * 1000000000ULL)
		return ft_fail("timed out: no completion for %d s while waiting for %s",
			       st->opts.timeout_s, what);
	return 0;
}

uint64_t st_ctrl_tag(enum st_ctrl_type type, uint32_t index)
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
int st_ctrl_post(struct st *st, struct st_op *op, struct st_ctrl *buf,
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

void st_ctrl_init(struct st_ctrl *c, enum st_ctrl_type type, uint32_t index)
{
	memset(c, 0, sizeof(*c));
	c->magic = ST_CTRL_MAGIC;
	c->version = ST_CTRL_VERSION;
	c->type = type;
	c->index = index;
}

int st_ctrl_send(struct st *st, struct st_peer *p, enum st_ctrl_type type)
{
	return st_ctrl_post(st, &p->ctrl_tx, p->ctrl_out, p->addr,
			    st_ctrl_tag(type, p->index), 0);
}

/* Checks a received control message's completion and header. */
int st_ctrl_check(const struct st_op *op, const struct st_ctrl *c,
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
