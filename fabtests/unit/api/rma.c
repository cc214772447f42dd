/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_api_test: RMA (fi_rma(3)) between A and B. A writes into and reads
 * from a region of B at every protocol's sizes; writedata reaches B's
 * receive CQ; and every access the target must refuse (a wrong key, bytes
 * outside the region, an access the region does not grant, a region
 * closed) fails at A with its code and leaves B's memory as it was.
 */
#include "api.h"

#define RMA_LEN		(1u << 20)

/* B's region: where A's RMA goes, and how A names its bytes. */
struct region {
	uint8_t		*buf;
	struct fid_mr	*mr;
	uint64_t	key;
	uint64_t	base;		/* the address of buf[0] for A */
};

static bool region_open(struct fixture *fx, struct region *r, uint64_t access,
			uint64_t requested, const char *name)
{
	int ret;

	r->buf = xmalloc(RMA_LEN);
	memset(r->buf, 0, RMA_LEN);
	ret = fi_mr_reg(fx->domain, r->buf, RMA_LEN, access, 0, requested, 0, &r->mr, NULL);
	if (!check_ret(ret, 0, name))
		return false;
	r->key = fi_mr_key(r->mr);
	r->base = (fx->info->domain_attr->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_BASIC)) ?
		  (uintptr_t) r->buf : 0;
	return true;
}

static void region_close(struct region *r)
{
	if (r->mr)
		fi_close(&r->mr->fid);
	r->mr = NULL;
	free(r->buf);
	r->buf = NULL;
}

/* Waits for A's completion of an RMA with flags; its errors fail it. */
static bool rma_done(struct fixture *fx, void *ctx, uint64_t flags, const char *name)
{
	return expect_comp(fx, fx->node[A].tx_cq, ctx, FI_RMA | flags, NULL, NULL, name);
}

/* Writes len bytes at off of B's region, reads them back: both exact. */
static void write_read(struct fixture *fx, struct region *r, size_t off, size_t len)
{
	struct fi_context wctx, rctx;
	uint8_t *out = xmalloc(len), *in = xmalloc(len);
	char what[64];
	ssize_t ret;

	snprintf(what, sizeof(what), "%zu bytes at %zu", len, off);
	fill(out, len, g_seed++);
	memset(in, 0, len);
	ret = fi_write(fx->node[A].ep, out, len, NULL, fx->node[B].addr, r->base + off, r->key,
		       &wctx);
	if (check_ret(ret, 0, nm("fi_write", what)) &&
	    rma_done(fx, &wctx, FI_WRITE, nm("fi_write completes", what)))
		ft_check(!memcmp(r->buf + off, out, len), nm("fi_write lands", what),
			 "the region differs");
	ret = fi_read(fx->node[A].ep, in, len, NULL, fx->node[B].addr, r->base + off, r->key,
		      &rctx);
	if (check_ret(ret, 0, nm("fi_read", what)) &&
	    rma_done(fx, &rctx, FI_READ, nm("fi_read completes", what)))
		ft_check(!memcmp(in, out, len), nm("fi_read reads it back", what),
			 "the bytes differ");
	expect_empty(fx->node[B].rx_cq, nm("no entry at the target", what));
	free(out);
	free(in);
}

/* fi_writedata: B's receive CQ reports the data; fi_inject_write lands. */
static void write_data_and_inject(struct fixture *fx, struct region *r)
{
	const uint64_t data = DATA_BASE | 0x77;
	struct fi_context wctx, rctx;
	struct fi_cq_tagged_entry e;
	uint8_t out[64], in[64];
	ssize_t ret;

	fill(out, sizeof(out), g_seed++);
	ret = fi_writedata(fx->node[A].ep, out, sizeof(out), NULL, data, fx->node[B].addr,
			   r->base, r->key, &wctx);
	if (check_ret(ret, 0, "fi_writedata") &&
	    rma_done(fx, &wctx, FI_WRITE, "fi_writedata completes") &&
	    expect_comp(fx, fx->node[B].rx_cq, NULL, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
			&e, NULL, "fi_writedata: the target's entry"))
		ft_check(e.data == data && e.len == sizeof(out), "fi_writedata: its data",
			 "data %#llx len %zu", (unsigned long long) e.data, e.len);
	fill(out, sizeof(out), g_seed++);
	ret = fi_inject_write(fx->node[A].ep, out, sizeof(out), fx->node[B].addr, r->base + 64,
			      r->key);
	check_ret(ret, 0, "fi_inject_write");
	/* The read goes after the write (send-after-send order): it sees it. */
	ret = fi_read(fx->node[A].ep, in, sizeof(in), NULL, fx->node[B].addr, r->base + 64,
		      r->key, &rctx);
	if (check_ret(ret, 0, "fi_read after fi_inject_write") &&
	    rma_done(fx, &rctx, FI_READ, "fi_read after fi_inject_write completes"))
		ft_check(!memcmp(in, out, sizeof(in)), "fi_inject_write landed",
			 "the bytes differ");
	expect_empty(fx->node[A].tx_cq, "fi_inject_write: no completion");
}

/* A write A must see refused with err, the region left as it was. */
static void refused_write(struct fixture *fx, struct region *r, uint64_t addr, uint64_t key,
			  size_t len, int err, const char *name)
{
	uint8_t *out = xmalloc(len), *before = xmalloc(RMA_LEN);
	struct fi_cq_err_entry e;
	struct fi_context ctx;
	ssize_t ret;

	memcpy(before, r->buf, RMA_LEN);
	memset(out, 0xa5, len);
	ret = fi_write(fx->node[A].ep, out, len, NULL, fx->node[B].addr, addr, key, &ctx);
	if (check_ret(ret, 0, nm(name, "posted")) &&
	    expect_err(fx, fx->node[A].tx_cq, &ctx, err, &e, NULL, 0, nm(name, "refused")))
		ft_check(!memcmp(before, r->buf, RMA_LEN), nm(name, "nothing written"),
			 "the region changed");
	free(out);
	free(before);
}

static void refused_read(struct fixture *fx, uint64_t addr, uint64_t key, size_t len,
			 int err, const char *name)
{
	uint8_t *in = xmalloc(len);
	struct fi_cq_err_entry e;
	struct fi_context ctx;
	ssize_t ret;

	memset(in, 0x3c, len);
	ret = fi_read(fx->node[A].ep, in, len, NULL, fx->node[B].addr, addr, key, &ctx);
	if (check_ret(ret, 0, nm(name, "posted")) &&
	    expect_err(fx, fx->node[A].tx_cq, &ctx, err, &e, NULL, 0, nm(name, "refused")))
		ft_check(in[0] == 0x3c && in[len - 1] == 0x3c, nm(name, "nothing read"),
			 "the buffer changed");
	free(in);
}

/* Every refusal the target makes, at an eager and a long size. */
static void refusals(struct fixture *fx, struct region *rw)
{
	struct region ro = { 0 }, wo = { 0 };
	static const size_t lens[] = { 64, 300000 };

	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t len = lens[i];

		refused_write(fx, rw, rw->base, rw->key ^ 0x5a5a, len, FI_EACCES,
			      "write with a wrong key");
		refused_write(fx, rw, rw->base + RMA_LEN - len + 1, rw->key, len, FI_EINVAL,
			      "write past the region's end");
		refused_write(fx, rw, rw->base - 1, rw->key, len, FI_EINVAL,
			      "write before the region's start");
		refused_write(fx, rw, UINT64_MAX - 8, rw->key, len, FI_EINVAL,
			      "write whose end wraps around");
		refused_read(fx, rw->base, rw->key ^ 0x5a5a, len, FI_EACCES, "read with a wrong key");
		refused_read(fx, rw->base + RMA_LEN - len + 1, rw->key, len, FI_EINVAL,
			     "read past the region's end");
	}
	if (region_open(fx, &ro, FI_REMOTE_READ, 0x500, "fi_mr_reg FI_REMOTE_READ only"))
		refused_write(fx, &ro, ro.base, ro.key, 64, FI_EACCES,
			      "write to a region without FI_REMOTE_WRITE");
	if (region_open(fx, &wo, FI_REMOTE_WRITE, 0x600, "fi_mr_reg FI_REMOTE_WRITE only"))
		refused_read(fx, wo.base, wo.key, 64, FI_EACCES,
			     "read of a region without FI_REMOTE_READ");
	/* Closed: its key names nothing any more. */
	if (wo.mr) {
		uint64_t key = wo.key, base = wo.base;

		fi_close(&wo.mr->fid);
		wo.mr = NULL;
		refused_write(fx, &ro, base, key, 64, FI_EACCES, "write to a closed region");
	}
	region_close(&ro);
	region_close(&wo);
}

/*
 * RMA takes nothing of the receive queue: with every receive of both
 * sides posted (rx_size), writes and reads of each protocol still work,
 * and the receives stay posted.
 */
static void with_receives_posted(struct fixture *fx, struct region *r)
{
	size_t n = fx->info->rx_attr->size, posted[NODES] = { 0 };
	struct fi_context *ctx = xmalloc(NODES * n * sizeof(*ctx));
	uint8_t byte;

	for (int i = 0; i < NODES; i++)
		while (posted[i] < n &&
		       !fi_trecv(fx->node[i].ep, &byte, 1, NULL, FI_ADDR_UNSPEC, MARKER_TAG, 0,
				 &ctx[i * n + posted[i]]))
			posted[i]++;
	ft_check(posted[A] == n && posted[B] == n, "rx_size receives posted on both sides",
		 "%zu and %zu of %zu", posted[A], posted[B], n);
	write_read(fx, r, 0, 64);
	write_read(fx, r, 0, 65536 + 4096);
	write_read(fx, r, 0, 300000);
	for (int i = 0; i < NODES; i++)
		for (size_t k = 0; k < posted[i]; k++)
			abandon_recv(fx, &fx->node[i], &ctx[i * n + k]);
	free(ctx);
}

/* A requested key in use is refused; the provider's keys differ. */
static void keys(struct fixture *fx, struct region *r)
{
	bool prov_key = fx->info->domain_attr->mr_mode & (FI_MR_PROV_KEY | FI_MR_BASIC);
	uint8_t buf[64];
	struct fid_mr *mr = NULL;
	int ret = fi_mr_reg(fx->domain, buf, sizeof(buf), FI_REMOTE_WRITE, 0, 0x100, 0, &mr,
			    NULL);

	if (prov_key) {
		if (check_ret(ret, 0, "fi_mr_reg, provider keys: a second region"))
			ft_check(fi_mr_key(mr) != r->key, "provider keys differ", "key %#llx twice",
				 (unsigned long long) r->key);
	} else {
		check_ret(ret, -FI_ENOKEY, "fi_mr_reg with a requested key in use: -FI_ENOKEY");
	}
	if (!ret)
		fi_close(&mr->fid);
}

/*
 * Many reads at once, more than a target answers at a time: 64 of
 * 16 KiB, then 4 of 256 KiB (every chunk buffer of B's busy). Each
 * completes once, and every byte is read.
 */
static bool reads_at_once(struct fixture *fx, struct region *r, size_t n, size_t len,
			  const char *name)
{
	struct fi_context *ctx = xmalloc(n * sizeof(*ctx));
	uint8_t *in = xmalloc(n * len);
	bool *seen = calloc(n, sizeof(*seen)), ok = true;
	char why[256];

	memset(in, 0, n * len);
	for (size_t i = 0; ok && i < n; i++)
		ok = check_ret(fi_read(fx->node[A].ep, in + i * len, len, NULL, fx->node[B].addr,
				       r->base + i * len, r->key, &ctx[i]), 0, nm(name, "posted"));
	for (size_t done = 0; ok && done < n; done++) {
		struct fi_cq_tagged_entry e = { 0 };
		ssize_t ret = cq_wait(fx, fx->node[A].tx_cq, &e, NULL);
		size_t j = (size_t) ((struct fi_context *) e.op_context - ctx);

		ok = ret == 1 && j < n && !seen[j];
		if (!ok)
			ft_check(false, nm(name, "each completes once"), "entry %zu: %s", done,
				 ret == 1 ? "a context twice, or unknown" :
				 wait_str(ret, fx->node[A].tx_cq, why, sizeof(why)));
		else
			seen[j] = true;
	}
	if (ok)
		ok = ft_check(!memcmp(in, r->buf, n * len), nm(name, "every byte read"),
			      "the bytes differ");
	free(seen);
	free(in);
	free(ctx);
	return ok;
}

static void many_reads(struct fixture *fx, struct region *r)
{
	fill(r->buf, RMA_LEN, g_seed++);
	if (reads_at_once(fx, r, 64, 16384, "64 reads at once"))
		reads_at_once(fx, r, 4, 262144, "4 large reads at once");
}

/*
 * B closes its region, and frees its memory, while it answers A's read
 * of all of it: the read fails with FI_EACCES (what B had copied out
 * before may have landed), and nothing reads the freed memory (the
 * sanitizer build would say).
 */
static void read_of_a_region_closed(struct fixture *fx)
{
	struct region r = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	uint8_t *in = xmalloc(RMA_LEN);

	if (!region_open(fx, &r, FI_REMOTE_READ, 0x700, "fi_mr_reg (closed while read)"))
		goto out;
	fill(r.buf, RMA_LEN, g_seed++);
	if (!check_ret(fi_read(fx->node[A].ep, in, RMA_LEN, NULL, fx->node[B].addr, r.base,
			       r.key, &ctx), 0, "read of a region closed: posted"))
		goto out;
	/* B takes the request and sends what its chunk buffers hold. */
	(void) fi_cq_read(fx->node[B].rx_cq, &e, 0);
	region_close(&r);
	expect_err(fx, fx->node[A].tx_cq, &ctx, FI_EACCES, &err, NULL, 0,
		   "read of a region closed: fails");
out:
	region_close(&r);
	free(in);
}

void test_rma(struct fixture *fx)
{
	static const size_t lens[] = { 1, 8, 4096, 65000, 65536 + 4096, 300000, RMA_LEN };
	struct region r = { 0 };

	if (!ft_check(fx->info->caps & FI_RMA, "FI_RMA offered", "caps %#llx",
		      (unsigned long long) fx->info->caps) ||
	    !region_open(fx, &r, FI_REMOTE_READ | FI_REMOTE_WRITE, 0x100, "fi_mr_reg"))
		return;
	keys(fx, &r);
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++)
		write_read(fx, &r, i == 0 ? RMA_LEN - 1 : 0, lens[i]);
	write_data_and_inject(fx, &r);
	with_receives_posted(fx, &r);
	refusals(fx, &r);
	write_read(fx, &r, 17, 4096);
	many_reads(fx, &r);
	region_close(&r);
	read_of_a_region_closed(fx);
	send_between(fx, A, B, 64, "messages still flow after RMA");
}
