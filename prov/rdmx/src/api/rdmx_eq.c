/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: event queues: the connection events of FI_EP_MSG endpoints and
 * passive endpoints (their sources, progressed by every read), and what
 * the application writes with fi_eq_write; fi_eq_sread sleeps on the
 * queue's wait object (rdmx_wait.h) until one comes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rdmx.h"
#include "rdmx_eq.h"
#include "rdmx_fabric.h"
#include "rdmx_stubs.h"
#include "rdmx_wait.h"

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
	struct rdmx_dlist	events;		/* of struct rdmx_eq_event */
	struct rdmx_eq_event	*last_err;	/* kept until the next read */
	struct rdmx_waitable	waitable;	/* wait NULL: FI_WAIT_NONE */
	pthread_mutex_t		src_lock;	/* sources; held over a round of
						   their progress, before domain
						   locks and mutex */
	struct rdmx_dlist	sources;	/* of rdmx_eq_source */
	int			refs;		/* sources */
	size_t			size;		/* fi_eq_attr's, 0 if none */
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

/*
 * Progresses every source (arming it with arm); 0, or -FI_EAGAIN when
 * one has work already.
 */
static int rdmx_eq_progress(struct rdmx_eq *eq, bool arm, uint64_t *due_p)
{
	struct rdmx_dlist *it;
	int ret = 0;

	pthread_mutex_lock(&eq->src_lock);
	rdmx_dlist_foreach(&eq->sources, it) {
		struct rdmx_eq_source *src = rdmx_container_of(it, struct rdmx_eq_source, link);

		if (src->progress(src, arm, due_p))
			ret = -FI_EAGAIN;
	}
	pthread_mutex_unlock(&eq->src_lock);
	return ret;
}

static ssize_t rdmx_eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			    size_t len, uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	uint64_t due = UINT64_MAX;
	ssize_t ret;

	(void) rdmx_eq_progress(eq, false, &due);
	pthread_mutex_lock(&eq->mutex);
	ret = rdmx_eq_take(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->mutex);
	return ret;
}

static ssize_t rdmx_eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			       uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	uint64_t due = UINT64_MAX;
	struct rdmx_eq_event *ev;
	ssize_t ret = -FI_EAGAIN;

	(void) rdmx_eq_progress(eq, false, &due);
	pthread_mutex_lock(&eq->mutex);
	if (!rdmx_dlist_empty(&eq->events)) {
		ev = rdmx_container_of(eq->events.next, struct rdmx_eq_event, link);
		if (ev->flags & RDMX_EQ_ERR) {
			void *data = buf->err_data;
			size_t size = buf->err_data_size;

			memcpy(buf, ev->data, RDMX_MIN(ev->len, sizeof(*buf)));
			/* A buffer of the caller's takes the data (fi_eq(3), since 1.5). */
			if (size && data) {
				buf->err_data_size = RDMX_MIN(size, buf->err_data_size);
				memcpy(data, buf->err_data, buf->err_data_size);
				buf->err_data = data;
			}
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

/* Queues ev, filled; wakes a reader. */
static void rdmx_eq_queue(struct rdmx_eq *eq, struct rdmx_eq_event *ev)
{
	pthread_mutex_lock(&eq->mutex);
	rdmx_dlist_insert_tail(&eq->events, &ev->link);
	pthread_mutex_unlock(&eq->mutex);
	rdmx_wait_poke(eq->waitable.wait);
}

/* An event of len bytes (and room for more after them), not queued. */
static struct rdmx_eq_event *rdmx_eq_event_new(uint32_t event, uint64_t flags, size_t len,
					       size_t more)
{
	struct rdmx_eq_event *ev = malloc(sizeof(*ev) + len + more);

	if (ev) {
		ev->event = event;
		ev->flags = flags & RDMX_EQ_ERR;
		ev->len = len;
	}
	return ev;
}

static ssize_t rdmx_eq_write(struct fid_eq *eq_fid, uint32_t event,
			     const void *buf, size_t len, uint64_t flags)
{
	struct rdmx_eq_event *ev;

	if ((flags & RDMX_EQ_ERR) && len != sizeof(struct fi_eq_err_entry))
		return -FI_EINVAL;
	ev = rdmx_eq_event_new(event, flags, len, 0);
	if (!ev)
		return -FI_ENOMEM;
	memcpy(ev->data, buf, len);
	rdmx_eq_queue(rdmx_eq(eq_fid), ev);
	return (ssize_t) len;
}

int rdmx_eq_push(struct fid_eq *eq_fid, uint32_t event, const void *buf, size_t len)
{
	return rdmx_eq_write(eq_fid, event, buf, len, 0) < 0 ? -FI_ENOMEM : 0;
}

int rdmx_eq_push_err(struct fid_eq *eq_fid, fid_t fid, int err, const void *data, size_t len)
{
	struct rdmx_eq_event *ev = rdmx_eq_event_new(0, RDMX_EQ_ERR,
						     sizeof(struct fi_eq_err_entry), len);
	struct fi_eq_err_entry entry = {
		.fid = fid,
		.context = fid->context,
		.err = err,
		.prov_errno = err,
		.err_data_size = len,
	};

	if (!ev)
		return -FI_ENOMEM;
	/* The data lives in the event, which the EQ keeps until the next read. */
	if (len) {
		memcpy(ev->data + sizeof(entry), data, len);
		entry.err_data = ev->data + sizeof(entry);
	}
	memcpy(ev->data, &entry, sizeof(entry));
	rdmx_eq_queue(rdmx_eq(eq_fid), ev);
	return 0;
}

void rdmx_eq_attach(struct fid_eq *eq_fid, struct rdmx_eq_source *src)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);

	pthread_mutex_lock(&eq->src_lock);
	rdmx_dlist_insert_tail(&eq->sources, &src->link);
	rdmx_ref_get(&eq->refs);
	pthread_mutex_unlock(&eq->src_lock);
}

void rdmx_eq_detach(struct fid_eq *eq_fid, struct rdmx_eq_source *src)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);

	pthread_mutex_lock(&eq->src_lock);
	rdmx_dlist_remove(&src->link);
	rdmx_ref_put(&eq->refs);
	pthread_mutex_unlock(&eq->src_lock);
}

struct rdmx_wait *rdmx_eq_wait(struct fid_eq *eq_fid)
{
	return rdmx_eq(eq_fid)->waitable.wait;
}

size_t rdmx_eq_size(struct fid_eq *eq_fid)
{
	return rdmx_eq(eq_fid)->size;
}

/* The EQ's rdmx_waitable check: its sources progressed, an event queued. */
static int rdmx_eq_check(struct rdmx_waitable *m, bool arm, uint64_t *due_p)
{
	struct rdmx_eq *eq = rdmx_container_of(m, struct rdmx_eq, waitable);
	int busy = rdmx_eq_progress(eq, arm, due_p);
	bool ready;

	pthread_mutex_lock(&eq->mutex);
	ready = !rdmx_dlist_empty(&eq->events);
	pthread_mutex_unlock(&eq->mutex);
	return ready ? 1 : busy;
}

static const struct rdmx_waitable_ops rdmx_eq_waitable_ops = {
	.check = rdmx_eq_check,
};

struct rdmx_waitable *rdmx_eq_waitable(struct fid *fid)
{
	return &rdmx_container_of(fid, struct rdmx_eq, eq_fid.fid)->waitable;
}

static ssize_t rdmx_eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			     size_t len, int timeout, uint64_t flags)
{
	struct rdmx_eq *eq = rdmx_eq(eq_fid);
	ssize_t ret;

	if (!eq->waitable.wait)
		return -FI_ENOSYS;
	do {
		if (rdmx_wait_for(eq->waitable.wait, &eq->waitable, timeout))
			return -FI_EAGAIN;
		ret = rdmx_eq_read(eq_fid, event, buf, len, flags);
		/* Another reader took it: wait again (for the whole timeout). */
	} while (ret == -FI_EAGAIN);
	return ret;
}

static int rdmx_eq_control(struct fid *fid, int command, void *arg)
{
	struct rdmx_eq *eq = rdmx_container_of(fid, struct rdmx_eq, eq_fid.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	return rdmx_wait_getwait(eq->waitable.wait, arg);
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

	if (rdmx_ref_read(&eq->refs)) {
		RDMX_WARN(FI_LOG_EQ, "eq still bound to %d endpoints\n", rdmx_ref_read(&eq->refs));
		return -FI_EBUSY;
	}
	while ((it = rdmx_dlist_pop_front(&eq->events)))
		free(rdmx_container_of(it, struct rdmx_eq_event, link));
	free(eq->last_err);
	rdmx_wait_leave(&eq->waitable);
	rdmx_wait_put(eq->waitable.wait);
	pthread_mutex_destroy(&eq->mutex);
	pthread_mutex_destroy(&eq->src_lock);
	rdmx_ref_put(&eq->fabric->refs);
	free(eq);
	return 0;
}

static struct fi_ops rdmx_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_eq_close,
	.bind = rdmx_no_bind,
	.control = rdmx_eq_control,
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
	struct rdmx_wait *wait;
	struct rdmx_eq *eq;
	int ret;

	if (attr->flags & ~(uint64_t) FI_WRITE) {
		RDMX_WARN(FI_LOG_EQ, "eq flags %#lx not supported\n",
			  (unsigned long) attr->flags);
		return -FI_ENOSYS;
	}
	ret = rdmx_wait_get(attr->wait_obj, attr->wait_set, &wait);
	if (ret)
		return ret;
	eq = calloc(1, sizeof(*eq));
	if (!eq) {
		rdmx_wait_put(wait);
		return -FI_ENOMEM;
	}
	pthread_mutex_init(&eq->mutex, NULL);
	pthread_mutex_init(&eq->src_lock, NULL);
	rdmx_dlist_init(&eq->events);
	rdmx_dlist_init(&eq->sources);
	eq->fabric = fab;
	eq->size = attr->size;
	eq->waitable.ops = &rdmx_eq_waitable_ops;
	rdmx_wait_join(wait, &eq->waitable);
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &rdmx_eq_fi_ops;
	eq->eq_fid.ops = &rdmx_eq_ops;
	rdmx_ref_get(&fab->refs);
	*eq_p = &eq->eq_fid;
	return 0;
}
