/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: tag matching, directed and unexpected receives, truncation, cancel (see api.h). */
#include "api.h"

/* Posted tag 0x1200 ignore 0xff takes 0x12ab and leaves 0x13ab. */
void test_tag_ignore(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	const uint64_t tags[2] = { 0x13ab, 0x12ab };
	uint8_t tx[2][32], rx[2][32];
	struct fi_context rctx[2], sctx[2];
	void *sctxs[2] = { &sctx[0], &sctx[1] };
	struct fi_cq_tagged_entry e;
	unsigned seed[2];
	ssize_t ret;

	seed[0] = ++g_seed;
	seed[1] = ++g_seed;
	memset(rx, 0, sizeof(rx));
	ret = fi_trecv(b->ep, rx[0], sizeof(rx[0]), NULL, FI_ADDR_UNSPEC, 0x1200, 0xff,
		       &rctx[0]);
	if (!check_ret(ret, 0, "fi_trecv tag 0x1200 ignore 0xff"))
		return;
	/* The message that must not match goes first. */
	for (int i = 0; i < 2; i++) {
		fill(tx[i], sizeof(tx[i]), seed[i]);
		ret = fi_tsend(a->ep, tx[i], sizeof(tx[i]), NULL, b->addr, tags[i], &sctx[i]);
		check_ret(ret, 0, i ? "fi_tsend tag 0x12ab" : "fi_tsend tag 0x13ab");
	}
	if (expect_comp(fx, b->rx_cq, &rctx[0], FI_RECV | FI_TAGGED, &e, NULL,
			"the masked receive completes"))
		ft_check(e.tag == 0x12ab && payload_ok(rx[0], 32, seed[1], 0),
			 "the masked receive took 0x12ab, not 0x13ab", "tag %#llx",
			 (unsigned long long) e.tag);
	else
		abandon_recv(fx, b, &rctx[0]);
	ret = fi_trecv(b->ep, rx[1], sizeof(rx[1]), NULL, FI_ADDR_UNSPEC, 0x13ab, 0,
		       &rctx[1]);
	check_ret(ret, 0, "fi_trecv tag 0x13ab exactly");
	if (!ret && expect_comp(fx, b->rx_cq, &rctx[1], FI_RECV | FI_TAGGED, &e, NULL,
				"0x13ab waited for its own receive"))
		ft_check(e.tag == 0x13ab && payload_ok(rx[1], 32, seed[0], 0),
			 "0x13ab delivered intact", "tag %#llx", (unsigned long long) e.tag);
	else if (!ret)
		abandon_recv(fx, b, &rctx[1]);
	expect_comp_set(fx, a->tx_cq, sctxs, 2, "both tagged sends complete");
}

/*
 * FI_DIRECTED_RECV: B posts a receive directed at A, then a wildcard one.
 * B's own message (self-send) must skip the first and land in the second;
 * A's message then takes the first.
 */
void test_directed(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];

	for (int tagged = 0; tagged < 2; tagged++) {
		const char *kind = tagged ? "tagged" : "untagged";
		struct route from_b = fx_route(fx, B, B), from_a = fx_route(fx, A, B);
		struct route *routes[2] = { &from_b, &from_a };
		uint8_t tx[2][48], rx[2][48];
		struct fi_context rctx[2], sctx[2];
		struct fi_cq_tagged_entry e;
		unsigned seed[2];
		char prefix[64];
		fi_addr_t src;
		ssize_t ret;

		seed[0] = ++g_seed;
		seed[1] = ++g_seed;
		memset(rx, 0, sizeof(rx));
		snprintf(prefix, sizeof(prefix), "directed receive (%s)", kind);
		ret = post_recv(b->ep, rx[0], 48, a->addr, tagged, 7, 0, &rctx[0]);
		check_ret(ret, 0, nm(prefix, "post receive from A only"));
		ret = post_recv(b->ep, rx[1], 48, FI_ADDR_UNSPEC, tagged, 7, 0, &rctx[1]);
		check_ret(ret, 0, nm(prefix, "post wildcard receive"));
		for (int i = 0; i < 2; i++) {
			struct route *r = routes[i];
			/* Message i lands in receive 1 - i. */
			int want = 1 - i;

			fill(tx[i], 48, seed[i]);
			ret = tagged ?
			      fi_tsend(r->from->ep, tx[i], 48, NULL, r->dest, 7, &sctx[i]) :
			      fi_send(r->from->ep, tx[i], 48, NULL, r->dest, &sctx[i]);
			check_ret(ret, 0, nm(prefix, i ? "A sends" : "B sends to itself"));
			if (!expect_comp(fx, b->rx_cq, &rctx[want], FI_RECV, &e, &src,
					 nm(prefix, i ?
					    "A's message takes the receive directed at A" :
					    "B's message skips the receive directed at A")))
				continue;
			ft_check(src == r->src && payload_ok(rx[want], 48, seed[i], 0),
				 nm(prefix, i ? "A's message: source and payload" :
				    "B's message: source and payload"),
				 "source %#llx (want %#llx)", (unsigned long long) src,
				 (unsigned long long) r->src);
			expect_comp(fx, r->from->tx_cq, &sctx[i], FI_SEND, NULL, NULL,
				    nm(prefix, i ? "A's send completes" : "B's send completes"));
		}
		abandon_recv(fx, b, &rctx[0]);
		abandon_recv(fx, b, &rctx[1]);
	}
}

/*
 * Unexpected messages: A sends an untagged and a tagged message before B
 * posts anything for them; a marker B did post for shows they arrived.
 * A tagged any-tag receive then takes the tagged one (never the untagged
 * one), an untagged receive the untagged one.
 */
void test_unexpected(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	uint8_t tx[2][300], rx[2][300];
	struct fi_context rctx[2], sctx[2];
	struct fi_cq_tagged_entry e;
	struct marker m;
	void *sctxs[3] = { &sctx[0], &sctx[1], &m.sctx };
	unsigned seed[2];
	ssize_t ret;

	seed[0] = ++g_seed;
	seed[1] = ++g_seed;
	memset(rx, 0, sizeof(rx));
	fill(tx[0], 300, seed[0]);
	fill(tx[1], 300, seed[1]);
	ret = fi_send(a->ep, tx[0], 300, NULL, b->addr, &sctx[0]);
	check_ret(ret, 0, "unexpected: fi_send before any receive");
	ret = fi_tsend(a->ep, tx[1], 300, NULL, b->addr, 0x77, &sctx[1]);
	check_ret(ret, 0, "unexpected: fi_tsend before any receive");
	if (!post_marker(&r, &m, "unexpected"))
		return;
	if (!expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV | FI_TAGGED, NULL, NULL,
			 "unexpected: marker received after both"))
		abandon_recv(fx, b, &m.rctx);
	ret = fi_trecv(b->ep, rx[1], 300, NULL, FI_ADDR_UNSPEC, 0, ~0ULL, &rctx[1]);
	check_ret(ret, 0, "unexpected: post a tagged any-tag receive");
	if (!ret && expect_comp(fx, b->rx_cq, &rctx[1], FI_RECV | FI_TAGGED, &e, NULL,
				"unexpected: the tagged receive completes"))
		ft_check(e.tag == 0x77 && e.len == 300 && payload_ok(rx[1], 300, seed[1], 0),
			 "unexpected: it took the tagged message", "tag %#llx len %zu",
			 (unsigned long long) e.tag, e.len);
	else if (!ret)
		abandon_recv(fx, b, &rctx[1]);
	ret = fi_recv(b->ep, rx[0], 300, NULL, FI_ADDR_UNSPEC, &rctx[0]);
	check_ret(ret, 0, "unexpected: post an untagged receive");
	if (!ret && expect_comp(fx, b->rx_cq, &rctx[0], FI_RECV | FI_MSG, &e, NULL,
				"unexpected: the untagged receive completes"))
		ft_check(e.len == 300 && payload_ok(rx[0], 300, seed[0], 0),
			 "unexpected: it took the untagged message", "len %zu", e.len);
	else if (!ret)
		abandon_recv(fx, b, &rctx[0]);
	expect_comp_set(fx, a->tx_cq, sctxs, 3, "unexpected: all three sends complete");
}

/*
 * Among posted receives that all match, the oldest takes the message:
 * untagged, and tagged with an any-tag receive posted before an exact one.
 */
void test_posted_order(struct fixture *fx)
{
	struct node *b = &fx->node[B];

	for (int tagged = 0; tagged < 2; tagged++) {
		const struct send_op *op = find_op(tagged ? "fi_tsend" : "fi_send");
		uint64_t tag = TAG_BASE | 64;
		struct route r = fx_route(fx, A, B);
		struct fi_context rctx[2];
		uint8_t rx[2][64];
		struct fi_cq_tagged_entry e;
		char prefix[64];
		ssize_t ret;

		memset(rx, 0, sizeof(rx));
		for (int i = 0; i < 2; i++) {
			snprintf(prefix, sizeof(prefix), "posted order (%s), receive %d",
				 tagged ? "tagged, any tag first" : "untagged", i + 1);
			/* The first tagged receive takes any tag, the second only tag. */
			ret = post_recv(b->ep, rx[i], 64, FI_ADDR_UNSPEC, tagged, tag,
					i == 0 ? ~0ULL : 0, &rctx[i]);
			check_ret(ret, 0, nm(prefix, "post"));
		}
		for (int i = 0; i < 2; i++) {
			struct fi_context sctx;
			uint8_t tx[64];

			snprintf(prefix, sizeof(prefix), "posted order (%s), message %d",
				 tagged ? "tagged, any tag first" : "untagged", i + 1);
			fill(tx, 64, ++g_seed);
			ret = op->post(r.from->ep, tx, 64, NULL, r.dest, tag, 0, &sctx);
			check_ret(ret, 0, nm(prefix, "send"));
			if (expect_comp(fx, b->rx_cq, &rctx[i], FI_RECV, &e, NULL,
					nm(prefix, "goes to the oldest matching receive")))
				ft_check(payload_ok(rx[i], 64, g_seed, 0), nm(prefix, "payload"),
					 "payload mismatch");
			expect_comp(fx, r.from->tx_cq, &sctx, FI_SEND, NULL, NULL,
				    nm(prefix, "send completes"));
		}
		abandon_recv(fx, b, &rctx[0]);
		abandon_recv(fx, b, &rctx[1]);
	}
}

/*
 * A 100-byte message into a 64-byte receive: an FI_ETRUNC error entry with
 * len 64 and olen 36 whose err_data text fi_cq_strerror returns; the first
 * 64 bytes are delivered. unexpected: the message arrives before the
 * receive is posted.
 */
static void truncation(struct fixture *fx, bool unexpected)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct route r = fx_route(fx, A, B);
	const char *prefix = unexpected ? "truncation (unexpected)" : "truncation (posted)";
	uint8_t tx[100], rx[100];
	char data[256], text[256];
	unsigned seed = ++g_seed;
	struct fi_context rctx, sctx;
	struct fi_cq_err_entry err;
	struct marker m;
	void *sctxs[2] = { &sctx, &m.sctx };
	const char *str;
	ssize_t ret;

	fill(tx, sizeof(tx), seed);
	memset(rx, 0, sizeof(rx));
	if (!unexpected) {
		ret = fi_recv(b->ep, rx, 64, NULL, FI_ADDR_UNSPEC, &rctx);
		check_ret(ret, 0, nm(prefix, "post a 64-byte receive"));
	}
	ret = fi_send(a->ep, tx, 100, NULL, b->addr, &sctx);
	check_ret(ret, 0, nm(prefix, "send 100 bytes"));
	if (unexpected) {
		if (post_marker(&r, &m, prefix) &&
		    !expect_comp(fx, b->rx_cq, &m.rctx, FI_RECV, NULL, NULL,
				 nm(prefix, "marker received after the message")))
			abandon_recv(fx, b, &m.rctx);
		ret = fi_recv(b->ep, rx, 64, NULL, FI_ADDR_UNSPEC, &rctx);
		check_ret(ret, 0, nm(prefix, "post a 64-byte receive"));
	}
	if (expect_err(fx, b->rx_cq, &rctx, FI_ETRUNC, &err, data, sizeof(data),
		       nm(prefix, "FI_ETRUNC error entry"))) {
		ft_check(err.len == 64 && err.olen == 36 && (err.flags & FI_RECV),
			 nm(prefix, "len 64, olen 36, FI_RECV"), "len %zu olen %zu flags %#llx",
			 err.len, err.olen, (unsigned long long) err.flags);
		ft_check(payload_ok(rx, 64, seed, 0) && payload_ok(rx + 64, 0, 0, 36),
			 nm(prefix, "the first 64 bytes delivered, no more"), "payload mismatch");
		ft_check(err.err_data == data && err.err_data_size > 1 &&
			 err.err_data_size <= sizeof(data) && memchr(data, 0, err.err_data_size),
			 nm(prefix, "err_data copied into the offered buffer"),
			 "err_data %p (offered %p), size %zu", err.err_data, (void *) data,
			 err.err_data_size);
		str = fi_cq_strerror(b->rx_cq, err.prov_errno, err.err_data, text,
				     sizeof(text));
		ft_check(str && *str, nm(prefix, "fi_cq_strerror gives the text"), "%s",
			 str ? "empty string" : "NULL");
		if (str && *str)
			printf("     (text: \"%s\")\n", str);
	} else {
		abandon_recv(fx, b, &rctx);
	}
	expect_comp_set(fx, a->tx_cq, sctxs, unexpected ? 2 : 1,
			nm(prefix, "the send itself succeeds"));
	expect_empty(b->rx_cq, nm(prefix, "nothing else on the rx CQ"));
}

void test_truncation(struct fixture *fx)
{
	truncation(fx, false);
	truncation(fx, true);
}

/*
 * fi_cancel of a posted receive: FI_ECANCELED without provider data (the
 * application asked for it); of an unknown one: -FI_ENOENT.
 */
void test_cancel(struct fixture *fx)
{
	struct node *b = &fx->node[B];

	for (int tagged = 0; tagged < 2; tagged++) {
		const char *prefix = tagged ? "cancel (tagged)" : "cancel (untagged)";
		struct fi_context rctx, unknown;
		struct fi_cq_err_entry err;
		uint8_t rx[64];
		ssize_t ret;

		memset(rx, 0xcc, sizeof(rx));
		ret = post_recv(b->ep, rx, sizeof(rx), FI_ADDR_UNSPEC, tagged, TAG_BASE | 32,
				0, &rctx);
		check_ret(ret, 0, nm(prefix, "post receive"));
		ret = fi_cancel(&b->ep->fid, &rctx);
		check_ret(ret, 0, nm(prefix, "fi_cancel of the posted receive"));
		if (expect_err_no_data(fx, b->rx_cq, &rctx, FI_ECANCELED, &err,
				       nm(prefix, "FI_ECANCELED error entry")))
			ft_check(err.flags & FI_RECV, nm(prefix, "entry flags include FI_RECV"),
				 "flags %#llx", (unsigned long long) err.flags);
		ret = fi_cancel(&b->ep->fid, &rctx);
		check_ret(ret, -FI_ENOENT, nm(prefix, "second fi_cancel: -FI_ENOENT"));
		ret = fi_cancel(&b->ep->fid, &unknown);
		check_ret(ret, -FI_ENOENT,
			  nm(prefix, "fi_cancel of an unknown context: -FI_ENOENT"));
		struct route r = fx_route(fx, A, B);
		char later[64];

		snprintf(later, sizeof(later), "%s: a later message", prefix);
		transfer(fx, &r, &(struct xfer) { find_op(tagged ? "fi_tsend" : "fi_send"),
						  32, true, NULL, NULL }, later);
		ft_check(rx[0] == 0xcc && !memcmp(rx, rx + 1, sizeof(rx) - 1),
			 nm(prefix, "the canceled buffer is untouched"), "buffer was written");
	}
}

/*
 * A's tx CQ is bound with FI_SELECTIVE_COMPLETION: fi_send and fi_sendmsg
 * without FI_COMPLETION write nothing, fi_sendmsg with it does.
 */
void test_selective(struct fixture *fx)
{
	struct route r = fx_route(fx, A, B);

	transfer(fx, &r, &(struct xfer) { find_op("fi_send"), 50, false, NULL, NULL },
		 "selective: fi_send without FI_COMPLETION");
	transfer(fx, &r,
		 &(struct xfer) { find_op("fi_sendmsg (flags 0)"), 50, false, NULL, NULL },
		 "selective: fi_sendmsg flags 0");
	transfer(fx, &r, &(struct xfer) { find_op("fi_sendmsg"), 50, true, NULL, NULL },
		 "selective: fi_sendmsg FI_COMPLETION");
	transfer(fx, &r, &(struct xfer) { find_op("fi_tsendmsg"), 50, true, NULL, NULL },
		 "selective: fi_tsendmsg FI_COMPLETION");
}
