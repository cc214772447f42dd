/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: wait objects and wait sets (see rdmx_wait.h). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_cntr.h"
#include "rdmx_cq.h"
#include "rdmx_eq.h"
#include "rdmx_fabric.h"
#include "rdmx_stubs.h"
#include "rdmx_wait.h"

/* Events one epoll_wait takes; the loop re-checks every member anyway. */
#define RDMX_WAIT_EVENTS	8
/*
 * Rounds fi_trywait makes while progress says it has work left (a lane
 * to poll again, a timer due) before it hands -FI_EAGAIN back.
 */
#define RDMX_WAIT_TRIES		4

static int rdmx_wait_epoll_add(struct rdmx_wait *wait, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(wait->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static void rdmx_wait_destruct(struct rdmx_wait *wait)
{
	if (wait->tfd >= 0)
		close(wait->tfd);
	if (wait->evfd >= 0)
		close(wait->evfd);
	if (wait->epfd >= 0)
		close(wait->epfd);
	pthread_cond_destroy(&wait->app_cond);
	pthread_mutex_destroy(&wait->app_mutex);
	pthread_mutex_destroy(&wait->fd_lock);
	pthread_mutex_destroy(&wait->lock);
	free(wait->fds);
}

/* Makes wait's descriptors; 0 or -FI_E* (the partial state is destructible). */
static int rdmx_wait_construct(struct rdmx_wait *wait, enum fi_wait_obj obj)
{
	int ret;

	wait->obj = obj == FI_WAIT_UNSPEC ? FI_WAIT_FD : obj;
	wait->epfd = wait->evfd = wait->tfd = -1;
	pthread_mutex_init(&wait->lock, NULL);
	pthread_mutex_init(&wait->fd_lock, NULL);
	pthread_mutex_init(&wait->app_mutex, NULL);
	pthread_cond_init(&wait->app_cond, NULL);
	rdmx_dlist_init(&wait->members);
	wait->epfd = epoll_create1(EPOLL_CLOEXEC);
	wait->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	wait->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (wait->epfd < 0 || wait->evfd < 0 || wait->tfd < 0) {
		ret = -errno;
		RDMX_WARN(FI_LOG_CORE, "wait object: %s\n", strerror(errno));
		return ret;
	}
	ret = rdmx_wait_epoll_add(wait, wait->evfd);
	if (!ret)
		ret = rdmx_wait_epoll_add(wait, wait->tfd);
	return ret;
}

static bool rdmx_wait_obj_ok(enum fi_wait_obj obj)
{
	return obj == FI_WAIT_UNSPEC || obj == FI_WAIT_FD || obj == FI_WAIT_MUTEX_COND ||
	       obj == FI_WAIT_YIELD;
}

int rdmx_wait_get(enum fi_wait_obj obj, struct fid_wait *attr_set,
		  struct rdmx_wait **wait_p)
{
	struct rdmx_wait *wait;
	int ret;

	if (obj == FI_WAIT_NONE) {
		*wait_p = NULL;
		return 0;
	}
	if (obj == FI_WAIT_SET) {
		if (!attr_set) {
			RDMX_WARN(FI_LOG_CORE, "FI_WAIT_SET without a wait set\n");
			return -FI_EINVAL;
		}
		wait = rdmx_container_of(attr_set, struct rdmx_wait, wait_fid);
		rdmx_ref_get(&wait->refs);
		*wait_p = wait;
		return 0;
	}
	if (!rdmx_wait_obj_ok(obj)) {
		RDMX_WARN(FI_LOG_CORE, "wait object %d not offered\n", obj);
		return -FI_EINVAL;
	}
	wait = calloc(1, sizeof(*wait));
	if (!wait)
		return -FI_ENOMEM;
	ret = rdmx_wait_construct(wait, obj);
	if (ret) {
		rdmx_wait_destruct(wait);
		free(wait);
		return ret;
	}
	*wait_p = wait;
	return 0;
}

void rdmx_wait_put(struct rdmx_wait *wait)
{
	if (!wait)
		return;
	if (wait->is_set) {
		rdmx_ref_put(&wait->refs);
		return;
	}
	rdmx_wait_destruct(wait);
	free(wait);
}

void rdmx_wait_join(struct rdmx_wait *wait, struct rdmx_waitable *m)
{
	m->wait = wait;
	if (!wait)
		return;
	pthread_mutex_lock(&wait->lock);
	rdmx_dlist_insert_tail(&wait->members, &m->link);
	pthread_mutex_unlock(&wait->lock);
}

void rdmx_wait_leave(struct rdmx_waitable *m)
{
	struct rdmx_wait *wait = m->wait;

	if (!wait)
		return;
	pthread_mutex_lock(&wait->lock);
	rdmx_dlist_remove(&m->link);
	pthread_mutex_unlock(&wait->lock);
}

static struct rdmx_wait_fd *rdmx_wait_fd_find(struct rdmx_wait *wait, int fd)
{
	for (size_t i = 0; i < wait->nfds; i++) {
		if (wait->fds[i].fd == fd)
			return &wait->fds[i];
	}
	return NULL;
}

/* One descriptor in; the caller holds wait->fd_lock. */
static int rdmx_wait_add_fd(struct rdmx_wait *wait, int fd)
{
	struct rdmx_wait_fd *wfd = rdmx_wait_fd_find(wait, fd);
	int ret;

	if (wfd) {
		wfd->refs++;
		return 0;
	}
	wfd = realloc(wait->fds, (wait->nfds + 1) * sizeof(*wfd));
	if (!wfd)
		return -FI_ENOMEM;
	wait->fds = wfd;
	ret = rdmx_wait_epoll_add(wait, fd);
	if (ret) {
		RDMX_WARN(FI_LOG_CORE, "epoll add of fd %d: %s\n", fd, strerror(-ret));
		return ret;
	}
	wait->fds[wait->nfds++] = (struct rdmx_wait_fd) { .fd = fd, .refs = 1 };
	return 0;
}

/* One descriptor out; the caller holds wait->fd_lock. */
static void rdmx_wait_del_fd(struct rdmx_wait *wait, int fd)
{
	struct rdmx_wait_fd *wfd = rdmx_wait_fd_find(wait, fd);

	if (!wfd || --wfd->refs)
		return;
	epoll_ctl(wait->epfd, EPOLL_CTL_DEL, fd, NULL);
	*wfd = wait->fds[--wait->nfds];
}

int rdmx_wait_add_fds(struct rdmx_wait *wait, const int *fds, int n)
{
	int ret = 0, i;

	if (!wait)
		return 0;
	pthread_mutex_lock(&wait->fd_lock);
	for (i = 0; i < n && !ret; i++)
		ret = rdmx_wait_add_fd(wait, fds[i]);
	while (ret && --i > 0)
		rdmx_wait_del_fd(wait, fds[i - 1]);
	pthread_mutex_unlock(&wait->fd_lock);
	return ret;
}

void rdmx_wait_del_fds(struct rdmx_wait *wait, const int *fds, int n)
{
	if (!wait)
		return;
	pthread_mutex_lock(&wait->fd_lock);
	for (int i = 0; i < n; i++)
		rdmx_wait_del_fd(wait, fds[i]);
	pthread_mutex_unlock(&wait->fd_lock);
}

void rdmx_wait_wake(struct rdmx_wait *wait)
{
	bool wake;

	/* Once per sleep of its threads, once per fi_trywait. */
	wake = (__atomic_load_n(&wait->sleepers, __ATOMIC_SEQ_CST) &&
		!__atomic_exchange_n(&wait->poked, true, __ATOMIC_SEQ_CST)) ||
	       (__atomic_load_n(&wait->armed, __ATOMIC_SEQ_CST) &&
		__atomic_exchange_n(&wait->armed, false, __ATOMIC_SEQ_CST));
	if (!wake)
		return;
	if (eventfd_write(wait->evfd, 1))
		RDMX_WARN(FI_LOG_CORE, "wait: eventfd write: %s\n", strerror(errno));
	if (wait->obj == FI_WAIT_MUTEX_COND) {
		pthread_mutex_lock(&wait->app_mutex);
		pthread_cond_broadcast(&wait->app_cond);
		pthread_mutex_unlock(&wait->app_mutex);
	}
}

/*
 * Checks every member (arming them with arm); 1 when want (NULL: any
 * member) has something, -FI_EAGAIN when some member's progress has
 * work, else 0 with *due_p the earliest timer. A thread that may sleep
 * after it counts itself among the sleepers first: a writer after that
 * pokes, one before it is seen by the check.
 */
static int rdmx_wait_round(struct rdmx_wait *wait, struct rdmx_waitable *want,
			   bool arm, uint64_t *due_p)
{
	struct rdmx_dlist *it;
	int ret = 0;

	pthread_mutex_lock(&wait->lock);
	rdmx_dlist_foreach(&wait->members, it) {
		struct rdmx_waitable *m = rdmx_container_of(it, struct rdmx_waitable, link);
		int r = m->ops->check(m, arm, due_p);

		if (r == 1 && (!want || m == want)) {
			ret = 1;
			break;
		}
		if (r == -FI_EAGAIN)
			ret = -FI_EAGAIN;
	}
	pthread_mutex_unlock(&wait->lock);
	return ret;
}

static void rdmx_wait_drain(struct rdmx_wait *wait)
{
	eventfd_t val;

	(void) eventfd_read(wait->evfd, &val);
}

/*
 * Sleeps on wait's epoll set until a descriptor is ready or the clock is
 * at until; the caller is among the sleepers, and the pokes of this
 * sleep are consumed.
 */
static void rdmx_wait_sleep(struct rdmx_wait *wait, uint64_t until)
{
	struct epoll_event ev[RDMX_WAIT_EVENTS];
	uint64_t now = rdmx_clock_ns();
	struct timespec ts;

	if (until != UINT64_MAX) {
		uint64_t left = until > now ? until - now : 0;

		ts.tv_sec = (time_t) (left / 1000000000ULL);
		ts.tv_nsec = (long) (left % 1000000000ULL);
	}
	if (epoll_pwait2(wait->epfd, ev, RDMX_WAIT_EVENTS,
			 until == UINT64_MAX ? NULL : &ts, NULL) < 0 && errno != EINTR)
		RDMX_WARN(FI_LOG_CORE, "wait: epoll: %s\n", strerror(errno));
	rdmx_wait_drain(wait);
	__atomic_store_n(&wait->poked, false, __ATOMIC_SEQ_CST);
}

int rdmx_wait_for(struct rdmx_wait *wait, struct rdmx_waitable *m, int timeout)
{
	uint64_t start = rdmx_clock_ns();
	uint64_t end = timeout < 0 ? UINT64_MAX : start + (uint64_t) timeout * 1000000ULL;
	/* A wake-up costs several microseconds: an answer may come sooner. */
	uint64_t spin_end = start + g_rdmx_params.wait_spin_us * 1000ULL;
	bool sleeps = wait && wait->obj != FI_WAIT_YIELD;

	for (;;) {
		uint64_t due = UINT64_MAX;
		bool arms = sleeps && rdmx_clock_ns() >= spin_end;
		int ret;

		if (arms)
			__atomic_add_fetch(&wait->sleepers, 1, __ATOMIC_SEQ_CST);
		ret = wait ? rdmx_wait_round(wait, m, arms, &due) : m->ops->check(m, false, &due);
		if (arms && !ret && rdmx_clock_ns() < end)
			rdmx_wait_sleep(wait, RDMX_MIN(due, end));
		if (arms)
			__atomic_sub_fetch(&wait->sleepers, 1, __ATOMIC_SEQ_CST);
		if (ret == 1)
			return 0;
		if (rdmx_clock_ns() >= end)
			return -FI_ETIMEDOUT;
		if (!sleeps && !ret)
			sched_yield();
	}
}

/* fi_trywait's timer: the clock at due, or off. */
static void rdmx_wait_timer(struct rdmx_wait *wait, uint64_t due)
{
	struct itimerspec its = { 0 };
	uint64_t now = rdmx_clock_ns();

	if (due != UINT64_MAX) {
		/* Relative: the clock may be a test's, not CLOCK_MONOTONIC. */
		uint64_t left = due > now ? due - now : 1;

		its.it_value.tv_sec = (time_t) (left / 1000000000ULL);
		its.it_value.tv_nsec = (long) (left % 1000000000ULL);
	}
	if (timerfd_settime(wait->tfd, 0, &its, NULL))
		RDMX_WARN(FI_LOG_CORE, "wait: timerfd: %s\n", strerror(errno));
}

int rdmx_wait_try(struct rdmx_wait *wait, struct rdmx_waitable *m)
{
	uint64_t due;
	int ret, tries = 0;

	rdmx_wait_drain(wait);
	/* Armed first: a writer after this pokes, one before it is checked. */
	__atomic_store_n(&wait->armed, true, __ATOMIC_SEQ_CST);
	/* Progress that has work left is done here, not handed back. */
	do {
		due = UINT64_MAX;
		ret = m ? m->ops->check(m, true, &due) : rdmx_wait_round(wait, NULL, true, &due);
	} while (ret == -FI_EAGAIN && ++tries < RDMX_WAIT_TRIES);
	if (ret)
		return -FI_EAGAIN;
	rdmx_wait_timer(wait, due);
	return 0;
}

int rdmx_wait_getwait(struct rdmx_wait *wait, void *arg)
{
	if (!wait || !arg)
		return -FI_EINVAL;
	switch (wait->obj) {
	case FI_WAIT_FD:
		*(int *) arg = wait->epfd;
		return 0;
	case FI_WAIT_MUTEX_COND:
		((struct fi_mutex_cond *) arg)->mutex = &wait->app_mutex;
		((struct fi_mutex_cond *) arg)->cond = &wait->app_cond;
		return 0;
	default:
		return -FI_ENODATA;
	}
}

/* The wait set behind a wait fid. */
static struct rdmx_wait *rdmx_wait_set(struct fid_wait *wait_fid)
{
	return rdmx_container_of(wait_fid, struct rdmx_wait, wait_fid);
}

static int rdmx_wait_set_wait(struct fid_wait *wait_fid, int timeout)
{
	return rdmx_wait_for(rdmx_wait_set(wait_fid), NULL, timeout);
}

static int rdmx_wait_set_control(struct fid *fid, int command, void *arg)
{
	struct rdmx_wait *wait = rdmx_container_of(fid, struct rdmx_wait, wait_fid.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	return rdmx_wait_getwait(wait, arg);
}

static int rdmx_wait_set_close(struct fid *fid)
{
	struct rdmx_wait *wait = rdmx_container_of(fid, struct rdmx_wait, wait_fid.fid);

	if (rdmx_ref_read(&wait->refs)) {
		RDMX_WARN(FI_LOG_CORE, "wait set still has %d members\n",
			  rdmx_ref_read(&wait->refs));
		return -FI_EBUSY;
	}
	rdmx_wait_destruct(wait);
	free(wait);
	return 0;
}

static struct fi_ops rdmx_wait_set_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_wait_set_close,
	.bind = rdmx_no_bind,
	.control = rdmx_wait_set_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_wait rdmx_wait_set_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = rdmx_wait_set_wait,
};

int rdmx_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		   struct fid_wait **waitset)
{
	struct rdmx_wait *wait;
	int ret;

	(void) fabric;
	if (!attr || attr->flags || !rdmx_wait_obj_ok(attr->wait_obj)) {
		RDMX_WARN(FI_LOG_CORE, "wait set: wait object %d or flags not offered\n",
			  attr ? (int) attr->wait_obj : -1);
		return -FI_EINVAL;
	}
	wait = calloc(1, sizeof(*wait));
	if (!wait)
		return -FI_ENOMEM;
	ret = rdmx_wait_construct(wait, attr->wait_obj);
	if (ret) {
		rdmx_wait_destruct(wait);
		free(wait);
		return ret;
	}
	wait->is_set = true;
	wait->wait_fid.fid.fclass = FI_CLASS_WAIT;
	wait->wait_fid.fid.ops = &rdmx_wait_set_fi_ops;
	wait->wait_fid.ops = &rdmx_wait_set_ops;
	*waitset = &wait->wait_fid;
	return 0;
}

/* The member a fid stands for in fi_trywait, and its wait; -FI_EINVAL if none. */
static int rdmx_trywait_one(struct fid *fid)
{
	struct rdmx_waitable *m;

	switch (fid->fclass) {
	case FI_CLASS_WAIT:
		return rdmx_wait_try(rdmx_container_of(fid, struct rdmx_wait, wait_fid.fid), NULL);
	case FI_CLASS_CQ:
		m = rdmx_cq_waitable(fid);
		break;
	case FI_CLASS_CNTR:
		m = rdmx_cntr_waitable(fid);
		break;
	case FI_CLASS_EQ:
		m = rdmx_eq_waitable(fid);
		break;
	default:
		m = NULL;
		break;
	}
	if (!m || !m->wait) {
		RDMX_WARN(FI_LOG_CORE, "fi_trywait: fid class %zu has no wait object\n",
			  fid->fclass);
		return -FI_EINVAL;
	}
	return rdmx_wait_try(m->wait, m);
}

int rdmx_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void) fabric;
	for (int i = 0; i < count; i++) {
		int ret = rdmx_trywait_one(fids[i]);

		if (ret)
			return ret;
	}
	return 0;
}
