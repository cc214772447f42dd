/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_match: how receives find their messages, what MPI asks of the
 * provider's tag matching (fi_trecv with ignore bits, FI_PEEK, FI_CLAIM,
 * fi_cancel). Every byte and every status is checked.
 *
 *  1. wildcards: every rank sends MATCH_COUNT messages (sizes from
 *     match_sizes, tag MATCH_TAG + i for the i-th) to every other rank,
 *     which takes them with MPI_Recv from MPI_ANY_SOURCE and MPI_ANY_TAG,
 *     then from MPI_ANY_SOURCE by tag, then by source with MPI_ANY_TAG:
 *     the status names the message, and messages from one sender must
 *     match in the order it sent them (MPI's non-overtaking rule);
 *  2. probes, between partners (r and r ^ 1: an even number of ranks),
 *     each size of match_sizes: MPI_Probe and MPI_Iprobe give the source,
 *     tag and size before the receive; MPI_Mprobe and MPI_Improbe claim
 *     two messages with the same tag (the second of another size) and
 *     MPI_Mrecv takes them in the reverse order, each getting its own;
 *     MPI_Iprobe and MPI_Improbe of a tag never sent find nothing;
 *  3. cancel: an MPI_Irecv that nothing matches, from the partner and
 *     from MPI_ANY_SOURCE, is cancelled (MPI_Test_cancelled says so, its
 *     buffer is untouched), and a message sent afterwards with that tag
 *     goes to the next receive, not to the cancelled one;
 *  4. self: each size of match_sizes sent to the own rank, MPI_Isend then
 *     MPI_Recv, and MPI_Irecv (from MPI_ANY_SOURCE) then MPI_Send.
 *
 *   mpirun -np <even> mpi_match
 *
 * Exit status: 0 after rank 0 printed "mpi_match: PASS (<n> ranks)";
 * otherwise the job is aborted with a message naming what differed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ft_common.h"
#include "mt_common.h"

#define MATCH_COUNT		24
#define MATCH_TAG		100
#define MATCH_TAG_PROBE		1000
#define MATCH_TAG_CANCEL	2000
#define MATCH_TAG_SELF		3000
/* A tag no rank ever sends. */
#define MATCH_TAG_NEVER		9999
/* Bound of the waits that a receive matching the wrong message would hang. */
#define MATCH_WAIT_S		30.0

const char *const ft_prog = "mpi_match";

/*
 * Message sizes: empty, one byte, eager, medium (above 65443, the
 * largest eager message on loopback), long (above FI_RDMX_MEDIUM_MAX),
 * and long above 1 MiB.
 */
static const size_t match_sizes[] = { 0, 1, 1000, 65500, 100000, (1 << 20) + 3 };
#define MATCH_NSIZES	(sizeof(match_sizes) / sizeof(match_sizes[0]))
#define MATCH_MAX_SIZE	((size_t) (1 << 20) + 3)

/* The size of the i-th message of a case. */
static size_t match_len(int i)
{
	return match_sizes[i % MATCH_NSIZES];
}

/*
 * One round of case 1: posts MATCH_COUNT sends to every other rank,
 * takes (size - 1) x MATCH_COUNT messages with receives from source
 * any_source ? MPI_ANY_SOURCE : each other rank in turn, tag
 * any_tag ? MPI_ANY_TAG : each tag in turn, and checks each one and the
 * order of each sender's messages.
 */
static void match_wildcard_round(int any_source, int any_tag, const char *name)
{
	int n = g_mt_size, nsends = (n - 1) * MATCH_COUNT, s = 0;
	uint8_t **sbufs = calloc(nsends, sizeof(*sbufs)), *rbuf = mt_buf_open(MATCH_MAX_SIZE);
	MPI_Request *reqs = calloc(nsends, sizeof(*reqs));
	int *next = calloc(n, sizeof(*next));

	if (!sbufs || !reqs || !next)
		mt_die("out of memory for %d sends", nsends);
	for (int i = 0; i < MATCH_COUNT; i++) {
		for (int peer = 0; peer < n; peer++) {
			if (peer == g_mt_rank)
				continue;
			sbufs[s] = mt_buf_open(match_len(i));
			mt_fill(sbufs[s], match_len(i), g_mt_rank, peer, i);
			MPI_Isend(sbufs[s], (int) match_len(i), MPI_BYTE, peer, MATCH_TAG + i,
				  MPI_COMM_WORLD, &reqs[s]);
			s++;
		}
	}
	for (int i = 0; i < MATCH_COUNT; i++) {
		for (int k = 1; k < n; k++) {
			int want_src = any_source ? MPI_ANY_SOURCE : (g_mt_rank + k) % n;
			int want_tag = any_tag ? MPI_ANY_TAG : MATCH_TAG + i;
			int src, idx;
			MPI_Status st;

			mt_buf_poison(rbuf, MATCH_MAX_SIZE);
			MPI_Recv(rbuf, (int) MATCH_MAX_SIZE, MPI_BYTE, want_src, want_tag,
				 MPI_COMM_WORLD, &st);
			src = st.MPI_SOURCE;
			idx = st.MPI_TAG - MATCH_TAG;
			if (src < 0 || src >= n || src == g_mt_rank || idx < 0 || idx >= MATCH_COUNT)
				mt_die("%s: a receive got source %d, tag %d: no such message", name,
				       src, st.MPI_TAG);
			if (idx != next[src])
				mt_die("%s: message %d of rank %d arrived while message %d was "
				       "due: messages overtook", name, idx, src, next[src]);
			next[src]++;
			mt_check_status(&st, any_source ? src : want_src,
					any_tag ? st.MPI_TAG : want_tag, match_len(idx),
					"%s: message %d of rank %d", name, idx, src);
			mt_check_data(rbuf, match_len(idx), src, g_mt_rank, idx,
				      "%s: message %d of rank %d", name, idx, src);
		}
	}
	MPI_Waitall(nsends, reqs, MPI_STATUSES_IGNORE);
	/*
	 * No rank may start the next round while another still has wildcard
	 * receives out: they would match the next round's messages, which
	 * MPI allows.
	 */
	MPI_Barrier(MPI_COMM_WORLD);
	for (s = 0; s < nsends; s++)
		free(sbufs[s]);
	free(sbufs);
	free(rbuf);
	free(reqs);
	free(next);
	mt_say("%s: %d messages from each of %d ranks, ok", name, MATCH_COUNT, n - 1);
}

/* Case 1. */
static void match_wildcards(void)
{
	match_wildcard_round(1, 1, "MPI_ANY_SOURCE, MPI_ANY_TAG");
	match_wildcard_round(1, 0, "MPI_ANY_SOURCE, by tag");
	match_wildcard_round(0, 1, "by source, MPI_ANY_TAG");
}

/* The kinds of probe case 2 runs. */
enum match_probe {
	MATCH_PROBE,
	MATCH_IPROBE,
	MATCH_MPROBE,
	MATCH_IMPROBE,
	MATCH_NPROBES
};

static const char *const match_probe_names[MATCH_NPROBES] = {
	[MATCH_PROBE] = "MPI_Probe",
	[MATCH_IPROBE] = "MPI_Iprobe",
	[MATCH_MPROBE] = "MPI_Mprobe",
	[MATCH_IMPROBE] = "MPI_Improbe",
};

/*
 * Checks that neither MPI_Iprobe nor MPI_Improbe finds a message with a
 * tag no rank sends.
 */
static void match_probe_nothing(void)
{
	MPI_Message msg;
	MPI_Status st;
	int flag;

	MPI_Iprobe(MPI_ANY_SOURCE, MATCH_TAG_NEVER, MPI_COMM_WORLD, &flag, &st);
	if (flag)
		mt_die("MPI_Iprobe of a tag never sent found a message from rank %d, tag %d",
		       st.MPI_SOURCE, st.MPI_TAG);
	MPI_Improbe(MPI_ANY_SOURCE, MATCH_TAG_NEVER, MPI_COMM_WORLD, &flag, &msg, &st);
	if (flag || msg != MPI_MESSAGE_NULL)
		mt_die("MPI_Improbe of a tag never sent found a message (flag %d) from rank %d",
		       flag, st.MPI_SOURCE);
}

/*
 * Probes the partner's oldest message with MPI_ANY_TAG, blocking or
 * polling; claims it when msg is not NULL.
 */
static void match_probe_one(enum match_probe kind, MPI_Message *msg, MPI_Status *st)
{
	int peer = mt_partner(), flag = 0;

	switch (kind) {
	case MATCH_PROBE:
		MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, st);
		break;
	case MATCH_MPROBE:
		MPI_Mprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, msg, st);
		break;
	case MATCH_IPROBE:
		while (!flag)
			MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
		break;
	case MATCH_IMPROBE:
		while (!flag)
			MPI_Improbe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, msg, st);
		break;
	case MATCH_NPROBES:
		mt_die("no probe kind %d", kind);
	}
}

/*
 * Case 2 with MPI_Probe or MPI_Iprobe, message size len: the probe gives
 * the status, the receive named by it takes the message.
 */
static void match_probe_recv(enum match_probe kind, size_t len, int it)
{
	const char *name = match_probe_names[kind];
	int peer = mt_partner(), tag = MATCH_TAG_PROBE + it;
	uint8_t *sbuf = mt_buf_open(len), *rbuf;
	MPI_Request req;
	MPI_Status st;
	int count;

	mt_fill(sbuf, len, g_mt_rank, peer, it);
	MPI_Isend(sbuf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
	match_probe_one(kind, NULL, &st);
	mt_check_status(&st, peer, tag, len, "%s of a %zu-byte message", name, len);
	MPI_Get_count(&st, MPI_BYTE, &count);
	rbuf = mt_buf_open(count);
	MPI_Recv(rbuf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
	mt_check_status(&st, peer, tag, len, "%s, then MPI_Recv of %zu bytes", name, len);
	mt_check_data(rbuf, len, peer, g_mt_rank, it, "%s, then MPI_Recv of %zu bytes", name, len);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	free(sbuf);
	free(rbuf);
}

/*
 * Case 2 with MPI_Mprobe or MPI_Improbe: two messages with one tag, of
 * len bytes then of the next size, are both claimed in order, then
 * received in the reverse order: each MPI_Mrecv must get the message its
 * probe claimed.
 */
static void match_mprobe_recv(enum match_probe kind, int size_idx, int it)
{
	const char *name = match_probe_names[kind];
	int peer = mt_partner(), tag = MATCH_TAG_PROBE + it;
	size_t lens[2] = { match_len(size_idx), match_len(size_idx + 1) };
	uint8_t *sbufs[2], *rbufs[2];
	MPI_Request reqs[2];
	MPI_Message msgs[2];
	MPI_Status st;

	for (int m = 0; m < 2; m++) {
		sbufs[m] = mt_buf_open(lens[m]);
		rbufs[m] = mt_buf_open(lens[m]);
		mt_fill(sbufs[m], lens[m], g_mt_rank, peer, 2 * it + m);
		MPI_Isend(sbufs[m], (int) lens[m], MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[m]);
	}
	for (int m = 0; m < 2; m++) {
		match_probe_one(kind, &msgs[m], &st);
		mt_check_status(&st, peer, tag, lens[m], "%s of message %d (%zu bytes)", name, m,
				lens[m]);
	}
	for (int m = 1; m >= 0; m--) {
		MPI_Mrecv(rbufs[m], (int) lens[m], MPI_BYTE, &msgs[m], &st);
		mt_check_status(&st, peer, tag, lens[m], "%s, then MPI_Mrecv of message %d",
				name, m);
		mt_check_data(rbufs[m], lens[m], peer, g_mt_rank, 2 * it + m,
			      "%s, then MPI_Mrecv of message %d (%zu bytes)", name, m, lens[m]);
		if (msgs[m] != MPI_MESSAGE_NULL)
			mt_die("%s: MPI_Mrecv left its message handle set", name);
	}
	MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	for (int m = 0; m < 2; m++) {
		free(sbufs[m]);
		free(rbufs[m]);
	}
}

/* Case 2. */
static void match_probes(void)
{
	int it = 0;

	match_probe_nothing();
	for (int kind = 0; kind < MATCH_NPROBES; kind++) {
		for (int s = 0; s < (int) MATCH_NSIZES; s++, it++) {
			if (kind == MATCH_PROBE || kind == MATCH_IPROBE)
				match_probe_recv(kind, match_sizes[s], it);
			else
				match_mprobe_recv(kind, s, it);
		}
		mt_say("%s: %zu sizes, 0 to %zu bytes, ok", match_probe_names[kind], MATCH_NSIZES,
		       MATCH_MAX_SIZE);
	}
	match_probe_nothing();
	mt_say("MPI_Iprobe and MPI_Improbe of a tag never sent: nothing found, ok");
}

/*
 * Case 3, the receive from src (the partner or MPI_ANY_SOURCE): cancels
 * an MPI_Irecv of MATCH_TAG_CANCEL + round, then tells the partner to
 * send that tag (a barrier) and takes its message with a new receive.
 */
static void match_cancel_round(int src, int round, const char *name)
{
	int peer = mt_partner(), tag = MATCH_TAG_CANCEL + round, cancelled;
	size_t len = MATCH_MAX_SIZE;
	uint8_t *cbuf = mt_buf_open(len), *rbuf = mt_buf_open(len), *sbuf = mt_buf_open(len);
	MPI_Request req;
	MPI_Status st;

	MPI_Irecv(cbuf, (int) len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &req);
	MPI_Cancel(&req);
	mt_wait_within(&req, &st, MATCH_WAIT_S, "the cancelled receive");
	MPI_Test_cancelled(&st, &cancelled);
	if (!cancelled)
		mt_die("%s: MPI_Test_cancelled says a receive nothing matched was not "
		       "cancelled", name);
	MPI_Barrier(MPI_COMM_WORLD);
	mt_fill(sbuf, len, g_mt_rank, peer, round);
	MPI_Isend(sbuf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
	MPI_Recv(rbuf, (int) len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
	mt_check_status(&st, peer, tag, len, "%s: the receive after the cancel", name);
	mt_check_data(rbuf, len, peer, g_mt_rank, round, "%s: the receive after the cancel",
		      name);
	for (size_t i = 0; i < len + FT_GUARD; i++) {
		if (cbuf[i] != FT_POISON)
			mt_die("%s: the cancelled receive's byte %zu was written", name, i);
	}
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	free(cbuf);
	free(rbuf);
	free(sbuf);
	mt_say("cancel of a receive from %s: cancelled, the next message went to the next "
	       "receive, ok", name);
}

/* Case 3. */
static void match_cancel(void)
{
	match_cancel_round(mt_partner(), 0, "the partner");
	match_cancel_round(MPI_ANY_SOURCE, 1, "MPI_ANY_SOURCE");
}

/* Case 4, one size: a message to the own rank both ways round. */
static void match_self_one(size_t len, int it)
{
	int me = g_mt_rank, tag = MATCH_TAG_SELF + it;
	uint8_t *sbuf = mt_buf_open(len), *rbuf = mt_buf_open(len);
	MPI_Request req;
	MPI_Status st;

	mt_fill(sbuf, len, me, me, 2 * it);
	MPI_Isend(sbuf, (int) len, MPI_BYTE, me, tag, MPI_COMM_WORLD, &req);
	MPI_Recv(rbuf, (int) len, MPI_BYTE, me, tag, MPI_COMM_WORLD, &st);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	mt_check_status(&st, me, tag, len, "self: MPI_Isend, MPI_Recv of %zu bytes", len);
	mt_check_data(rbuf, len, me, me, 2 * it, "self: MPI_Isend, MPI_Recv of %zu bytes", len);

	mt_buf_poison(rbuf, len);
	mt_fill(sbuf, len, me, me, 2 * it + 1);
	MPI_Irecv(rbuf, (int) len, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &req);
	MPI_Send(sbuf, (int) len, MPI_BYTE, me, tag, MPI_COMM_WORLD);
	MPI_Wait(&req, &st);
	mt_check_status(&st, me, tag, len, "self: MPI_Irecv, MPI_Send of %zu bytes", len);
	mt_check_data(rbuf, len, me, me, 2 * it + 1, "self: MPI_Irecv, MPI_Send of %zu bytes",
		      len);
	free(sbuf);
	free(rbuf);
}

/* Case 4. */
static void match_self(void)
{
	for (int s = 0; s < (int) MATCH_NSIZES; s++)
		match_self_one(match_sizes[s], s);
	mt_say("self: %zu sizes, 0 to %zu bytes, ok", MATCH_NSIZES, MATCH_MAX_SIZE);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, MPI_THREAD_SINGLE);
	mt_partner();
	match_wildcards();
	match_probes();
	match_cancel();
	match_self();
	return mt_finish();
}
