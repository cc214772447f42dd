/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the arithmetic of atomics (rdmx_atomic.h). One function per
 * datatype applies any operation to a run of elements, each loaded and
 * stored by memcpy (a packet's operands and a region's bytes need not be
 * aligned). Integer sums and products are computed in an unsigned type,
 * so that they wrap as the hardware's do instead of overflowing (which C
 * leaves undefined).
 */
#include <complex.h>
#include <stdint.h>
#include <string.h>

#include "rdmx_atomic.h"

/* The cases of the switch on the operation, by what a datatype allows. */
#define RDMX_ATOMIC_COMMON(T)						\
	case FI_LOR: d = (T) (d != 0 || s != 0); break;			\
	case FI_LAND: d = (T) (d != 0 && s != 0); break;		\
	case FI_LXOR: d = (T) ((d != 0) != (s != 0)); break;		\
	case FI_ATOMIC_WRITE: d = s; break;				\
	case FI_CSWAP: if (c == d) d = s; break;			\
	case FI_CSWAP_NE: if (c != d) d = s; break;
#define RDMX_ATOMIC_ARITH(T, W)						\
	case FI_SUM: d = (T) ((W) d + (W) s); break;			\
	case FI_PROD: d = (T) ((W) d * (W) s); break;
#define RDMX_ATOMIC_ORDERED						\
	case FI_MIN: if (s < d) d = s; break;				\
	case FI_MAX: if (s > d) d = s; break;				\
	case FI_CSWAP_LE: if (c <= d) d = s; break;			\
	case FI_CSWAP_LT: if (c < d) d = s; break;			\
	case FI_CSWAP_GE: if (c >= d) d = s; break;			\
	case FI_CSWAP_GT: if (c > d) d = s; break;
#define RDMX_ATOMIC_BITWISE(T)						\
	case FI_BOR: d = (T) (d | s); break;				\
	case FI_BAND: d = (T) (d & s); break;				\
	case FI_BXOR: d = (T) (d ^ s); break;				\
	case FI_MSWAP: d = (T) ((s & c) | (d & ~c)); break;

#define RDMX_ATOMIC_INT(T, W)	RDMX_ATOMIC_COMMON(T) RDMX_ATOMIC_ARITH(T, W) \
				RDMX_ATOMIC_ORDERED RDMX_ATOMIC_BITWISE(T)
#define RDMX_ATOMIC_REAL(T, W)	RDMX_ATOMIC_COMMON(T) RDMX_ATOMIC_ARITH(T, W) \
				RDMX_ATOMIC_ORDERED
#define RDMX_ATOMIC_CPLX(T, W)	RDMX_ATOMIC_COMMON(T) RDMX_ATOMIC_ARITH(T, W)

/*
 * rdmx_atomic_<name>: op on cnt elements of type T (sums and products in
 * W), the operations of CASES. An operand or compare value not given is
 * the element itself; FI_ATOMIC_READ stores nothing (its region may be
 * read-only).
 */
#define RDMX_ATOMIC_FN(name, T, W, CASES)					\
static void rdmx_atomic_##name(enum fi_op op, uint8_t *dst, const uint8_t *src,	\
			       const uint8_t *cmp, uint8_t *res, size_t cnt)	\
{										\
	for (size_t off = 0; off < cnt * sizeof(T); off += sizeof(T)) {		\
		T d, s, c;							\
										\
		memcpy(&d, dst + off, sizeof(T));				\
		memcpy(&s, (src ? src : dst) + off, sizeof(T));			\
		memcpy(&c, (cmp ? cmp : dst) + off, sizeof(T));			\
		if (res)							\
			memcpy(res + off, &d, sizeof(T));			\
		if (op == FI_ATOMIC_READ)					\
			continue;						\
		switch (op) {							\
		CASES(T, W)							\
		default:							\
			break;							\
		}								\
		memcpy(dst + off, &d, sizeof(T));				\
	}									\
}

RDMX_ATOMIC_FN(int8, int8_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(uint8, uint8_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(int16, int16_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(uint16, uint16_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(int32, int32_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(uint32, uint32_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(int64, int64_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(uint64, uint64_t, uint64_t, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(int128, __int128, unsigned __int128, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(uint128, unsigned __int128, unsigned __int128, RDMX_ATOMIC_INT)
RDMX_ATOMIC_FN(float, float, float, RDMX_ATOMIC_REAL)
RDMX_ATOMIC_FN(double, double, double, RDMX_ATOMIC_REAL)
RDMX_ATOMIC_FN(long_double, long double, long double, RDMX_ATOMIC_REAL)
RDMX_ATOMIC_FN(float_complex, float complex, float complex, RDMX_ATOMIC_CPLX)
RDMX_ATOMIC_FN(double_complex, double complex, double complex, RDMX_ATOMIC_CPLX)
RDMX_ATOMIC_FN(long_double_complex, long double complex, long double complex,
	       RDMX_ATOMIC_CPLX)

enum rdmx_atomic_class { RDMX_ATOMIC_CLASS_INT = 1, RDMX_ATOMIC_CLASS_REAL,
			 RDMX_ATOMIC_CLASS_CPLX };

typedef void rdmx_atomic_fn(enum fi_op op, uint8_t *dst, const uint8_t *src,
			    const uint8_t *cmp, uint8_t *res, size_t cnt);

static const struct {
	size_t			size;
	enum rdmx_atomic_class	class;
	rdmx_atomic_fn		*fn;
} rdmx_atomic_types[] = {
	[FI_INT8] = { 1, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_int8 },
	[FI_UINT8] = { 1, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_uint8 },
	[FI_INT16] = { 2, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_int16 },
	[FI_UINT16] = { 2, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_uint16 },
	[FI_INT32] = { 4, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_int32 },
	[FI_UINT32] = { 4, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_uint32 },
	[FI_INT64] = { 8, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_int64 },
	[FI_UINT64] = { 8, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_uint64 },
	[FI_FLOAT] = { sizeof(float), RDMX_ATOMIC_CLASS_REAL, rdmx_atomic_float },
	[FI_DOUBLE] = { sizeof(double), RDMX_ATOMIC_CLASS_REAL, rdmx_atomic_double },
	[FI_FLOAT_COMPLEX] = { sizeof(float complex), RDMX_ATOMIC_CLASS_CPLX,
			       rdmx_atomic_float_complex },
	[FI_DOUBLE_COMPLEX] = { sizeof(double complex), RDMX_ATOMIC_CLASS_CPLX,
				rdmx_atomic_double_complex },
	[FI_LONG_DOUBLE] = { sizeof(long double), RDMX_ATOMIC_CLASS_REAL,
			     rdmx_atomic_long_double },
	[FI_LONG_DOUBLE_COMPLEX] = { sizeof(long double complex), RDMX_ATOMIC_CLASS_CPLX,
				     rdmx_atomic_long_double_complex },
	[FI_INT128] = { 16, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_int128 },
	[FI_UINT128] = { 16, RDMX_ATOMIC_CLASS_INT, rdmx_atomic_uint128 },
};

size_t rdmx_atomic_size(enum fi_datatype datatype)
{
	if ((size_t) datatype >= sizeof(rdmx_atomic_types) / sizeof(rdmx_atomic_types[0]))
		return 0;
	return rdmx_atomic_types[datatype].size;
}

bool rdmx_atomic_valid(enum rdmx_atomic_kind kind, enum fi_op op, enum fi_datatype datatype)
{
	enum rdmx_atomic_class class;

	if (!rdmx_atomic_size(datatype))
		return false;
	class = rdmx_atomic_types[datatype].class;
	switch (kind) {
	case RDMX_ATOMIC_WRITE:
		if (op < FI_MIN || op > FI_ATOMIC_WRITE || op == FI_ATOMIC_READ)
			return false;
		break;
	case RDMX_ATOMIC_FETCH:
		if (op < FI_MIN || op > FI_ATOMIC_WRITE)
			return false;
		break;
	case RDMX_ATOMIC_COMPARE:
		if (op < FI_CSWAP || op > FI_MSWAP)
			return false;
		break;
	}
	switch (op) {
	case FI_MIN:
	case FI_MAX:
	case FI_CSWAP_LE:
	case FI_CSWAP_LT:
	case FI_CSWAP_GE:
	case FI_CSWAP_GT:
		return class != RDMX_ATOMIC_CLASS_CPLX;
	case FI_BOR:
	case FI_BAND:
	case FI_BXOR:
	case FI_MSWAP:
		return class == RDMX_ATOMIC_CLASS_INT;
	default:
		return true;
	}
}

void rdmx_atomic_apply(enum fi_op op, enum fi_datatype datatype, void *dst, const void *src,
		       const void *cmp, void *res, size_t cnt)
{
	rdmx_atomic_types[datatype].fn(op, dst, src, cmp, res, cnt);
}
