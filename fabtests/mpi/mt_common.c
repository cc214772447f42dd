/* SPDX-License-Identifier: BSD-2-Clause */
/* mt_common: what the MPI test programs share (see mt_common.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ft_common.h"
#include "mt_common.h"

int g_mt_rank;
int g_mt_size;

/* The name of an MPI_THREAD_* level (the standard orders them, but fixes no values). */
static const char *mt_thread_level_name(int level)
{
	switch (level) {
	case MPI_THREAD_SINGLE:
		return "MPI_THREAD_SINGLE";
	case MPI_THREAD_FUNNELED:
		return "MPI_THREAD_FUNNELED";
	case MPI_THREAD_SERIALIZED:
		return "MPI_THREAD_SERIALIZED";
	case MPI_THREAD_MULTIPLE:
		return "MPI_THREAD_MULTIPLE";
	}
	return "an unknown thread level";
}

void mt_init(int *argc, char ***argv, int thread_level)
{
	int provided;

	MPI_Init_thread(argc, argv, thread_level, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_mt_size);
	if (provided < thread_level)
		mt_die("asked for %s, MPI provides only %s", mt_thread_level_name(thread_level),
		       mt_thread_level_name(provided));
}

void mt_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: rank %d: ", ft_prog, g_mt_rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	/* MPI_Abort does not return; exit in case an implementation lets it. */
	exit(1);
}

int mt_partner(void)
{
	if (g_mt_size % 2)
		mt_die("needs an even number of ranks, not %d", g_mt_size);
	return g_mt_rank ^ 1;
}

uint8_t *mt_buf_open(size_t len)
{
	uint8_t *buf = malloc(len + FT_GUARD);

	if (!buf)
		mt_die("out of memory for a %zu-byte buffer", len);
	mt_buf_poison(buf, len);
	return buf;
}

void mt_buf_poison(uint8_t *buf, size_t len)
{
	memset(buf, FT_POISON, len + FT_GUARD);
}

/* The pattern seed of the message src sends dst at iteration it, of len bytes. */
static uint64_t mt_seed(int src, int dst, uint64_t it, size_t len)
{
	return ft_pattern_seed((unsigned) src, it, (uint32_t) dst, len);
}

void mt_fill(uint8_t *buf, size_t len, int src, int dst, uint64_t it)
{
	ft_pattern_fill(buf, len, mt_seed(src, dst, it, len));
}

void mt_check_data(const uint8_t *buf, size_t len, int src, int dst, uint64_t it,
		   const char *fmt, ...)
{
	char what[256];
	int n;
	va_list ap;

	n = snprintf(what, sizeof(what), "rank %d: ", g_mt_rank);
	va_start(ap, fmt);
	vsnprintf(what + n, sizeof(what) - n, fmt, ap);
	va_end(ap);
	if (ft_pattern_check(buf, len, mt_seed(src, dst, it, len), FT_GUARD, what))
		mt_die("wrong data (message from rank %d to rank %d, iteration %llu)", src, dst,
		       (unsigned long long) it);
}

void mt_check_status(const MPI_Status *st, int src, int tag, size_t len, const char *fmt, ...)
{
	char what[256];
	int count;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	MPI_Get_count(st, MPI_BYTE, &count);
	if (st->MPI_SOURCE != src || st->MPI_TAG != tag || count != (int) len)
		mt_die("%s: status says source %d, tag %d, %d bytes; expected source %d, "
		       "tag %d, %zu bytes", what, st->MPI_SOURCE, st->MPI_TAG, count, src, tag,
		       len);
}

void mt_wait_within(MPI_Request *req, MPI_Status *st, double timeout_s, const char *what)
{
	double deadline = MPI_Wtime() + timeout_s;
	int done = 0;

	while (!done) {
		if (MPI_Wtime() > deadline)
			mt_die("%s: not complete after %.0f s", what, timeout_s);
		MPI_Test(req, &done, st);
	}
}

void mt_say(const char *fmt, ...)
{
	va_list ap;

	if (g_mt_rank)
		return;
	printf("%s: ", ft_prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int mt_finish(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
	mt_say("PASS (%d ranks)", g_mt_size);
	MPI_Finalize();
	return 0;
}
