/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: which bytes of a message arrived (see rdmx_cover.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_budget.h"
#include "rdmx_cover.h"

void rdmx_cover_construct(struct rdmx_cover *cover)
{
	cover->prefix = 0;
	cover->bytes = 0;
	cover->cnt = 0;
	cover->cap = RDMX_COVER_INLINE;
	cover->ranges = cover->small;
}

/* Bytes [lo, hi) shares with range r. */
static size_t rdmx_cover_overlap(const struct rdmx_cover_range *r, size_t lo, size_t hi)
{
	size_t a = RDMX_MAX(r->lo, lo), b = RDMX_MIN(r->hi, hi);

	return b > a ? b - a : 0;
}

/* Room for one more range; -FI_ENOMEM past the budget or out of memory. */
static int rdmx_cover_grow(struct rdmx_cover *cover, struct rdmx_budget *budget)
{
	size_t cap = cover->cap * 2, bytes = cap * sizeof(*cover->ranges);
	bool heap = cover->ranges != cover->small;
	struct rdmx_cover_range *ranges;

	if (cover->cnt < cover->cap)
		return 0;
	if (!rdmx_budget_charge(budget, bytes))
		return -FI_ENOMEM;
	ranges = heap ? realloc(cover->ranges, bytes) : malloc(bytes);
	if (!ranges) {
		rdmx_budget_credit(budget, bytes);
		return -FI_ENOMEM;
	}
	if (!heap)
		memcpy(ranges, cover->small, sizeof(cover->small));
	else
		rdmx_budget_credit(budget, cover->cap * sizeof(*cover->ranges));
	cover->ranges = ranges;
	cover->cap = cap;
	return 0;
}

/* Replaces ranges [i, j) with r (j == i: inserts r at i); room is there. */
static void rdmx_cover_splice(struct rdmx_cover *cover, size_t i, size_t j,
			      struct rdmx_cover_range r)
{
	struct rdmx_cover_range *v = cover->ranges;

	memmove(&v[i + 1], &v[j], (cover->cnt - j) * sizeof(*v));
	v[i] = r;
	cover->cnt = cover->cnt + 1 - (j - i);
}

int rdmx_cover_add(struct rdmx_cover *cover, size_t off, size_t len,
		   struct rdmx_budget *budget, size_t *added_p)
{
	size_t lo = RDMX_MAX(off, cover->prefix), hi = off + len, seen = 0, i = 0, j;
	struct rdmx_cover_range merged = { lo, hi };

	*added_p = 0;
	if (lo >= hi)
		return 0;
	/* Ranges that overlap or touch [lo, hi) merge with it. */
	while (i < cover->cnt && cover->ranges[i].hi < lo)
		i++;
	for (j = i; j < cover->cnt && cover->ranges[j].lo <= hi; j++) {
		seen += rdmx_cover_overlap(&cover->ranges[j], lo, hi);
		merged.lo = RDMX_MIN(merged.lo, cover->ranges[j].lo);
		merged.hi = RDMX_MAX(merged.hi, cover->ranges[j].hi);
	}
	if (merged.lo <= cover->prefix) {
		/* Only the first ranges can touch the prefix: i is 0. */
		cover->prefix = merged.hi;
		memmove(cover->ranges, &cover->ranges[j], (cover->cnt - j) * sizeof(merged));
		cover->cnt -= j;
	} else {
		if (j == i && rdmx_cover_grow(cover, budget))
			return -FI_ENOMEM;
		rdmx_cover_splice(cover, i, j, merged);
	}
	*added_p = (hi - lo) - seen;
	cover->bytes += *added_p;
	return 0;
}

void rdmx_cover_destruct(struct rdmx_cover *cover, struct rdmx_budget *budget)
{
	if (cover->ranges != cover->small) {
		rdmx_budget_credit(budget, cover->cap * sizeof(*cover->ranges));
		free(cover->ranges);
	}
	cover->ranges = cover->small;
	cover->cap = RDMX_COVER_INLINE;
	cover->cnt = 0;
}
