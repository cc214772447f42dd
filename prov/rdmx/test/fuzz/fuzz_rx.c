/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx fuzzing: the receive path of one endpoint, whole. Each input
 * (fuzz_rx.h) opens a fabric, a domain, an AV naming two senders, a
 * completion queue and an endpoint over the fake datagram device
 * (fuzz_dev.h), plays its records, the datagrams going through the
 * device's rdmx_dgram_rx, swsrd and the rdm layer's progress, then
 * closes everything: what is left allocated is a leak.
 *
 * Time is a fake clock that only the input moves (and fi_close, which
 * waits for its peers a bounded time); randomness is a fixed sequence
 * restarted per input (getrandom is wrapped at link time), so an input
 * replays the same way every time.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_dev_udp.h"
#include "rdmx_ep.h"
#include "rdmx_fabric.h"
#include "rdmx_peer.h"
#include "rdmx_tx.h"
#include "rdmx_wire.h"
#include "fuzz_dev.h"
#include "fuzz_rx.h"

#define FUZZ_SENDERS	4
#define FUZZ_START_NS	1000000000ULL
/* What fi_close's bounded waits see pass per clock read. */
#define FUZZ_CLOSE_TICK_NS	1000000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags);

/* One application operation and the memory it lends the provider. */
struct fuzz_op {
	struct fi_context2	ctx;
	uint8_t			*buf;
	size_t			len;
	bool			recv;
	bool			plain;	/* a receive without PEEK, CLAIM,
					   DISCARD or MULTI_RECV */
	bool			multi;	/* an FI_MULTI_RECV buffer */
};

struct fuzz_run {
	struct fid_fabric	*fabric;
	struct fid_domain	*domain;
	struct fid_av		*av;
	struct fid_cq		*cq;
	struct fid_ep		*ep;
	struct rdmx_dev		*dev;
	fi_addr_t		peer[2];
	struct fid_mr		*mr[2];		/* FUZZ_KEY_RW, FUZZ_KEY_RO */
	struct fuzz_op		ops[FUZZ_OPS_MAX];
	size_t			op_cnt;
	struct fi_context2	*claim;		/* of the last PEEK | CLAIM */
	size_t			cancel_next;
};

/* The input not yet read. */
struct fuzz_in {
	const uint8_t	*p;
	size_t		left;
};

static uint64_t g_fuzz_now;
static bool g_fuzz_closing;
/* FUZZ_RX_VERBOSE set: each completion is printed (to read an input). */
static bool g_fuzz_verbose;
static uint64_t g_fuzz_rng;

/* The senders: application form (for the AV) and canonical form. */
static union rdmx_udp_addr g_fuzz_app[FUZZ_SENDERS];
static union rdmx_udp_addr g_fuzz_src[FUZZ_SENDERS];
static struct rdmx_params g_fuzz_defaults;

static uint64_t fuzz_clock(void)
{
	if (g_fuzz_closing)
		g_fuzz_now += FUZZ_CLOSE_TICK_NS;
	return g_fuzz_now;
}

ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags)
{
	uint8_t *out = buf;

	(void) flags;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rdmx_mix64(g_fuzz_rng += 0x9e3779b97f4a7c15ULL);

		memcpy(out + i, &v, RDMX_MIN(sizeof(v), len - i));
	}
	return (ssize_t) len;
}

static void fuzz_check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

static bool fuzz_take(struct fuzz_in *in, void *out, size_t len)
{
	if (in->left < len)
		return false;
	memcpy(out, in->p, len);
	in->p += len;
	in->left -= len;
	return true;
}

static bool fuzz_take_u16(struct fuzz_in *in, uint16_t *out)
{
	uint8_t b[2];

	if (!fuzz_take(in, b, 2))
		return false;
	*out = (uint16_t) (b[0] | b[1] << 8);
	return true;
}

/* The sender addresses, once: 127.0.0.1:1000, :1001, 127.0.0.2:1002, [::1]:1003. */
static void fuzz_senders_init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	g_fuzz_verbose = getenv("FUZZ_RX_VERBOSE") != NULL;
	g_fuzz_defaults = g_rdmx_params;
	for (int i = 0; i < FUZZ_SENDERS; i++) {
		union rdmx_udp_addr *a = &g_fuzz_app[i];

		memset(a, 0, sizeof(*a));
		if (i < 3) {
			a->sin.sin_family = AF_INET;
			a->sin.sin_port = htons((uint16_t) (1000 + i));
			a->sin.sin_addr.s_addr = htonl(i < 2 ? 0x7f000001 : 0x7f000002);
		} else {
			a->sin6.sin6_family = AF_INET6;
			a->sin6.sin6_port = htons((uint16_t) (1000 + i));
			a->sin6.sin6_addr = in6addr_loopback;
		}
		fuzz_check(!rdmx_udp_addr_check(a, rdmx_udp_addr_len(a), &g_fuzz_src[i]));
	}
}

/*
 * Small queues and budgets, so that an input of a few KB fills them: 16
 * sends, receives and packet buffers, 4 KB of unexpected bytes copied
 * (more stay in their packet buffers), medium messages and credit.
 */
static void fuzz_params(uint8_t cfg)
{
	g_rdmx_params = g_fuzz_defaults;
	g_rdmx_params.tx_size = 16;
	g_rdmx_params.rx_size = 16;
	g_rdmx_params.rx_bufs = cfg & FUZZ_CFG_FEW_BUFS ? 4 : 16;
	g_rdmx_params.cq_size = 64;
	g_rdmx_params.unexp_max = 4096;
	g_rdmx_params.medium_max = 4096;
	g_rdmx_params.cts_window = 4096;
	g_rdmx_params.pending_max = 16;
	g_rdmx_params.long_read = !(cfg & FUZZ_CFG_NO_LONG_READ);
}

/*
 * Regions peers may reach, with the keys the seeds name: FUZZ_KEY_RW
 * (read and write) and FUZZ_KEY_RO (read only), FUZZ_REGION bytes each,
 * addressed by offset.
 */
static uint8_t g_fuzz_region[2][FUZZ_REGION];

static void fuzz_regions_open(struct fuzz_run *run)
{
	static const uint64_t keys[2] = { FUZZ_KEY_RW, FUZZ_KEY_RO };
	static const uint64_t access[2] = { FI_REMOTE_READ | FI_REMOTE_WRITE, FI_REMOTE_READ };

	for (int i = 0; i < 2; i++)
		fuzz_check(!fi_mr_reg(run->domain, g_fuzz_region[i], FUZZ_REGION, access[i], 0,
				      keys[i], 0, &run->mr[i], NULL));
}

static void fuzz_open(struct fuzz_run *run, uint8_t cfg)
{
	struct fi_fabric_attr fattr = { .name = (char *) "udp" };
	struct fi_domain_attr dattr = {
		.threading = FI_THREAD_DOMAIN,
		.resource_mgmt = cfg & FUZZ_CFG_RM_DISABLED ? FI_RM_DISABLED : FI_RM_ENABLED,
		.av_type = FI_AV_TABLE,
	};
	struct fi_info info = { .domain_attr = &dattr };
	struct fi_info send_only = { .caps = FI_MSG | FI_TAGGED | FI_SEND };
	bool recv = !(cfg & FUZZ_CFG_SEND_ONLY);
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	fuzz_check(!rdmx_fabric_open(&fattr, &run->fabric, NULL));
	/* The fabric of the udp device, over the fake one. */
	rdmx_container_of(run->fabric, struct rdmx_fabric, fabric_fid)->dev_ops = &fuzz_dev_ops;
	fuzz_check(!fi_domain(run->fabric, &info, &run->domain, NULL));
	fuzz_regions_open(run);
	fuzz_check(!fi_av_open(run->domain, &av_attr, &run->av, NULL));
	fuzz_check(!fi_cq_open(run->domain, &cq_attr, &run->cq, NULL));
	fuzz_check(!fi_endpoint(run->domain, recv ? NULL : &send_only, &run->ep, NULL));
	fuzz_check(!fi_ep_bind(run->ep, &run->av->fid, 0));
	fuzz_check(!fi_ep_bind(run->ep, &run->cq->fid, FI_TRANSMIT | (recv ? FI_RECV : 0)));
	fuzz_check(!fi_enable(run->ep));
	for (int i = 0; i < 2; i++)
		fuzz_check(fi_av_insert(run->av, &g_fuzz_app[i], 1, &run->peer[i], 0, NULL) == 1);
	run->dev = fuzz_dev_current();
	fuzz_check(run->dev != NULL);
}

/* Prints the endpoint's counters, verbose only. */
static void fuzz_print_stats(struct fuzz_run *run)
{
	struct fi_rdmx_ep_stats st;
	struct fi_rdmx_ep_ops *ops;

	if (!g_fuzz_verbose ||
	    fi_open_ops(&run->ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) ||
	    ops->query_stats(run->ep, &st))
		return;
	fprintf(stderr, "fuzz_rx: malformed %lu unexpected %lu unauth %lu challenges %lu "
		"duplicates %lu rnr sent %lu received %lu tx errors %lu; %lu datagrams sent\n",
		st.rx_malformed, st.rx_unexpected, st.rx_unauth, st.challenges,
		st.duplicates, st.rnr_sent, st.rnr_received, st.tx_errors,
		fuzz_dev_sent(run->dev));
}

/* Closes everything; fi_close waits for its peers on a clock that runs. */
static void fuzz_close(struct fuzz_run *run)
{
	fuzz_print_stats(run);
	/* First: an answer to a read may still be under way. */
	for (int i = 0; i < 2; i++)
		fuzz_check(!fi_close(&run->mr[i]->fid));
	g_fuzz_closing = true;
	fuzz_check(!fi_close(&run->ep->fid));
	g_fuzz_closing = false;
	fuzz_check(!fi_close(&run->cq->fid));
	fuzz_check(!fi_close(&run->av->fid));
	fuzz_check(!fi_close(&run->domain->fid));
	fuzz_check(!fi_close(&run->fabric->fid));
	for (size_t i = 0; i < run->op_cnt; i++)
		free(run->ops[i].buf);
}

/* The operation whose context a completion names, or NULL. */
static struct fuzz_op *fuzz_op_of(struct fuzz_run *run, void *context)
{
	for (size_t i = 0; i < run->op_cnt; i++)
		if (context == &run->ops[i].ctx)
			return &run->ops[i];
	return NULL;
}

/*
 * Checks a completion against its operation: a plain receive never
 * reports more bytes than its buffer holds; a message in a multi-receive
 * buffer lies inside it.
 */
static void fuzz_completed(struct fuzz_run *run, const struct fi_cq_tagged_entry *e)
{
	struct fuzz_op *op = fuzz_op_of(run, e->op_context);

	if (g_fuzz_verbose)
		fprintf(stderr, "fuzz_rx: op %zd: %s%s%s len %zu tag %#lx\n",
			op ? op - run->ops : -1, e->flags & FI_RECV ? "recv" : "send",
			e->flags & FI_TAGGED ? " tagged" : "",
			e->flags & FI_MULTI_RECV ? " multi-recv done" : "", e->len,
			(unsigned long) e->tag);
	if (op && op->plain && (e->flags & FI_RECV))
		fuzz_check(e->len <= op->len);
	if (op && op->multi && e->buf) {
		uint8_t *at = e->buf;

		fuzz_check(at >= op->buf && e->len <= op->len &&
			   (size_t) (at - op->buf) <= op->len - e->len);
	}
}

/*
 * Walks a list of send entries (link first in struct rdmx_txe) the way
 * the provider will: it must end where it started after at most max
 * entries, each in use and flagged as on this list.
 */
static size_t fuzz_check_txes(const struct rdmx_dlist *head, size_t max, bool deferred)
{
	size_t n = 0;

	for (const struct rdmx_dlist *it = head->next; it != head; it = it->next) {
		const struct rdmx_txe *txe = rdmx_container_of(it, const struct rdmx_txe, link);

		fuzz_check(++n <= max && it->next->prev == it);
		fuzz_check(txe->in_use && (deferred ? txe->deferred : txe->pending));
	}
	return n;
}

/*
 * The send queues after each record: a corrupt list is found where it
 * was broken, not at the next walk that may loop or touch freed memory.
 */
static void fuzz_check_lists(struct fuzz_run *run)
{
	struct rdmx_ep *ep = rdmx_ep(run->ep);
	const struct rdmx_dlist *it;
	size_t peers = 0;

	fuzz_check_txes(&ep->tx_pending, ep->txe_pool.count, false);
	for (it = ep->peer_list.next; it != &ep->peer_list; it = it->next) {
		const struct rdmx_peer *peer = rdmx_container_of(it, const struct rdmx_peer, link);

		fuzz_check(++peers <= RDMX_PEER_ANON_MAX + FUZZ_SENDERS);
		fuzz_check(fuzz_check_txes(&peer->pending, ep->txe_pool.count, true) ==
			   peer->pending_cnt);
	}
}

/* Reads the completion queue, which progresses the endpoint. */
static void fuzz_drain(struct fuzz_run *run)
{
	struct fi_cq_tagged_entry e[8];

	for (int round = 0; round < 8; round++) {
		ssize_t n = fi_cq_read(run->cq, e, RDMX_ARRAY_SIZE(e));

		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fuzz_check(fi_cq_readerr(run->cq, &err, 0) == 1);
			if (g_fuzz_verbose)
				fprintf(stderr, "fuzz_rx: op %zd: error %s\n",
					fuzz_op_of(run, err.op_context) ?
					fuzz_op_of(run, err.op_context) - run->ops : -1,
					fi_strerror(err.err));
			continue;
		}
		for (ssize_t i = 0; i < n; i++)
			fuzz_completed(run, &e[i]);
		fuzz_check_lists(run);
		if (n < (ssize_t) RDMX_ARRAY_SIZE(e))
			return;
	}
}

/* A new operation with a buffer of len bytes; NULL past FUZZ_OPS_MAX. */
static struct fuzz_op *fuzz_op_new(struct fuzz_run *run, size_t len)
{
	struct fuzz_op *op;

	if (run->op_cnt == FUZZ_OPS_MAX)
		return NULL;
	op = &run->ops[run->op_cnt];
	memset(op, 0, sizeof(*op));
	op->buf = malloc(len ? len : 1);
	fuzz_check(op->buf != NULL);
	memset(op->buf, 0x3c, len);
	op->len = len;
	run->op_cnt++;
	return op;
}

/* The swsrd header's ack fields, rewritten as FUZZ_DGRAM_FIX_TAG says. */
static void fuzz_fix_ack(struct fuzz_run *run, const void *src, uint8_t *pkt)
{
	const size_t epoch_at = offsetof(struct rdmx_wire_srd, ack_epoch);
	const size_t ack_at = offsetof(struct rdmx_wire_srd, ack);
	uint32_t epoch, snd_nxt, v;

	if (!fuzz_dev_tx_state(run->dev, src, &epoch, &snd_nxt))
		return;
	memcpy(&v, pkt + epoch_at, 4);
	if (!v)
		return;
	v = htole32(epoch);
	memcpy(pkt + epoch_at, &v, 4);
	memcpy(&v, pkt + ack_at, 4);
	if (le32toh(v) == FUZZ_ACK_ALL) {
		v = htole32(snd_nxt);
		memcpy(pkt + ack_at, &v, 4);
	}
}

/*
 * Rewrites what a sender that receives our packets would know (the
 * FUZZ_DGRAM_FIX_* flags of op): the dst_tag we expect from it, our
 * transmit session and psn in its acks, our incarnation in a handshake's
 * non-zero peer_incarnation.
 */
static void fuzz_fix(struct fuzz_run *run, uint8_t op, uint8_t *pkt, size_t len)
{
	const size_t srd = sizeof(struct rdmx_wire_srd);
	const void *src = &g_fuzz_src[FUZZ_DGRAM_SRC(op)];
	const size_t inc_at = srd + offsetof(struct rdmx_wire_hs, peer_incarnation);
	uint64_t v64;

	if ((op & FUZZ_DGRAM_FIX_TAG) && len >= srd) {
		v64 = htole64(fuzz_dev_tag(run->dev, src));
		memcpy(pkt + offsetof(struct rdmx_wire_srd, dst_tag), &v64, 8);
		fuzz_fix_ack(run, src, pkt);
	}
	if ((op & FUZZ_DGRAM_FIX_HS) && len >= inc_at + 8 &&
	    pkt[srd + offsetof(struct rdmx_wire_base, type)] == RDMX_PKT_HS) {
		memcpy(&v64, pkt + inc_at, 8);
		if (v64) {
			v64 = htole64(rdmx_ep(run->ep)->hs_local.incarnation);
			memcpy(pkt + inc_at, &v64, 8);
		}
	}
}

static void fuzz_dgram(struct fuzz_run *run, uint8_t op, struct fuzz_in *in)
{
	static uint8_t pkt[65536];
	union rdmx_udp_addr src = g_fuzz_src[FUZZ_DGRAM_SRC(op)];
	uint16_t len;

	if (!fuzz_take_u16(in, &len))
		return;
	len = (uint16_t) RDMX_MIN(len, in->left);
	fuzz_take(in, pkt, len);
	fuzz_fix(run, op, pkt, len);
	if (op & FUZZ_DGRAM_OTHER_PORT)
		*rdmx_udp_addr_port(&src) = htons((uint16_t) (ntohs(*rdmx_udp_addr_port(&src)) + 100));
	(void) fuzz_dev_inject(run->dev, &src, pkt, len);
}

static void fuzz_clock_advance(uint8_t op, struct fuzz_in *in)
{
	unsigned shift = RDMX_MIN((unsigned) op >> 2, FUZZ_CLOCK_SHIFT_MAX);
	uint8_t n;

	if (fuzz_take(in, &n, 1))
		g_fuzz_now += ((uint64_t) n + 1) << shift;
}

/* The context a receive flagged CLAIM alone names: the last PEEK | CLAIM's. */
static void *fuzz_recv_context(struct fuzz_run *run, struct fuzz_op *op, uint8_t bits)
{
	if ((bits & FUZZ_RECV_CLAIM) && !(bits & FUZZ_RECV_PEEK) && run->claim)
		return run->claim;
	if ((bits & FUZZ_RECV_CLAIM) && (bits & FUZZ_RECV_PEEK))
		run->claim = &op->ctx;
	return &op->ctx;
}

static void fuzz_recv(struct fuzz_run *run, uint8_t bits, struct fuzz_in *in)
{
	uint8_t tag_ign[2];
	struct fuzz_op *op;
	struct iovec iov;
	uint16_t len;

	if (!fuzz_take_u16(in, &len) || !fuzz_take(in, tag_ign, 2) ||
	    !(op = fuzz_op_new(run, len)))
		return;
	op->recv = true;
	op->plain = !(bits & (FUZZ_RECV_PEEK | FUZZ_RECV_CLAIM | FUZZ_RECV_DISCARD |
			      FUZZ_RECV_MULTI));
	op->multi = bits & FUZZ_RECV_MULTI;
	iov = (struct iovec) { op->buf, len };
	if (bits & FUZZ_RECV_TAGGED) {
		struct fi_msg_tagged msg = {
			.msg_iov = &iov,
			.iov_count = 1,
			.addr = bits & FUZZ_RECV_DIRECTED ? run->peer[0] : FI_ADDR_UNSPEC,
			.tag = tag_ign[0],
			.ignore = tag_ign[1],
			.context = fuzz_recv_context(run, op, bits),
		};
		uint64_t flags = FI_COMPLETION |
				 (bits & FUZZ_RECV_PEEK ? FI_PEEK : 0) |
				 (bits & FUZZ_RECV_CLAIM ? FI_CLAIM : 0) |
				 (bits & FUZZ_RECV_DISCARD ? FI_DISCARD : 0) |
				 (bits & FUZZ_RECV_MULTI ? FI_MULTI_RECV : 0);

		(void) fi_trecvmsg(run->ep, &msg, flags);
	} else {
		struct fi_msg msg = {
			.msg_iov = &iov,
			.iov_count = 1,
			.addr = bits & FUZZ_RECV_DIRECTED ? run->peer[0] : FI_ADDR_UNSPEC,
			.context = &op->ctx,
		};

		(void) fi_recvmsg(run->ep, &msg, FI_COMPLETION |
				  (bits & FUZZ_RECV_MULTI ? FI_MULTI_RECV : 0));
	}
}

static void fuzz_send(struct fuzz_run *run, uint8_t op_byte, struct fuzz_in *in)
{
	fi_addr_t dest = run->peer[op_byte & FUZZ_APP_PEER1 ? 1 : 0];
	bool tagged = op_byte & FUZZ_APP_TAGGED;
	uint64_t flags = FI_COMPLETION |
			 (op_byte & FUZZ_APP_DELIVERY ? FI_DELIVERY_COMPLETE : 0);
	struct fuzz_op *op;
	struct iovec iov;
	uint16_t len;
	uint8_t tag;

	if (!fuzz_take_u16(in, &len) || !fuzz_take(in, &tag, 1) ||
	    !(op = fuzz_op_new(run, len)))
		return;
	if (FUZZ_APP_SUB(op_byte) == FUZZ_APP_INJECT) {
		(void) (tagged ? fi_tinject(run->ep, op->buf, len, dest, tag) :
			fi_inject(run->ep, op->buf, len, dest));
		return;
	}
	iov = (struct iovec) { op->buf, len };
	if (tagged) {
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = dest, .tag = tag,
			.context = &op->ctx,
		};

		(void) fi_tsendmsg(run->ep, &msg, flags);
	} else {
		struct fi_msg msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = dest, .context = &op->ctx,
		};

		(void) fi_sendmsg(run->ep, &msg, flags);
	}
}

/* Cancels the oldest receive not yet given to fi_cancel. */
static void fuzz_cancel(struct fuzz_run *run)
{
	while (run->cancel_next < run->op_cnt) {
		struct fuzz_op *op = &run->ops[run->cancel_next++];

		if (op->recv) {
			(void) fi_cancel(&run->ep->fid, &op->ctx);
			return;
		}
	}
}

static void fuzz_app(struct fuzz_run *run, uint8_t op, struct fuzz_in *in)
{
	int who = op & FUZZ_APP_PEER1 ? 1 : 0;

	switch (FUZZ_APP_SUB(op)) {
	case FUZZ_APP_SEND:
	case FUZZ_APP_INJECT:
		fuzz_send(run, op, in);
		break;
	case FUZZ_APP_CANCEL:
		fuzz_cancel(run);
		break;
	case FUZZ_APP_AV_REMOVE:
		(void) fi_av_remove(run->av, &run->peer[who], 1, 0);
		break;
	case FUZZ_APP_AV_INSERT:
		(void) fi_av_insert(run->av, &g_fuzz_app[who], 1, &run->peer[who], 0, NULL);
		break;
	default:
		break;
	}
}

/* Plays one record; false at the end of the input. */
static bool fuzz_record(struct fuzz_run *run, struct fuzz_in *in)
{
	uint8_t op;

	if (!fuzz_take(in, &op, 1))
		return false;
	if (g_fuzz_verbose)
		fprintf(stderr, "fuzz_rx: record %#04x (%s), %zu bytes left\n", op,
			(const char *[]) { "dgram", "clock", "recv", "app" }[FUZZ_OP_KIND(op)],
			in->left);
	switch (FUZZ_OP_KIND(op)) {
	case FUZZ_OP_DGRAM:
		fuzz_dgram(run, op, in);
		if (op & FUZZ_DGRAM_MORE)
			return true;
		break;
	case FUZZ_OP_CLOCK:
		fuzz_clock_advance(op, in);
		break;
	case FUZZ_OP_RECV:
		fuzz_recv(run, op, in);
		break;
	default:
		fuzz_app(run, op, in);
		break;
	}
	fuzz_drain(run);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct fuzz_run run = { 0 };
	uint8_t cfg = 0;

	fuzz_senders_init();
	(void) fuzz_take(&in, &cfg, 1);
	g_fuzz_now = FUZZ_START_NS;
	g_fuzz_rng = 0x72646d78;	/* "rdmx" */
	rdmx_clock_set(fuzz_clock);
	fuzz_params(cfg);
	fuzz_open(&run, cfg);
	while (fuzz_record(&run, &in))
		;
	fuzz_drain(&run);
	fuzz_close(&run);
	rdmx_clock_set(NULL);
	return 0;
}
