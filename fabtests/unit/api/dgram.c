/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Datagram endpoints (FI_EP_DGRAM): A and B of a fixture opened with
 * .dgram. What fi_getinfo offers, messages with remote CQ data and
 * FI_SOURCE, datagrams that wait for a receive, directed receives,
 * truncation, the size limit, datagrams no rdmx endpoint sent, and loss
 * the application sees.
 */
#include <arpa/inet.h>

#include "api.h"

/* The first byte of each test datagram's payload after its number. */
#define DG_FILL		0x5a

/* Whether a fi_getinfo of ep type (FI_EP_UNSPEC: none) lists a DGRAM entry. */
static bool dgram_offered(enum fi_ep_type type, bool *layered)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	bool found = false;

	*layered = false;
	if (!hints)
		return false;
	hints->ep_attr->type = type;
	if (fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info) == 0) {
		for (struct fi_info *i = info; i; i = i->next) {
			const char *prov = i->fabric_attr->prov_name;

			if (!prov || strncmp(prov, "rdmx", 4))
				continue;
			found |= i->ep_attr->type == FI_EP_DGRAM;
			/* "rdmx;ofi_rxd": a utility provider over rdmx's datagrams. */
			*layered |= strchr(prov, ';') != NULL;
		}
	}
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return found;
}

/* Whether a DGRAM query asking FI_DELIVERY_COMPLETE finds rdmx. */
static bool dgram_delivery_offered(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return false;
	hints->ep_attr->type = FI_EP_DGRAM;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	hints->fabric_attr->prov_name = strdup("rdmx");
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, &info);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return ret == 0;
}

void test_dgram_info(struct fixture *fx)
{
	const struct fi_info *info = fx->info;
	bool layered;

	ft_check(info->ep_attr->type == FI_EP_DGRAM, "the entry is FI_EP_DGRAM", "type %d",
		 info->ep_attr->type);
	ft_check(info->ep_attr->max_msg_size >= 1000 && info->ep_attr->max_msg_size < 65536,
		 "max_msg_size is one datagram's", "%zu", info->ep_attr->max_msg_size);
	ft_check(!(info->caps & (FI_TAGGED | FI_RMA | FI_ATOMIC | FI_MULTI_RECV)) &&
		 (info->caps & FI_MSG) && (info->caps & FI_SOURCE),
		 "caps: FI_MSG and FI_SOURCE, no tagged, RMA, atomics or multi-receive",
		 "%s", fi_tostr(&info->caps, FI_TYPE_CAPS));
	ft_check(info->tx_attr->inject_size <= info->ep_attr->max_msg_size &&
		 info->tx_attr->iov_limit == 4 && info->rx_attr->iov_limit == 4 &&
		 info->tx_attr->msg_order == FI_ORDER_NONE &&
		 info->rx_attr->msg_order == FI_ORDER_NONE,
		 "inject_size within max_msg_size, 4 iovs, no order",
		 "inject %zu max %zu iov %zu/%zu order %#llx/%#llx", info->tx_attr->inject_size,
		 info->ep_attr->max_msg_size, info->tx_attr->iov_limit, info->rx_attr->iov_limit,
		 (unsigned long long) info->tx_attr->msg_order,
		 (unsigned long long) info->rx_attr->msg_order);
	ft_check(!dgram_delivery_offered(), "FI_DELIVERY_COMPLETE is not offered",
		 "fi_getinfo offered it");
	ft_check(!dgram_offered(FI_EP_UNSPEC, &layered),
		 "no FI_EP_DGRAM entry unless asked for", "one was offered");
	ft_check(!dgram_offered(FI_EP_RDM, &layered) && !layered,
		 "FI_EP_RDM: no utility provider layered over rdmx", "one was offered");
	ft_check(dgram_offered(FI_EP_DGRAM, &layered) && !layered,
		 "FI_EP_DGRAM asked for: rdmx's own entries", "none, or a layered one");
}

/* The endpoint's counters (zeros when they cannot be read, which fails). */
static struct fi_rdmx_ep_stats dg_stats(struct fid_ep *ep)
{
	struct fi_rdmx_ep_ops *ops = NULL;
	struct fi_rdmx_ep_stats stats = { 0 };

	ft_check(!fi_open_ops(&ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) && ops &&
		 !ops->query_stats(ep, &stats), "the endpoint's counters", "unreadable");
	return stats;
}

/* Posts a receive of len bytes at buf from src at b, checking the call. */
static bool dg_recv(struct node *b, void *buf, size_t len, fi_addr_t src, void *ctx,
		    const char *name)
{
	return check_ret(fi_recv(b->ep, buf, len, NULL, src, ctx), 0, name);
}

/* Takes what cq holds; returns how many entries. */
static size_t drain(struct fid_cq *cq)
{
	struct fi_cq_tagged_entry e[16];
	size_t n = 0;
	ssize_t ret;

	while ((ret = fi_cq_read(cq, e, ARRAY_SIZE(e))) > 0)
		n += (size_t) ret;
	return n;
}

/*
 * Sends len bytes from a to b, numbered seq; out of room (FI_EAGAIN), it
 * takes a's send completions and tries again.
 */
static ssize_t dg_send(struct node *a, struct node *b, uint8_t *buf, size_t len,
		       uint32_t seq, void *ctx)
{
	int64_t end = now_ms() + WAIT_MS;
	ssize_t ret;

	memset(buf, DG_FILL, len);
	memcpy(buf, &seq, len < sizeof(seq) ? len : sizeof(seq));
	do {
		ret = fi_send(a->ep, buf, len, NULL, b->addr, ctx);
		if (ret == -FI_EAGAIN)
			drain(a->tx_cq);
	} while (ret == -FI_EAGAIN && now_ms() < end);
	return ret;
}

/* Remote CQ data, FI_SOURCE, inject, gather and scatter. */
void test_dgram_msg(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;
	uint8_t tx[256], rx[256], part[2][100];
	struct iovec txv[3] = { { tx, 10 }, { tx + 10, 0 }, { tx + 10, 140 } };
	struct iovec rxv[2] = { { part[0], 100 }, { part[1], 100 } };
	fi_addr_t src;

	fill(tx, sizeof(tx), 7);
	memset(rx, 0, sizeof(rx));
	dg_recv(b, rx, sizeof(rx), FI_ADDR_UNSPEC, &rctx, "post a receive");
	check_ret(fi_senddata(a->ep, tx, 200, NULL, DATA_BASE | 9, b->addr, &sctx), 0,
		  "fi_senddata");
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL, "send completion");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV | FI_MSG | FI_REMOTE_CQ_DATA, &e, &src,
			"receive completion with FI_REMOTE_CQ_DATA")) {
		ft_check(e.len == 200 && e.data == (DATA_BASE | 9) && !memcmp(rx, tx, 200),
			 "length, CQ data and bytes", "len %zu data %#llx", e.len,
			 (unsigned long long) e.data);
		ft_check(src == a->addr, "FI_SOURCE names the sender", "src %llu want %llu",
			 (unsigned long long) src, (unsigned long long) a->addr);
	}

	dg_recv(b, rx, sizeof(rx), FI_ADDR_UNSPEC, &rctx, "post a receive for fi_inject");
	check_ret(fi_inject(a->ep, tx, 64, b->addr), 0, "fi_inject");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, NULL, "fi_inject arrives"))
		ft_check(e.len == 64 && !(e.flags & FI_REMOTE_CQ_DATA) && !memcmp(rx, tx, 64),
			 "fi_inject's bytes, no CQ data", "len %zu flags %#llx", e.len,
			 (unsigned long long) e.flags);
	expect_empty(a->tx_cq, "fi_inject writes no send completion");

	{
		struct iovec iov = { tx, 32 };
		struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .addr = b->addr };
		uint8_t keep[32];

		memcpy(keep, tx, sizeof(keep));
		dg_recv(b, rx, sizeof(rx), FI_ADDR_UNSPEC, &rctx, "post a receive for FI_INJECT | FI_MORE");
		check_ret(fi_sendmsg(a->ep, &msg, FI_INJECT | FI_MORE), 0,
			  "fi_sendmsg with FI_INJECT | FI_MORE");
		memset(tx, 0, 32);
		expect_comp(fx, a->tx_cq, NULL, FI_SEND, NULL, NULL, "its send completion");
		if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, NULL,
				"it goes out with the next progress"))
			ft_check(e.len == 32 && !memcmp(rx, keep, 32),
				 "its bytes as they were when it was posted", "len %zu", e.len);
		memcpy(tx, keep, sizeof(keep));
		check_ret(fi_sendmsg(a->ep, &msg, FI_DELIVERY_COMPLETE), -FI_EBADFLAGS,
			  "FI_DELIVERY_COMPLETE: -FI_EBADFLAGS");
	}

	check_ret(fi_recvv(b->ep, rxv, NULL, 2, FI_ADDR_UNSPEC, &rctx), 0, "fi_recvv of 2 parts");
	check_ret(fi_sendv(a->ep, txv, NULL, 3, b->addr, &sctx), 0, "fi_sendv of 3 parts");
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL, "fi_sendv completes");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, NULL, "fi_recvv completes"))
		ft_check(e.len == 150 && !memcmp(part[0], tx, 100) &&
			 !memcmp(part[1], tx + 100, 50), "gathered and scattered in order",
			 "len %zu", e.len);
}

/*
 * Datagrams that come before their receives wait for them, and directed
 * receives take only their sender's.
 */
void test_dgram_held(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_context sctx[3], rctx[3], dctx;
	struct fi_cq_tagged_entry e;
	uint8_t tx[3][64], rx[3][64], dir[64];
	bool seen[3] = { false };

	for (uint32_t i = 0; i < 3; i++) {
		check_ret(dg_send(a, b, tx[i], sizeof(tx[i]), i, &sctx[i]), 0,
			  "send before any receive");
		expect_comp(fx, a->tx_cq, &sctx[i], FI_SEND, NULL, NULL, "its send completion");
	}
	/* Let them land in B's buffers first. */
	for (int64_t end = now_ms() + 200; now_ms() < end;)
		(void) fi_cq_read(b->rx_cq, NULL, 0);
	/* B's own address never sends to B: a receive directed there waits. */
	dg_recv(b, dir, sizeof(dir), b->addr, &dctx, "a receive directed to another sender");
	for (int i = 0; i < 3; i++)
		dg_recv(b, rx[i], sizeof(rx[i]), a->addr, &rctx[i], "a receive directed to A");
	for (int i = 0; i < 3; i++) {
		uint32_t seq;

		if (!expect_comp(fx, b->rx_cq, &rctx[i], FI_RECV, &e, NULL,
				 "a held datagram, in the order they came"))
			break;
		memcpy(&seq, rx[i], sizeof(seq));
		if (seq < 3)
			seen[seq] = true;
	}
	ft_check(seen[0] && seen[1] && seen[2], "each of the three once", "%d %d %d",
		 seen[0], seen[1], seen[2]);
	expect_empty(b->rx_cq, "the directed receive took none of A's");
	check_ret(fi_cancel(&b->ep->fid, &dctx), 0, "fi_cancel of the directed receive");
	{
		struct fi_cq_err_entry err;

		expect_err(fx, b->rx_cq, &dctx, FI_ECANCELED, &err, NULL, 0,
			   "FI_ECANCELED for it");
	}
	check_ret(fi_cancel(&b->ep->fid, &dctx), -FI_ENOENT, "a second fi_cancel: -FI_ENOENT");
	/* Closed with two datagrams held and a receive posted (ASan, valgrind). */
	dg_recv(b, dir, sizeof(dir), b->addr, &dctx, "a receive left posted at close");
	for (uint32_t i = 0; i < 2; i++)
		check_ret(dg_send(a, b, tx[i], sizeof(tx[i]), i, &sctx[i]), 0,
			  "a datagram left held at close");
	for (int64_t end = now_ms() + 100; now_ms() < end;) {
		drain(a->tx_cq);
		(void) fi_cq_read(b->rx_cq, NULL, 0);
	}
}

/* A datagram longer than its receive: FI_ETRUNC, what fits copied. */
void test_dgram_truncation(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_context sctx, rctx;
	struct fi_cq_err_entry err;
	uint8_t tx[100], rx[16];

	fill(tx, sizeof(tx), 3);
	memset(rx, 0, sizeof(rx));
	dg_recv(b, rx, 8, FI_ADDR_UNSPEC, &rctx, "post an 8-byte receive");
	check_ret(fi_send(a->ep, tx, sizeof(tx), NULL, b->addr, &sctx), 0, "send 100 bytes");
	if (expect_err(fx, b->rx_cq, &rctx, FI_ETRUNC, &err, NULL, 0, "FI_ETRUNC"))
		ft_check(err.olen == 92 && err.len == 8 && !memcmp(rx, tx, 8) && !rx[8],
			 "olen 92, the first 8 bytes and no more", "olen %zu len %zu",
			 err.olen, err.len);
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL, "the send completes");
}

/* The size limit, and the calls a datagram endpoint does not offer. */
void test_dgram_limits(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	size_t max = fx->info->ep_attr->max_msg_size;
	uint8_t *tx = xmalloc(max + 1), *rx = xmalloc(max + 1);
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;

	check_ret(fi_send(a->ep, tx, max + 1, NULL, b->addr, &sctx), -FI_EMSGSIZE,
		  "max_msg_size + 1 bytes: -FI_EMSGSIZE");
	check_ret(fi_send(a->ep, tx, 8, NULL, 1000, &sctx), -FI_EINVAL,
		  "an fi_addr never inserted: -FI_EINVAL");
	{
		struct iovec iov[5];

		for (int i = 0; i < 5; i++)
			iov[i] = (struct iovec) { tx + i, 1 };
		check_ret(fi_sendv(a->ep, iov, NULL, 5, b->addr, &sctx), -FI_EINVAL,
			  "fi_sendv of iov_limit + 1: -FI_EINVAL");
		check_ret(fi_recvv(b->ep, iov, NULL, 5, FI_ADDR_UNSPEC, &rctx), -FI_EINVAL,
			  "fi_recvv of iov_limit + 1: -FI_EINVAL");
	}
	ft_check(fi_tsend(a->ep, tx, 8, NULL, b->addr, 1, &sctx) < 0,
		 "fi_tsend fails", "it was accepted");
	ft_check(fi_write(a->ep, tx, 8, NULL, b->addr, 0, 0, &sctx) < 0,
		 "fi_write fails", "it was accepted");
	fill(tx, max, 11);
	dg_recv(b, rx, max + 1, FI_ADDR_UNSPEC, &rctx, "post a receive of max_msg_size + 1");
	check_ret(fi_send(a->ep, tx, max, NULL, b->addr, &sctx), 0, "send max_msg_size bytes");
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND, NULL, NULL, "it completes");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, NULL, "it arrives"))
		ft_check(e.len == max && !memcmp(rx, tx, max), "whole", "len %zu", e.len);
	free(tx);
	free(rx);
}

/* Sends len bytes at buf to the endpoint named name from a plain UDP socket. */
static void raw_send(int fd, const struct node *to, const void *buf, size_t len)
{
	(void) sendto(fd, buf, len, 0, (const struct sockaddr *) to->name,
		      (socklen_t) to->namelen);
}

/* Bytes of a well-formed datagram of raw_datagram. */
#define RAW_LEN		(48 + 16 + 5)

/*
 * A datagram endpoint's datagram carrying "hello", as the udp device
 * frames it: its unreliable header (swsrd type 5, every other field
 * zero), then rdmx's datagram header (docs/protocol.md).
 */
static void raw_datagram(uint8_t *buf)
{
	memset(buf, 0, RAW_LEN);
	buf[0] = 0x53;
	buf[1] = 0x59;
	buf[2] = 5;
	buf[48] = 0x55;
	buf[49] = 0x44;
	buf[50] = 1;
	memcpy(buf + 64, "hello", 5);
}

/* A UDP socket of the family of n's address; -1 fails the check. */
static int raw_socket(const struct node *n)
{
	int fd = socket(((const struct sockaddr *) n->name)->sa_family, SOCK_DGRAM, 0);

	ft_check(fd >= 0, "a UDP socket", "socket failed");
	return fd;
}

/*
 * Datagrams rdmx never sent: garbage, rdm packets and a bad header are
 * dropped; a well-formed one from outside the AV arrives, its source
 * FI_ADDR_NOTAVAIL.
 */
void test_dgram_wire(struct fixture *fx)
{
	struct node *b = &fx->node[B];
	uint8_t good[RAW_LEN], bad_ud[RAW_LEN], rdm[48 + 24] = { 0x53, 0x59, 1 };
	struct fi_rdmx_ep_stats before = dg_stats(b->ep), after;
	struct fi_context rctx;
	struct fi_cq_tagged_entry e;
	uint8_t rx[64];
	fi_addr_t src;
	int fd = raw_socket(b);

	if (fd < 0)
		return;
	raw_datagram(good);
	memcpy(bad_ud, good, sizeof(good));
	bad_ud[54] = 1;		/* a reserved byte */
	rdm[47] = 1;		/* a src_tag, as every swsrd packet has */
	dg_recv(b, rx, sizeof(rx), FI_ADDR_UNSPEC, &rctx, "post a receive");
	raw_send(fd, b, "abc", 3);
	raw_send(fd, b, rdm, sizeof(rdm));
	raw_send(fd, b, bad_ud, sizeof(bad_ud));
	raw_send(fd, b, good, 48 + 3);
	raw_send(fd, b, good, sizeof(good));
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, &src,
			"only the well-formed datagram arrives")) {
		ft_check(e.len == 5 && !memcmp(rx, "hello", 5), "its bytes", "len %zu", e.len);
		ft_check(src == FI_ADDR_NOTAVAIL, "FI_SOURCE: FI_ADDR_NOTAVAIL for a stranger",
			 "src %llu", (unsigned long long) src);
	}
	after = dg_stats(b->ep);
	ft_check(after.rx_malformed - before.rx_malformed == 4,
		 "each of the four others counted malformed", "%llu counted",
		 (unsigned long long) (after.rx_malformed - before.rx_malformed));
	close(fd);
	send_between(fx, A, B, 32, "a datagram of A's after them");
}

/*
 * Datagrams no receive takes cannot keep every buffer: after a flood
 * from a stranger, a receive directed to A still gets A's datagram.
 */
void test_dgram_flood(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;
	uint8_t good[RAW_LEN], tx[64], rx[64];
	fi_addr_t src = FI_ADDR_UNSPEC;
	int fd = raw_socket(b);

	if (fd < 0)
		return;
	raw_datagram(good);
	for (int i = 0; i < 400; i++) {
		raw_send(fd, b, good, sizeof(good));
		(void) fi_cq_read(b->rx_cq, NULL, 0);
	}
	for (int64_t end = now_ms() + 100; now_ms() < end;)
		(void) fi_cq_read(b->rx_cq, NULL, 0);
	close(fd);
	ft_check(dg_stats(b->ep).rx_dropped > 0, "the flood overflowed: some dropped",
		 "none counted");
	dg_recv(b, rx, sizeof(rx), a->addr, &rctx, "a receive directed to A");
	check_ret(dg_send(a, b, tx, sizeof(tx), 77, &sctx), 0, "A sends");
	if (expect_comp(fx, b->rx_cq, &rctx, FI_RECV, &e, &src, "A's datagram is received"))
		ft_check(src == a->addr && e.len == sizeof(tx) && !memcmp(rx, tx, sizeof(tx)),
			 "from A, whole", "src %llu len %zu", (unsigned long long) src, e.len);
}

/*
 * A datagram endpoint's datagram to an RDM endpoint is malformed there:
 * dropped and counted, the endpoint unharmed.
 */
void test_dgram_to_rdm(struct fixture *fx)
{
	struct node *a = &fx->node[A];
	struct fi_rdmx_ep_stats before = dg_stats(a->ep);
	uint8_t good[RAW_LEN];
	int fd = raw_socket(a);

	if (fd < 0)
		return;
	raw_datagram(good);
	for (int i = 0; i < 50; i++)
		raw_send(fd, a, good, sizeof(good));
	close(fd);
	send_between(fx, B, A, 32, "the RDM endpoint receives afterwards");
	ft_check(dg_stats(a->ep).rx_malformed - before.rx_malformed == 50,
		 "all 50 counted malformed", "%llu",
		 (unsigned long long) (dg_stats(a->ep).rx_malformed - before.rx_malformed));
}

/* FI_SELECTIVE_COMPLETION on A's sends: an entry only when asked for. */
void test_dgram_selective(struct fixture *fx)
{
	struct node *a = &fx->node[A], *b = &fx->node[B];
	struct fi_context sctx, rctx;
	uint8_t tx[16] = { 1 }, rx[16];
	struct iovec iov = { tx, sizeof(tx) };
	struct fi_msg msg = { .msg_iov = &iov, .iov_count = 1, .addr = b->addr,
			      .context = &sctx };

	dg_recv(b, rx, sizeof(rx), FI_ADDR_UNSPEC, &rctx, "post a receive");
	check_ret(fi_send(a->ep, tx, sizeof(tx), NULL, b->addr, &sctx), 0, "fi_send");
	expect_comp(fx, b->rx_cq, &rctx, FI_RECV, NULL, NULL, "it arrives");
	expect_empty(a->tx_cq, "fi_send writes no entry");
	dg_recv(b, rx, sizeof(rx), FI_ADDR_UNSPEC, &rctx, "post a receive");
	check_ret(fi_sendmsg(a->ep, &msg, FI_COMPLETION), 0, "fi_sendmsg with FI_COMPLETION");
	expect_comp(fx, a->tx_cq, &sctx, FI_SEND | FI_MSG, NULL, NULL, "it writes an entry");
	expect_comp(fx, b->rx_cq, &rctx, FI_RECV, NULL, NULL, "it arrives");
}

/*
 * With no receive posted, B holds what its buffers take and the rest is
 * lost; what is held is whole, and B goes on receiving.
 */
void test_dgram_loss(struct fixture *fx)
{
	enum { SENT = 3000, LEN = 1000 };
	struct node *a = &fx->node[A], *b = &fx->node[B];
	static uint8_t tx[LEN], rx[LEN];
	static bool seen[SENT];
	struct fi_context sctx, rctx;
	struct fi_cq_tagged_entry e;
	size_t got = 0, bad = 0;
	ssize_t ret = 0;

	memset(seen, 0, sizeof(seen));
	/* Each datagram goes out before the next overwrites tx: its entry is awaited. */
	for (uint32_t i = 0; i < SENT && !ret; i++) {
		int64_t end = now_ms() + WAIT_MS;

		ret = dg_send(a, b, tx, LEN, i, &sctx);
		while (!ret && !drain(a->tx_cq) && now_ms() < end)
			;
		(void) fi_cq_read(b->rx_cq, NULL, 0);
	}
	check_ret(ret, 0, "3,000 datagrams sent with no receive posted");
	/* Held datagrams complete their receives at once; then none comes. */
	for (;;) {
		int64_t end = now_ms() + 300;
		uint32_t seq;

		if (fi_recv(b->ep, rx, sizeof(rx), NULL, FI_ADDR_UNSPEC, &rctx))
			break;
		while ((ret = fi_cq_read(b->rx_cq, &e, 1)) == -FI_EAGAIN && now_ms() < end)
			;
		if (ret != 1)
			break;
		memcpy(&seq, rx, sizeof(seq));
		if (e.len != LEN || seq >= SENT || seen[seq] || rx[LEN - 1] != DG_FILL)
			bad++;
		else
			seen[seq] = true;
		got++;
	}
	if (ret == -FI_EAGAIN)
		abandon_recv(fx, b, &rctx);
	ft_check(got > 0 && got < SENT && !bad, "some held, the rest lost, none damaged",
		 "%zu of %d received, %zu wrong", got, SENT, bad);
	printf("# %zu of %d datagrams held\n", got, SENT);
	ft_check(dg_stats(b->ep).rx_dropped > 0, "the drops are counted", "none counted");
	send_between(fx, A, B, 32, "B receives again afterwards");
}
