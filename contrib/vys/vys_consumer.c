/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vys_consumer: joins a vys_producer (vys.h), and of the spectra it
 * signals fetches every --every-th, --delay-us microseconds after the
 * signal came (a slow consumer), with up to --reads reads in flight. A
 * spectrum is accepted when the digest of the bytes read matches the
 * signal's and its first 8 bytes hold its number, and counted late
 * otherwise. With --check (the default) an accepted spectrum is also
 * compared with the one the producer wrote under that number: a
 * difference fails the run. Signals that find VC_QUEUE_MAX spectra
 * already waiting to be fetched are skipped. After END and its last read
 * it tells the producer DONE. It fails when a read fails, or after -t
 * seconds without a completion.
 *
 *   vys_consumer -p port [--every n] [--delay-us n] [--reads n]
 *                [--no-check] [-t timeout_s] host
 *
 * It prints "vys_consumer: joined as consumer N, pid P" after the
 * producer's WELCOME, and at the end "vys_consumer: signals=N fetched=N
 * ok=N late=N skipped=N ignored=N bytes=N read_MBps=X ok_MBps=X" (bytes:
 * of the spectra accepted; read_MBps: the bytes of every read, and
 * ok_MBps those accepted, over the time from the first read posted to
 * the last one completed).
 * Exit status: 0, 1 on failure, 2 on bad options.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_rma.h>

#include "ft_common.h"
#include "vys.h"

#define VC_RECVS	256
#define VC_QUEUE_MAX	1024
#define VC_READS_MAX	64

const char *const ft_prog = "vys_consumer";

/* A spectrum signalled and chosen, waiting for its read or being read. */
struct vc_want {
	uint64_t	seq, offset, digest, due_ns;
};

struct vc_read {
	struct vys_op	op;
	uint8_t		*buf;
	struct vc_want	want;
	bool		busy;
};

struct vc {
	const char	*host, *port;
	uint64_t	every, delay_us, nreads;
	bool		check;
	int		timeout_s;
	struct vys_ep	ve;
	fi_addr_t	producer;
	struct vys_welcome	ring;
	struct vys_op	recvs[VC_RECVS];
	struct vys_op	send;
	struct vc_read	reads[VC_READS_MAX];
	uint8_t		*bufs, *expect;
	struct fid_mr	*bufs_mr;
	void		*bufs_desc;
	struct vc_want	queue[VC_QUEUE_MAX];
	uint32_t	head, len, busy;
	bool		welcomed, ended;
	uint32_t	sent;	/* sends completed: JOIN, then DONE */
	uint64_t	signals, fetched, ok, late, skipped, bytes;
	uint64_t	first_ns, last_ns;
	uint64_t	last_event_ns;	/* of the last completion: -t counts from it */
};

/* A SIGNAL whose place lies inside the ring goes into the queue if chosen. */
static void vc_signal(struct vc *c, const struct vys_signal *s)
{
	uint64_t ring = (uint64_t) c->ring.slots * c->ring.slot_bytes;

	if (s->len != c->ring.slot_bytes || s->offset % c->ring.slot_bytes ||
	    s->offset >= ring) {
		vys_ignore(&c->ve, "a SIGNAL outside the ring");
		return;
	}
	c->signals++;
	if (s->seq % c->every)
		return;
	if (c->len == VC_QUEUE_MAX) {
		c->skipped++;
		return;
	}
	c->queue[(c->head + c->len++) % VC_QUEUE_MAX] = (struct vc_want) {
		.seq = s->seq,
		.offset = s->offset,
		.digest = s->digest,
		.due_ns = ft_now_ns() + c->delay_us * 1000,
	};
}

/* The producer's WELCOME, once: a ring we can read, or the message is ignored. */
static void vc_welcome(struct vc *c, const struct vys_welcome *w)
{
	uint64_t ring = (uint64_t) w->slots * w->slot_bytes;

	if (c->welcomed || !w->slots || w->slot_bytes < 16 || w->slot_bytes > VYS_SLOT_MAX ||
	    w->slot_bytes % 8 || ring > VYS_RING_MAX || w->base > UINT64_MAX - ring) {
		vys_ignore(&c->ve, "a second WELCOME, or one of a ring we cannot read");
		return;
	}
	c->ring = *w;
	c->welcomed = true;
}

/* A message received from src: only the producer's are taken. */
static void vc_recv_done(struct vc *c, const struct vys_op *op, size_t len, fi_addr_t src)
{
	const union vys_msg *m = op->msg;

	if (src != c->producer)
		vys_ignore(&c->ve, "a message from another endpoint than the producer");
	else if (vys_msg_is(m, len, VYS_WELCOME))
		vc_welcome(c, &m->welcome);
	else if (c->welcomed && vys_msg_is(m, len, VYS_SIGNAL))
		vc_signal(c, &m->signal);
	else if (c->welcomed && vys_msg_is(m, len, VYS_END))
		c->ended = true;
	else
		vys_ignore(&c->ve, "a malformed message, or one before WELCOME");
}

/* A read completed: the digest and the number decide. 0, or -FI_EIO. */
static int vc_read_done(struct vc *c, struct vc_read *r)
{
	size_t len = c->ring.slot_bytes;

	r->busy = false;
	c->busy--;
	c->fetched++;
	c->last_ns = ft_now_ns();
	if (vys_digest(r->buf, len) != r->want.digest || vys_seq_of(r->buf) != r->want.seq) {
		c->late++;
		return 0;
	}
	if (c->check) {
		vys_fill(c->expect, len, r->want.seq);
		if (memcmp(c->expect, r->buf, len))
			return ft_fail("spectrum %llu passed its digest, but it is not the one "
				       "written", (unsigned long long) r->want.seq);
	}
	c->ok++;
	c->bytes += len;
	return 0;
}

static int vc_progress(struct vc *c, int timeout_ms)
{
	struct fi_cq_tagged_entry cqe[16];
	fi_addr_t src[16];
	struct fi_cq_err_entry err;
	char text[512];
	ssize_t n = vys_poll(&c->ve, cqe, src, 16, timeout_ms, &err, text, sizeof(text));

	if (n == -FI_EAVAIL) {
		struct vys_op *op = err.op_context;

		if (op && op->kind == VYS_OP_READ)
			return ft_fail("the read of spectrum %llu failed: %s",
				       (unsigned long long) c->reads[op->owner].want.seq, text);
		return ft_fail("a send failed: %s", text);
	}
	if (n < 0)
		return ft_err("fi_cq_read", n);
	if (n)
		c->last_event_ns = ft_now_ns();
	for (ssize_t i = 0; i < n; i++) {
		struct vys_op *op = cqe[i].op_context;
		int ret = 0;

		if (op->kind == VYS_OP_RECV) {
			vc_recv_done(c, op, cqe[i].len, src[i]);
			ret = (int) vys_post_recv(&c->ve, op);
			if (ret)
				ret = ft_err("fi_recv", ret);
		} else if (op->kind == VYS_OP_READ) {
			ret = vc_read_done(c, &c->reads[op->owner]);
		} else {
			c->sent++;
		}
		if (ret)
			return ret;
	}
	return 0;
}

/* Posts the reads that are due, while a buffer is free. */
static int vc_issue(struct vc *c)
{
	uint64_t now = ft_now_ns();

	/* Signals may come with the WELCOME, before the read buffers exist. */
	if (!c->bufs)
		return 0;
	for (uint32_t i = 0; c->len && i < c->nreads; i++) {
		struct vc_read *r = &c->reads[i];
		struct vc_want *w = &c->queue[c->head];
		ssize_t ret;

		if (r->busy)
			continue;
		if (w->due_ns > now)
			break;
		ret = fi_read(c->ve.rdm.ep, r->buf, c->ring.slot_bytes, c->bufs_desc,
			      c->producer, c->ring.base + w->offset, c->ring.key, &r->op.ctx);
		if (ret == -FI_EAGAIN)
			break;
		if (ret)
			return ft_err("fi_read", ret);
		if (!c->first_ns)
			c->first_ns = ft_now_ns();
		r->want = *w;
		r->busy = true;
		c->busy++;
		c->head = (c->head + 1) % VC_QUEUE_MAX;
		c->len--;
	}
	return 0;
}

/*
 * How long to wait for a completion: until the next read is due when a
 * buffer is free for it; else until one comes (a completion ends the
 * wait early).
 */
static int vc_wait_ms(const struct vc *c)
{
	uint64_t now = ft_now_ns(), due;

	if (!c->len || c->busy == c->nreads)
		return 100;
	due = c->queue[c->head].due_ns;
	return due > now ? (int) ((due - now + 999999) / 1000000) : 0;
}

/* Progresses until done(c), failing after -t seconds without a completion. */
static int vc_wait(struct vc *c, bool (*done)(const struct vc *c), const char *what)
{
	int ret = 0;

	c->last_event_ns = ft_now_ns();
	while (!ret && !done(c)) {
		if (ft_now_ns() - c->last_event_ns > (uint64_t) c->timeout_s * 1000000000ull)
			return ft_fail("%s: no completion for %d s", what, c->timeout_s);
		ret = vc_issue(c);
		if (!ret)
			ret = vc_progress(c, vc_wait_ms(c));
	}
	return ret;
}

static bool vc_welcomed(const struct vc *c)
{
	return c->welcomed && c->sent >= 1;
}

static bool vc_stream_over(const struct vc *c)
{
	return c->ended && !c->len && !c->busy;
}

static bool vc_done_sent(const struct vc *c)
{
	return c->sent >= 2;
}

static int vc_join(struct vc *c)
{
	struct vys_join *j = &c->send.msg->join;
	size_t name_len = VYS_NAME_MAX;
	int ret;

	if (!c->ve.info->dest_addr)
		return ft_fail("no address for %s port %s", c->host, c->port);
	ret = ft_rdm_insert(&c->ve.rdm, c->ve.info->dest_addr, &c->producer,
			    "fi_av_insert (producer)");
	if (ret)
		return ret;
	*j = (struct vys_join) { .h = { VYS_MAGIC, VYS_JOIN } };
	ret = fi_getname(&c->ve.rdm.ep->fid, j->name, &name_len);
	if (ret)
		return ft_err("fi_getname", ret);
	j->name_len = (uint32_t) name_len;
	ret = (int) vys_send(&c->ve, &c->send, sizeof(*j), c->producer);
	if (ret)
		return ft_err("fi_send (JOIN)", ret);
	ret = vc_wait(c, vc_welcomed, "JOIN sent, no WELCOME");
	if (ret)
		return ret;
	printf("%s: joined as consumer %u, pid %ld\n", ft_prog, c->ring.id, (long) getpid());
	fflush(stdout);
	return 0;
}

static int vc_setup(struct vc *c)
{
	size_t len;
	int ret = vys_open(&c->ve, NULL, c->host, c->port, VC_RECVS + 1);

	for (uint32_t i = 0; !ret && i < VC_RECVS; i++) {
		c->recvs[i] = (struct vys_op) { .msg = &c->ve.msgs[i] };
		ret = (int) vys_post_recv(&c->ve, &c->recvs[i]);
		if (ret)
			ret = ft_err("fi_recv", ret);
	}
	if (ret)
		return ret;
	c->send = (struct vys_op) { .msg = &c->ve.msgs[VC_RECVS] };
	ret = vc_join(c);
	if (ret)
		return ret;
	len = c->ring.slot_bytes;
	c->bufs = malloc(c->nreads * len);
	c->expect = malloc(len);
	if (!c->bufs || !c->expect)
		return ft_fail("out of memory for %llu reads of %zu bytes",
			       (unsigned long long) c->nreads, len);
	for (uint32_t i = 0; i < c->nreads; i++)
		c->reads[i] = (struct vc_read) {
			.op = { .kind = VYS_OP_READ, .owner = i },
			.buf = c->bufs + i * len,
		};
	return vys_mr_reg(&c->ve, c->bufs, c->nreads * len, FI_READ, &c->bufs_mr,
			  &c->bufs_desc);
}

static void vc_report(const struct vc *c)
{
	double us = (double) (c->last_ns - c->first_ns) / 1e3;

	if (us <= 0)
		us = 1e300;
	printf("%s: signals=%llu fetched=%llu ok=%llu late=%llu skipped=%llu ignored=%llu "
	       "bytes=%llu read_MBps=%.1f ok_MBps=%.1f\n", ft_prog,
	       (unsigned long long) c->signals, (unsigned long long) c->fetched,
	       (unsigned long long) c->ok, (unsigned long long) c->late,
	       (unsigned long long) c->skipped, (unsigned long long) c->ve.ignored,
	       (unsigned long long) c->bytes, (double) c->fetched * c->ring.slot_bytes / us,
	       (double) c->bytes / us);
}

static int vc_run(struct vc *c)
{
	int ret = vc_wait(c, vc_stream_over, "waiting for spectra and END");

	if (ret)
		return ret;
	c->send.msg->done = (struct vys_done) { .h = { VYS_MAGIC, VYS_DONE }, .id = c->ring.id };
	ret = (int) vys_send(&c->ve, &c->send, sizeof(c->send.msg->done), c->producer);
	if (ret)
		return ft_err("fi_send (DONE)", ret);
	ret = vc_wait(c, vc_done_sent, "DONE not sent");
	vc_report(c);
	return ret;
}

static int vc_opts(struct vc *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "every", required_argument, NULL, 'e' },
		{ "delay-us", required_argument, NULL, 'd' },
		{ "reads", required_argument, NULL, 'r' },
		{ "no-check", no_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "p:t:", longopts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'p': c->port = optarg; break;
		case 't': bad = ft_parse_timeout(optarg, &c->timeout_s); break;
		case 'e': bad = ft_parse_num(optarg, 1, UINT32_MAX, &c->every); break;
		case 'd': bad = ft_parse_num(optarg, 0, 60000000, &c->delay_us); break;
		case 'r': bad = ft_parse_num(optarg, 1, VC_READS_MAX, &c->nreads); break;
		case 'N': c->check = false; break;
		default: bad = 1;
		}
		if (bad)
			return -1;
	}
	if (ft_parse_host(argc, argv, &c->host) || !c->host || !c->port) {
		fprintf(stderr, "usage: %s -p port [--every n] [--delay-us n] [--reads n] "
			"[--no-check] [-t timeout_s] host\n", ft_prog);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct vc c = { .every = 1, .nreads = 8, .check = true, .timeout_s = 60 };
	int ret, status = 0;

	if (vc_opts(&c, argc, argv))
		return 2;
	ret = vc_setup(&c);
	if (!ret)
		ret = vc_run(&c);
	vys_close(&c.ve, c.bufs_mr, &status);
	free(c.bufs);
	free(c.expect);
	if (ret || status) {
		fprintf(stderr, "%s: FAIL\n", ft_prog);
		return 1;
	}
	return 0;
}
