/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the replaceable clock (see rdmx_clock.h). */
#include <time.h>

#include "rdmx_clock.h"

static uint64_t rdmx_clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static uint64_t rdmx_clock_monotonic(void)
{
	return rdmx_clock_read(CLOCK_MONOTONIC);
}

rdmx_clock_fn g_rdmx_clock = rdmx_clock_monotonic;

bool rdmx_clock_ticked(uint64_t *mark)
{
	uint64_t now;

	if (g_rdmx_clock != rdmx_clock_monotonic)
		return true;
	now = rdmx_clock_read(CLOCK_MONOTONIC_COARSE);
	if (now == *mark)
		return false;
	*mark = now;
	return true;
}

void rdmx_clock_set(rdmx_clock_fn fn)
{
	g_rdmx_clock = fn ? fn : rdmx_clock_monotonic;
}
