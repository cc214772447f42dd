/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the replaceable clock (see rdmx_clock.h). */
#include <time.h>

#include "rdmx_clock.h"

static uint64_t rdmx_clock_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

rdmx_clock_fn g_rdmx_clock = rdmx_clock_monotonic;

void rdmx_clock_set(rdmx_clock_fn fn)
{
	g_rdmx_clock = fn ? fn : rdmx_clock_monotonic;
}
