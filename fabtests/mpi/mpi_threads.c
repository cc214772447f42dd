/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_threads: MPI_THREAD_MULTIPLE, several threads of each rank in MPI
 * at once. The run fails at once if MPI_Init_thread does not provide
 * MPI_THREAD_MULTIPLE.
 *
 * Ranks pair up (r and r ^ 1: an even number of ranks). Thread t of a
 * rank ping-pongs THR_ITERS messages with thread t of its partner on
 * tag THR_TAG + t, sizes cycling through thr_sizes (eager, medium and
 * long): even iterations with MPI_Send and MPI_Recv, the lower rank
 * first; odd ones with MPI_Irecv, MPI_Isend and MPI_Waitall on both
 * sides at once. Odd threads receive from MPI_ANY_SOURCE (their tag
 * still picks their partner's thread). Every byte and status is checked.
 *
 *   mpirun -np <even> mpi_threads
 *
 * Exit status: 0 after rank 0 printed "mpi_threads: PASS (<n> ranks)";
 * otherwise the job is aborted with a message naming the thread and
 * what differed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ft_common.h"
#include "mt_common.h"

#define THR_THREADS	4
#define THR_ITERS	400
#define THR_TAG		500

const char *const ft_prog = "mpi_threads";

/* Sizes: empty, small, the largest eager one on loopback, medium, long. */
static const size_t thr_sizes[] = { 0, 8, 1000, 65443, 65500, 300000 };
#define THR_NSIZES	(sizeof(thr_sizes) / sizeof(thr_sizes[0]))
#define THR_MAX_SIZE	300000

/* The iteration number of a thread's message: unique across threads. */
static uint64_t thr_it(int thread, int it)
{
	return (uint64_t) it * THR_THREADS + (uint64_t) thread;
}

/* Checks what thread got at iteration it. */
static void thr_check(int thread, int it, const uint8_t *rbuf, size_t len,
		      const MPI_Status *st)
{
	int peer = mt_partner();

	mt_check_status(st, peer, THR_TAG + thread, len, "thread %d, iteration %d (%zu bytes)",
			thread, it, len);
	mt_check_data(rbuf, len, peer, g_mt_rank, thr_it(thread, it),
		      "thread %d, iteration %d (%zu bytes)", thread, it, len);
}

/* One thread's ping-pongs; arg is its number. */
static void *thr_main(void *arg)
{
	int thread = (int) (intptr_t) arg, peer = mt_partner(), tag = THR_TAG + thread;
	int src = thread % 2 ? MPI_ANY_SOURCE : peer;
	uint8_t *sbuf = mt_buf_open(THR_MAX_SIZE), *rbuf = mt_buf_open(THR_MAX_SIZE);
	MPI_Request reqs[2];
	MPI_Status sts[2];

	for (int it = 0; it < THR_ITERS; it++) {
		size_t len = thr_sizes[it % THR_NSIZES];
		int count = (int) len;

		mt_fill(sbuf, len, g_mt_rank, peer, thr_it(thread, it));
		mt_buf_poison(rbuf, len);
		if (it % 2) {
			MPI_Irecv(rbuf, count, MPI_BYTE, src, tag, MPI_COMM_WORLD, &reqs[0]);
			MPI_Isend(sbuf, count, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &reqs[1]);
			MPI_Waitall(2, reqs, sts);
		} else if (g_mt_rank < peer) {
			MPI_Send(sbuf, count, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
			MPI_Recv(rbuf, count, MPI_BYTE, src, tag, MPI_COMM_WORLD, &sts[0]);
		} else {
			MPI_Recv(rbuf, count, MPI_BYTE, src, tag, MPI_COMM_WORLD, &sts[0]);
			MPI_Send(sbuf, count, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
		}
		thr_check(thread, it, rbuf, len, &sts[0]);
	}
	free(sbuf);
	free(rbuf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[THR_THREADS];
	int ret;

	mt_init(&argc, &argv, MPI_THREAD_MULTIPLE);
	mt_partner();
	for (int t = 0; t < THR_THREADS; t++) {
		ret = pthread_create(&threads[t], NULL, thr_main, (void *) (intptr_t) t);
		if (ret)
			mt_die("pthread_create: %s", strerror(ret));
	}
	for (int t = 0; t < THR_THREADS; t++)
		pthread_join(threads[t], NULL);
	mt_say("%d threads, %d ping-pongs each, 0 to %d bytes, ok", THR_THREADS, THR_ITERS,
	       THR_MAX_SIZE);
	return mt_finish();
}
