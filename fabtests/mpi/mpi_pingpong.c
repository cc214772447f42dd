/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mpi_pingpong: the latency and bandwidth of MPI point-to-point messages
 * between two ranks, measured as IMB-MPI1 PingPong measures them, so that
 * Open MPI's transports (rdmx through pml cm and mtl ofi, ob1 over the
 * vader or tcp btl) compare in one run (benchmarks/mpi_pingpong.sh
 * drives it).
 *
 * For each size, rank 0 calls MPI_Send then MPI_Recv and rank 1 MPI_Recv
 * then MPI_Send, with the same size both ways: warm-up iterations first,
 * not timed, then a barrier and the timed iterations (MPI_Wtime on rank
 * 0, around them all). Before the first size, PP_STARTUP empty
 * ping-pongs, not timed, let the transport finish its start-up
 * (connections, lanes; a few hundred messages' worth on rdmx), which
 * the first size's own warm-up may be too short to cover with small -n
 * or -w. One line a size on stdout, as IMB prints it:
 *
 *   #bytes #repetitions t[usec] Mbytes/sec
 *
 * t[usec] is half a round trip, elapsed / (2 * repetitions); Mbytes/sec
 * is #bytes / t[usec], in MB/s of 10^6 bytes (IMB 2018 and before used
 * 2^20).
 *
 * Buffers are allocated and written once before anything is timed. The
 * data is checked, not just timed: each rank sends its partner one
 * pattern in every iteration but the last, and another in the last
 * (both buffers filled beforehand, both used in the warm-up), and its
 * receive buffer is poisoned before the timed iterations; after them,
 * each rank checks that it holds the last iteration's pattern and that
 * the last receive's status names its partner and the size. A transport
 * that loses or mixes up data fails the run instead of reporting a time.
 *
 *   mpirun -np 2 mpi_pingpong [-s SIZES] [-n N] [-m N] [-l N] [-w N]
 *
 *   -s SIZES  sizes in bytes, comma-separated (default 0, 1, 8, 64, 512,
 *             4 KiB, 64 KiB, 1 MiB, 4 MiB)
 *   -n N      repetitions of each size up to 4 KiB (default 10000)
 *   -m N      repetitions of each size above 4 KiB, below 1 MiB (1000)
 *   -l N      repetitions of each size of 1 MiB or more (200)
 *   -w N      warm-up iterations of each size (default a tenth of its
 *             repetitions, at least 2)
 *
 * A transport that hangs hangs the program: run it under timeout.
 * Exit status: 0 after rank 0 printed "mpi_pingpong: PASS (2 ranks)"; 2
 * on bad usage; otherwise the job is aborted with a message naming what
 * differed.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ft_common.h"
#include "mt_common.h"

#define PP_MAX_SIZES	64
#define PP_SIZE_LIMIT	((uint64_t) 1 << 30)	/* MPI counts are int: 1 GiB at most */
#define PP_SMALL_MAX	4096			/* -n applies up to here */
#define PP_LARGE_MIN	((size_t) 1 << 20)	/* -l applies from here */
#define PP_TAG		1
#define PP_STARTUP	1000			/* start-up ping-pongs, empty */
/* The pattern of every iteration but the last, and that of the last. */
#define PP_IT_BODY	0
#define PP_IT_LAST	1

const char *const ft_prog = "mpi_pingpong";

static size_t pp_sizes[PP_MAX_SIZES] = {
	0, 1, 8, 64, 512, 4096, 65536, (size_t) 1 << 20, (size_t) 4 << 20
};
static size_t pp_nsizes = 9;
static uint64_t pp_reps_small = 10000, pp_reps_medium = 1000, pp_reps_large = 200;
/* 0: a tenth of the repetitions, at least 2. */
static uint64_t pp_warmup;

static void pp_usage(void)
{
	fprintf(stderr, "usage: mpirun -np 2 %s [-s SIZES] [-n N] [-m N] [-l N] [-w N]\n"
		"  -s SIZES  sizes in bytes, comma-separated (default 0,1,8,64,512,4096,"
		"65536,1048576,4194304)\n"
		"  -n N      repetitions of each size up to 4 KiB (default 10000)\n"
		"  -m N      repetitions of each size above 4 KiB, below 1 MiB (default 1000)\n"
		"  -l N      repetitions of each size of 1 MiB or more (default 200)\n"
		"  -w N      warm-up iterations of each size (default: a tenth of its\n"
		"            repetitions, at least 2)\n", ft_prog);
}

/* Parses -s: sizes separated by commas; 0, or -1 after a message. */
static int pp_parse_sizes(const char *arg)
{
	char *list = strdup(arg), *save = NULL, *tok;
	uint64_t v;
	int ret = 0;

	if (!list)
		return -1;
	pp_nsizes = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (pp_nsizes == PP_MAX_SIZES) {
			fprintf(stderr, "%s: more than %d sizes\n", ft_prog, PP_MAX_SIZES);
			ret = -1;
			break;
		}
		if (ft_parse_num(tok, 0, PP_SIZE_LIMIT, &v)) {
			ret = -1;
			break;
		}
		pp_sizes[pp_nsizes++] = (size_t) v;
	}
	if (!ret && !pp_nsizes) {
		fprintf(stderr, "%s: -s names no size\n", ft_prog);
		ret = -1;
	}
	free(list);
	return ret;
}

/* The count an option sets (-n, -m, -l, -w), or NULL. */
static uint64_t *pp_count_of(int opt)
{
	switch (opt) {
	case 'n':
		return &pp_reps_small;
	case 'm':
		return &pp_reps_medium;
	case 'l':
		return &pp_reps_large;
	case 'w':
		return &pp_warmup;
	}
	return NULL;
}

/* Parses the options; 0, or -1 after a message. */
static int pp_parse_args(int argc, char **argv)
{
	uint64_t *count;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:m:l:w:h")) != -1) {
		if (opt == 's') {
			if (pp_parse_sizes(optarg))
				return -1;
			continue;
		}
		count = pp_count_of(opt);
		if (!count || ft_parse_num(optarg, 1, UINT32_MAX, count))
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", ft_prog, argv[optind]);
		return -1;
	}
	return 0;
}

/* The timed repetitions of a size. */
static uint64_t pp_reps(size_t len)
{
	if (len <= PP_SMALL_MAX)
		return pp_reps_small;
	return len < PP_LARGE_MIN ? pp_reps_medium : pp_reps_large;
}

/* The warm-up iterations of a size. */
static uint64_t pp_warmups(size_t len)
{
	uint64_t n = pp_reps(len) / 10;

	if (pp_warmup)
		return pp_warmup;
	return n < 2 ? 2 : n;
}

/*
 * n ping-pongs of len bytes with peer: rank 0 sends first. Every
 * iteration sends body but the last, which sends last; the last
 * receive's status goes to st.
 */
static void pp_exchange(const uint8_t *body, const uint8_t *last, uint8_t *rbuf, size_t len,
			uint64_t n, int peer, MPI_Status *st)
{
	for (uint64_t it = 0; it < n; it++) {
		const uint8_t *sbuf = it == n - 1 ? last : body;

		if (g_mt_rank == 0) {
			MPI_Send(sbuf, (int) len, MPI_BYTE, peer, PP_TAG, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, PP_TAG, MPI_COMM_WORLD, st);
		} else {
			MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, PP_TAG, MPI_COMM_WORLD, st);
			MPI_Send(sbuf, (int) len, MPI_BYTE, peer, PP_TAG, MPI_COMM_WORLD);
		}
	}
}

/* Measures one size and prints its line (rank 0). */
static void pp_size(uint8_t *body, uint8_t *last, uint8_t *rbuf, size_t len)
{
	int peer = mt_partner();
	uint64_t reps = pp_reps(len);
	MPI_Status st;
	double t0, t1, usec;

	mt_fill(body, len, g_mt_rank, peer, PP_IT_BODY);
	mt_fill(last, len, g_mt_rank, peer, PP_IT_LAST);
	pp_exchange(body, last, rbuf, len, pp_warmups(len), peer, &st);
	mt_buf_poison(rbuf, len);
	MPI_Barrier(MPI_COMM_WORLD);

	t0 = MPI_Wtime();
	pp_exchange(body, last, rbuf, len, reps, peer, &st);
	t1 = MPI_Wtime();

	mt_check_status(&st, peer, PP_TAG, len, "%zu bytes, last of %llu repetitions", len,
			(unsigned long long) reps);
	mt_check_data(rbuf, len, peer, g_mt_rank, PP_IT_LAST, "%zu bytes, last of %llu "
		      "repetitions", len, (unsigned long long) reps);
	if (g_mt_rank)
		return;
	usec = (t1 - t0) * 1e6 / (2.0 * (double) reps);
	printf("%13zu %12llu %12.2f %12.2f\n", len, (unsigned long long) reps, usec,
	       usec > 0 ? (double) len / usec : 0.0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t max = 0;
	uint8_t *body, *last, *rbuf;
	MPI_Status st;
	int bad;

	mt_init(&argc, &argv, MPI_THREAD_SINGLE);
	bad = pp_parse_args(argc, argv);
	if (bad) {
		if (g_mt_rank == 0)
			pp_usage();
		MPI_Finalize();
		return 2;
	}
	if (g_mt_size != 2)
		mt_die("runs on 2 ranks, not %d", g_mt_size);
	for (size_t s = 0; s < pp_nsizes; s++)
		max = pp_sizes[s] > max ? pp_sizes[s] : max;
	/* mt_buf_open writes every byte: no page is first touched while timed. */
	body = mt_buf_open(max);
	last = mt_buf_open(max);
	rbuf = mt_buf_open(max);

	if (g_mt_rank == 0) {
		printf("# %s: IMB-MPI1 PingPong semantics, 2 ranks; t[usec] is half a round"
		       " trip, Mbytes/sec is 10^6 bytes/s\n", ft_prog);
		printf("%13s %12s %12s %12s\n", "#bytes", "#repetitions", "t[usec]",
		       "Mbytes/sec");
		fflush(stdout);
	}
	pp_exchange(body, last, rbuf, 0, PP_STARTUP, mt_partner(), &st);
	for (size_t s = 0; s < pp_nsizes; s++)
		pp_size(body, last, rbuf, pp_sizes[s]);

	free(body);
	free(last);
	free(rbuf);
	return mt_finish();
}
