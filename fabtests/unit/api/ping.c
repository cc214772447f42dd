/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_api_test: PING_COUNT tagged messages each way between A and B. */
#include <pthread.h>

#include "api.h"

#define PING_COUNT	2000
#define PING_MAX	1024		/* largest ping message */

/* The context of one ping operation (fi_context first: its address is it). */
struct ping_op {
	struct fi_context	ctx;
	int			node;		/* the endpoint that posted it */
	int			k;		/* message number, also the tag */
	bool			recv;
};

/*
 * Shared by the threads: each drives (posts on) its own endpoints, and
 * every thread reaps every CQ, so completions of one thread's operations
 * are often read by the other. Counters written by several threads are
 * updated atomically.
 */
struct ping {
	struct fixture		*fx;
	struct ping_op		*ops;		/* [node][send, recv][k] */
	uint8_t			*tx, *rx;	/* [node][k][PING_MAX] */
	int			sent[NODES], posted[NODES];	/* by the driver */
	int			sends_done[NODES], recvs_done[NODES];	/* atomic */
	int			failed;		/* atomic: set by the first failure */
	char			error[256];
};

#define PING_WINDOW	32		/* operations in flight per direction */

static size_t ping_len(int k)
{
	return (size_t) k * 97 % PING_MAX;
}

static unsigned ping_seed(int node, int k)
{
	return (unsigned) k * 2 + (unsigned) node;
}

static struct ping_op *ping_op(struct ping *pg, int node, bool recv, int k)
{
	return &pg->ops[(node * 2 + recv) * PING_COUNT + k];
}

static uint8_t *ping_buf(uint8_t *base, int node, int k)
{
	return base + ((size_t) node * PING_COUNT + (size_t) k) * PING_MAX;
}

static int ping_load(int *counter)
{
	return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
}

/* Records the first failure; later ones are dropped. */
static void __attribute__((format(printf, 2, 3)))
ping_fail(struct ping *pg, const char *fmt, ...)
{
	int expected = 0;
	va_list ap;

	if (!__atomic_compare_exchange_n(&pg->failed, &expected, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	va_start(ap, fmt);
	vsnprintf(pg->error, sizeof(pg->error), fmt, ap);
	va_end(ap);
}

/* Checks and counts one successful completion read from node's CQ. */
static void ping_complete(struct ping *pg, int node, bool rx_cq,
			  const struct fi_cq_tagged_entry *e, fi_addr_t src)
{
	const struct ping_op *op = e->op_context;
	int peer = 1 - node;

	if (op->node != node || op->recv != rx_cq) {
		ping_fail(pg, "%s: a completion on the wrong CQ", node_label[node]);
		return;
	}
	if (!op->recv) {
		__atomic_add_fetch(&pg->sends_done[node], 1, __ATOMIC_ACQ_REL);
		return;
	}
	if (e->tag != (uint64_t) op->k || e->len != ping_len(op->k) ||
	    src != pg->fx->node[peer].addr ||
	    !payload_ok(ping_buf(pg->rx, node, op->k), ping_len(op->k),
			ping_seed(peer, op->k), 0)) {
		ping_fail(pg, "%s: message %d: tag %#llx len %zu source %#llx or payload wrong",
			  node_label[node], op->k, (unsigned long long) e->tag, e->len,
			  (unsigned long long) src);
		return;
	}
	__atomic_add_fetch(&pg->recvs_done[node], 1, __ATOMIC_ACQ_REL);
}

/* Reads one entry from each of the four CQs; returns how many it got. */
static int ping_reap(struct ping *pg)
{
	char why[256];
	int got = 0;

	for (int node = 0; node < NODES; node++) {
		for (int rx = 0; rx < 2; rx++) {
			struct fid_cq *cq = rx ? pg->fx->node[node].rx_cq :
					    pg->fx->node[node].tx_cq;
			struct fi_cq_tagged_entry e;
			fi_addr_t src = FI_ADDR_NOTAVAIL;
			ssize_t ret = fi_cq_readfrom(cq, &e, 1, &src);

			if (ret == 1) {
				ping_complete(pg, node, rx, &e, src);
				got++;
			} else if (ret != -FI_EAGAIN) {
				ping_fail(pg, "%s %s CQ: %s", node_label[node], rx ? "rx" : "tx",
					  wait_str(ret, cq, why, sizeof(why)));
			}
		}
	}
	return got;
}

/* Posts node's next receives and sends, as far as the window allows. */
static void ping_post(struct ping *pg, int node)
{
	struct node *self = &pg->fx->node[node];
	fi_addr_t peer = pg->fx->node[1 - node].addr;
	ssize_t ret;

	while (pg->posted[node] < PING_COUNT &&
	       pg->posted[node] - ping_load(&pg->recvs_done[node]) < PING_WINDOW) {
		int k = pg->posted[node];

		ret = fi_trecv(self->ep, ping_buf(pg->rx, node, k), PING_MAX, NULL, peer,
			       (uint64_t) k, 0, &ping_op(pg, node, true, k)->ctx);
		if (ret == -FI_EAGAIN)
			break;
		if (ret) {
			ping_fail(pg, "%s: fi_trecv %d: %zd (%s)", node_label[node], k, ret,
				  err_str(ret));
			return;
		}
		pg->posted[node]++;
	}
	while (pg->sent[node] < PING_COUNT &&
	       pg->sent[node] - ping_load(&pg->sends_done[node]) < PING_WINDOW) {
		int k = pg->sent[node];

		ret = fi_tsend(self->ep, ping_buf(pg->tx, node, k), ping_len(k), NULL, peer,
			       (uint64_t) k, &ping_op(pg, node, false, k)->ctx);
		if (ret == -FI_EAGAIN)
			break;
		if (ret) {
			ping_fail(pg, "%s: fi_tsend %d: %zd (%s)", node_label[node], k, ret,
				  err_str(ret));
			return;
		}
		pg->sent[node]++;
	}
}

static int ping_total(struct ping *pg)
{
	int total = 0;

	for (int node = 0; node < NODES; node++)
		total += ping_load(&pg->sends_done[node]) + ping_load(&pg->recvs_done[node]);
	return total;
}

/*
 * Drives nodes [first, first + count) until all their messages went both
 * ways, reaping every CQ; fails after WAIT_MS without any progress.
 */
static void ping_drive(struct ping *pg, int first, int count)
{
	int64_t last = now_ms();
	int seen = -1;

	while (!ping_load(&pg->failed)) {
		bool done = true;

		for (int node = first; node < first + count; node++) {
			ping_post(pg, node);
			done &= ping_load(&pg->sends_done[node]) == PING_COUNT &&
				ping_load(&pg->recvs_done[node]) == PING_COUNT;
		}
		if (done)
			return;
		ping_reap(pg);
		if (ping_total(pg) != seen) {
			seen = ping_total(pg);
			last = now_ms();
		} else if (now_ms() - last > WAIT_MS) {
			ping_fail(pg, "no progress for %d ms", WAIT_MS);
		}
	}
}

struct ping_thread_arg {
	struct ping	*pg;
	int		node;
};

static void *ping_thread(void *arg)
{
	struct ping_thread_arg *t = arg;

	ping_drive(t->pg, t->node, 1);
	return NULL;
}

static struct ping *ping_new(struct fixture *fx)
{
	struct ping *pg = calloc(1, sizeof(*pg));
	size_t bytes = (size_t) NODES * PING_COUNT * PING_MAX;

	if (!pg)
		exit(2);
	pg->fx = fx;
	pg->ops = calloc((size_t) NODES * 2 * PING_COUNT, sizeof(*pg->ops));
	pg->tx = xmalloc(bytes);
	pg->rx = xmalloc(bytes);
	if (!pg->ops)
		exit(2);
	for (int node = 0; node < NODES; node++) {
		for (int k = 0; k < PING_COUNT; k++) {
			*ping_op(pg, node, false, k) = (struct ping_op) { .node = node, .k = k };
			*ping_op(pg, node, true, k) =
				(struct ping_op) { .node = node, .k = k, .recv = true };
			fill(ping_buf(pg->tx, node, k), ping_len(k), ping_seed(node, k));
		}
	}
	return pg;
}

/*
 * Reports each direction, closes the fixture (so no posted receive
 * outlives its buffer) and frees the ping.
 */
static void ping_finish(struct fixture *fx, struct ping *pg, const char *prefix)
{
	char what[128];

	ft_check(!pg->failed, nm(prefix, "no failure"), "%s", pg->error);
	for (int node = 0; node < NODES; node++) {
		snprintf(what, sizeof(what), "%s: %s sent and received %d messages", prefix,
			 node_label[node], PING_COUNT);
		ft_check(pg->sends_done[node] == PING_COUNT &&
			 pg->recvs_done[node] == PING_COUNT, what,
			 "%d sends and %d receives completed, of %d and %d posted",
			 pg->sends_done[node], pg->recvs_done[node], pg->sent[node],
			 pg->posted[node]);
	}
	fixture_close(fx, false);
	free(pg->ops);
	free(pg->tx);
	free(pg->rx);
	free(pg);
}

/*
 * FI_THREAD_SAFE: one thread per endpoint posts its sends and receives,
 * and both threads read all four CQs at once.
 */
void test_ping_threads(struct fixture *fx)
{
	struct ping *pg = ping_new(fx);
	struct ping_thread_arg args[NODES];
	pthread_t tid[NODES];
	int started = 0;

	ft_check(fx->info->domain_attr->threading == FI_THREAD_SAFE,
		 "threads: the domain is FI_THREAD_SAFE", "threading %d",
		 fx->info->domain_attr->threading);
	for (; started < NODES; started++) {
		args[started] = (struct ping_thread_arg) { pg, started };
		if (pthread_create(&tid[started], NULL, ping_thread, &args[started]))
			break;
	}
	ft_check(started == NODES, "threads: both threads started", "%d started", started);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	ping_finish(fx, pg, "threads (FI_THREAD_SAFE)");
}

/* FI_THREAD_DOMAIN: one thread drives both endpoints. */
void test_ping_domain(struct fixture *fx)
{
	struct ping *pg = ping_new(fx);

	ft_check(fx->info->domain_attr->threading == FI_THREAD_DOMAIN,
		 "one thread: the domain is FI_THREAD_DOMAIN", "threading %d",
		 fx->info->domain_attr->threading);
	ping_drive(pg, 0, NODES);
	ping_finish(fx, pg, "one thread (FI_THREAD_DOMAIN)");
}
