/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: which bytes of a message arrived (its coverage). A message in
 * pieces (medium segments, long DATA) completes when every byte below
 * its end arrived, not when as many bytes as it has were counted: a
 * segment that arrives twice, or two that overlap, must not make up for
 * one that is missing. Arrivals mostly extend a prefix from offset 0;
 * ranges beyond it (holes left by loss or reordering) are kept sorted,
 * a few inline and more, charged to the endpoint's budget, when a
 * sender leaves many holes at once.
 */
#ifndef RDMX_COVER_H
#define RDMX_COVER_H

#include <stddef.h>

struct rdmx_budget;

/* Ranges kept without allocating: holes an honest sender leaves at once. */
#define RDMX_COVER_INLINE	4

/* Bytes [lo, hi). */
struct rdmx_cover_range {
	size_t	lo;
	size_t	hi;
};

struct rdmx_cover {
	size_t			prefix;	/* bytes [0, prefix) all arrived */
	size_t			bytes;	/* bytes arrived, each counted once */
	size_t			cnt;	/* ranges beyond prefix */
	size_t			cap;
	struct rdmx_cover_range	*ranges; /* sorted, apart, above prefix:
					    small or a charged allocation */
	struct rdmx_cover_range	small[RDMX_COVER_INLINE];
};

/* Nothing arrived yet. The structure must not move afterwards. */
void rdmx_cover_construct(struct rdmx_cover *cover);

/*
 * Bytes [off, off + len) arrived: writes to *added_p how many of them
 * had not. 0, or -FI_ENOMEM (nothing recorded) when one more range is
 * needed and budget has no room for it or memory is out.
 */
int rdmx_cover_add(struct rdmx_cover *cover, size_t off, size_t len,
		   struct rdmx_budget *budget, size_t *added_p);

/* Frees the ranges' allocation, credited to budget. */
void rdmx_cover_destruct(struct rdmx_cover *cover, struct rdmx_budget *budget);

#endif /* RDMX_COVER_H */
