/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: event queues. RDM endpoints report nothing here yet; the queue
 * carries what the application writes with fi_eq_write, and fi_eq_sread
 * waits for it on a condition variable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "rdmx.h"
#include "rdmx_fabric.h"
#include "rdmx_stubs.h"

/*
 * fi_eq_write flag marking an error event (struct fi_eq_err_entry), the
 * bit libfabric's own providers use for it.
 */
#define RDMX_EQ_ERR	(1ULL << 60)

struct rdmx_eq_event {
	struct rdmx_dlist	link;		/* on rdmx_eq.events */
	uint32_t		event;
	uint64_t		flags;		/* RDMX_EQ_ERR for an error entry */
	size_t			len;
	uint8_t			data[];
};

struct rdmx_eq {
	struct fid_eq		eq_fid;
	struct rdmx_fabric	*fabric;
	pthread_mutex_t		mutex;
	pthread_cond_t		cond;
	struct rdmx_dlist	events;		/* of struct rdmx_eq_event */
	struct rdmx_eq_event	*last_err;	/* kept until the next read */
	enum fi_wait_obj	wait_obj;
};

static struct rdmx_eq *rdmx_eq(struct fid_eq *eq_fid)
{
	return rdmx_container_of(eq_fid, struct rdmx_eq, eq_fid);
}

/* Copies out the first event; the caller holds the mutex. */
static ssize_t rdmx_eq_take(struct rdmx_eq *eq, uint32_t *event, void *buf,
			    size_t len, uint64_t flags)
{
	struct rdmx_eq_event *ev;

	if (rdmx_dlist_empty(&eq->events))
		return -FI_EAGAIN;
	ev = rdmx_container_of(eq->events.next, struct rdmx_eq_event, link);
	if (ev->flags & RDMX_EQ_ERR)
		return -FI_EAVAIL;
	if (len < ev->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = ev->event;
	memcpy(buf, ev->data, ev->len);
	len = ev->len;
	if (!(flags & FI_PEEK)) {
		rdmx_dlist_remove(&ev->link);
		free(ev);
	}
	return (ssize_t) len;
}

static ssize_t rdmx_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	ssize_t ret;

	pthread_mutex_lock(&eq->mutex);
	ret = rdmx_eq_take(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->mutex);
	return ret;
}

static ssize_t rdmx_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			       uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	struct rdmx_eq_event *ev;
	ssize_t ret = -FI_EAGAIN;

	pthread_mutex_lock(&eq->mutex);
	if (!rdmx_dlist_empty(&eq->events)) {
		ev = rdmx_container_of(eq->events.next, struct rdmx_eq_event, link);
		if (ev->flags & RDMX_EQ_ERR) {
			memcpy(buf, ev->data, RDMX_MIN(ev->len, sizeof(*buf)));
			ret = sizeof(*buf);
			if (!(flags & FI_PEEK)) {
				rdmx_dlist_remove(&ev->link);
				free(eq->last_err);
				eq->last_err = ev;
			}
		}
	}
	pthread_mutex_unlock(&eq->mutex);
	return ret;
}

static ssize_t rdmx_eq_write(struct fid_eq *eq_fid, uint32_t event,
			     const void *buf, size_t len, uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	struct rdmx_eq_event *ev;

	if ((flags & RDMX_EQ_ERR) && len != sizeof(struct fi_eq_err_entry))
		return -FI_EINVAL;
	ev = malloc(sizeof(*ev) + len);
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	ev->flags = flags & RDMX_EQ_ERR;
	ev->len = len;
	memcpy(ev->data, buf, len);
	pthread_mutex_lock(&eq->mutex);
	rdmx_dlist_insert_tail(&eq->events, &ev->link);
	pthread_cond_signal(&eq->cond);
	pthread_mutex_unlock(&eq->mutex);
	return (ssize_t) len;
}

static ssize_t rdmx_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			     size_t len, int timeout, uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	struct timespec until;
	ssize_t ret;

	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	clock_gettime(CLOCK_REALTIME, &until);
	if (timeout >= 0) {
		until.tv_sec += timeout / 1000;
		until.tv_nsec += (long) (timeout % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&eq->mutex);
	while ((ret = rdmx_eq_take(eq, event, buf, len, flags)) == -FI_EAGAIN) {
		int err = timeout < 0 ? pthread_cond_wait(&eq->cond, &eq->mutex) :
			  pthread_cond_timedwait(&eq->cond, &eq->mutex, &until);

		if (err == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&eq->mutex);
	return ret;
}

static const char *rdmx_eq_strerror(struct fid_eq *eq_fid, int prov_errno,
				    const void *err_data, char *buf, size_t len)
{
	const char *str = fi_strerror(prov_errno);

	(void) eq_fid; (void) err_data;
	if (buf && len) {
		strncpy(buf, str, len - 1);
		buf[len - 1] = '\0';
	}
	return str;
}

static int rdmx_eq_close(struct fid *fid)
{
	struct rdmx_eq *eq = rdmx_container_of(fid, struct rdmx_eq, eq_fid.fid);
	struct rdmx_dlist *it;

	while ((it = rdmx_dlist_pop_front(&eq->events)))
		free(rdmx_container_of(it, struct rdmx_eq_event, link));
	free(eq->last_err);
	pthread_cond_destroy(&eq->cond);
	pthread_mutex_destroy(&eq->mutex);
	rdmx_ref_put(&eq->fabric->refs);
	free(eq);
	return 0;
}

static struct fi_ops rdmx_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_eq_close,
	.bind = rdmx_no_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_eq rdmx_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = rdmx_eq_read,
	.readerr = rdmx_eq_readerr,
	.write = rdmx_eq_write,
	.sread = rdmx_eq_sread,
	.strerror = rdmx_eq_strerror,
};

int rdmx_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		 struct fid_eq **eq_p, void *context)
{
	struct rdmx_fabric *fab = rdmx_container_of(fabric, struct rdmx_fabric,
						    fabric_fid);
	struct rdmx_eq *eq;

	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_MUTEX_COND) {
		RDMX_WARN(FI_LOG_EQ, "eq wait object %d not supported\n", attr->wait_obj);
		return -FI_ENOSYS;
	}
	if (attr->flags & ~(uint64_t) FI_WRITE) {
		RDMX_WARN(FI_LOG_EQ, "eq flags %#lx not supported\n",
			  (unsigned long) attr->flags);
		return -FI_ENOSYS;
	}
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	pthread_mutex_init(&eq->mutex, NULL);
	pthread_cond_init(&eq->cond, NULL);
	rdmx_dlist_init(&eq->events);
	eq->fabric = fab;
	eq->wait_obj = attr->wait_obj;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &rdmx_eq_fi_ops;
	eq->eq_fid.ops = &rdmx_eq_ops;
	rdmx_ref_get(&fab->refs);
	*eq_p = &eq->eq_fid;
	return 0;
}
