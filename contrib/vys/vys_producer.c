/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vys_producer: writes --count spectra of --bytes bytes into a ring of
 * --slots slots, --rate a second (0: as fast as it can), and signals each
 * to every consumer that joined (vys.h). It starts once --consumers have
 * joined and takes later ones too, up to VP_CONSUMERS_MAX, until it
 * sends END. It never waits for a consumer: a signal that finds no send
 * buffer of that consumer's free (it does not take them as fast as they
 * come) is dropped and counted, and a consumer to which a send failed
 * (it left or died) is gone and gets nothing more. After the last
 * spectrum it sends END and keeps the ring until every consumer said
 * DONE or is gone; -t bounds each wait (for consumers to join, for END
 * to go, for the DONEs) and it fails when one runs out.
 *
 *   vys_producer [-b addr] -p port [--slots n] [--bytes n] [--count n]
 *                [--rate n] [--consumers n] [-t timeout_s]
 *
 * It prints the "listening on" line when ready, "vys_producer: consumer
 * N gone" for each one gone, and at the end "vys_producer: published=N
 * signalled=N dropped=N consumers=N gone=N ignored=N".
 * Exit status: 0, 1 on failure, 2 on bad options.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>

#include "ft_common.h"
#include "vys.h"

#define VP_CONSUMERS_MAX	16
#define VP_WINDOW		32	/* send buffers per consumer */
#define VP_RECVS		(2 * VP_CONSUMERS_MAX)

const char *const ft_prog = "vys_producer";

struct vp_consumer {
	fi_addr_t	addr;
	uint8_t		name[VYS_NAME_MAX];
	struct vys_op	ops[VP_WINDOW];
	uint32_t	free[VP_WINDOW];
	uint32_t	nfree;
	bool		gone;
	bool		done;
	bool		ended;	/* END posted */
};

struct vp {
	const char	*bind_addr;
	const char	*port;
	uint64_t	slots, bytes, count, rate, want;
	int		timeout_s;
	struct vys_ep	ve;
	uint8_t		name[VYS_NAME_MAX];	/* our own endpoint's */
	size_t		name_len;
	uint8_t		*ring;
	struct fid_mr	*ring_mr;
	struct vys_op	recvs[VP_RECVS];
	struct vp_consumer	consumers[VP_CONSUMERS_MAX];
	uint32_t	nconsumers;
	bool		ending;		/* END is being sent: no more joins */
	uint64_t	published, signalled, dropped, gone;
	uint64_t	last_event_ns;	/* of the last completion: -t counts from it */
};

static struct vys_op *vp_take(struct vp_consumer *c)
{
	return c->nfree ? &c->ops[c->free[--c->nfree]] : NULL;
}

static void vp_give_back(struct vp_consumer *c, const struct vys_op *op)
{
	c->free[c->nfree++] = op->index;
}

static void vp_lose(struct vp *p, struct vp_consumer *c, const char *why)
{
	if (c->gone)
		return;
	c->gone = true;
	p->gone++;
	printf("%s: consumer %td gone: %s\n", ft_prog, c - p->consumers, why);
	fflush(stdout);
}

/* Sends c the message in a free buffer of its own (op, from vp_take). */
static ssize_t vp_send(struct vp *p, struct vp_consumer *c, struct vys_op *op, size_t len)
{
	ssize_t ret = vys_send(&p->ve, op, len, c->addr);

	if (ret)
		vp_give_back(c, op);
	return ret;
}

/* Why a JOIN cannot be taken, or NULL. */
static const char *vp_join_refused(const struct vp *p, const struct vys_join *j)
{
	if (p->ending)
		return "a JOIN after END";
	if (j->name_len != p->name_len)
		return "a JOIN whose name is not of our address's length";
	if (!memcmp(j->name, p->name, p->name_len))
		return "a JOIN naming this producer";
	if (p->nconsumers == VP_CONSUMERS_MAX)
		return "a JOIN past the consumer limit";
	for (uint32_t i = 0; i < p->nconsumers; i++)
		if (!memcmp(j->name, p->consumers[i].name, p->name_len))
			return "a JOIN naming a consumer that joined";
	return NULL;
}

/* A JOIN: the consumer goes into the AV and gets the ring's geometry and key. */
static void vp_join(struct vp *p, const struct vys_join *j)
{
	const char *why = vp_join_refused(p, j);
	struct vp_consumer *c = &p->consumers[p->nconsumers];
	struct vys_op *op;
	ssize_t ret;

	if (why) {
		vys_ignore(&p->ve, why);
		return;
	}
	if (ft_rdm_insert(&p->ve.rdm, j->name, &c->addr, "fi_av_insert (consumer)"))
		return;
	memcpy(c->name, j->name, p->name_len);
	op = vp_take(c);
	op->msg->welcome = (struct vys_welcome) {
		.h = { VYS_MAGIC, VYS_WELCOME },
		.id = p->nconsumers,
		.slots = (uint32_t) p->slots,
		.slot_bytes = (uint32_t) p->bytes,
		.key = fi_mr_key(p->ring_mr),
		.base = p->ve.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
			(uint64_t) (uintptr_t) p->ring : 0,
	};
	p->nconsumers++;
	ret = vp_send(p, c, op, sizeof(op->msg->welcome));
	if (ret)
		vp_lose(p, c, fi_strerror((int) -ret));
}

/* A message received from src. */
static void vp_recv_done(struct vp *p, const struct vys_op *op, size_t len, fi_addr_t src)
{
	const union vys_msg *m = op->msg;

	if (vys_msg_is(m, len, VYS_JOIN))
		vp_join(p, &m->join);
	else if (vys_msg_is(m, len, VYS_DONE) && m->done.id < p->nconsumers &&
		 p->consumers[m->done.id].addr == src)
		p->consumers[m->done.id].done = true;
	else
		vys_ignore(&p->ve, "a message that is no JOIN, or no DONE of its sender's");
}

/* Reads completions, waiting up to timeout_ms; 0 or an error printed. */
static int vp_progress(struct vp *p, int timeout_ms)
{
	struct fi_cq_tagged_entry cqe[16];
	fi_addr_t src[16];
	struct fi_cq_err_entry err;
	char text[512];
	ssize_t n = vys_poll(&p->ve, cqe, src, 16, timeout_ms, &err, text, sizeof(text));

	if (n == -FI_EAVAIL) {
		struct vys_op *op = err.op_context;
		struct vp_consumer *c;

		if (!op || op->kind != VYS_OP_SEND)
			return ft_fail("a completion failed: %s", text);
		c = &p->consumers[op->owner];
		vp_give_back(c, op);
		vp_lose(p, c, text);
		return 0;
	}
	if (n < 0)
		return ft_err("fi_cq_read", n);
	if (n)
		p->last_event_ns = ft_now_ns();
	for (ssize_t i = 0; i < n; i++) {
		struct vys_op *op = cqe[i].op_context;
		ssize_t ret;

		if (op->kind == VYS_OP_SEND) {
			vp_give_back(&p->consumers[op->owner], op);
			continue;
		}
		vp_recv_done(p, op, cqe[i].len, src[i]);
		ret = vys_post_recv(&p->ve, op);
		if (ret)
			return ft_err("fi_recv", ret);
	}
	return 0;
}

/* Writes the next spectrum and signals it to every consumer. */
static void vp_publish(struct vp *p)
{
	uint64_t seq = p->published++, offset = (seq % p->slots) * p->bytes;
	uint8_t *slot = p->ring + offset;
	struct vys_signal sig = {
		.h = { VYS_MAGIC, VYS_SIGNAL },
		.len = (uint32_t) p->bytes,
		.seq = seq,
		.offset = offset,
	};

	vys_fill(slot, p->bytes, seq);
	sig.digest = vys_digest(slot, p->bytes);
	sig.time_ns = ft_now_ns();
	for (uint32_t i = 0; i < p->nconsumers; i++) {
		struct vp_consumer *c = &p->consumers[i];
		struct vys_op *op = c->gone ? NULL : vp_take(c);

		if (!op) {
			p->dropped += !c->gone;
			continue;
		}
		op->msg->signal = sig;
		if (vp_send(p, c, op, sizeof(sig)))
			p->dropped++;
		else
			p->signalled++;
	}
}

/* Posts END to c when it has a buffer free; 1 once posted (or c is gone). */
static int vp_end_one(struct vp *p, struct vp_consumer *c)
{
	struct vys_op *op;
	ssize_t ret;

	if (c->gone || c->ended)
		return 1;
	op = vp_take(c);
	if (!op)
		return 0;
	op->msg->h = (struct vys_hdr) { VYS_MAGIC, VYS_END };
	ret = vp_send(p, c, op, sizeof(op->msg->h));
	if (ret == -FI_EAGAIN)
		return 0;
	if (ret)
		vp_lose(p, c, fi_strerror((int) -ret));
	c->ended = true;
	return 1;
}

/*
 * Posts END to every consumer it has not reached yet that has a send
 * buffer free (one consumer that takes nothing holds up no other), and
 * counts those that still wait for END or owe DONE: they may read the
 * ring.
 */
static uint32_t vp_end_pending(struct vp *p)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->nconsumers; i++) {
		struct vp_consumer *c = &p->consumers[i];

		n += !vp_end_one(p, c) || (!c->done && !c->gone);
	}
	return n;
}

/* Progresses until done() is 0, failing after -t seconds without a completion. */
static int vp_wait(struct vp *p, uint32_t (*done)(struct vp *p), const char *what)
{
	int ret = 0;

	p->last_event_ns = ft_now_ns();
	while (!ret && done(p)) {
		if (ft_now_ns() - p->last_event_ns > (uint64_t) p->timeout_s * 1000000000ull)
			return ft_fail("%u of %u consumers %s within %d s", done(p),
				       p->nconsumers, what, p->timeout_s);
		ret = vp_progress(p, 10);
	}
	return ret;
}

static uint32_t vp_to_join(struct vp *p)
{
	return p->nconsumers < p->want ? (uint32_t) (p->want - p->nconsumers) : 0;
}

static int vp_stream(struct vp *p)
{
	uint64_t gap = p->rate ? 1000000000ull / p->rate : 0, start = ft_now_ns();
	int ret = 0;

	while (!ret && p->published < p->count) {
		uint64_t due = start + p->published * gap, now = ft_now_ns();

		if (now >= due)
			vp_publish(p);
		/* Sleep till the next spectrum (whole milliseconds: a late one catches up). */
		ret = vp_progress(p, due > now ? (int) ((due - now + 999999) / 1000000) : 0);
	}
	return ret;
}

static int vp_run(struct vp *p)
{
	int ret = vp_wait(p, vp_to_join, "still to join");

	if (!ret)
		ret = vp_stream(p);
	p->ending = true;
	if (!ret)
		ret = vp_wait(p, vp_end_pending, "neither done nor gone");
	printf("%s: published=%llu signalled=%llu dropped=%llu consumers=%u gone=%llu "
	       "ignored=%llu\n", ft_prog, (unsigned long long) p->published,
	       (unsigned long long) p->signalled, (unsigned long long) p->dropped,
	       p->nconsumers, (unsigned long long) p->gone, (unsigned long long) p->ve.ignored);
	return ret;
}

static int vp_setup(struct vp *p)
{
	void *desc;
	int ret = vys_open(&p->ve, p->bind_addr, NULL, p->port,
			   VP_RECVS + (size_t) VP_CONSUMERS_MAX * VP_WINDOW);

	if (ret)
		return ret;
	p->name_len = sizeof(p->name);
	ret = fi_getname(&p->ve.rdm.ep->fid, p->name, &p->name_len);
	if (ret)
		return ft_err("fi_getname", ret);
	if (posix_memalign((void **) &p->ring, 4096, p->slots * p->bytes))
		return ft_fail("out of memory for a ring of %llu bytes",
			       (unsigned long long) (p->slots * p->bytes));
	memset(p->ring, 0, p->slots * p->bytes);
	ret = vys_mr_reg(&p->ve, p->ring, p->slots * p->bytes, FI_REMOTE_READ, &p->ring_mr,
			 &desc);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < VP_RECVS; i++) {
		p->recvs[i] = (struct vys_op) { .msg = &p->ve.msgs[i] };
		ret = (int) vys_post_recv(&p->ve, &p->recvs[i]);
		if (ret)
			return ft_err("fi_recv", ret);
	}
	for (uint32_t c = 0; c < VP_CONSUMERS_MAX; c++) {
		struct vp_consumer *pc = &p->consumers[c];

		for (uint32_t i = 0; i < VP_WINDOW; i++) {
			pc->ops[i] = (struct vys_op) {
				.owner = c,
				.index = i,
				.msg = &p->ve.msgs[VP_RECVS + c * VP_WINDOW + i],
			};
			pc->free[pc->nfree++] = VP_WINDOW - 1 - i;
		}
	}
	return ft_rdm_print_listening(&p->ve.rdm, "%llu slots of %llu bytes",
				      (unsigned long long) p->slots,
				      (unsigned long long) p->bytes);
}

static int vp_opts(struct vp *p, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "slots", required_argument, NULL, 'S' },
		{ "bytes", required_argument, NULL, 'B' },
		{ "count", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'R' },
		{ "consumers", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "b:p:t:", longopts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'b': p->bind_addr = optarg; break;
		case 'p': p->port = optarg; break;
		case 't': bad = ft_parse_timeout(optarg, &p->timeout_s); break;
		case 'S': bad = ft_parse_num(optarg, 1, 1u << 20, &p->slots); break;
		case 'B': bad = ft_parse_num(optarg, 16, VYS_SLOT_MAX, &p->bytes); break;
		case 'n': bad = ft_parse_num(optarg, 1, UINT64_MAX >> 1, &p->count); break;
		case 'R': bad = ft_parse_num(optarg, 0, 1000000000, &p->rate); break;
		case 'c': bad = ft_parse_num(optarg, 0, VP_CONSUMERS_MAX, &p->want); break;
		default: bad = 1;
		}
		if (bad)
			return -1;
	}
	if (optind != argc || !p->port || p->bytes % 8 ||
	    p->slots * p->bytes > VYS_RING_MAX) {
		fprintf(stderr, "usage: %s [-b addr] -p port [--slots n] [--bytes n (a multiple "
			"of 8)] [--count n] [--rate n] [--consumers n] [-t timeout_s]\n",
			ft_prog);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vp p = { .slots = 64, .bytes = 65536, .count = 10000, .rate = 10000,
			.want = 1, .timeout_s = 60 };
	int ret, status = 0;

	if (vp_opts(&p, argc, argv))
		return 2;
	ret = vp_setup(&p);
	if (!ret)
		ret = vp_run(&p);
	vys_close(&p.ve, p.ring_mr, &status);
	free(p.ring);
	if (ret || status) {
		fprintf(stderr, "%s: FAIL\n", ft_prog);
		return 1;
	}
	return 0;
}
