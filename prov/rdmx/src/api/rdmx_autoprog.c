/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: automatic progress, a thread per domain (see rdmx_autoprog.h). */
#include <string.h>

#include "rdmx.h"
#include "rdmx_autoprog.h"

static int rdmx_autoprog_stop_check(struct rdmx_waitable *m, bool arm, uint64_t *due_p)
{
	struct rdmx_autoprog *ap = rdmx_container_of(m, struct rdmx_autoprog, stop);

	(void) arm;
	(void) due_p;
	return __atomic_load_n(&ap->stopping, __ATOMIC_SEQ_CST);
}

static const struct rdmx_waitable_ops rdmx_autoprog_stop_ops = {
	.check = rdmx_autoprog_stop_check,
};

/*
 * The longest the thread sleeps before it looks again. The application's
 * own calls progress the same endpoints: they may take the packet that
 * was to wake the thread, end the wait a device armed for it (a shm
 * ring's sleeping mark is one per ring), or open a lane after the thread
 * chose how long to sleep. It then learns of them within this much.
 */
#define RDMX_AUTOPROG_RECHECK_MS	100

/* The thread: every member progressed at each wake, until stopped. */
static void *rdmx_autoprog_run(void *arg)
{
	struct rdmx_autoprog *ap = arg;

	while (rdmx_wait_for(ap->wait, &ap->stop, RDMX_AUTOPROG_RECHECK_MS))
		;
	return NULL;
}

int rdmx_autoprog_start(struct rdmx_autoprog *ap)
{
	int ret = rdmx_wait_get(FI_WAIT_FD, NULL, &ap->wait);

	if (ret)
		return ret;
	ap->stop.ops = &rdmx_autoprog_stop_ops;
	ap->stopping = false;
	rdmx_wait_join(ap->wait, &ap->stop);
	ret = pthread_create(&ap->thread, NULL, rdmx_autoprog_run, ap);
	if (ret) {
		RDMX_WARN(FI_LOG_DOMAIN, "progress thread: %s\n", strerror(ret));
		rdmx_wait_leave(&ap->stop);
		rdmx_wait_put(ap->wait);
		ap->wait = NULL;
		return -FI_EOTHER;
	}
	return 0;
}

void rdmx_autoprog_stop(struct rdmx_autoprog *ap)
{
	if (!ap->wait)
		return;
	__atomic_store_n(&ap->stopping, true, __ATOMIC_SEQ_CST);
	rdmx_wait_poke(ap->wait);
	pthread_join(ap->thread, NULL);
	rdmx_wait_leave(&ap->stop);
	rdmx_wait_put(ap->wait);
	ap->wait = NULL;
}
