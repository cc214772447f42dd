/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: poll sets (see rdmx_poll.h). */
#include <pthread.h>
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_cntr.h"
#include "rdmx_cq.h"
#include "rdmx_domain.h"
#include "rdmx_poll.h"
#include "rdmx_stubs.h"

struct rdmx_poll_member {
	struct fid		*fid;		/* its context is what fi_poll returns */
	struct rdmx_waitable	*waitable;	/* whether it has something */
	int			*refs;		/* the object's, held while a member */
};

struct rdmx_poll {
	struct fid_poll		poll_fid;
	struct rdmx_domain	*domain;
	pthread_mutex_t		lock;		/* members */
	struct rdmx_poll_member	*members;
	size_t			cnt;
};

static struct rdmx_poll *rdmx_poll(struct fid_poll *poll_fid)
{
	return rdmx_container_of(poll_fid, struct rdmx_poll, poll_fid);
}

static int rdmx_poll_poll(struct fid_poll *poll_fid, void **context, int count)
{
	struct rdmx_poll *ps = rdmx_poll(poll_fid);
	uint64_t due = UINT64_MAX;
	int n = 0;

	pthread_mutex_lock(&ps->lock);
	for (size_t i = 0; i < ps->cnt && n < count; i++) {
		struct rdmx_waitable *m = ps->members[i].waitable;

		if (m->ops->check(m, false, &due) == 1)
			context[n++] = ps->members[i].fid->context;
	}
	pthread_mutex_unlock(&ps->lock);
	return n;
}

/* The member a CQ or counter fid would be; false for any other class. */
static bool rdmx_poll_member_of(struct fid *fid, struct rdmx_poll_member *out)
{
	out->fid = fid;
	switch (fid->fclass) {
	case FI_CLASS_CQ:
		out->waitable = rdmx_cq_waitable(fid);
		out->refs = &rdmx_container_of(fid, struct rdmx_cq, cq_fid.fid)->refs;
		return true;
	case FI_CLASS_CNTR:
		out->waitable = rdmx_cntr_waitable(fid);
		out->refs = &rdmx_container_of(fid, struct rdmx_cntr, cntr_fid.fid)->refs;
		return true;
	default:
		return false;
	}
}

static int rdmx_poll_add(struct fid_poll *poll_fid, struct fid *event_fid, uint64_t flags)
{
	struct rdmx_poll *ps = rdmx_poll(poll_fid);
	struct rdmx_poll_member m, *members;

	if (flags || !rdmx_poll_member_of(event_fid, &m)) {
		RDMX_WARN(FI_LOG_DOMAIN, "fi_poll_add: only CQs and counters, no flags\n");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&ps->lock);
	members = realloc(ps->members, (ps->cnt + 1) * sizeof(*members));
	if (!members) {
		pthread_mutex_unlock(&ps->lock);
		return -FI_ENOMEM;
	}
	ps->members = members;
	ps->members[ps->cnt++] = m;
	rdmx_ref_get(m.refs);
	pthread_mutex_unlock(&ps->lock);
	return 0;
}

static int rdmx_poll_del(struct fid_poll *poll_fid, struct fid *event_fid, uint64_t flags)
{
	struct rdmx_poll *ps = rdmx_poll(poll_fid);
	int ret = -FI_EINVAL;

	if (flags)
		return -FI_EINVAL;
	pthread_mutex_lock(&ps->lock);
	for (size_t i = 0; i < ps->cnt; i++) {
		if (ps->members[i].fid == event_fid) {
			rdmx_ref_put(ps->members[i].refs);
			ps->members[i] = ps->members[--ps->cnt];
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ps->lock);
	return ret;
}

static int rdmx_poll_close(struct fid *fid)
{
	struct rdmx_poll *ps = rdmx_container_of(fid, struct rdmx_poll, poll_fid.fid);

	for (size_t i = 0; i < ps->cnt; i++)
		rdmx_ref_put(ps->members[i].refs);
	pthread_mutex_destroy(&ps->lock);
	rdmx_ref_put(&ps->domain->refs);
	free(ps->members);
	free(ps);
	return 0;
}

static struct fi_ops rdmx_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_poll_close,
	.bind = rdmx_no_bind,
	.control = rdmx_no_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_poll rdmx_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = rdmx_poll_poll,
	.poll_add = rdmx_poll_add,
	.poll_del = rdmx_poll_del,
};

int rdmx_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		   struct fid_poll **pollset_p)
{
	struct rdmx_poll *ps;

	if (attr && attr->flags) {
		RDMX_WARN(FI_LOG_DOMAIN, "poll set flags %#lx not supported\n",
			  (unsigned long) attr->flags);
		return -FI_EINVAL;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -FI_ENOMEM;
	pthread_mutex_init(&ps->lock, NULL);
	ps->domain = rdmx_domain(domain);
	ps->poll_fid.fid.fclass = FI_CLASS_POLL;
	ps->poll_fid.fid.ops = &rdmx_poll_fi_ops;
	ps->poll_fid.ops = &rdmx_poll_ops;
	rdmx_ref_get(&ps->domain->refs);
	*pollset_p = &ps->poll_fid;
	return 0;
}
