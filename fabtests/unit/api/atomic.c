/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_api_test: atomics (fi_atomic(3)) from A on a region of B. Each
 * kind of call changes B's elements as the operation says and returns
 * the old values where it fetches; fi_atomicvalid and fi_query_atomic
 * agree with what posting accepts; what the target must refuse (a wrong
 * key, elements outside the region, an access the region does not
 * grant) fails at A with its code and leaves B's memory as it was.
 */
#include <complex.h>

#include "api.h"

#define ATOMIC_LEN	4096

/* B's region of ATOMIC_LEN bytes, with access; its key and base for A. */
struct aregion {
	uint8_t		*buf;
	struct fid_mr	*mr;
	uint64_t	key;
	uint64_t	base;
};

static bool aregion_open(struct fixture *fx, struct aregion *r, uint64_t access,
			 uint64_t key)
{
	r->buf = xmalloc(ATOMIC_LEN);
	memset(r->buf, 0, ATOMIC_LEN);
	if (!check_ret(fi_mr_reg(fx->domain, r->buf, ATOMIC_LEN, access, 0, key, 0, &r->mr,
				 NULL), 0, "fi_mr_reg for atomics"))
		return false;
	r->key = fi_mr_key(r->mr);
	r->base = (fx->info->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) ?
		  (uintptr_t) r->buf : 0;
	return true;
}

static void aregion_close(struct aregion *r)
{
	if (r->mr)
		fi_close(&r->mr->fid);
	free(r->buf);
	*r = (struct aregion) { 0 };
}

/* A's completion of an atomic with flags (FI_WRITE, or FI_READ for a fetch). */
static bool atomic_done(struct fixture *fx, void *ctx, uint64_t flags, const char *name)
{
	return expect_comp(fx, fx->node[A].tx_cq, ctx, FI_ATOMIC | flags, NULL, NULL, name);
}

/* fi_atomic, fi_inject_atomic and fi_atomicmsg: B's elements change, nothing comes back. */
static void writes(struct fixture *fx, struct aregion *r)
{
	uint64_t start[4] = { 1, 2, 3, 4 }, add[4] = { 10, 20, 30, 40 }, want[4];
	uint8_t bits = 0x0f;
	struct fi_ioc iov[2] = { { add, 2 }, { add + 2, 2 } };
	struct fi_rma_ioc rma = { .addr = r->base, .count = 4, .key = r->key };
	struct fi_msg_atomic msg = { .msg_iov = iov, .iov_count = 2, .addr = fx->node[B].addr,
				     .rma_iov = &rma, .rma_iov_count = 1, .datatype = FI_UINT64,
				     .op = FI_SUM };
	struct fi_context ctx, mctx;

	memcpy(r->buf, start, sizeof(start));
	if (check_ret(fi_atomic(fx->node[A].ep, add, 4, NULL, fx->node[B].addr, r->base, r->key,
				FI_UINT64, FI_SUM, &ctx), 0, "fi_atomic FI_SUM uint64 x4") &&
	    atomic_done(fx, &ctx, FI_WRITE, "fi_atomic completes")) {
		for (int i = 0; i < 4; i++)
			want[i] = start[i] + add[i];
		ft_check(!memcmp(r->buf, want, sizeof(want)), "fi_atomic: B's elements summed",
			 "they differ");
	}
	msg.context = &mctx;
	if (check_ret(fi_atomicmsg(fx->node[A].ep, &msg, FI_COMPLETION), 0,
		      "fi_atomicmsg, two buffers") &&
	    atomic_done(fx, &mctx, FI_WRITE, "fi_atomicmsg completes")) {
		for (int i = 0; i < 4; i++)
			want[i] += add[i];
		ft_check(!memcmp(r->buf, want, sizeof(want)), "fi_atomicmsg: summed again",
			 "they differ");
	}
	r->buf[64] = 0xff;
	if (check_ret(fi_inject_atomic(fx->node[A].ep, &bits, 1, fx->node[B].addr, r->base + 64,
				       r->key, FI_UINT8, FI_BXOR), 0, "fi_inject_atomic FI_BXOR"))
		send_between(fx, A, B, 8, "a message after the injected atomic");
	ft_check(r->buf[64] == 0xf0, "fi_inject_atomic: applied before a later message",
		 "byte %#x", r->buf[64]);
	expect_empty(fx->node[A].tx_cq, "fi_inject_atomic: no completion");
}

/* fi_fetch_atomic: the old values come back; FI_ATOMIC_READ changes nothing. */
static void fetches(struct fixture *fx, struct aregion *r)
{
	int32_t start[3] = { 5, -3, 7 }, op[3] = { -10, 0, 9 }, old[3] = { 0 };
	double d[2] = { 1.5, -2.25 }, got[2] = { 0 };
	struct fi_context ctx;

	memcpy(r->buf + 128, start, sizeof(start));
	if (check_ret(fi_fetch_atomic(fx->node[A].ep, op, 3, NULL, old, NULL, fx->node[B].addr,
				      r->base + 128, r->key, FI_INT32, FI_MIN, &ctx), 0,
		      "fi_fetch_atomic FI_MIN int32 x3") &&
	    atomic_done(fx, &ctx, FI_READ, "fi_fetch_atomic completes")) {
		int32_t want[3] = { -10, -3, 7 };

		ft_check(!memcmp(old, start, sizeof(start)), "fi_fetch_atomic: old values back",
			 "they differ");
		ft_check(!memcmp(r->buf + 128, want, sizeof(want)),
			 "fi_fetch_atomic: B's elements are the minimums", "they differ");
	}
	memcpy(r->buf + 256, d, sizeof(d));
	if (check_ret(fi_fetch_atomic(fx->node[A].ep, NULL, 2, NULL, got, NULL, fx->node[B].addr,
				      r->base + 256, r->key, FI_DOUBLE, FI_ATOMIC_READ, &ctx), 0,
		      "fi_fetch_atomic FI_ATOMIC_READ double x2") &&
	    atomic_done(fx, &ctx, FI_READ, "FI_ATOMIC_READ completes"))
		ft_check(!memcmp(got, d, sizeof(d)) && !memcmp(r->buf + 256, d, sizeof(d)),
			 "FI_ATOMIC_READ: the values, unchanged", "they differ");
}

/* fi_compare_atomic: swapped only where the compare value says. */
static void compares(struct fixture *fx, struct aregion *r)
{
	uint64_t start[2] = { 100, 200 }, swap[2] = { 1, 2 }, cmp[2] = { 100, 999 }, old[2];
	uint64_t want[2] = { 1, 200 };
	double complex z = 1.0 + 2.0 * I, zs = 3.0, zc = 1.0 + 2.0 * I, zold = 0;
	struct fi_context ctx;

	memcpy(r->buf + 512, start, sizeof(start));
	if (check_ret(fi_compare_atomic(fx->node[A].ep, swap, 2, NULL, cmp, NULL, old, NULL,
					fx->node[B].addr, r->base + 512, r->key, FI_UINT64,
					FI_CSWAP, &ctx), 0, "fi_compare_atomic FI_CSWAP uint64 x2") &&
	    atomic_done(fx, &ctx, FI_READ, "fi_compare_atomic completes")) {
		ft_check(!memcmp(old, start, sizeof(start)), "FI_CSWAP: old values back",
			 "they differ");
		ft_check(!memcmp(r->buf + 512, want, sizeof(want)),
			 "FI_CSWAP: the equal one swapped, the other kept", "they differ");
	}
	memcpy(r->buf + 768, &z, sizeof(z));
	if (check_ret(fi_compare_atomic(fx->node[A].ep, &zs, 1, NULL, &zc, NULL, &zold, NULL,
					fx->node[B].addr, r->base + 768, r->key,
					FI_DOUBLE_COMPLEX, FI_CSWAP, &ctx), 0,
		      "fi_compare_atomic FI_CSWAP double complex") &&
	    atomic_done(fx, &ctx, FI_READ, "complex FI_CSWAP completes")) {
		memcpy(&z, r->buf + 768, sizeof(z));
		ft_check(zold == 1.0 + 2.0 * I && z == 3.0, "complex FI_CSWAP: swapped",
			 "old %g%+gi, now %g%+gi", creal(zold), cimag(zold), creal(z), cimag(z));
	}
}

/* A refused atomic: its code at A, and B's bytes as they were. */
static void refused(struct fixture *fx, struct aregion *r, uint64_t addr, uint64_t key,
		    bool fetch, int err, const char *name)
{
	uint8_t before[ATOMIC_LEN];
	uint64_t val = 7, old = 0x3c3c;
	struct fi_cq_err_entry e;
	struct fi_context ctx;
	ssize_t ret;

	memcpy(before, r->buf, ATOMIC_LEN);
	ret = fetch ? fi_fetch_atomic(fx->node[A].ep, &val, 1, NULL, &old, NULL, fx->node[B].addr,
				      addr, key, FI_UINT64, FI_SUM, &ctx) :
		      fi_atomic(fx->node[A].ep, &val, 1, NULL, fx->node[B].addr, addr, key,
				FI_UINT64, FI_SUM, &ctx);
	if (check_ret(ret, 0, nm(name, "posted")) &&
	    expect_err(fx, fx->node[A].tx_cq, &ctx, err, &e, NULL, 0, nm(name, "refused")))
		ft_check(!memcmp(before, r->buf, ATOMIC_LEN) && old == 0x3c3c,
			 nm(name, "nothing changed"), "B's bytes or the result changed");
}

static void refusals(struct fixture *fx, struct aregion *rw)
{
	struct aregion ro = { 0 }, wo = { 0 };

	refused(fx, rw, rw->base, rw->key ^ 0x5a5a, false, FI_EACCES, "atomic with a wrong key");
	refused(fx, rw, rw->base + ATOMIC_LEN - 4, rw->key, false, FI_EINVAL,
		"atomic past the region's end");
	refused(fx, rw, UINT64_MAX - 2, rw->key, true, FI_EINVAL,
		"fetch whose end wraps around");
	if (aregion_open(fx, &ro, FI_REMOTE_READ, 0x910))
		refused(fx, &ro, ro.base, ro.key, false, FI_EACCES,
			"atomic on a region without FI_REMOTE_WRITE");
	if (aregion_open(fx, &wo, FI_REMOTE_WRITE, 0x920))
		refused(fx, &wo, wo.base, wo.key, true, FI_EACCES,
			"fetch from a region without FI_REMOTE_READ");
	aregion_close(&ro);
	aregion_close(&wo);
}

/* What posting refuses at once, and what the queries answer. */
static void limits(struct fixture *fx, struct aregion *r)
{
	struct fi_atomic_attr attr;
	double complex z = 0;
	uint64_t many[9] = { 0 };
	size_t count = 0;

	check_ret(fi_atomicvalid(fx->node[A].ep, FI_UINT64, FI_SUM, &count), 0,
		  "fi_atomicvalid FI_SUM uint64");
	ft_check(count == 8, "fi_atomicvalid: 8 uint64 at once", "count %zu", count);
	check_ret(fi_atomicvalid(fx->node[A].ep, FI_FLOAT_COMPLEX, FI_MIN, &count),
		  -FI_EOPNOTSUPP, "fi_atomicvalid FI_MIN complex: not offered");
	check_ret(fi_fetch_atomicvalid(fx->node[A].ep, FI_DOUBLE, FI_BOR, &count),
		  -FI_EOPNOTSUPP, "fi_fetch_atomicvalid FI_BOR double: not offered");
	check_ret(fi_compare_atomicvalid(fx->node[A].ep, FI_INT8, FI_MSWAP, &count), 0,
		  "fi_compare_atomicvalid FI_MSWAP int8");
	check_ret(fi_query_atomic(fx->domain, FI_LONG_DOUBLE, FI_PROD, &attr, FI_FETCH_ATOMIC), 0,
		  "fi_query_atomic FI_PROD long double");
	ft_check(attr.size == sizeof(long double), "fi_query_atomic: the element size",
		 "size %zu", attr.size);
	check_ret(fi_query_atomic(fx->domain, FI_INT32, FI_CSWAP, &attr, 0), -FI_EOPNOTSUPP,
		  "fi_query_atomic FI_CSWAP without FI_COMPARE_ATOMIC");
	check_ret(fi_atomic(fx->node[A].ep, &z, 1, NULL, fx->node[B].addr, r->base, r->key,
			    FI_DOUBLE_COMPLEX, FI_MAX, NULL), -FI_EOPNOTSUPP,
		  "fi_atomic FI_MAX complex: refused at posting");
	check_ret(fi_atomic(fx->node[A].ep, many, 9, NULL, fx->node[B].addr, r->base, r->key,
			    FI_UINT64, FI_SUM, NULL), -FI_EINVAL,
		  "fi_atomic of more elements than fi_atomicvalid allows");
	expect_empty(fx->node[A].tx_cq, "no completion for what posting refused");
}

void test_atomics(struct fixture *fx)
{
	struct aregion r = { 0 };

	if (!ft_check(fx->info->caps & FI_ATOMIC, "FI_ATOMIC offered", "caps %#llx",
		      (unsigned long long) fx->info->caps) ||
	    !aregion_open(fx, &r, FI_REMOTE_READ | FI_REMOTE_WRITE, 0x900))
		return;
	writes(fx, &r);
	fetches(fx, &r);
	compares(fx, &r);
	refusals(fx, &r);
	limits(fx, &r);
	expect_empty(fx->node[B].rx_cq, "no entry at the target");
	aregion_close(&r);
	send_between(fx, A, B, 64, "messages still flow after atomics");
}
