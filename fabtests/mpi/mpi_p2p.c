/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_p2p: point-to-point messages of every size, every byte and every
 * receive's status checked. Ranks pair up (r and r ^ 1: an even number
 * of ranks) for the ping-pongs; the nonblocking cases run between every
 * two ranks at once.
 *
 *  1. send/recv: MPI_Send and MPI_Recv ping-pong, the lower rank first,
 *     its partner answering with the same size;
 *  2. ssend: the same with MPI_Ssend, which completes only once the
 *     receive matched;
 *  3. isend/irecv expected: every rank posts MPI_Irecv from every other,
 *     passes a barrier, posts MPI_Isend to every other, then MPI_Waitall:
 *     every message finds its receive posted;
 *  4. isend/irecv unexpected: the same with the sends posted before the
 *     barrier and the receives after it, so that each message (or, for a
 *     long one, its request to send) waits for its receive.
 *
 * Sizes: 0, every power of two from 1 B to 16 MiB, and the odd ones of
 * p2p_odd_sizes. Large sizes run fewer iterations (p2p_iters) to keep
 * the run short; the sizes themselves are never cut.
 *
 *   mpirun -np <even> mpi_p2p
 *
 * Exit status: 0 after rank 0 printed "mpi_p2p: PASS (<n> ranks)";
 * otherwise the job is aborted with a message naming what differed.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ft_common.h"
#include "mt_common.h"

#define P2P_MAX_SHIFT	24	/* the largest size is 1 << 24: 16 MiB */
#define P2P_MAX_SIZE	((size_t) 1 << P2P_MAX_SHIFT)

const char *const ft_prog = "mpi_p2p";

/*
 * Odd sizes: 3; the last eager size on loopback (65443: a 65535-byte IP
 * datagram less the headers) and the first medium one; the first long
 * one above FI_RDMX_MEDIUM_MAX; 1 MiB + 3, a multiple of no packet size.
 */
static const size_t p2p_odd_sizes[] = { 3, 65443, 65444, 65537, (1 << 20) + 3 };
#define P2P_NODD	(sizeof(p2p_odd_sizes) / sizeof(p2p_odd_sizes[0]))
/* 0, the P2P_MAX_SHIFT + 1 powers of two, the odd sizes. */
#define P2P_NSIZES	(1 + P2P_MAX_SHIFT + 1 + P2P_NODD)

/* The sizes every case runs: 0, the powers of two, then the odd sizes. */
static size_t p2p_sizes[P2P_NSIZES];

static void p2p_sizes_construct(void)
{
	size_t n = 0;

	p2p_sizes[n++] = 0;
	for (int shift = 0; shift <= P2P_MAX_SHIFT; shift++)
		p2p_sizes[n++] = (size_t) 1 << shift;
	for (size_t i = 0; i < P2P_NODD; i++)
		p2p_sizes[n++] = p2p_odd_sizes[i];
}

/* Iterations of a size: fewer as the size grows. */
static int p2p_iters(size_t len)
{
	if (len <= 65536)
		return 10;
	return len <= ((size_t) 1 << 20) + 3 ? 3 : 1;
}

/* The signature MPI_Send and MPI_Ssend share. */
typedef int (*p2p_send_fn)(const void *buf, int count, MPI_Datatype type, int dest, int tag,
			   MPI_Comm comm);

/* Receives the partner's message of len bytes with tag into buf and checks it. */
static void p2p_recv_check(uint8_t *buf, size_t len, int tag, uint64_t it, const char *name)
{
	int peer = mt_partner();
	MPI_Status st;

	mt_buf_poison(buf, len);
	MPI_Recv(buf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
	mt_check_status(&st, peer, tag, len, "%s: %zu bytes, iteration %llu", name, len,
			(unsigned long long) it);
	mt_check_data(buf, len, peer, g_mt_rank, it, "%s: %zu bytes, iteration %llu", name, len,
		      (unsigned long long) it);
}

/*
 * Cases 1 and 2: for each size, a ping-pong with the partner, sends made
 * by send_fn (MPI_Send or MPI_Ssend).
 */
static void p2p_pingpong(p2p_send_fn send_fn, const char *name)
{
	int peer = mt_partner();
	uint8_t *sbuf = mt_buf_open(P2P_MAX_SIZE), *rbuf = mt_buf_open(P2P_MAX_SIZE);

	for (size_t s = 0; s < P2P_NSIZES; s++) {
		size_t len = p2p_sizes[s];
		int tag = (int) s;

		for (int it = 0; it < p2p_iters(len); it++) {
			mt_fill(sbuf, len, g_mt_rank, peer, it);
			if (g_mt_rank < peer) {
				send_fn(sbuf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
				p2p_recv_check(rbuf, len, tag, it, name);
			} else {
				p2p_recv_check(rbuf, len, tag, it, name);
				send_fn(sbuf, (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
			}
		}
	}
	free(sbuf);
	free(rbuf);
	mt_say("%s: %zu sizes, 0 to %zu bytes, ok", name, P2P_NSIZES, P2P_MAX_SIZE);
}

/*
 * Posts the receives of len bytes with tag from every other rank into
 * rbufs[rank]: request i is the receive from rank i.
 */
static void p2p_post_recvs(uint8_t **rbufs, MPI_Request *reqs, size_t len, int tag)
{
	for (int peer = 0; peer < g_mt_size; peer++) {
		if (peer != g_mt_rank)
			MPI_Irecv(rbufs[peer], (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
				  &reqs[peer]);
	}
}

/*
 * Posts the sends of sbufs[rank], len bytes with tag, to every other
 * rank: request size + i is the send to rank i.
 */
static void p2p_post_sends(uint8_t **sbufs, MPI_Request *reqs, size_t len, int tag)
{
	for (int peer = 0; peer < g_mt_size; peer++) {
		if (peer != g_mt_rank)
			MPI_Isend(sbufs[peer], (int) len, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
				  &reqs[g_mt_size + peer]);
	}
}

/*
 * One round of cases 3 and 4: len bytes to and from every other rank,
 * the receives posted, then a barrier, then the sends (expected), or
 * the other way round (unexpected). A rank's own request slots stay
 * MPI_REQUEST_NULL.
 */
static void p2p_all_round(uint8_t **sbufs, uint8_t **rbufs, MPI_Request *reqs, MPI_Status *sts,
			  size_t len, int tag, int it, int unexpected, const char *name)
{
	int n = g_mt_size;

	for (int i = 0; i < 2 * n; i++)
		reqs[i] = MPI_REQUEST_NULL;
	for (int peer = 0; peer < n; peer++) {
		if (peer == g_mt_rank)
			continue;
		mt_fill(sbufs[peer], len, g_mt_rank, peer, it);
		mt_buf_poison(rbufs[peer], len);
	}
	if (unexpected)
		p2p_post_sends(sbufs, reqs, len, tag);
	else
		p2p_post_recvs(rbufs, reqs, len, tag);
	MPI_Barrier(MPI_COMM_WORLD);
	if (unexpected)
		p2p_post_recvs(rbufs, reqs, len, tag);
	else
		p2p_post_sends(sbufs, reqs, len, tag);
	MPI_Waitall(2 * n, reqs, sts);
	for (int peer = 0; peer < n; peer++) {
		if (peer == g_mt_rank)
			continue;
		mt_check_status(&sts[peer], peer, tag, len, "%s: %zu bytes, iteration %d", name,
				len, it);
		mt_check_data(rbufs[peer], len, peer, g_mt_rank, it, "%s: %zu bytes, iteration %d",
			      name, len, it);
	}
}

/* Cases 3 and 4: every size between every two ranks at once. */
static void p2p_all(int unexpected)
{
	const char *name = unexpected ? "isend/irecv unexpected" : "isend/irecv expected";
	int n = g_mt_size;
	uint8_t **sbufs = calloc(n, sizeof(*sbufs)), **rbufs = calloc(n, sizeof(*rbufs));
	MPI_Request *reqs = calloc(2 * n, sizeof(*reqs));
	MPI_Status *sts = calloc(2 * n, sizeof(*sts));

	if (!sbufs || !rbufs || !reqs || !sts)
		mt_die("out of memory for %d ranks' requests", n);
	for (int peer = 0; peer < n; peer++) {
		if (peer == g_mt_rank)
			continue;
		sbufs[peer] = mt_buf_open(P2P_MAX_SIZE);
		rbufs[peer] = mt_buf_open(P2P_MAX_SIZE);
	}
	for (size_t s = 0; s < P2P_NSIZES; s++) {
		for (int it = 0; it < p2p_iters(p2p_sizes[s]); it++)
			p2p_all_round(sbufs, rbufs, reqs, sts, p2p_sizes[s], (int) s, it,
				      unexpected, name);
	}
	for (int peer = 0; peer < n; peer++) {
		free(sbufs[peer]);
		free(rbufs[peer]);
	}
	free(sbufs);
	free(rbufs);
	free(reqs);
	free(sts);
	mt_say("%s: %zu sizes, 0 to %zu bytes, ok", name, P2P_NSIZES, P2P_MAX_SIZE);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, MPI_THREAD_SINGLE);
	mt_partner();
	p2p_sizes_construct();
	p2p_pingpong(MPI_Send, "send/recv");
	p2p_pingpong(MPI_Ssend, "ssend");
	p2p_all(0);
	p2p_all(1);
	return mt_finish();
}
