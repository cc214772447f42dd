/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: endpoint names and enabling (see api.h). */
#include "api.h"

void test_getname(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	uint8_t buf[NAME_MAX_LEN];
	size_t want = addr_size(fx->info), len = 0;
	int ret;

	ret = fi_getname(&a->ep->fid, buf, &len);
	ft_check(ret == -FI_ETOOSMALL && len == want,
		 "fi_getname with addrlen 0: -FI_ETOOSMALL and the needed length",
		 "ret %d (%s), addrlen %zu (want %zu)", ret, err_str(ret), len, want);
	ret = fi_getname(&a->ep->fid, buf, &len);
	ft_check(ret == 0 && len == want && get_port(buf) != 0,
		 "fi_getname with that length succeeds", "ret %d (%s), addrlen %zu, port %u",
		 ret, err_str(ret), len, ret ? 0 : get_port(buf));
	ft_check(len == a->namelen && !memcmp(buf, a->name, len),
		 "fi_getname is stable", "two calls gave different addresses");
	ft_check(a->namelen != b->namelen || memcmp(a->name, b->name, a->namelen),
		 "two endpoints have different addresses", "A and B share an address");
}

void test_setname(struct fixture *fx)
{
	struct node probe = { 0 }, e = { 0 };
	uint8_t want[NAME_MAX_LEN], got[NAME_MAX_LEN];
	size_t wantlen = sizeof(want), len = sizeof(got);
	struct route r;
	int ret;

	/* A free address: one a probe endpoint had, released by closing it. */
	if (!node_create(fx->domain, fx->info, &probe, false, "probe endpoint") ||
	    !step(false, fi_getname(&probe.ep->fid, want, &wantlen),
		  "probe endpoint: fi_getname")) {
		node_close(&probe, false, "probe endpoint");
		return;
	}
	node_close(&probe, false, "probe endpoint");
	if (!node_create(fx->domain, fx->info, &e, false, "endpoint E"))
		goto out;
	ret = fi_setname(&e.ep->fid, want, wantlen);
	check_ret(ret, 0, "fi_setname before fi_enable");
	ret = fi_getname(&e.ep->fid, got, &len);
	ft_check(ret == 0 && len == wantlen && !memcmp(got, want, len),
		 "fi_getname reflects fi_setname", "ret %d, port %u (want %u)", ret,
		 get_port(got), get_port(want));
	if (!node_enable(fx->av, &e, 0, false, "endpoint E"))
		goto out;
	ft_check(e.namelen == wantlen && !memcmp(e.name, want, wantlen),
		 "the address survives fi_enable", "port %u (want %u)", get_port(e.name),
		 get_port(want));
	memcpy(got, want, wantlen);
	set_port(got, 0);
	ret = fi_setname(&e.ep->fid, got, wantlen);
	ft_check(ret < 0, "fi_setname after fi_enable fails", "returned %d", ret);
	r = (struct route) { &fx->node[A], &e, e.addr, fx->node[A].addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 100, true, NULL, NULL },
		 "message to the address set by fi_setname");
out:
	node_close(&e, false, "endpoint E");
}

void test_enable_errors(struct fixture *fx)
{
	struct node e = { 0 };
	int ret;

	if (!node_create(fx->domain, fx->info, &e, false, "endpoint E"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, -FI_ENOAV, "fi_enable without an AV: -FI_ENOAV");
	if (!step(false, fi_ep_bind(e.ep, &fx->av->fid, 0), "endpoint E: bind the AV"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, -FI_ENOCQ, "fi_enable without CQs: -FI_ENOCQ");
	if (!step(false, fi_ep_bind(e.ep, &e.tx_cq->fid, FI_TRANSMIT),
		  "endpoint E: bind the tx CQ"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, -FI_ENOCQ, "fi_enable without an rx CQ: -FI_ENOCQ");
	if (!step(false, fi_ep_bind(e.ep, &e.rx_cq->fid, FI_RECV),
		  "endpoint E: bind the rx CQ"))
		goto out;
	ret = fi_enable(e.ep);
	check_ret(ret, 0, "fi_enable with an AV and both CQs");
out:
	node_close(&e, false, "endpoint E");
}
