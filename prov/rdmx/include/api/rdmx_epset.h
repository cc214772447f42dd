/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the endpoints an object that can be read or waited on (a CQ, a
 * counter) stands for: it progresses them when read (manual progress)
 * and arms them before a sleep (an enabled endpoint put its devices'
 * descriptors in the object's wait, rdmx_ep.c). An endpoint bound twice
 * (both directions) is in once, counted.
 */
#ifndef RDMX_EPSET_H
#define RDMX_EPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rdmx_ep;

struct rdmx_epset_entry {
	struct rdmx_ep	*ep;
	unsigned	refs;	/* bindings */
};

struct rdmx_epset {
	struct rdmx_epset_entry	*eps;
	size_t			cnt;
};

/*
 * One more binding of ep, counted in *refs, the owner's count of what
 * holds it (so that it refuses to close). 0 or -FI_ENOMEM.
 */
int rdmx_epset_add(struct rdmx_epset *set, int *refs, struct rdmx_ep *ep);
/* One binding of ep less, and one less in *refs. */
void rdmx_epset_del(struct rdmx_epset *set, int *refs, struct rdmx_ep *ep);
void rdmx_epset_destruct(struct rdmx_epset *set);

/* The top of the rdm layer (rdmx_ep.h, which includes this file). */
void rdmx_ep_progress(struct rdmx_ep *ep);
bool rdmx_send_holding(const struct rdmx_ep *ep);

/*
 * Progresses every endpoint; the domain lock held. Inline: a CQ or
 * counter read pays it on every poll of a spinning application.
 */
static inline void rdmx_epset_progress(const struct rdmx_epset *set)
{
	for (size_t i = 0; i < set->cnt; i++)
		rdmx_ep_progress(set->eps[i].ep);
}
/* Whether an endpoint holds sends back (rdmx_send_holding). */
static inline bool rdmx_epset_holding(const struct rdmx_epset *set)
{
	for (size_t i = 0; i < set->cnt; i++)
		if (rdmx_send_holding(set->eps[i].ep))
			return true;
	return false;
}

/* rdmx_ep_wait_arm of every endpoint: 0 or -FI_EAGAIN; domain lock held. */
int rdmx_epset_arm(const struct rdmx_epset *set, uint64_t *due_p);

#endif /* RDMX_EPSET_H */
