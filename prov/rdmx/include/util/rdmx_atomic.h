/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the arithmetic of atomics (fi_atomic(3)): which operation is
 * offered on which datatype, and its application to elements in memory.
 * Nothing here knows of endpoints or packets: the target of an atomic
 * applies it under its domain's lock, which is all the atomicity an
 * emulation over messages has.
 */
#ifndef RDMX_ATOMIC_H
#define RDMX_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>

#include <rdma/fi_domain.h>

/*
 * Bytes of operands one atomic carries at most (and of compare values,
 * and of results): so that a compare, with its 56 bytes of headers,
 * fits the smallest packet rdmx sends (256 bytes, FI_RDMX_MTU's least).
 */
#define RDMX_ATOMIC_MAX_BYTES	64

/* The call an operation comes by. */
enum rdmx_atomic_kind {
	RDMX_ATOMIC_WRITE,	/* fi_atomic: the target's elements change */
	RDMX_ATOMIC_FETCH,	/* fi_fetch_atomic: and their old values return */
	RDMX_ATOMIC_COMPARE,	/* fi_compare_atomic: changed where compare says */
};

/* Bytes of an element of datatype; 0 for a datatype rdmx does not offer. */
size_t rdmx_atomic_size(enum fi_datatype datatype);

/*
 * Whether op on datatype is offered for kind, as libfabric defines the
 * pairs: MIN, MAX and the ordered compares (CSWAP_LE, _LT, _GE, _GT) on
 * integers and reals; the bitwise operations (BOR, BAND, BXOR, MSWAP) on
 * integers; the others on every datatype, complex ones included.
 */
bool rdmx_atomic_valid(enum rdmx_atomic_kind kind, enum fi_op op, enum fi_datatype datatype);

/*
 * Applies op to the cnt elements of datatype at dst (a pair
 * rdmx_atomic_valid offers): src holds the operands (none for
 * FI_ATOMIC_READ), cmp the compare values or, for FI_MSWAP, the masks,
 * and res, unless NULL, receives the old values. No buffer needs to be
 * aligned; res and dst must not overlap.
 */
void rdmx_atomic_apply(enum fi_op op, enum fi_datatype datatype, void *dst, const void *src,
		       const void *cmp, void *res, size_t cnt);

#endif /* RDMX_ATOMIC_H */
