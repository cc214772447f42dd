/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: opening and closing, unsupported calls, EQ, MR (see api.h). */
#include "api.h"

/*
 * Opening everything, each step reported (verbose fixture); closing is
 * reported step by step by test_close_order.
 */
void test_objects(struct fixture *fx)
{
	ft_check(fx->info->domain_attr->threading == FI_THREAD_SAFE,
		 "the domain is FI_THREAD_SAFE, as the hints asked", "threading %d",
		 fx->info->domain_attr->threading);
}

/*
 * Closing an object something still uses: -FI_EBUSY, and the objects keep
 * working; then the right order closes everything (reported step by step).
 */
void test_close_order(struct fixture *fx)
{
	struct {
		const char	*name;
		struct fid	*fid;
	} busy[] = {
		{ "fi_close(tx CQ) while an endpoint is bound: -FI_EBUSY",
		  &fx->node[A].tx_cq->fid },
		{ "fi_close(rx CQ) while an endpoint is bound: -FI_EBUSY",
		  &fx->node[B].rx_cq->fid },
		{ "fi_close(av) while endpoints are bound: -FI_EBUSY", &fx->av->fid },
		{ "fi_close(domain) with open children: -FI_EBUSY", &fx->domain->fid },
		{ "fi_close(fabric) with an open domain: -FI_EBUSY", &fx->fabric->fid },
	};

	for (size_t i = 0; i < ARRAY_SIZE(busy); i++) {
		int ret = fi_close(busy[i].fid);

		check_ret(ret, -FI_EBUSY, busy[i].name);
	}
	send_between(fx, A, B, 64, "after refused closes, A to B still works");
	send_between(fx, B, A, 64, "after refused closes, B to A still works");
	fixture_close(fx, true);
}

/* Each unsupported call, returning what it returned (objects it opened closed). */
static int try_scalable_ep(struct fixture *fx)
{
	struct fid_ep *sep = NULL;
	int ret = fi_scalable_ep(fx->domain, fx->info, &sep, NULL);

	if (!ret)
		fi_close(&sep->fid);
	return ret;
}

static int try_srx_context(struct fixture *fx)
{
	struct fid_ep *srx = NULL;
	int ret = fi_srx_context(fx->domain, fx->info->rx_attr, &srx, NULL);

	if (!ret)
		fi_close(&srx->fid);
	return ret;
}

static int try_stx_context(struct fixture *fx)
{
	struct fid_stx *stx = NULL;
	int ret = fi_stx_context(fx->domain, fx->info->tx_attr, &stx, NULL);

	if (!ret)
		fi_close(&stx->fid);
	return ret;
}

static int try_passive_ep(struct fixture *fx)
{
	struct fid_pep *pep = NULL;
	int ret = fi_passive_ep(fx->fabric, fx->info, &pep, NULL);

	if (!ret)
		fi_close(&pep->fid);
	return ret;
}

static int try_connect(struct fixture *fx)
{
	return fi_connect(fx->node[A].ep, fx->node[B].name, NULL, 0);
}

void test_unsupported(struct fixture *fx)
{
	static const struct {
		const char	*name;
		int		(*call)(struct fixture *fx);
		int		want;
	} calls[] = {
		{ "fi_scalable_ep", try_scalable_ep, -FI_ENOSYS },
		{ "fi_srx_context", try_srx_context, -FI_ENOSYS },
		{ "fi_stx_context", try_stx_context, -FI_ENOSYS },
		/* Passive endpoints are FI_EP_MSG's. */
		{ "fi_passive_ep of an FI_EP_RDM info", try_passive_ep, -FI_EINVAL },
		{ "fi_connect", try_connect, -FI_ENOSYS },
	};

	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		int ret = calls[i].call(fx);

		check_ret(ret, calls[i].want, nm(calls[i].name, fi_strerror(-calls[i].want)));
	}
	/* Offered, but not asked for: the endpoint has no FI_ATOMIC. */
	check_ret(fi_atomic(fx->node[A].ep, &(uint64_t) { 1 }, 1, NULL, fx->node[B].addr, 0, 0,
			    FI_UINT64, FI_SUM, NULL), -FI_EOPNOTSUPP,
		  "fi_atomic without FI_ATOMIC: -FI_EOPNOTSUPP");
	send_between(fx, A, B, 16, "the endpoints still work afterwards");
}

void test_eq(struct fixture *fx)
{
	struct fi_eq_attr attr = { .size = 8, .flags = FI_WRITE,
				   .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_entry in = { .fid = &fx->fabric->fid, .data = 0x1234 }, out;
	struct fid_eq *eq = NULL;
	uint32_t event = 0;
	int64_t start, took;
	ssize_t ret;
	int marker;

	ret = fi_eq_open(fx->fabric, &attr, &eq, NULL);
	if (!check_ret(ret, 0, "fi_eq_open"))
		return;
	in.context = &marker;
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_ret(ret, (ssize_t) sizeof(in), "fi_eq_write");
	memset(&out, 0, sizeof(out));
	ret = fi_eq_read(eq, &event, &out, sizeof(out), 0);
	ft_check(ret == (ssize_t) sizeof(out) && event == FI_NOTIFY &&
		 out.context == &marker && out.data == 0x1234 && out.fid == in.fid,
		 "fi_eq_read returns the written event", "ret %zd, event %u, data %#llx",
		 ret, event, (unsigned long long) out.data);
	ret = fi_eq_read(eq, &event, &out, sizeof(out), 0);
	check_ret(ret, -FI_EAGAIN, "fi_eq_read of an empty EQ: -FI_EAGAIN");
	start = now_ms();
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), 200, 0);
	took = now_ms() - start;
	ft_check(ret == -FI_EAGAIN && took >= 150 && took < WAIT_MS,
		 "fi_eq_sread with a 200 ms timeout on an empty EQ: -FI_EAGAIN after it",
		 "%zd (%s) after %lld ms", ret, err_str(ret), (long long) took);
	ret = fi_eq_write(eq, FI_NOTIFY, &in, sizeof(in), 0);
	check_ret(ret, (ssize_t) sizeof(in), "fi_eq_write of a second event");
	start = now_ms();
	ret = fi_eq_sread(eq, &event, &out, sizeof(out), WAIT_MS, 0);
	took = now_ms() - start;
	ft_check(ret == (ssize_t) sizeof(out) && took < 1000,
		 "fi_eq_sread returns a waiting event at once", "%zd (%s) after %lld ms",
		 ret, err_str(ret), (long long) took);
	ret = fi_close(&eq->fid);
	check_ret(ret, 0, "fi_close(eq)");
}

void test_mr(struct fixture *fx)
{
	const uint64_t key = 0x1234;
	size_t len = 256;
	uint8_t *buf = xmalloc(len);
	struct fid_mr *mr = NULL;
	struct route r = fx_route(fx, A, B);
	int ret;

	memset(buf, 0, len);
	ret = fi_mr_reg(fx->domain, buf, len, FI_SEND | FI_RECV, 0, key, 0, &mr, NULL);
	if (check_ret(ret, 0, "fi_mr_reg of a send buffer")) {
		bool prov_key = fx->info->domain_attr->mr_mode & FI_MR_PROV_KEY;
		uint64_t got = fi_mr_key(mr);

		ft_check(prov_key ? got != FI_KEY_NOTAVAIL : got == key,
			 "fi_mr_key: the requested key (no FI_MR_PROV_KEY)", "key %#llx",
			 (unsigned long long) got);
		transfer(fx, &r, &(struct xfer) { find_op("fi_send"), len, true, buf,
						  fi_mr_desc(mr) },
			 "fi_send with the fi_mr_desc descriptor");
		ret = fi_close(&mr->fid);
		check_ret(ret, 0, "fi_close(mr)");
	}
	mr = NULL;
	ret = fi_mr_reg(fx->domain, buf, len, FI_TAGGED, 0, key + 1, 0, &mr, NULL);
	check_ret(ret, -FI_EINVAL, "fi_mr_reg with bad access flags: -FI_EINVAL");
	if (!ret)
		fi_close(&mr->fid);
	free(buf);
}
