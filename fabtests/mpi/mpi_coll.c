/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_coll: collectives, which Open MPI builds on the point-to-point
 * messages the provider carries (pml cm), with checked results.
 *
 *  1. barrier: COLL_BARRIERS barriers; before barrier k every rank adds
 *     one to a counter in a file all ranks map (they run on one host),
 *     and after it the counter must hold at least size x (k + 1) (every
 *     rank arrived) and less than size x (k + 2) (none is past the next);
 *  2. bcast: each size of coll_sizes from each root, every byte checked;
 *  3. allreduce: MPI_SUM and, in place, MPI_MAX of int64 vectors of each
 *     length of coll_counts, against the results computed locally (every
 *     rank's values are a function of its rank);
 *  4. alltoall: blocks of each size of coll_sizes, received with a type
 *     whose extent leaves FT_GUARD bytes after each block, so a block
 *     that runs over is seen.
 *
 *   mpirun -np <n> mpi_coll
 *
 * Exit status: 0 after rank 0 printed "mpi_coll: PASS (<n> ranks)";
 * otherwise the job is aborted with a message naming what differed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "ft_common.h"
#include "mt_common.h"

#define COLL_BARRIERS	1000
#define COLL_ITERS	2

const char *const ft_prog = "mpi_coll";

/* Sizes in bytes: empty, one byte, eager, long, long above 1 MiB. */
static const size_t coll_sizes[] = { 0, 1, 1000, 65537, (1 << 20) + 3 };
#define COLL_NSIZES	(sizeof(coll_sizes) / sizeof(coll_sizes[0]))
/* Vector lengths of the reductions: one element up to 2 MiB of them. */
static const int coll_counts[] = { 1, 1000, 262147 };
#define COLL_NCOUNTS	(sizeof(coll_counts) / sizeof(coll_counts[0]))

/*
 * Maps the barrier counter: rank 0 creates a file in $TMPDIR (or /tmp),
 * broadcasts its name, every rank maps it, and rank 0 removes the name
 * once all hold the mapping.
 */
static uint64_t *coll_counter_open(void)
{
	const char *dir = getenv("TMPDIR");
	char path[512] = "";
	uint64_t *counter;
	int fd = -1;

	if (!g_mt_rank) {
		snprintf(path, sizeof(path), "%s/mpi_coll.XXXXXX", dir && *dir ? dir : "/tmp");
		fd = mkstemp(path);
		if (fd < 0 || ftruncate(fd, sizeof(*counter)))
			mt_die("barrier counter %s: %s", path, strerror(errno));
	}
	MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
	if (g_mt_rank)
		fd = open(path, O_RDWR);
	if (fd < 0)
		mt_die("barrier counter %s: %s (the ranks must share a host)", path,
		       strerror(errno));
	counter = mmap(NULL, sizeof(*counter), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counter == MAP_FAILED)
		mt_die("mmap of the barrier counter: %s", strerror(errno));
	close(fd);
	MPI_Barrier(MPI_COMM_WORLD);
	if (!g_mt_rank)
		unlink(path);
	return counter;
}

/* Case 1. */
static void coll_barrier(void)
{
	uint64_t *counter = coll_counter_open(), n = (uint64_t) g_mt_size;

	for (uint64_t k = 0; k < COLL_BARRIERS; k++) {
		uint64_t seen;

		__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
		MPI_Barrier(MPI_COMM_WORLD);
		seen = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
		if (seen < n * (k + 1) || seen >= n * (k + 2))
			mt_die("after barrier %llu the ranks had entered %llu barriers in all, "
			       "not %llu to %llu", (unsigned long long) k,
			       (unsigned long long) seen, (unsigned long long) (n * (k + 1)),
			       (unsigned long long) (n * (k + 2) - 1));
	}
	munmap(counter, sizeof(*counter));
	mt_say("barrier: %d barriers, ok", COLL_BARRIERS);
}

/* Case 2. */
static void coll_bcast(void)
{
	uint8_t *buf = mt_buf_open(coll_sizes[COLL_NSIZES - 1]);

	for (int root = 0; root < g_mt_size; root++) {
		for (size_t s = 0; s < COLL_NSIZES; s++) {
			size_t len = coll_sizes[s];

			for (int it = 0; it < COLL_ITERS; it++) {
				mt_buf_poison(buf, len);
				if (g_mt_rank == root)
					mt_fill(buf, len, root, 0, it);
				MPI_Bcast(buf, (int) len, MPI_BYTE, root, MPI_COMM_WORLD);
				mt_check_data(buf, len, root, 0, it,
					      "bcast of %zu bytes from root %d", len, root);
			}
		}
	}
	free(buf);
	mt_say("bcast: %zu sizes from each of %d roots, ok", COLL_NSIZES, g_mt_size);
}

/* Element i of rank's vector at iteration it: any sign; 256 of them add without overflow. */
static int64_t coll_value(int rank, int i, int it)
{
	return (int64_t) (ft_mix(((uint64_t) it << 48) ^ ((uint64_t) rank << 32) ^ (uint64_t) i)
			  >> 8) - ((int64_t) 1 << 55);
}

/* Case 3, one vector length and iteration. */
static void coll_allreduce_one(int count, int it, int64_t *in, int64_t *out)
{
	for (int i = 0; i < count; i++)
		in[i] = coll_value(g_mt_rank, i, it);
	MPI_Allreduce(in, out, count, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, in, count, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	for (int i = 0; i < count; i++) {
		int64_t sum = 0, max = INT64_MIN;

		for (int r = 0; r < g_mt_size; r++) {
			int64_t v = coll_value(r, i, it);

			sum += v;
			max = v > max ? v : max;
		}
		if (out[i] != sum)
			mt_die("allreduce MPI_SUM of %d int64, iteration %d: element %d is "
			       "%lld, expected %lld", count, it, i, (long long) out[i],
			       (long long) sum);
		if (in[i] != max)
			mt_die("allreduce MPI_MAX in place of %d int64, iteration %d: element %d "
			       "is %lld, expected %lld", count, it, i, (long long) in[i],
			       (long long) max);
	}
}

/* Case 3. */
static void coll_allreduce(void)
{
	int max = coll_counts[COLL_NCOUNTS - 1];
	int64_t *in = calloc(max, sizeof(*in)), *out = calloc(max, sizeof(*out));

	if (!in || !out)
		mt_die("out of memory for %d-element vectors", max);
	for (size_t c = 0; c < COLL_NCOUNTS; c++) {
		for (int it = 0; it < COLL_ITERS; it++)
			coll_allreduce_one(coll_counts[c], it, in, out);
	}
	free(in);
	free(out);
	mt_say("allreduce: MPI_SUM and MPI_MAX of 1 to %d int64, ok", max);
}

/* Case 4, one block size: block p of rbuf starts at p x (len + FT_GUARD). */
static void coll_alltoall_one(size_t len, int it, uint8_t *sbuf, uint8_t *rbuf)
{
	size_t stride = len + FT_GUARD;
	MPI_Datatype block, spaced;

	MPI_Type_contiguous((int) len, MPI_BYTE, &block);
	MPI_Type_create_resized(block, 0, (MPI_Aint) stride, &spaced);
	MPI_Type_commit(&spaced);
	for (int p = 0; p < g_mt_size; p++) {
		mt_fill(sbuf + p * len, len, g_mt_rank, p, it);
		mt_buf_poison(rbuf + p * stride, len);
	}
	MPI_Alltoall(sbuf, (int) len, MPI_BYTE, rbuf, 1, spaced, MPI_COMM_WORLD);
	for (int p = 0; p < g_mt_size; p++)
		mt_check_data(rbuf + p * stride, len, p, g_mt_rank, it,
			      "alltoall of %zu-byte blocks: the block from rank %d", len, p);
	MPI_Type_free(&spaced);
	MPI_Type_free(&block);
}

/* Case 4. */
static void coll_alltoall(void)
{
	size_t max = coll_sizes[COLL_NSIZES - 1], n = (size_t) g_mt_size;
	uint8_t *sbuf = mt_buf_open(n * max), *rbuf = mt_buf_open(n * (max + FT_GUARD));

	for (size_t s = 0; s < COLL_NSIZES; s++) {
		for (int it = 0; it < COLL_ITERS; it++)
			coll_alltoall_one(coll_sizes[s], it, sbuf, rbuf);
	}
	free(sbuf);
	free(rbuf);
	mt_say("alltoall: blocks of %zu sizes, 0 to %zu bytes, ok", COLL_NSIZES, max);
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv, MPI_THREAD_SINGLE);
	coll_barrier();
	coll_bcast();
	coll_allreduce();
	coll_alltoall();
	return mt_finish();
}
