/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: completion queues (see rdmx_cq.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_cq.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_info.h"
#include "rdmx_stubs.h"

/* The largest CQ depth accepted (it grows past it when needed). */
#define RDMX_CQ_SIZE_MAX	(1 << 24)

static struct rdmx_cq *rdmx_cq(struct fid_cq *cq_fid)
{
	return rdmx_container_of(cq_fid, struct rdmx_cq, cq_fid);
}

static const size_t rdmx_cq_entry_size[] = {
	[FI_CQ_FORMAT_CONTEXT] = sizeof(struct fi_cq_entry),
	[FI_CQ_FORMAT_MSG] = sizeof(struct fi_cq_msg_entry),
	[FI_CQ_FORMAT_DATA] = sizeof(struct fi_cq_data_entry),
	[FI_CQ_FORMAT_TAGGED] = sizeof(struct fi_cq_tagged_entry),
};

/* An rdmx_cq_entry begins as a tagged entry does, field for field. */
#define RDMX_CQ_SAME(field) \
	_Static_assert(offsetof(struct rdmx_cq_entry, field) == \
		      offsetof(struct fi_cq_tagged_entry, field), #field)
RDMX_CQ_SAME(op_context);
RDMX_CQ_SAME(flags);
RDMX_CQ_SAME(len);
RDMX_CQ_SAME(buf);
RDMX_CQ_SAME(data);
RDMX_CQ_SAME(tag);

/*
 * Writes one entry in the CQ's format at out. Each format is a prefix of
 * the tagged one, and so of an rdmx_cq_entry: the entry goes out as one
 * copy whose size the compiler knows, which it makes a few moves rather
 * than a call to memcpy.
 */
static void rdmx_cq_format(enum fi_cq_format format,
			   const struct rdmx_cq_entry *e, void *out)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT:
		memcpy(out, e, sizeof(struct fi_cq_entry));
		break;
	case FI_CQ_FORMAT_MSG:
		memcpy(out, e, sizeof(struct fi_cq_msg_entry));
		break;
	case FI_CQ_FORMAT_DATA:
		memcpy(out, e, sizeof(struct fi_cq_data_entry));
		break;
	default:
		memcpy(out, e, sizeof(struct fi_cq_tagged_entry));
		break;
	}
}

static int rdmx_cq_grow(struct rdmx_cq *cq)
{
	size_t cap = cq->cap * 2;
	struct rdmx_cq_entry *ring = malloc(cap * sizeof(*ring));

	if (!ring)
		return -FI_ENOMEM;
	for (uint64_t i = cq->head; i != cq->tail; i++)
		ring[i & (cap - 1)] = cq->ring[i & (cq->cap - 1)];
	free(cq->ring);
	cq->ring = ring;
	cq->cap = cap;
	return 0;
}

/* rdmx_cq_write to a full ring: it doubles first. */
static RDMX_COLD int rdmx_cq_write_full(struct rdmx_cq *cq,
					const struct rdmx_cq_entry *entry)
{
	if (rdmx_cq_grow(cq)) {
		RDMX_WARN(FI_LOG_CQ, "completion queue overrun\n");
		return -FI_ENOMEM;
	}
	return rdmx_cq_write(cq, entry);
}

int rdmx_cq_write(struct rdmx_cq *cq, const struct rdmx_cq_entry *entry)
{
	if (cq->tail - cq->head == cq->cap)
		return rdmx_cq_write_full(cq, entry);
	cq->ring[cq->tail++ & (cq->cap - 1)] = *entry;
	rdmx_wait_poke(cq->waitable.wait);
	return 0;
}

/* An error entry for entry with len bytes of err_data (zeroed); NULL without memory. */
static struct rdmx_cq_err *rdmx_cq_err_new(const struct rdmx_cq_entry *entry, int err,
					   size_t olen, size_t len)
{
	struct rdmx_cq_err *ce = calloc(1, sizeof(*ce) + len);

	if (!ce)
		return NULL;
	ce->entry.op_context = entry->op_context;
	ce->entry.flags = entry->flags;
	ce->entry.len = entry->len;
	ce->entry.buf = entry->buf;
	ce->entry.data = entry->data;
	ce->entry.tag = entry->tag;
	ce->entry.olen = olen;
	ce->entry.err = err;
	ce->entry.prov_errno = err;
	ce->src = entry->src;
	ce->text_len = len;
	return ce;
}

static void rdmx_cq_err_queue(struct rdmx_cq *cq, struct rdmx_cq_err *ce)
{
	rdmx_dlist_insert_tail(&cq->errs, &ce->link);
	rdmx_wait_poke(cq->waitable.wait);
}

int rdmx_cq_write_err(struct rdmx_cq *cq, const struct rdmx_cq_entry *entry,
		      int err, size_t olen, const char *text)
{
	size_t text_len = text ? strnlen(text, RDMX_ERR_DATA_MAX - 1) + 1 : 0;
	struct rdmx_cq_err *ce = rdmx_cq_err_new(entry, err, olen, text_len);

	if (!ce)
		return -FI_ENOMEM;
	if (text_len)
		memcpy(ce->text, text, text_len - 1);
	rdmx_cq_err_queue(cq, ce);
	return 0;
}

int rdmx_cq_write_source_err(struct rdmx_cq *cq, const struct rdmx_cq_entry *entry,
			     const void *addr, size_t len)
{
	struct rdmx_cq_err *ce = rdmx_cq_err_new(entry, FI_EADDRNOTAVAIL, 0, len);

	if (!ce)
		return -FI_ENOMEM;
	memcpy(ce->text, addr, len);
	rdmx_cq_err_queue(cq, ce);
	return 0;
}

/* Copies out up to count queued entries; the caller holds the domain lock. */
static size_t rdmx_cq_copy_out(struct rdmx_cq *cq, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	/* In locals: a write through buf could alias the CQ for all the compiler knows. */
	const struct rdmx_cq_entry *ring = cq->ring;
	enum fi_cq_format format = cq->format;
	size_t size = rdmx_cq_entry_size[format], n = 0;
	uint64_t head = cq->head, tail = cq->tail, mask = cq->cap - 1;

	for (; n < count && head != tail; n++, head++) {
		const struct rdmx_cq_entry *e = &ring[head & mask];

		rdmx_cq_format(format, e, (char *) buf + n * size);
		if (src_addr)
			src_addr[n] = e->src;
	}
	cq->head = head;
	return n;
}

/* Reads up to count entries; the caller holds the domain lock. */
static ssize_t rdmx_cq_take(struct rdmx_cq *cq, void *buf, size_t count,
			    fi_addr_t *src_addr)
{
	size_t n;

	/*
	 * Progress when nothing is ready or nothing is asked for (a read of
	 * no entries only drives progress), as libfabric's own CQs do: an
	 * entry already queued (a send completed at posting, say) is handed
	 * out without a device poll, a system call on the udp device; and
	 * when an endpoint holds sends back, which the read lets go.
	 */
	if (!count || (cq->head == cq->tail && rdmx_dlist_empty(&cq->errs)) ||
	    rdmx_epset_holding(&cq->eps))
		rdmx_epset_progress(&cq->eps);
	if (!rdmx_dlist_empty(&cq->errs))
		return -FI_EAVAIL;
	if (cq->head == cq->tail)
		return -FI_EAGAIN;
	n = rdmx_cq_copy_out(cq, buf, count, src_addr);
	return n ? (ssize_t) n : -FI_EAGAIN;
}

static ssize_t rdmx_cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				fi_addr_t *src_addr)
{
	struct rdmx_cq *cq = rdmx_cq(cq_fid);
	ssize_t ret;

	rdmx_lock_acquire(&cq->domain->lock);
	ret = rdmx_cq_take(cq, buf, count, src_addr);
	rdmx_lock_release(&cq->domain->lock);
	return ret;
}

static ssize_t rdmx_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return rdmx_cq_readfrom(cq_fid, buf, count, NULL);
}

static ssize_t rdmx_cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
			       uint64_t flags)
{
	struct rdmx_cq *cq = rdmx_cq(cq_fid);
	struct rdmx_cq_err *ce;
	void *user_data = buf->err_data;
	size_t user_size = buf->err_data_size;
	bool copy_out;

	if (flags)
		return -FI_EBADFLAGS;
	rdmx_lock_acquire(&cq->domain->lock);
	if (rdmx_dlist_empty(&cq->errs)) {
		rdmx_lock_release(&cq->domain->lock);
		return -FI_EAGAIN;
	}
	ce = rdmx_container_of(rdmx_dlist_pop_front(&cq->errs), struct rdmx_cq_err,
			       link);
	/* Callers before API 1.5 pass the older entry, without err_data_size. */
	if (FI_VERSION_LT(cq->domain->api_version, FI_VERSION(1, 5))) {
		memcpy(buf, &ce->entry, offsetof(struct fi_cq_err_entry, err_data_size));
		buf->err_data = ce->text_len ? ce->text : NULL;
		free(cq->last_err);
		cq->last_err = ce;
		rdmx_lock_release(&cq->domain->lock);
		return 1;
	}
	*buf = ce->entry;
	/*
	 * fi_cq(3): from API 1.5 a caller that offers a buffer gets the data
	 * copied into it; otherwise it gets our copy, valid until next read.
	 * A caller reusing an entry whose err_data still points at our last
	 * copy offers no buffer of its own.
	 */
	/* No provider data: the caller's buffer is neither read nor written. */
	copy_out = ce->text_len &&
		   FI_VERSION_GE(cq->domain->api_version, FI_VERSION(1, 5)) &&
		   user_size > 0 &&
		   !(cq->last_err && user_data == cq->last_err->text);
	if (!ce->text_len) {
		buf->err_data = NULL;
		buf->err_data_size = 0;
	} else if (copy_out) {
		buf->err_data = user_data;
		buf->err_data_size = RDMX_MIN(user_size, ce->text_len);
		memcpy(user_data, ce->text, buf->err_data_size);
	} else {
		buf->err_data = ce->text;
		buf->err_data_size = ce->text_len;
	}
	free(cq->last_err);
	cq->last_err = ce;
	rdmx_lock_release(&cq->domain->lock);
	return 1;
}

/* Whether the CQ has something for a reader; domain lock held. */
static bool rdmx_cq_ready(const struct rdmx_cq *cq)
{
	return cq->head != cq->tail || !rdmx_dlist_empty(&cq->errs) || cq->signaled;
}

/* The CQ's rdmx_waitable check: its endpoints progressed, then armed. */
static int rdmx_cq_check(struct rdmx_waitable *m, bool arm, uint64_t *due_p)
{
	struct rdmx_cq *cq = rdmx_container_of(m, struct rdmx_cq, waitable);
	int ret = 0;

	rdmx_lock_acquire(&cq->domain->lock);
	if (!rdmx_cq_ready(cq))
		rdmx_epset_progress(&cq->eps);
	if (rdmx_cq_ready(cq))
		ret = 1;
	if (!ret && arm)
		ret = rdmx_epset_arm(&cq->eps, due_p);
	rdmx_lock_release(&cq->domain->lock);
	return ret;
}

static const struct rdmx_waitable_ops rdmx_cq_waitable_ops = {
	.check = rdmx_cq_check,
};

struct rdmx_waitable *rdmx_cq_waitable(struct fid *fid)
{
	return &rdmx_container_of(fid, struct rdmx_cq, cq_fid.fid)->waitable;
}

static ssize_t rdmx_cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
				 fi_addr_t *src_addr, const void *cond,
				 int timeout)
{
	struct rdmx_cq *cq = rdmx_cq(cq_fid);
	uint64_t start = rdmx_clock_ns();
	ssize_t ret;

	(void) cond;
	if (!cq->waitable.wait)
		return -FI_ENOSYS;
	for (;;) {
		int left = timeout;

		if (timeout > 0)
			left = (int) RDMX_MAX(0, (int64_t) timeout -
					     (int64_t) ((rdmx_clock_ns() - start) / 1000000ULL));
		if (rdmx_wait_for(cq->waitable.wait, &cq->waitable, left))
			return -FI_EAGAIN;
		rdmx_lock_acquire(&cq->domain->lock);
		ret = rdmx_cq_take(cq, buf, count, src_addr);
		if (ret == -FI_EAGAIN && cq->signaled) {
			cq->signaled = false;
			rdmx_lock_release(&cq->domain->lock);
			return -FI_EAGAIN;
		}
		rdmx_lock_release(&cq->domain->lock);
		/* Another reader took what woke us: wait again. */
		if (ret != -FI_EAGAIN)
			return ret;
	}
}

static ssize_t rdmx_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			     const void *cond, int timeout)
{
	return rdmx_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int rdmx_cq_signal(struct fid_cq *cq_fid)
{
	struct rdmx_cq *cq = rdmx_cq(cq_fid);

	rdmx_lock_acquire(&cq->domain->lock);
	cq->signaled = true;
	rdmx_lock_release(&cq->domain->lock);
	rdmx_wait_poke(cq->waitable.wait);
	return 0;
}

static const char *rdmx_cq_strerror(struct fid_cq *cq_fid, int prov_errno,
				    const void *err_data, char *buf, size_t len)
{
	/* A sender's address (FI_SOURCE_ERR) is no text. */
	const char *str = err_data && prov_errno != FI_EADDRNOTAVAIL ? err_data :
			  fi_strerror(prov_errno);

	(void) cq_fid;
	if (buf && len) {
		strncpy(buf, str, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return str;
}

static int rdmx_cq_close(struct fid *fid)
{
	struct rdmx_cq *cq = rdmx_container_of(fid, struct rdmx_cq, cq_fid.fid);
	struct rdmx_dlist *it;

	if (rdmx_ref_read(&cq->refs)) {
		RDMX_WARN(FI_LOG_CQ, "cq still bound to endpoints\n");
		return -FI_EBUSY;
	}
	while ((it = rdmx_dlist_pop_front(&cq->errs)))
		free(rdmx_container_of(it, struct rdmx_cq_err, link));
	free(cq->last_err);
	free(cq->ring);
	rdmx_epset_destruct(&cq->eps);
	rdmx_wait_leave(&cq->waitable);
	rdmx_wait_put(cq->waitable.wait);
	rdmx_ref_put(&cq->domain->refs);
	free(cq);
	return 0;
}

static int rdmx_cq_control(struct fid *fid, int command, void *arg)
{
	struct rdmx_cq *cq = rdmx_container_of(fid, struct rdmx_cq, cq_fid.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	return rdmx_wait_getwait(cq->waitable.wait, arg);
}

static struct fi_ops rdmx_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_cq_close,
	.bind = rdmx_no_bind,
	.control = rdmx_cq_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_cq rdmx_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = rdmx_cq_read,
	.readfrom = rdmx_cq_readfrom,
	.readerr = rdmx_cq_readerr,
	.sread = rdmx_cq_sread,
	.sreadfrom = rdmx_cq_sreadfrom,
	.signal = rdmx_cq_signal,
	.strerror = rdmx_cq_strerror,
};

int rdmx_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		 struct fid_cq **cq_p, void *context)
{
	struct rdmx_domain *dom = rdmx_domain(domain);
	enum fi_cq_format format = attr->format;
	struct rdmx_wait *wait;
	struct rdmx_cq *cq;
	size_t cap = 1;
	int ret;

	if (format == FI_CQ_FORMAT_UNSPEC)
		format = FI_CQ_FORMAT_CONTEXT;
	if (format > FI_CQ_FORMAT_TAGGED) {
		RDMX_WARN(FI_LOG_CQ, "unknown cq format %d\n", attr->format);
		return -FI_EINVAL;
	}
	if (attr->flags & ~(uint64_t) FI_AFFINITY) {
		RDMX_WARN(FI_LOG_CQ, "cq flags %#lx not supported\n",
			  (unsigned long) attr->flags);
		return -FI_EBADFLAGS;
	}
	if (attr->size > RDMX_CQ_SIZE_MAX) {
		RDMX_WARN(FI_LOG_CQ, "cq size %zu above %d\n", attr->size, RDMX_CQ_SIZE_MAX);
		return -FI_EINVAL;
	}
	while (cap < (attr->size ? attr->size : g_rdmx_params.cq_size))
		cap *= 2;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	ret = rdmx_wait_get(attr->wait_obj, attr->wait_set, &wait);
	if (ret)
		goto err_free_cq;
	ret = -FI_ENOMEM;
	cq->ring = calloc(cap, sizeof(*cq->ring));
	if (!cq->ring)
		goto err_put_wait;
	cq->cap = cap;
	cq->domain = dom;
	cq->format = format;
	cq->waitable.ops = &rdmx_cq_waitable_ops;
	rdmx_wait_join(wait, &cq->waitable);
	rdmx_dlist_init(&cq->errs);
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &rdmx_cq_fi_ops;
	cq->cq_fid.ops = &rdmx_cq_ops;
	rdmx_ref_get(&dom->refs);
	*cq_p = &cq->cq_fid;
	return 0;

err_put_wait:
	rdmx_wait_put(wait);
err_free_cq:
	free(cq);
	return ret;
}
