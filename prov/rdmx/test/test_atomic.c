/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_atomic: which operation goes with which datatype, and what each
 * does to the target's elements and returns, as fi_atomic(3) defines it.
 * Integer arithmetic wraps (the sanitizer build checks it is not signed
 * overflow), buffers are unaligned, and an atomic read stores nothing.
 */
#include <complex.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_atomic.h"

/* One element of type T: dst op src (and cmp), with the old value back. */
#define APPLY(T, dt, op, dst0, src0, cmp0, want, old_want)			\
	do {									\
		uint8_t buf[3 * sizeof(T) + 1];					\
		T d = (dst0), s = (src0), c = (cmp0), r = 0, got;		\
										\
		/* Unaligned on purpose: one byte in. */			\
		memcpy(buf + 1, &d, sizeof(T));					\
		rdmx_atomic_apply(op, dt, buf + 1, &s, &c, &r, 1);		\
		memcpy(&got, buf + 1, sizeof(T));				\
		cr_assert(got == (T) (want), #op " on " #dt);			\
		cr_assert(r == (T) (old_want), #op " on " #dt ": old value");	\
	} while (0)

TestSuite(atomic);

Test(atomic, pairs_are_offered_as_libfabric_defines_them)
{
	cr_assert(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_SUM, FI_INT64));
	cr_assert(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_SUM, FI_DOUBLE_COMPLEX));
	cr_assert(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_LXOR, FI_FLOAT));
	cr_assert(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_BOR, FI_UINT128));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_BOR, FI_DOUBLE));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_MIN, FI_FLOAT_COMPLEX));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_ATOMIC_READ, FI_INT32),
		      "a read fetches: not an fi_atomic");
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_CSWAP, FI_INT32));
	cr_assert(rdmx_atomic_valid(RDMX_ATOMIC_FETCH, FI_ATOMIC_READ, FI_LONG_DOUBLE));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_FETCH, FI_CSWAP, FI_INT32));
	cr_assert(rdmx_atomic_valid(RDMX_ATOMIC_COMPARE, FI_CSWAP, FI_DOUBLE_COMPLEX));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_COMPARE, FI_CSWAP_LT, FI_DOUBLE_COMPLEX));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_COMPARE, FI_MSWAP, FI_FLOAT));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_COMPARE, FI_SUM, FI_INT32));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_SUM, FI_VOID));
	cr_assert_not(rdmx_atomic_valid(RDMX_ATOMIC_WRITE, FI_NOOP, FI_INT32));
	cr_assert_eq(rdmx_atomic_size(FI_UINT16), 2);
	cr_assert_eq(rdmx_atomic_size(FI_DOUBLE_COMPLEX), 16);
	cr_assert_eq(rdmx_atomic_size(FI_VOID), 0);
}

Test(atomic, integers_wrap_and_compare_by_sign)
{
	APPLY(int8_t, FI_INT8, FI_SUM, 127, 1, 0, -128, 127);
	APPLY(uint16_t, FI_UINT16, FI_PROD, 65535, 65535, 0, 1, 65535);
	APPLY(int64_t, FI_INT64, FI_PROD, INT64_MAX, 2, 0, -2, INT64_MAX);
	APPLY(int32_t, FI_INT32, FI_MIN, 5, -7, 0, -7, 5);
	APPLY(uint32_t, FI_UINT32, FI_MAX, 5, 0xffffffffu, 0, 0xffffffffu, 5);
	APPLY(int16_t, FI_INT16, FI_MAX, 5, -7, 0, 5, 5);
	APPLY(uint8_t, FI_UINT8, FI_BAND, 0xf0, 0x3c, 0, 0x30, 0xf0);
	APPLY(uint8_t, FI_UINT8, FI_BOR, 0xf0, 0x0f, 0, 0xff, 0xf0);
	APPLY(uint8_t, FI_UINT8, FI_BXOR, 0xff, 0x0f, 0, 0xf0, 0xff);
	APPLY(uint64_t, FI_UINT64, FI_LXOR, 7, 9, 0, 0, 7);
	APPLY(uint64_t, FI_UINT64, FI_LXOR, 0, 9, 0, 1, 0);
	APPLY(int32_t, FI_INT32, FI_LAND, 3, 0, 0, 0, 3);
	APPLY(int32_t, FI_INT32, FI_LOR, 0, 4, 0, 1, 0);
	APPLY(uint32_t, FI_UINT32, FI_ATOMIC_WRITE, 1, 42, 0, 42, 1);
	APPLY(unsigned __int128, FI_UINT128, FI_SUM, ~(unsigned __int128) 0, 2, 0, 1,
	      ~(unsigned __int128) 0);
}

Test(atomic, compares_swap_where_the_compare_value_says)
{
	/* dst 10, src 99: swapped when cmp OP dst holds. */
	APPLY(int32_t, FI_INT32, FI_CSWAP, 10, 99, 10, 99, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP, 10, 99, 11, 10, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP_NE, 10, 99, 11, 99, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP_LE, 10, 99, 10, 99, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP_LT, 10, 99, 10, 10, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP_LT, 10, 99, 9, 99, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP_GE, 10, 99, 11, 99, 10);
	APPLY(int32_t, FI_INT32, FI_CSWAP_GT, 10, 99, 10, 10, 10);
	/* MSWAP: the mask's bits from src, the others kept. */
	APPLY(uint16_t, FI_UINT16, FI_MSWAP, 0x1234, 0xabcd, 0xff00, 0xab34, 0x1234);
}

Test(atomic, reals_and_complex_numbers)
{
	APPLY(double, FI_DOUBLE, FI_SUM, 1.5, 2.25, 0, 3.75, 1.5);
	APPLY(float, FI_FLOAT, FI_MIN, 1.5f, -2.0f, 0, -2.0f, 1.5f);
	APPLY(long double, FI_LONG_DOUBLE, FI_PROD, 3.0L, 0.5L, 0, 1.5L, 3.0L);
	APPLY(double complex, FI_DOUBLE_COMPLEX, FI_PROD, 1.0 + 2.0 * I, 3.0 - 1.0 * I, 0,
	      5.0 + 5.0 * I, 1.0 + 2.0 * I);
	APPLY(float complex, FI_FLOAT_COMPLEX, FI_CSWAP, 1.0f + 1.0f * I, 2.0f, 1.0f + 1.0f * I,
	      2.0f, 1.0f + 1.0f * I);
	APPLY(double complex, FI_DOUBLE_COMPLEX, FI_LOR, 0, 1.0 * I, 0, 1, 0);
}

Test(atomic, runs_of_elements_and_reads_that_store_nothing)
{
	int64_t dst[4] = { 1, 2, 3, 4 }, src[4] = { 10, 20, 30, 40 }, old[4];
	long page = sysconf(_SC_PAGESIZE);
	uint32_t *ro, got[2];

	rdmx_atomic_apply(FI_SUM, FI_INT64, dst, src, NULL, old, 4);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(dst[i], (i + 1) * 11);
		cr_assert_eq(old[i], i + 1);
	}
	/* An atomic read of a read-only page: a store would fault. */
	ro = mmap(NULL, (size_t) page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(ro, MAP_FAILED);
	ro[0] = 7;
	ro[1] = 8;
	cr_assert_eq(mprotect(ro, (size_t) page, PROT_READ), 0);
	rdmx_atomic_apply(FI_ATOMIC_READ, FI_UINT32, ro, NULL, NULL, got, 2);
	cr_assert(got[0] == 7 && got[1] == 8);
	munmap(ro, (size_t) page);
}
