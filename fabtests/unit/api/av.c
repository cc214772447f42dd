/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: the address vector, a second domain joining it, and FI_SOURCE_ERR. */
#include "api.h"

void test_av(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B], c = { 0 };
	uint8_t buf[NAME_MAX_LEN];
	size_t len = sizeof(buf);
	fi_addr_t old;
	struct route r;
	ssize_t sret;
	int ret;

	ft_check(a->addr != FI_ADDR_NOTAVAIL && b->addr != FI_ADDR_NOTAVAIL &&
		 a->addr != b->addr, "fi_av_insert gives each endpoint its own fi_addr",
		 "A %#llx, B %#llx", (unsigned long long) a->addr,
		 (unsigned long long) b->addr);
	ret = fi_av_lookup(fx->av, b->addr, buf, &len);
	ft_check(ret == 0 && len == b->namelen && !memcmp(buf, b->name, len),
		 "fi_av_lookup returns the inserted address", "ret %d, len %zu", ret, len);

	/* A third endpoint, removed from the AV and inserted again. */
	if (!node_create(fx->domain, fx->info, &c, false, "endpoint C") ||
	    !node_enable(fx->av, &c, 0, false, "endpoint C"))
		goto out;
	r = (struct route) { a, &c, c.addr, a->addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 64, true, NULL, NULL },
		 "A to a third endpoint C");
	old = c.addr;
	ret = fi_av_remove(fx->av, &old, 1, 0);
	check_ret(ret, 0, "fi_av_remove of C");
	sret = fi_send(a->ep, buf, 8, NULL, old, NULL);
	check_ret(sret, -FI_EINVAL, "send to a removed fi_addr: -FI_EINVAL");
	ret = fi_av_insert(fx->av, c.name, 1, &c.addr, 0, NULL);
	if (!ft_check(ret == 1 && c.addr != FI_ADDR_NOTAVAIL,
		      "re-inserting a removed address", "ret %d", ret))
		goto out;
	r = (struct route) { &c, a, a->addr, c.addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 64, true, NULL, NULL },
		 "C to A after re-insertion (source is the new fi_addr)");
	r = (struct route) { a, &c, c.addr, a->addr };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 64, true, NULL, NULL },
		 "A to C through the new fi_addr");
out:
	node_close(&c, false, "endpoint C");
}

/*
 * fi_av_remove right after a send the application was told is complete:
 * A injects to a new endpoint D, whose handshake has not started yet,
 * and removes D from the AV at once. fi_inject completes on return and
 * fi_av(3) leaves only operations in progress undefined, so the message
 * is rdmx's to deliver: D must receive it, and A's CQ stays clean.
 * (Upstream fabtests' fi_av_xfer removes its peer right after a send.)
 */
void test_av_remove_after_inject(struct fixture *fx)
{
	struct node *a = &fx->node[A], d = { 0 };
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	uint8_t tx[32], rx[32] = { 0 };
	fi_addr_t daddr, src;

	if (!node_create(fx->domain, fx->info, &d, false, "endpoint D") ||
	    !node_enable(fx->av, &d, 0, false, "endpoint D"))
		goto out;
	fill(tx, sizeof(tx), ++g_seed);
	daddr = d.addr;
	if (!check_ret(fi_inject(a->ep, tx, sizeof(tx), daddr), 0,
		       "fi_inject to a new endpoint D") ||
	    !check_ret(fi_av_remove(fx->av, &daddr, 1, 0), 0,
		       "fi_av_remove of D right after the inject"))
		goto out;
	fx->guest[0] = &d;
	if (check_ret(fi_recv(d.ep, rx, sizeof(rx), NULL, FI_ADDR_UNSPEC, &ctx), 0,
		      "D posts a receive") &&
	    expect_comp(fx, d.rx_cq, &ctx, FI_RECV, &e, &src,
			"D receives what A injected before removing D"))
		ft_check(e.len == sizeof(tx) && payload_ok(rx, sizeof(rx), g_seed, 0) &&
			 src == a->addr, "the message removed D got is A's, intact",
			 "len %zu, source %llu (A is %llu)", e.len,
			 (unsigned long long) src, (unsigned long long) a->addr);
	expect_empty(a->tx_cq, "A's tx CQ holds no error for the inject");
out:
	fx->guest[0] = NULL;
	node_close(&d, false, "endpoint D");
}

/*
 * C, not yet in A's AV, sends A an untagged and a tagged message that
 * wait unexpected at A; then A inserts C (into *c_in1) and receives both
 * with receives directed at C, which name C as their source: what C sent
 * before it joined is C's (fabtests' fi_unexpected_msg relies on it).
 */
static bool early_sender_joins(struct fixture *fx, struct node *c, struct node *a,
			       fi_addr_t a_in2, fi_addr_t *c_in1)
{
	struct fi_context sctx[2], rctx[2], mctx[2];
	uint8_t sbuf[2][64], rbuf[2][64] = { { 0 } };
	uint32_t marker = 0x4d524b, marker_in = 0;
	fi_addr_t src[2] = { FI_ADDR_NOTAVAIL, FI_ADDR_NOTAVAIL };
	bool ok;
	int ret;

	fill(sbuf[0], sizeof(sbuf[0]), 21);
	fill(sbuf[1], sizeof(sbuf[1]), 22);
	fx->guest[0] = c;
	/* A matches C's messages in order: once the marker is in, so are they. */
	ok = check_ret(fi_send(c->ep, sbuf[0], sizeof(sbuf[0]), NULL, a_in2, &sctx[0]), 0,
		       "C sends A a message before A knows C") &&
	     check_ret(fi_tsend(c->ep, sbuf[1], sizeof(sbuf[1]), NULL, a_in2, 0x77, &sctx[1]), 0,
		       "C sends A a tagged message before A knows C") &&
	     check_ret(fi_tsend(c->ep, &marker, sizeof(marker), NULL, a_in2, 0x78, &mctx[0]),
		       0, "C sends A a marker") &&
	     check_ret(fi_trecv(a->ep, &marker_in, sizeof(marker_in), NULL, FI_ADDR_UNSPEC,
				0x78, 0, &mctx[1]), 0, "A receives the marker from any source") &&
	     expect_comp(fx, a->rx_cq, &mctx[1], FI_RECV, NULL, NULL,
			 "A got the marker: C's two messages wait unexpected") &&
	     expect_comp_set(fx, c->tx_cq, (void *[]) { &sctx[0], &sctx[1], &mctx[0] }, 3,
			     "C's three sends complete");
	if (ok) {
		ret = fi_av_insert(fx->av, c->name, 1, c_in1, 0, NULL);
		ok = ft_check(ret == 1, "insert C into A's AV", "%d", ret) &&
		     check_ret(fi_recv(a->ep, rbuf[0], sizeof(rbuf[0]), NULL, *c_in1, &rctx[0]),
			       0, "A posts a receive directed at C") &&
		     check_ret(fi_trecv(a->ep, rbuf[1], sizeof(rbuf[1]), NULL, *c_in1, 0x77, 0,
					&rctx[1]), 0, "A posts a tagged receive directed at C");
	}
	ok = ok &&
	     expect_comp(fx, a->rx_cq, &rctx[0], FI_RECV, NULL, &src[0],
			 "a receive directed at C takes what C sent before joining A's AV") &&
	     expect_comp(fx, a->rx_cq, &rctx[1], FI_RECV, NULL, &src[1],
			 "a tagged receive directed at C takes what C sent before joining") &&
	     ft_check(src[0] == *c_in1 && src[1] == *c_in1,
		      "they name C as the source", "%llu and %llu, want %llu",
		      (unsigned long long) src[0], (unsigned long long) src[1],
		      (unsigned long long) *c_in1) &&
	     ft_check(payload_ok(rbuf[0], sizeof(rbuf[0]), 21, 0) &&
		      payload_ok(rbuf[1], sizeof(rbuf[1]), 22, 0),
		      "with C's bytes", "payload differs");
	fx->guest[0] = NULL;
	return ok;
}

/*
 * A second domain: its CQ and AV do not bind to the first domain's
 * endpoints; its endpoint C talks to A. A reports C as FI_ADDR_NOTAVAIL
 * until C is in A's AV.
 */
void test_second_domain(struct fixture *fx)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_domain *dom2 = NULL;
	struct fid_av *av2 = NULL;
	struct node *a = &fx->node[A], c = { 0 }, e = { 0 };
	fi_addr_t a_in2 = FI_ADDR_NOTAVAIL, c_in1 = FI_ADDR_NOTAVAIL;
	struct route r;
	int ret;

	if (!step(true, fi_domain(fx->fabric, fx->info, &dom2, NULL),
		  "second domain: fi_domain") ||
	    !step(true, fi_av_open(dom2, &av_attr, &av2, NULL), "second domain: fi_av_open") ||
	    !node_create(dom2, fx->info, &c, false, "endpoint C") ||
	    !node_create(fx->domain, fx->info, &e, false, "endpoint E"))
		goto out;
	ret = fi_ep_bind(e.ep, &c.tx_cq->fid, FI_TRANSMIT);
	ft_check(ret < 0, "binding another domain's CQ fails", "returned %d", ret);
	ret = fi_ep_bind(e.ep, &av2->fid, 0);
	ft_check(ret < 0, "binding another domain's AV fails", "returned %d", ret);
	if (!node_enable(av2, &c, 0, false, "endpoint C"))
		goto out;
	ret = fi_av_insert(av2, a->name, 1, &a_in2, 0, NULL);
	if (!ft_check(ret == 1, "second domain: insert A", "%d", ret))
		goto out;
	r = (struct route) { &c, a, a_in2, FI_ADDR_NOTAVAIL };
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 80, true, NULL, NULL },
		 "C to A, C not in A's AV (source FI_ADDR_NOTAVAIL)");
	if (!early_sender_joins(fx, &c, a, a_in2, &c_in1))
		goto out;
	r.src = c_in1;
	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 80, true, NULL, NULL },
		 "C to A, C now in A's AV");
	r = (struct route) { a, &c, c_in1, a_in2 };
	transfer(fx, &r, &(struct xfer) { find_op("fi_tsenddata"), 80, true, NULL, NULL },
		 "A to C across domains");
out:
	node_close(&e, false, "endpoint E");
	node_close(&c, false, "endpoint C");
	if (av2)
		step(true, fi_close(&av2->fid), "second domain: fi_close(av)");
	if (dom2)
		step(true, fi_close(&dom2->fid), "second domain: fi_close(domain)");
}

/* fx->info with caps: FI_SOURCE_ERR asked for, or not. */
static struct fi_info *info_with(const struct fixture *fx, uint64_t caps)
{
	struct fi_info *hints = fi_dupinfo(fx->info), *info = NULL;

	if (!hints)
		return NULL;
	hints->caps = caps;
	if (fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info))
		info = NULL;
	fi_freeinfo(hints);
	return info;
}

/*
 * FI_SOURCE_ERR (fi_cq(3)), given only when asked for: a message from a
 * sender outside the receiver's AV completes as an FI_EADDRNOTAVAIL
 * error entry, its data delivered, its err_data the sender's address,
 * which fi_av_insert takes; the sender's next message then names it. A
 * peek that finds and drops such a message says so too; counters count
 * them all as done.
 */
void test_source_err(struct fixture *fx)
{
	const uint64_t caps = FI_MSG | FI_TAGGED | FI_SOURCE;
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_info *plain = info_with(fx, caps), *info = info_with(fx, caps | FI_SOURCE_ERR);
	struct node *a = &fx->node[A], *b = &fx->node[B], r = { 0 };
	struct fid_av *av = NULL;
	struct fi_context sctx, rctx;
	struct fi_cq_err_entry err;
	uint8_t sbuf[64], rbuf[64] = { 0 }, addr[NAME_MAX_LEN];
	fi_addr_t r_in_a = FI_ADDR_NOTAVAIL, a_in_r = FI_ADDR_NOTAVAIL, src = FI_ADDR_NOTAVAIL;
	struct fid_ep *bad = NULL;
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	char text[128] = "";

	if (!ft_check(plain && info, "fi_getinfo with and without FI_SOURCE_ERR", "%p %p",
		      (void *) plain, (void *) info))
		goto out;
	ft_check(!(plain->caps & FI_SOURCE_ERR) && !(fx->info->caps & FI_SOURCE_ERR) &&
		 (info->caps & (FI_SOURCE | FI_SOURCE_ERR)) == (FI_SOURCE | FI_SOURCE_ERR),
		 "FI_SOURCE_ERR only when asked for, with FI_SOURCE", "caps %s",
		 fi_tostr(&info->caps, FI_TYPE_CAPS));
	info->caps &= ~(uint64_t) FI_SOURCE;
	check_ret(fi_endpoint(fx->domain, info, &bad, NULL), -FI_EINVAL,
		  "fi_endpoint with FI_SOURCE_ERR but not FI_SOURCE: -FI_EINVAL");
	info->caps |= FI_SOURCE;
	if (!check_ret(fi_av_open(fx->domain, &av_attr, &av, NULL), 0, "fi_av_open") ||
	    !check_ret(fi_cntr_open(fx->domain, &cntr_attr, &r.rx_cntr, NULL), 0,
		       "R's receive counter") ||
	    !node_create(fx->domain, info, &r, false, "endpoint R") ||
	    !node_enable(av, &r, 0, false, "endpoint R") ||
	    !check_ret(fi_av_insert(fx->av, r.name, 1, &r_in_a, 0, NULL), 1, "insert R in A's AV"))
		goto out;
	fx->guest[0] = &r;
	fill(sbuf, sizeof(sbuf), 31);
	if (!check_ret(fi_trecv(r.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x31, 0, &rctx),
		       0, "R posts a receive") ||
	    !check_ret(fi_tsend(a->ep, sbuf, sizeof(sbuf), NULL, r_in_a, 0x31, &sctx), 0,
		       "A, outside R's AV, sends") ||
	    !expect_err(fx, r.rx_cq, &rctx, FI_EADDRNOTAVAIL, &err, addr, sizeof(addr),
			"R's entry: FI_EADDRNOTAVAIL"))
		goto out;
	ft_check(err.flags == (FI_RECV | FI_TAGGED) && err.len == sizeof(sbuf) &&
		 err.tag == 0x31 && payload_ok(rbuf, sizeof(rbuf), 31, 0),
		 "the message is delivered and described", "flags %#llx len %zu tag %#llx",
		 (unsigned long long) err.flags, err.len, (unsigned long long) err.tag);
	ft_check(err.err_data == addr && err.err_data_size == a->namelen &&
		 !memcmp(addr, a->name, a->namelen), "err_data is A's address",
		 "%zu bytes, want %zu", err.err_data_size, a->namelen);
	ft_check(!strcmp(fi_cq_strerror(r.rx_cq, err.prov_errno, err.err_data, text,
					sizeof(text)), fi_strerror(FI_EADDRNOTAVAIL)),
		 "fi_cq_strerror of it names the error, not the address's bytes", "\"%s\"", text);
	if (!expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL, "A's send completes") ||
	    !check_ret(fi_av_insert(av, err.err_data, 1, &a_in_r, 0, NULL), 1,
		       "R inserts the address it was given") ||
	    !check_ret(fi_trecv(r.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC, 0x32, 0, &rctx),
		       0, "R posts another receive") ||
	    !check_ret(fi_tsend(a->ep, sbuf, sizeof(sbuf), NULL, r_in_a, 0x32, &sctx), 0,
		       "A sends again") ||
	    !expect_comp(fx, r.rx_cq, &rctx, FI_RECV, NULL, &src, "R's entry: a completion"))
		goto out;
	ft_check(src == a_in_r, "it names A by R's AV", "%llu want %llu",
		 (unsigned long long) src, (unsigned long long) a_in_r);
	if (!expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL, "A's second send completes") ||
	    !check_ret(fi_tsend(b->ep, sbuf, sizeof(sbuf), NULL, r_in_a, 0x33, &sctx), 0,
		       "B, outside R's AV, sends with no receive posted") ||
	    !expect_comp(fx, b->tx_cq, &sctx, FI_SEND, NULL, NULL, "B's send completes") ||
	    !check_ret(search(&r, NULL, 0, 0x33, &rctx, FI_PEEK | FI_DISCARD), 0,
		       "R: FI_PEEK | FI_DISCARD") ||
	    !expect_err(fx, r.rx_cq, &rctx, FI_EADDRNOTAVAIL, &err, addr, sizeof(addr),
			"the message it finds and drops: FI_EADDRNOTAVAIL"))
		goto out;
	ft_check(err.err_data_size == b->namelen && !memcmp(addr, b->name, b->namelen) &&
		 err.tag == 0x33, "with B's address", "%zu bytes, tag %#llx", err.err_data_size,
		 (unsigned long long) err.tag);
	ft_check(fi_cntr_read(r.rx_cntr) == 3 && fi_cntr_readerr(r.rx_cntr) == 0,
		 "R's counter counts the three as done", "%llu done, %llu errors",
		 (unsigned long long) fi_cntr_read(r.rx_cntr),
		 (unsigned long long) fi_cntr_readerr(r.rx_cntr));
out:
	fx->guest[0] = NULL;
	if (bad)
		fi_close(&bad->fid);
	node_close(&r, false, "endpoint R");
	if (av)
		check_ret(fi_close(&av->fid), 0, "fi_close(R's AV)");
	fi_freeinfo(plain);
	fi_freeinfo(info);
}
