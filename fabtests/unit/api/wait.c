/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_api_test: waiting and counting (see api.h): counters, blocking
 * reads that sleep, FI_WAIT_FD with fi_trywait, wait sets, poll sets and
 * automatic progress. Each test replaces the fixture's endpoints by ones
 * whose CQs have the wait object it is about.
 */
#include <poll.h>
#include <pthread.h>

#include "api.h"

/* Slack on a timed return: a busy machine may be late, never early. */
#define LATE_MS		1000
#define TIMEOUT_MS	300

/*
 * Replaces node i of fx by a fresh endpoint set up as tmpl says, its tx
 * CQ bound with tx_flags.
 */
static bool renew(struct fixture *fx, int i, const struct node *tmpl, uint64_t tx_flags)
{
	struct node *n = &fx->node[i];

	node_close(n, false, node_label[i]);
	*n = *tmpl;
	return node_create(fx->domain, fx->info, n, false, node_label[i]) &&
	       node_enable(fx->av, n, tx_flags, false, node_label[i]);
}

static struct fid_cntr *cntr_open(struct fixture *fx, enum fi_wait_obj obj)
{
	struct fi_cntr_attr attr = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = obj };
	struct fid_cntr *cntr = NULL;
	int ret = fi_cntr_open(fx->domain, &attr, &cntr, NULL);

	return step(false, ret, "fi_cntr_open") ? cntr : NULL;
}

/* Something one thread does to an object after a pause, while another waits. */
struct later {
	pthread_t	thread;
	int		delay_ms;
	void		(*act)(struct later *l);
	struct fixture	*fx;
	struct fid	*fid;
	bool		sent;		/* a send's completion came */
};

static void *later_run(void *arg)
{
	struct later *l = arg;

	usleep((useconds_t) l->delay_ms * 1000);
	l->act(l);
	return NULL;
}

static bool later_start(struct later *l)
{
	return ft_check(!pthread_create(&l->thread, NULL, later_run, l), "a helper thread starts",
			"pthread_create failed");
}

/* A sends B 8 bytes and waits for the send's completion, A's CQ only. */
static void later_send(struct later *l)
{
	struct route r = fx_route(l->fx, A, B);
	struct fi_cq_tagged_entry e;
	uint64_t v = 42;

	l->sent = fi_send(r.from->ep, &v, sizeof(v), NULL, r.dest, NULL) == 0 &&
		  cq_wait(NULL, r.from->tx_cq, &e, NULL) == 1;
}

static void later_signal(struct later *l)
{
	fi_cq_signal((struct fid_cq *) l->fid);
}

static void later_adderr(struct later *l)
{
	fi_cntr_adderr((struct fid_cntr *) l->fid, 1);
}

/* Checks that a timed call returned ret after at least want_ms, not much more. */
static void expect_on_time(long ret, long want, int64_t t0, int want_ms, const char *name)
{
	int64_t ms = now_ms() - t0;

	ft_check(ret == want && ms >= want_ms && ms < want_ms + LATE_MS, name,
		 "returned %ld (%s) after %lld ms, want %ld after %d ms", ret, err_str(ret),
		 (long long) ms, want, want_ms);
}

/* Checks a counter's value and error count. */
static void expect_cntr(struct fid_cntr *cntr, uint64_t value, uint64_t err, const char *name)
{
	uint64_t v = fi_cntr_read(cntr), e = fi_cntr_readerr(cntr);

	ft_check(v == value && e == err, name, "value %llu, err %llu; want %llu, %llu",
		 (unsigned long long) v, (unsigned long long) e, (unsigned long long) value,
		 (unsigned long long) err);
}

/* Posts n receives of len bytes on node b, without FI_COMPLETION. */
static bool post_quiet_recvs(struct node *b, uint8_t (*buf)[64], int n)
{
	for (int i = 0; i < n; i++) {
		if (fi_recv(b->ep, buf[i], sizeof(buf[i]), NULL, FI_ADDR_UNSPEC, NULL))
			return false;
	}
	return true;
}

/*
 * Counters bound with FI_SELECTIVE_COMPLETION CQs: every send and
 * receive counted though none writes an entry, injects too; errors
 * counted apart; fi_cntr_wait's threshold, timeout and error wake-up;
 * add, set and their error twins; bind and close errors.
 */
void test_counters(struct fixture *fx)
{
	struct node ta = { .tx_cntr = cntr_open(fx, FI_WAIT_UNSPEC) };
	struct node tb = { .rx_cntr = cntr_open(fx, FI_WAIT_UNSPEC),
			   .rx_flags = FI_SELECTIVE_COMPLETION };
	struct later l = { .delay_ms = 100, .act = later_adderr };
	uint8_t rx[10][64], big[100] = { 0 };
	struct fi_cq_err_entry err = { 0 };
	struct node *a, *b;
	uint64_t v = 7;
	int64_t t0;
	int ret;

	if (!ta.tx_cntr || !tb.rx_cntr || !renew(fx, A, &ta, FI_SELECTIVE_COMPLETION) ||
	    !renew(fx, B, &tb, 0))
		return;
	a = &fx->node[A];
	b = &fx->node[B];
	check_ret(fi_ep_bind(a->ep, &b->rx_cntr->fid, FI_RECV), -FI_EOPBADSTATE,
		  "fi_ep_bind of a counter after fi_enable: -FI_EOPBADSTATE");
	check_ret(fi_close(&a->tx_cntr->fid), -FI_EBUSY,
		  "fi_close(counter) while an endpoint is bound: -FI_EBUSY");
	if (!ft_check(post_quiet_recvs(b, rx, 10), "10 receives posted", "fi_recv failed"))
		return;
	for (int i = 0; i < 10; i++) {
		fi_addr_t dest = fx_route(fx, A, B).dest;

		do {
			ret = (int) (i % 2 ? fi_inject(a->ep, &v, sizeof(v), dest) :
					     fi_send(a->ep, &v, sizeof(v), NULL, dest, NULL));
		} while (ret == -FI_EAGAIN && fi_cntr_read(a->tx_cntr) < 10);
	}
	/* Reading a counter progresses its endpoint only: both take turns. */
	t0 = now_ms();
	while ((fi_cntr_read(a->tx_cntr) < 10) + (fi_cntr_read(b->rx_cntr) < 10) &&
	       now_ms() - t0 < WAIT_MS)
		;
	ft_check(fi_cntr_read(b->rx_cntr) == 10 && fi_cntr_read(a->tx_cntr) == 10,
		 "10 receives and 5 sends and 5 injects, none with FI_COMPLETION, counted",
		 "rx %llu, tx %llu", (unsigned long long) fi_cntr_read(b->rx_cntr),
		 (unsigned long long) fi_cntr_read(a->tx_cntr));
	expect_empty(b->rx_cq, "no receive wrote a CQ entry");
	expect_empty(a->tx_cq, "no send wrote a CQ entry");
	fi_recv(b->ep, rx[0], sizeof(rx[0]), NULL, FI_ADDR_UNSPEC, NULL);
	fi_send(a->ep, &v, sizeof(v), NULL, fx_route(fx, A, B).dest, NULL);
	check_ret(fi_cntr_wait(b->rx_cntr, 11, WAIT_MS), 0,
		  "fi_cntr_wait sleeps until the next receive is counted");
	check_ret(fi_cntr_wait(a->tx_cntr, 11, WAIT_MS), 0,
		  "fi_cntr_wait sleeps until its send is counted");

	/* A truncated receive: an error count and an error entry. */
	fi_recv(b->ep, rx[0], 4, NULL, FI_ADDR_UNSPEC, NULL);
	fi_send(a->ep, big, sizeof(big), NULL, fx_route(fx, A, B).dest, NULL);
	t0 = now_ms();
	while (fi_cntr_readerr(b->rx_cntr) == 0 && now_ms() - t0 < WAIT_MS)
		(void) fi_cntr_read(a->tx_cntr);
	expect_cntr(b->rx_cntr, 11, 1, "a truncated receive counts as an error, not a completion");
	ft_check(fi_cq_readerr(b->rx_cq, &err, 0) == 1 && err.err == FI_ETRUNC,
		 "and its error entry is in the CQ", "err %d", err.err);

	t0 = now_ms();
	expect_on_time(fi_cntr_wait(b->rx_cntr, 1000, TIMEOUT_MS), -FI_ETIMEDOUT, t0,
		       TIMEOUT_MS, "fi_cntr_wait below its threshold: -FI_ETIMEDOUT on time");
	l.fid = &b->rx_cntr->fid;
	if (later_start(&l)) {
		t0 = now_ms();
		ret = fi_cntr_wait(b->rx_cntr, 1000, WAIT_MS);
		pthread_join(l.thread, NULL);
		expect_on_time(ret, -FI_EAVAIL, t0, l.delay_ms,
			       "fi_cntr_wait wakes with -FI_EAVAIL when the error count moves");
	}
	fi_cntr_add(b->rx_cntr, 5);
	fi_cntr_adderr(b->rx_cntr, 3);
	expect_cntr(b->rx_cntr, 16, 5, "fi_cntr_add and fi_cntr_adderr add");
	fi_cntr_set(b->rx_cntr, 2);
	fi_cntr_seterr(b->rx_cntr, 0);
	expect_cntr(b->rx_cntr, 2, 0, "fi_cntr_set and fi_cntr_seterr set");
}

/* fi_cq_sread: a timeout kept, a message that wakes it, fi_cq_signal. */
void test_sread(struct fixture *fx)
{
	struct node t = { .wait_obj = FI_WAIT_UNSPEC };
	struct later send = { .delay_ms = 100, .act = later_send, .fx = fx };
	struct later sig = { .delay_ms = 100, .act = later_signal };
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	uint64_t v = 0;
	int64_t t0;
	ssize_t ret;

	if (!renew(fx, A, &t, 0) || !renew(fx, B, &t, 0) ||
	    !send_between(fx, A, B, 8, "a first message connects A and B"))
		return;
	t0 = now_ms();
	expect_on_time(fi_cq_sread(fx->node[B].rx_cq, &e, 1, NULL, TIMEOUT_MS), -FI_EAGAIN, t0,
		       TIMEOUT_MS, "fi_cq_sread on an empty CQ: -FI_EAGAIN when its timeout ends");

	post_recv(fx->node[B].ep, &v, sizeof(v), FI_ADDR_UNSPEC, false, 0, 0, &ctx);
	if (later_start(&send)) {
		t0 = now_ms();
		ret = fi_cq_sread(fx->node[B].rx_cq, &e, 1, NULL, WAIT_MS);
		pthread_join(send.thread, NULL);
		ft_check(ret == 1 && e.op_context == &ctx && v == 42 &&
			 now_ms() - t0 >= send.delay_ms && send.sent,
			 "fi_cq_sread sleeps until a message sent 100 ms later arrives",
			 "returned %zd (%s), value %llu, after %lld ms", ret, err_str(ret),
			 (unsigned long long) v, (long long) (now_ms() - t0));
	}
	sig.fid = &fx->node[B].rx_cq->fid;
	if (later_start(&sig)) {
		t0 = now_ms();
		ret = fi_cq_sread(fx->node[B].rx_cq, &e, 1, NULL, WAIT_MS);
		pthread_join(sig.thread, NULL);
		expect_on_time(ret, -FI_EAGAIN, t0, sig.delay_ms,
			       "fi_cq_signal ends a fi_cq_sread with -FI_EAGAIN");
	}
	send_between(fx, B, A, 4000, "B to A still works, both CQs sleeping ones");
}

/*
 * Waits as fabtests' -c fd does: fi_trywait, poll() on fd, fi_cq_read,
 * until cq gives an entry into e or ms pass. Returns fi_cq_read's last
 * answer; *wakes counts the polls that returned readable.
 */
static ssize_t fd_wait(struct fixture *fx, struct fid_cq *cq, int fd, int ms,
		       struct fi_cq_tagged_entry *e, int *wakes)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct fid *fids[1] = { &cq->fid };
	int64_t end = now_ms() + ms;
	ssize_t ret;

	*wakes = 0;
	do {
		if (!fi_trywait(fx->fabric, fids, 1) &&
		    poll(&pfd, 1, end > now_ms() ? (int) (end - now_ms()) : 0) == 1)
			(*wakes)++;
		ret = fi_cq_read(cq, e, 1);
	} while (ret == -FI_EAGAIN && now_ms() < end);
	return ret;
}

/* FI_WAIT_FD: FI_GETWAIT's descriptor, fi_trywait's answers, poll() on it. */
void test_wait_fd(struct fixture *fx)
{
	struct node t = { .wait_obj = FI_WAIT_FD };
	struct later send = { .delay_ms = 100, .act = later_send, .fx = fx };
	struct node *a, *b;
	struct fid *fids[1];
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	struct fi_mutex_cond mc = { 0 };
	struct fid_cq *mcq = NULL;
	struct fi_cq_attr mattr = { .wait_obj = FI_WAIT_MUTEX_COND };
	uint64_t v = 0, w = 9;
	int fd = -1, wakes;
	ssize_t ret;

	if (!renew(fx, A, &t, 0) || !renew(fx, B, &t, 0) ||
	    !send_between(fx, A, B, 8, "a first message connects A and B"))
		return;
	a = &fx->node[A];
	b = &fx->node[B];
	check_ret(fi_control(&b->rx_cq->fid, FI_GETWAIT, &fd), 0, "FI_GETWAIT on a FI_WAIT_FD CQ");
	ft_check(fd >= 0, "it gives a descriptor", "fd %d", fd);
	fids[0] = &b->rx_cq->fid;
	check_ret(fi_trywait(fx->fabric, fids, 1), 0, "fi_trywait on an empty CQ: 0, sleep");
	/* Timers (a delayed ack, keepalive) may wake it; nothing else may. */
	ret = fd_wait(fx, b->rx_cq, fd, TIMEOUT_MS, &e, &wakes);
	ft_check(ret == -FI_EAGAIN && wakes <= 20, "with nothing coming, only timers wake it",
		 "returned %zd (%s), %d wakes in %d ms", ret, err_str(ret), wakes, TIMEOUT_MS);
	post_recv(b->ep, &v, sizeof(v), FI_ADDR_UNSPEC, false, 0, 0, &ctx);
	if (later_start(&send)) {
		ret = fd_wait(fx, b->rx_cq, fd, WAIT_MS, &e, &wakes);
		pthread_join(send.thread, NULL);
		ft_check(ret == 1 && e.op_context == &ctx && v == 42 && wakes >= 1 && send.sent,
			 "the descriptor wakes the reader when a message sent 100 ms later comes",
			 "returned %zd (%s), value %llu, %d wakes", ret, err_str(ret),
			 (unsigned long long) v, wakes);
	}
	send_between(fx, A, B, 8, "one more message, read at once");
	fi_send(a->ep, &w, sizeof(w), NULL, fx_route(fx, A, B).dest, NULL);
	fi_recv(b->ep, &v, sizeof(v), NULL, FI_ADDR_UNSPEC, &ctx);
	cq_wait(fx, a->tx_cq, &e, NULL);
	check_ret(fi_trywait(fx->fabric, fids, 1), -FI_EAGAIN,
		  "fi_trywait while a completion waits to be read: -FI_EAGAIN");
	cq_wait(fx, b->rx_cq, &e, NULL);

	check_ret(fi_control(&a->tx_cq->fid, FI_GETWAIT, NULL), -FI_EINVAL,
		  "FI_GETWAIT without a place for the answer: -FI_EINVAL");
	if (step(false, fi_cq_open(fx->domain, &mattr, &mcq, NULL), "FI_WAIT_MUTEX_COND CQ")) {
		check_ret(fi_control(&mcq->fid, FI_GETWAIT, &mc), 0,
			  "FI_GETWAIT on a FI_WAIT_MUTEX_COND CQ");
		ft_check(mc.mutex && mc.cond, "it gives a mutex and a condition", "%p %p",
			 (void *) mc.mutex, (void *) mc.cond);
		fi_close(&mcq->fid);
	}
}

/* A wait set over two CQs: fi_wait's timeout, and a wake for either. */
void test_wait_set(struct fixture *fx)
{
	struct fi_wait_attr attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fid_wait *ws = NULL;
	struct node t = { .wait_obj = FI_WAIT_SET };
	struct later send = { .delay_ms = 100, .act = later_send, .fx = fx };
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	uint64_t v = 0;
	int64_t t0;
	int fd = -1, ret = 0;

	if (!step(false, fi_wait_open(fx->fabric, &attr, &ws), "fi_wait_open"))
		return;
	t.wait_set = ws;
	if (!renew(fx, A, &t, 0) || !renew(fx, B, &t, 0) ||
	    !send_between(fx, A, B, 8, "a first message connects A and B"))
		goto out;
	check_ret(fi_control(&ws->fid, FI_GETWAIT, &fd), 0, "FI_GETWAIT on the wait set");
	check_ret(fi_close(&ws->fid), -FI_EBUSY, "fi_close(wait set) while CQs use it: -FI_EBUSY");
	t0 = now_ms();
	expect_on_time(fi_wait(ws, TIMEOUT_MS), -FI_ETIMEDOUT, t0, TIMEOUT_MS,
		       "fi_wait with nothing coming: -FI_ETIMEDOUT on time");
	post_recv(fx->node[B].ep, &v, sizeof(v), FI_ADDR_UNSPEC, false, 0, 0, &ctx);
	if (later_start(&send)) {
		t0 = now_ms();
		/* A's send completion may wake it first: wait until B's receive is in. */
		do
			ret = fi_wait(ws, WAIT_MS);
		while (!ret && fi_cq_read(fx->node[B].rx_cq, &e, 1) == -FI_EAGAIN &&
		       now_ms() - t0 < WAIT_MS);
		pthread_join(send.thread, NULL);
		ft_check(ret == 0 && v == 42 && e.op_context == &ctx && send.sent,
			 "fi_wait wakes for a message sent 100 ms later", "returned %d (%s)", ret,
			 err_str(ret));
	}
out:
	node_close(&fx->node[A], false, "A");
	node_close(&fx->node[B], false, "B");
	check_ret(fi_close(&ws->fid), 0, "fi_close(wait set) once its CQs are closed");
}

/* A poll set of a CQ and a counter: contexts of those with something. */
void test_poll_set(struct fixture *fx)
{
	struct fi_poll_attr attr = { 0 };
	struct fid_poll *ps = NULL;
	struct node t = { .rx_cntr = cntr_open(fx, FI_WAIT_NONE) };
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	void *got[4] = { NULL };
	uint64_t v = 0, w = 5;
	bool cq_seen = false, cntr_seen = false;
	int64_t t0;
	int n;

	if (!t.rx_cntr || !renew(fx, B, &t, 0) ||
	    !step(false, fi_poll_open(fx->domain, &attr, &ps), "fi_poll_open"))
		return;
	fx->node[B].rx_cq->fid.context = &fx->node[B].rx_cq;
	fx->node[B].rx_cntr->fid.context = &fx->node[B].rx_cntr;
	check_ret(fi_poll_add(ps, &fx->node[B].rx_cq->fid, 0), 0, "fi_poll_add(CQ)");
	check_ret(fi_poll_add(ps, &fx->node[B].rx_cntr->fid, 0), 0, "fi_poll_add(counter)");
	check_ret(fi_poll_add(ps, &fx->av->fid, 0), -FI_EINVAL, "fi_poll_add(AV): -FI_EINVAL");
	check_ret(fi_poll(ps, got, 4), 0, "fi_poll with nothing arrived: 0");
	post_recv(fx->node[B].ep, &v, sizeof(v), FI_ADDR_UNSPEC, false, 0, 0, &ctx);
	fi_send(fx->node[A].ep, &w, sizeof(w), NULL, fx_route(fx, A, B).dest, NULL);
	t0 = now_ms();
	while (!(cq_seen && cntr_seen) && now_ms() - t0 < WAIT_MS) {
		(void) fi_cq_read(fx->node[A].tx_cq, NULL, 0);
		n = fi_poll(ps, got, 4);
		for (int i = 0; i < n; i++) {
			cq_seen |= got[i] == &fx->node[B].rx_cq;
			cntr_seen |= got[i] == &fx->node[B].rx_cntr;
		}
	}
	ft_check(cq_seen && cntr_seen,
		 "fi_poll returns the contexts of the CQ and the counter the message reached",
		 "CQ %s, counter %s", cq_seen ? "seen" : "not seen", cntr_seen ? "seen" : "not seen");
	check_ret(fi_poll(ps, got, 4), 1, "again: the unread CQ only (the counter did not move)");
	cq_wait(fx, fx->node[B].rx_cq, &e, NULL);
	cq_wait(fx, fx->node[A].tx_cq, &e, NULL);
	check_ret(fi_close(&fx->node[B].rx_cq->fid), -FI_EBUSY,
		  "fi_close(CQ) while in a poll set: -FI_EBUSY");
	check_ret(fi_poll_del(ps, &fx->node[B].rx_cq->fid, 0), 0, "fi_poll_del(CQ)");
	check_ret(fi_poll_del(ps, &fx->node[B].rx_cq->fid, 0), -FI_EINVAL,
		  "fi_poll_del of what is not in the set: -FI_EINVAL");
	check_ret(fi_poll_del(ps, &fx->node[B].rx_cntr->fid, 0), 0, "fi_poll_del(counter)");
	check_ret(fi_close(&ps->fid), 0, "fi_close(poll set)");
}

/*
 * FI_PROGRESS_AUTO: the receiver is never called, yet a send with
 * FI_DELIVERY_COMPLETE, which completes only once the receiver's rdm
 * layer matched it, completes.
 */
void test_auto_progress(struct fixture *fx)
{
	struct fi_cq_tagged_entry e;
	struct fi_context ctx, sctx;
	uint64_t v = 0, w = 77;
	struct fid_cq *a_tx = fx->node[A].tx_cq;
	int64_t t0;
	ssize_t ret;

	ft_check(fx->info->domain_attr->data_progress == FI_PROGRESS_AUTO &&
		 fx->info->domain_attr->control_progress == FI_PROGRESS_AUTO,
		 "fi_getinfo offers FI_PROGRESS_AUTO when asked", "data %d, control %d",
		 fx->info->domain_attr->data_progress, fx->info->domain_attr->control_progress);
	post_recv(fx->node[B].ep, &v, sizeof(v), FI_ADDR_UNSPEC, false, 0, 0, &ctx);
	post_sendmsg(fx->node[A].ep, &w, sizeof(w), NULL, fx_route(fx, A, B).dest, 0, 0, &sctx,
		     FI_COMPLETION | FI_DELIVERY_COMPLETE, false);
	t0 = now_ms();
	do
		ret = fi_cq_read(a_tx, &e, 1);
	while (ret == -FI_EAGAIN && now_ms() - t0 < WAIT_MS);
	ft_check(ret == 1 && e.op_context == &sctx && v == 77,
		 "a FI_DELIVERY_COMPLETE send completes with nothing but A's CQ read",
		 "returned %zd (%s), value %llu", ret, err_str(ret), (unsigned long long) v);
	ft_check(fi_cq_read(fx->node[B].rx_cq, &e, 1) == 1 && e.op_context == &ctx,
		 "B's completion was written without a call of B's", "none");
	send_between(fx, B, A, 100000, "a long message B to A");
}
