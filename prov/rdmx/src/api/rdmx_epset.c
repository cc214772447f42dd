/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the endpoints behind a CQ or a counter (see rdmx_epset.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_ep.h"
#include "rdmx_epset.h"

static struct rdmx_epset_entry *rdmx_epset_find(const struct rdmx_epset *set,
						const struct rdmx_ep *ep)
{
	for (size_t i = 0; i < set->cnt; i++) {
		if (set->eps[i].ep == ep)
			return &set->eps[i];
	}
	return NULL;
}

int rdmx_epset_add(struct rdmx_epset *set, int *refs, struct rdmx_ep *ep)
{
	struct rdmx_epset_entry *e = rdmx_epset_find(set, ep);

	if (e) {
		e->refs++;
	} else {
		e = realloc(set->eps, (set->cnt + 1) * sizeof(*e));
		if (!e)
			return -FI_ENOMEM;
		set->eps = e;
		set->eps[set->cnt++] = (struct rdmx_epset_entry) { .ep = ep, .refs = 1 };
	}
	rdmx_ref_get(refs);
	return 0;
}

void rdmx_epset_del(struct rdmx_epset *set, int *refs, struct rdmx_ep *ep)
{
	struct rdmx_epset_entry *e = rdmx_epset_find(set, ep);

	rdmx_ref_put(refs);
	if (!e || --e->refs)
		return;
	*e = set->eps[--set->cnt];
}

void rdmx_epset_destruct(struct rdmx_epset *set)
{
	free(set->eps);
	set->eps = NULL;
	set->cnt = 0;
}

int rdmx_epset_arm(const struct rdmx_epset *set, uint64_t *due_p)
{
	for (size_t i = 0; i < set->cnt; i++) {
		int ret = rdmx_ep_wait_arm(set->eps[i].ep, due_p);

		if (ret)
			return ret;
	}
	return 0;
}
