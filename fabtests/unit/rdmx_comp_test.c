/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_comp_test: the completion levels of a send (fi_cq(3)), in one
 * process, two endpoints on one domain (A sends, B receives):
 * - without a flag a send completes only once the peer acknowledged it:
 *   while B does not progress, A's completion does not come; once B
 *   progressed, it does;
 * - FI_INJECT_COMPLETE (per operation, or in the endpoint's op flags)
 *   completes at posting, B silent;
 * - FI_DELIVERY_COMPLETE waits for B's rdm layer: it completes once B
 *   matched or buffered the message, for every protocol (eager, medium,
 *   long), and fails when B could not take the message at all (an
 *   endpoint without FI_RECV), where transmit complete succeeds;
 * - FI_MATCH_COMPLETE and FI_COMMIT_COMPLETE are refused: at fi_getinfo,
 *   at fi_endpoint, by FI_SETOPSFLAG and per operation.
 *
 * "Does not come" is checked by polling A alone for a while: the test
 * never sleeps, and a completion that arrives too early fails it.
 * Run by make check with FI_PROVIDER=rdmx, over the lane the two get
 * (shared memory, unless FI_RDMX_SHM=0: scripts/comp_nic.sh runs it so
 * too); it sets FI_RDMX_MTU to 4096
 * so that the three protocols all occur.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_rdmx.h>

#include "ft_check.h"

#define TEST_VERSION	FI_VERSION(1, 17)
/* How long A polls alone to show a completion does not come. */
#define QUIET_MS	30
/* How long a completion that must come may take. */
#define WAIT_MS		5000
#define NAME_MAX_LEN	64

struct node {
	struct fid_ep	*ep;
	struct fid_cq	*tx_cq;
	struct fid_cq	*rx_cq;		/* NULL: an endpoint without FI_RECV */
	char		name[NAME_MAX_LEN];
	fi_addr_t	addr;
};

struct fixture {
	struct fi_info		*info;
	struct fid_fabric	*fabric;
	struct fid_domain	*domain;
	struct fid_av		*av;
	struct node		a, b;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The rdmx RDM info, with tx op_flags as given (0: none asked). */
static int get_info(uint64_t tx_op_flags, struct fi_info **info)
{
	struct fi_info *hints = fi_allocinfo();
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->fabric_attr->prov_name = strdup("rdmx");
	hints->tx_attr->op_flags = tx_op_flags;
	ret = fi_getinfo(TEST_VERSION, NULL, NULL, 0, hints, info);
	fi_freeinfo(hints);
	return ret;
}

/* Opens, binds and enables n; with rx false, an endpoint without FI_RECV. */
static int node_open(struct fixture *fx, struct node *n, bool rx)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE };
	struct fi_info *info = fi_dupinfo(fx->info);
	size_t len = sizeof(n->name);
	int ret;

	if (!info)
		return -FI_ENOMEM;
	if (!rx)
		info->caps = (info->caps & ~(uint64_t) FI_RECV) | FI_SEND;
	ret = fi_endpoint(fx->domain, info, &n->ep, NULL);
	fi_freeinfo(info);
	if (!ret)
		ret = fi_cq_open(fx->domain, &attr, &n->tx_cq, NULL);
	if (!ret && rx)
		ret = fi_cq_open(fx->domain, &attr, &n->rx_cq, NULL);
	if (!ret)
		ret = fi_ep_bind(n->ep, &fx->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(n->ep, &n->tx_cq->fid, FI_TRANSMIT);
	if (!ret && rx)
		ret = fi_ep_bind(n->ep, &n->rx_cq->fid, FI_RECV);
	if (!ret)
		ret = fi_enable(n->ep);
	if (!ret)
		ret = fi_getname(&n->ep->fid, n->name, &len);
	if (!ret && fi_av_insert(fx->av, n->name, 1, &n->addr, 0, NULL) != 1)
		ret = -FI_EOTHER;
	return ret;
}

static void node_close(struct node *n)
{
	if (n->ep)
		fi_close(&n->ep->fid);
	if (n->tx_cq)
		fi_close(&n->tx_cq->fid);
	if (n->rx_cq)
		fi_close(&n->rx_cq->fid);
	memset(n, 0, sizeof(*n));
}

static bool fixture_open(struct fixture *fx, bool b_rx)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	memset(fx, 0, sizeof(*fx));
	ret = get_info(0, &fx->info);
	if (!ret)
		ret = fi_fabric(fx->info->fabric_attr, &fx->fabric, NULL);
	if (!ret)
		ret = fi_domain(fx->fabric, fx->info, &fx->domain, NULL);
	if (!ret)
		ret = fi_av_open(fx->domain, &av_attr, &fx->av, NULL);
	if (!ret)
		ret = node_open(fx, &fx->a, true);
	if (!ret)
		ret = node_open(fx, &fx->b, b_rx);
	return ft_check(!ret, "fixture: two endpoints", "%d (%s)", ret, fi_strerror(-ret));
}

static void fixture_close(struct fixture *fx)
{
	node_close(&fx->a);
	node_close(&fx->b);
	if (fx->av)
		fi_close(&fx->av->fid);
	if (fx->domain)
		fi_close(&fx->domain->fid);
	if (fx->fabric)
		fi_close(&fx->fabric->fid);
	fi_freeinfo(fx->info);
}

/* Reads one entry of cq; 1, 0 (none), or the error entry's -err. */
static int cq_take(struct fid_cq *cq, void **ctx)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err = { 0 };
	ssize_t ret = fi_cq_read(cq, &e, 1);

	if (ret == 1) {
		*ctx = e.op_context;
		return 1;
	}
	if (ret == -FI_EAVAIL && fi_cq_readerr(cq, &err, 0) == 1) {
		*ctx = err.op_context;
		return -err.err;
	}
	return 0;
}

/* Drives n's progress without taking an entry (a read of none). */
static void progress(struct node *n)
{
	fi_cq_read(n->tx_cq, NULL, 0);
	if (n->rx_cq)
		fi_cq_read(n->rx_cq, NULL, 0);
}

/*
 * Polls A's tx CQ for up to ms, and drives B's progress too when b_runs
 * (B silent otherwise: its device is not polled). Returns what cq_take
 * said of the first entry, 0 if none came; *ctx names its operation.
 */
static int wait_tx(struct fixture *fx, bool b_runs, int64_t ms, void **ctx)
{
	int64_t end = now_ms() + ms;
	int ret;

	do {
		ret = cq_take(fx->a.tx_cq, ctx);
		if (ret)
			return ret;
		if (b_runs)
			progress(&fx->b);
	} while (now_ms() < end);
	return 0;
}

/* Polls B's rx CQ (A too) until a receive completes; its -err, or 1. */
static int wait_rx(struct fixture *fx, void *want)
{
	int64_t end = now_ms() + WAIT_MS;
	void *ctx = NULL;
	int ret;

	do {
		progress(&fx->a);
		ret = cq_take(fx->b.rx_cq, &ctx);
		if (ret)
			return ctx == want ? ret : -FI_EOTHER;
	} while (now_ms() < end);
	return 0;
}

static ssize_t send_flags(struct fixture *fx, const void *buf, size_t len,
			  uint64_t flags, void *ctx)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov,
		.iov_count = 1,
		.addr = fx->b.addr,
		.tag = 7,
		.context = ctx,
	};

	return fi_tsendmsg(fx->a.ep, &msg, flags);
}

static ssize_t post_recv(struct fixture *fx, void *buf, size_t len, void *ctx)
{
	return fi_trecv(fx->b.ep, buf, len, NULL, FI_ADDR_UNSPEC, 7, 0, ctx);
}

/* One message both ways first, so the handshake is out of the way. */
static bool connect_pair(struct fixture *fx)
{
	char in = 0, out = 1;
	void *ctx = NULL;
	int got;

	if (post_recv(fx, &in, 1, &in) || send_flags(fx, &out, 1, FI_COMPLETION, &out))
		return ft_check(false, "connect: post", "failed");
	got = wait_rx(fx, &in);
	if (got == 1)
		got = wait_tx(fx, true, WAIT_MS, &ctx);
	return ft_check(got == 1 && in == 1, "connect: first message", "%d", got);
}

/* Whether A reaches its peers by shared memory (the same-host lane). */
static bool by_shm(struct fixture *fx)
{
	struct fi_rdmx_ep_ops *ops = NULL;
	struct fi_rdmx_ep_stats stats;

	return !fi_open_ops(&fx->a.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) && ops &&
	       !ops->query_stats(fx->a.ep, &stats) && stats.shm_peers > 0;
}

/*
 * A default send: by the NIC no completion while B is silent, one once B
 * progressed (acknowledged it); by shared memory at once, the packet
 * being in B's own queue when the send returns.
 */
static void test_default_waits_for_the_peer(uint64_t flags, const char *name)
{
	struct fixture fx;
	char buf[8] = "default", in[8];
	char what[96];
	void *ctx = NULL;
	int got;

	if (!fixture_open(&fx, true) || !connect_pair(&fx))
		goto out;
	snprintf(what, sizeof(what), "%s: posted", name);
	if (!ft_check(!post_recv(&fx, in, sizeof(in), in) &&
		      !send_flags(&fx, buf, sizeof(buf), flags, buf), what, "post failed"))
		goto out;
	/* The payload is in the device: the buffer may change, the message not. */
	got = wait_tx(&fx, false, QUIET_MS, &ctx);
	if (by_shm(&fx)) {
		snprintf(what, sizeof(what), "%s (shm): completes in the silent peer's queue", name);
		ft_check(got == 1 && ctx == buf, what, "got %d", got);
	} else {
		snprintf(what, sizeof(what), "%s: no completion while the peer is silent", name);
		ft_check(got == 0, what, "got %d after %d ms of a silent peer", got, QUIET_MS);
		got = wait_tx(&fx, true, WAIT_MS, &ctx);
		snprintf(what, sizeof(what), "%s: completes once the peer progressed", name);
		ft_check(got == 1 && ctx == buf, what, "got %d", got);
	}
	snprintf(what, sizeof(what), "%s: the receive got it", name);
	ft_check(wait_rx(&fx, in) == 1 && !memcmp(in, buf, sizeof(buf)), what, "no");
out:
	fixture_close(&fx);
}

/* FI_INJECT_COMPLETE: the completion comes at posting, B silent. */
static void test_inject_complete_is_early(bool by_opsflag)
{
	const char *name = by_opsflag ? "inject complete (FI_SETOPSFLAG)" :
					"inject complete (op flag)";
	struct fixture fx;
	char buf[8] = "inject", in[8];
	char what[96];
	uint64_t flags = FI_TRANSMIT | FI_INJECT_COMPLETE;
	void *ctx = NULL;
	ssize_t ret;
	int got;

	if (!fixture_open(&fx, true) || !connect_pair(&fx))
		goto out;
	if (by_opsflag) {
		snprintf(what, sizeof(what), "%s: set", name);
		if (!ft_check(!fi_control(&fx.a.ep->fid, FI_SETOPSFLAG, &flags), what, "refused"))
			goto out;
		ret = fi_tsend(fx.a.ep, buf, sizeof(buf), NULL, fx.b.addr, 7, buf);
	} else {
		ret = send_flags(&fx, buf, sizeof(buf), FI_INJECT_COMPLETE | FI_COMPLETION, buf);
	}
	snprintf(what, sizeof(what), "%s: posted", name);
	if (!ft_check(!ret && !post_recv(&fx, in, sizeof(in), in), what, "%zd", ret))
		goto out;
	got = wait_tx(&fx, false, WAIT_MS, &ctx);
	snprintf(what, sizeof(what), "%s: completes with the peer silent", name);
	ft_check(got == 1 && ctx == buf, what, "got %d", got);
	snprintf(what, sizeof(what), "%s: the receive got it", name);
	ft_check(wait_rx(&fx, in) == 1 && !memcmp(in, buf, sizeof(buf)), what, "no");
out:
	fixture_close(&fx);
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t) (i * 31 + seed);
}

/*
 * FI_DELIVERY_COMPLETE of a len-byte message: nothing while B is silent;
 * with no receive posted, B buffers it and the send completes; the
 * receive posted afterwards gets the bytes. For a long message B has
 * nothing to buffer (its sender keeps the bytes): the completion waits
 * for the receive.
 */
static void test_delivery(size_t len, bool is_long)
{
	uint8_t *buf = malloc(len), *in = malloc(len);
	struct fixture fx;
	char what[96];
	void *ctx = NULL;
	int got;

	if (!fixture_open(&fx, true) || !connect_pair(&fx) || !buf || !in)
		goto out;
	fill(buf, len, (unsigned) len);
	snprintf(what, sizeof(what), "delivery complete %zu B: posted", len);
	if (!ft_check(!send_flags(&fx, buf, len, FI_DELIVERY_COMPLETE | FI_COMPLETION, buf),
		      what, "post failed"))
		goto out;
	got = wait_tx(&fx, false, QUIET_MS, &ctx);
	snprintf(what, sizeof(what), "delivery complete %zu B: nothing while the peer is silent",
		 len);
	ft_check(got == 0, what, "got %d", got);
	got = wait_tx(&fx, true, is_long ? QUIET_MS : WAIT_MS, &ctx);
	snprintf(what, sizeof(what), is_long ?
		 "delivery complete %zu B: waits for a receive" :
		 "delivery complete %zu B: completes once buffered unexpected", len);
	ft_check(is_long ? got == 0 : got == 1 && ctx == buf, what, "got %d", got);
	snprintf(what, sizeof(what), "delivery complete %zu B: the receive got it", len);
	ft_check(!post_recv(&fx, in, len, in) && wait_rx(&fx, in) == 1 &&
		 !memcmp(in, buf, len), what, "no");
	if (is_long) {
		got = wait_tx(&fx, true, WAIT_MS, &ctx);
		snprintf(what, sizeof(what), "delivery complete %zu B: completes once received",
			 len);
		ft_check(got == 1 && ctx == buf, what, "got %d", got);
	}
out:
	fixture_close(&fx);
	free(buf);
	free(in);
}

/*
 * B has no FI_RECV: transmit complete succeeds, delivery complete cannot,
 * whatever the protocol.
 */
static void test_delivery_to_no_receiver(size_t len)
{
	uint8_t *buf = calloc(1, len);
	struct fixture fx;
	char what[96];
	void *ctx = NULL;
	int got;

	if (!fixture_open(&fx, false) || !buf)
		goto out;
	snprintf(what, sizeof(what), "no receiver, %zu B: transmit complete succeeds", len);
	got = (int) send_flags(&fx, buf, len, FI_TRANSMIT_COMPLETE | FI_COMPLETION, buf);
	if (!got)
		got = wait_tx(&fx, true, WAIT_MS, &ctx);
	ft_check(got == 1, what, "got %d", got);
	snprintf(what, sizeof(what), "no receiver, %zu B: delivery complete fails "
		 "(FI_EOPNOTSUPP)", len);
	got = (int) send_flags(&fx, buf, len, FI_DELIVERY_COMPLETE | FI_COMPLETION, buf);
	if (!got)
		got = wait_tx(&fx, true, WAIT_MS, &ctx);
	ft_check(got == -FI_EOPNOTSUPP && ctx == buf, what, "got %d", got);
out:
	fixture_close(&fx);
	free(buf);
}

/* Levels rdmx cannot give: refused everywhere they can be asked for. */
static void test_refused_levels(void)
{
	static const uint64_t refused[] = { FI_MATCH_COMPLETE, FI_COMMIT_COMPLETE };
	struct fi_info *info = NULL;
	struct fixture fx;
	struct fid_ep *ep = NULL;
	char buf[8] = "refused";
	int ret;

	ret = get_info(0, &info);
	ft_check(!ret && (info->tx_attr->op_flags & FI_TRANSMIT_COMPLETE),
		 "getinfo: tx op_flags say FI_TRANSMIT_COMPLETE", "%d", ret);
	fi_freeinfo(info);
	for (size_t i = 0; i < 2; i++) {
		const char *what = i ? "FI_COMMIT_COMPLETE" : "FI_MATCH_COMPLETE";
		uint64_t flags = FI_TRANSMIT | refused[i];

		info = NULL;
		ret = get_info(refused[i], &info);
		ft_check(ret == -FI_ENODATA, "getinfo: refused level", "%s: %d", what, ret);
		fi_freeinfo(info);
		if (!fixture_open(&fx, true))
			return;
		fx.info->tx_attr->op_flags = refused[i];
		ret = fi_endpoint(fx.domain, fx.info, &ep, NULL);
		ft_check(ret == -FI_EBADFLAGS, "fi_endpoint: refused level", "%s: %d", what, ret);
		if (!ret)
			fi_close(&ep->fid);
		ret = fi_control(&fx.a.ep->fid, FI_SETOPSFLAG, &flags);
		ft_check(ret == -FI_EBADFLAGS, "FI_SETOPSFLAG: refused level", "%s: %d",
			 what, ret);
		ret = (int) send_flags(&fx, buf, sizeof(buf), refused[i], buf);
		ft_check(ret == -FI_EBADFLAGS, "fi_tsendmsg: refused level", "%s: %d",
			 what, ret);
		fixture_close(&fx);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Packets of 4 KiB (lo's 64 KiB leaves no room for medium messages). */
	setenv("FI_RDMX_MTU", "4096", 0);
	test_default_waits_for_the_peer(FI_COMPLETION, "default (fi_tsendmsg)");
	test_default_waits_for_the_peer(FI_COMPLETION | FI_TRANSMIT_COMPLETE,
					"transmit complete");
	test_inject_complete_is_early(false);
	test_inject_complete_is_early(true);
	test_delivery(8, false);
	test_delivery(20000, false);		/* medium: 5 segments */
	test_delivery(4u << 20, true);		/* long */
	test_delivery_to_no_receiver(8);
	test_delivery_to_no_receiver(20000);
	test_delivery_to_no_receiver(4u << 20);
	test_refused_levels();
	return ft_check_summary();
}
