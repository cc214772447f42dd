/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cpu_rtt: how far apart two CPUs are, read as the round trip of one
 * cache line that two threads, each pinned to one of them, pass back and
 * forth. On some VMs the host moves the vCPUs between cores that share a
 * cache (a round trip of 50-100 ns) and cores that do not (300-360 ns),
 * every few seconds or for minutes, and anything that moves data between
 * two processes, the kernel's copies included, runs two to three times
 * slower in the second state (fabtests/benchmarks/RESULTS.md, "Two states
 * of the VM"). The benchmark driver reads it before and after each run.
 *
 *   cpu_rtt [-a CPU] [-b CPU] [-n ROUND_TRIPS]
 *
 * The CPUs default to the first two the process may run on; 20,000
 * round trips in 5 batches (a few ms, with both CPUs free: a thread that
 * waits for its CPU stalls the other). Prints "cpu_rtt_ns=N", the median
 * of the batches' means; exits 1 when two CPUs cannot be had.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CR_BATCHES	5

struct cr_line {
	_Alignas(64) atomic_uint_fast64_t turn;	/* odd: b's turn, even: a's */
	uint64_t	round_trips;		/* per batch, read once at the start */
};

static uint64_t cr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static cpu_set_t cr_set(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return set;
}

/* The answering side: turns each odd value into the next even one. */
static void *cr_answer(void *arg)
{
	struct cr_line *line = arg;
	uint64_t last = 2 * line->round_trips * CR_BATCHES;

	for (uint64_t want = 1; want < last; want += 2) {
		while (atomic_load_explicit(&line->turn, memory_order_acquire) != want)
			;
		atomic_store_explicit(&line->turn, want + 1, memory_order_release);
	}
	return NULL;
}

/* The asking side: one batch of n round trips, its mean in ns. */
static uint64_t cr_batch(struct cr_line *line, uint64_t n, uint64_t *turn)
{
	uint64_t t0 = cr_now_ns();

	for (uint64_t i = 0; i < n; i++) {
		atomic_store_explicit(&line->turn, *turn + 1, memory_order_release);
		*turn += 2;
		while (atomic_load_explicit(&line->turn, memory_order_acquire) != *turn)
			;
	}
	return (cr_now_ns() - t0) / n;
}

static int cr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/* The CPUs of a and b not named: the first the process may run on. */
static int cr_default_cpus(int *a, int *b)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set) || cpu == *a || cpu == *b)
			continue;
		if (*a < 0)
			*a = cpu;
		else if (*b < 0)
			*b = cpu;
	}
	return *a >= 0 && *b >= 0 && *a != *b ? 0 : -1;
}

/* Starts the answering thread on CPU cpu. */
static int cr_start(pthread_t *thread, int cpu, struct cr_line *line)
{
	cpu_set_t set = cr_set(cpu);
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(thread, &attr, cr_answer, line);
	pthread_attr_destroy(&attr);
	return err;
}

int main(int argc, char **argv)
{
	uint64_t batch[CR_BATCHES], turn = 0;
	struct cr_line *line;
	long n = 20000;
	int a = -1, b = -1, opt, err;
	pthread_t answer;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "a:b:n:")) != -1) {
		switch (opt) {
		case 'a': a = atoi(optarg); break;
		case 'b': b = atoi(optarg); break;
		case 'n': n = atol(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-a CPU] [-b CPU] [-n ROUND_TRIPS]\n", argv[0]);
			return 2;
		}
	}
	if (n < CR_BATCHES || cr_default_cpus(&a, &b)) {
		fprintf(stderr, "cpu_rtt: needs two CPUs it may run on (and %d round trips)\n",
			CR_BATCHES);
		return 1;
	}
	line = aligned_alloc(64, sizeof(*line));
	if (!line)
		return 1;
	memset(line, 0, sizeof(*line));
	line->round_trips = (uint64_t) n / CR_BATCHES;
	set = cr_set(a);
	if ((err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) ||
	    (err = cr_start(&answer, b, line))) {
		fprintf(stderr, "cpu_rtt: CPUs %d and %d: %s\n", a, b, strerror(err));
		return 1;
	}
	for (int i = 0; i < CR_BATCHES; i++)
		batch[i] = cr_batch(line, (uint64_t) n / CR_BATCHES, &turn);
	pthread_join(answer, NULL);
	qsort(batch, CR_BATCHES, sizeof(batch[0]), cr_cmp);
	printf("cpu_rtt_ns=%llu\n", (unsigned long long) batch[CR_BATCHES / 2]);
	free(line);
	return 0;
}
