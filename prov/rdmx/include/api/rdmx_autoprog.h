/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: automatic progress (FI_PROGRESS_AUTO, asked for in the domain
 * attributes). A thread per domain sleeps on a wait (rdmx_wait.h) that
 * holds every enabled endpoint of the domain as a member and their
 * devices' descriptors, and progresses them when a packet comes or a
 * timer of theirs is due, so acknowledgements, retransmissions and
 * keepalive answers go on while the application computes. The
 * application's own calls progress too, as with manual progress; the
 * domain lock is then real at every threading level, FI_THREAD_DOMAIN
 * included, since the thread enters the domain beside the application.
 */
#ifndef RDMX_AUTOPROG_H
#define RDMX_AUTOPROG_H

#include <pthread.h>
#include <stdbool.h>

#include "rdmx_wait.h"

struct rdmx_autoprog {
	struct rdmx_wait	*wait;		/* NULL: manual progress */
	struct rdmx_waitable	stop;		/* ready once stopping */
	bool			stopping;	/* atomic */
	pthread_t		thread;
};

/* Starts the domain's thread. 0 or -FI_E*. */
int rdmx_autoprog_start(struct rdmx_autoprog *ap);
/* Stops it and frees its wait; nothing when it never started. */
void rdmx_autoprog_stop(struct rdmx_autoprog *ap);

/*
 * The application's call may have left the thread work that no packet
 * or timer will announce (a read done at the post, whose completion
 * waits in the device; packets the device holds for its next poll):
 * wakes the thread if it sleeps. Nothing under manual progress.
 */
static inline void rdmx_autoprog_wake(struct rdmx_autoprog *ap)
{
	rdmx_wait_poke(ap->wait);
}

#endif /* RDMX_AUTOPROG_H */
