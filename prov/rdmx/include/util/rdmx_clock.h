/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the one clock. Every timer (retransmission, backoff, keepalive)
 * reads time through rdmx_clock_ns(), and a test replaces the source with
 * rdmx_clock_set() so timing logic is tested without sleeping.
 */
#ifndef RDMX_CLOCK_H
#define RDMX_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

typedef uint64_t (*rdmx_clock_fn)(void);

extern rdmx_clock_fn g_rdmx_clock;

/* Monotonic nanoseconds from the current source. */
static inline uint64_t rdmx_clock_ns(void)
{
	return g_rdmx_clock();
}

/*
 * Whether a tick of the kernel's coarse clock (a few ms, but read ten
 * times faster) passed since *mark, which it then moves: a poll that
 * found nothing reads the clock only then. Always true with a test's
 * source, so that its time is seen at once.
 */
bool rdmx_clock_ticked(uint64_t *mark);

/* Replaces the source (NULL restores the monotonic clock). */
void rdmx_clock_set(rdmx_clock_fn fn);

#endif /* RDMX_CLOCK_H */
