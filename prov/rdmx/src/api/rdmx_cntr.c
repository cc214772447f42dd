/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: completion counters (see rdmx_cntr.h). */
#include <sched.h>
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_clock.h"
#include "rdmx_cntr.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_stubs.h"

static struct rdmx_cntr *rdmx_cntr(struct fid_cntr *cntr_fid)
{
	return rdmx_container_of(cntr_fid, struct rdmx_cntr, cntr_fid);
}

static uint64_t rdmx_cntr_load(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_SEQ_CST);
}

/* One fi_cntr_wait under way: a member of the counter's wait while it lasts. */
struct rdmx_cntr_waiter {
	struct rdmx_waitable	waitable;
	struct rdmx_cntr	*cntr;
	uint64_t		threshold;
	uint64_t		err;		/* the error count when it began */
};

/* Its endpoints' progress, and a region counter's domain's; lock held. */
static void rdmx_cntr_progress_locked(struct rdmx_cntr *cntr)
{
	rdmx_epset_progress(&cntr->eps);
	if (cntr->mr_binds)
		rdmx_epset_progress(&cntr->domain->rma_eps);
}

/*
 * Progresses the counter's endpoints unless reached() already holds, and
 * arms them with arm: a waitable's check (rdmx_wait.h) for the counter.
 */
static int rdmx_cntr_check_for(struct rdmx_cntr *cntr, bool (*reached)(const void *),
			       const void *arg, bool arm, uint64_t *due_p)
{
	bool done;
	int ret = 0;

	rdmx_lock_acquire(&cntr->domain->lock);
	/* Once: the counter's own reached() takes the value it saw as seen. */
	done = reached(arg);
	if (!done || rdmx_epset_holding(&cntr->eps)) {
		rdmx_cntr_progress_locked(cntr);
		done = reached(arg);
	}
	if (done)
		ret = 1;
	else if (arm)
		ret = rdmx_epset_arm(&cntr->eps, due_p);
	/*
	 * The endpoints behind a region's counter did not put their devices
	 * in its wait: a sleeper looks again every tick.
	 */
	if (!ret && arm && cntr->mr_binds)
		*due_p = RDMX_MIN(*due_p, rdmx_clock_ns() + RDMX_DEV_WAIT_TICK_NS);
	rdmx_lock_release(&cntr->domain->lock);
	return ret;
}

/* A waiter's: the threshold reached, or the error count changed. */
static bool rdmx_cntr_waiter_reached(const void *arg)
{
	const struct rdmx_cntr_waiter *w = arg;

	return rdmx_cntr_load(&w->cntr->value) >= w->threshold ||
	       rdmx_cntr_load(&w->cntr->err) != w->err;
}

static int rdmx_cntr_waiter_check(struct rdmx_waitable *m, bool arm, uint64_t *due_p)
{
	struct rdmx_cntr_waiter *w = rdmx_container_of(m, struct rdmx_cntr_waiter, waitable);

	return rdmx_cntr_check_for(w->cntr, rdmx_cntr_waiter_reached, w, arm, due_p);
}

static const struct rdmx_waitable_ops rdmx_cntr_waiter_ops = {
	.check = rdmx_cntr_waiter_check,
};

/*
 * The counter's own, in a wait set, fi_trywait and poll sets: its value
 * or its error count moved since the last check, which then takes both
 * as seen.
 */
static bool rdmx_cntr_moved(const void *arg)
{
	struct rdmx_cntr *cntr = (struct rdmx_cntr *) arg;
	uint64_t value = rdmx_cntr_load(&cntr->value);
	uint64_t err = rdmx_cntr_load(&cntr->err);
	bool moved = value != cntr->seen || err != cntr->seen_err;

	cntr->seen = value;
	cntr->seen_err = err;
	return moved;
}

static int rdmx_cntr_check(struct rdmx_waitable *m, bool arm, uint64_t *due_p)
{
	struct rdmx_cntr *cntr = rdmx_container_of(m, struct rdmx_cntr, waitable);

	return rdmx_cntr_check_for(cntr, rdmx_cntr_moved, cntr, arm, due_p);
}

static const struct rdmx_waitable_ops rdmx_cntr_waitable_ops = {
	.check = rdmx_cntr_check,
};

struct rdmx_waitable *rdmx_cntr_waitable(struct fid *fid)
{
	return &rdmx_container_of(fid, struct rdmx_cntr, cntr_fid.fid)->waitable;
}

/* Adds value to the counter's field (or, with set, stores it) and wakes a waiter. */
static void rdmx_cntr_move(struct rdmx_cntr *cntr, uint64_t *field, uint64_t value, bool set)
{
	if (set)
		__atomic_store_n(field, value, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_add(field, value, __ATOMIC_SEQ_CST);
	rdmx_wait_poke(cntr->waitable.wait);
}

void rdmx_cntr_inc(struct rdmx_cntr *cntr)
{
	rdmx_cntr_move(cntr, &cntr->value, 1, false);
}

void rdmx_cntr_inc_err(struct rdmx_cntr *cntr)
{
	rdmx_cntr_move(cntr, &cntr->err, 1, false);
}

/* Progresses the endpoints behind the counter (manual progress). */
static void rdmx_cntr_progress(struct rdmx_cntr *cntr)
{
	rdmx_lock_acquire(&cntr->domain->lock);
	rdmx_cntr_progress_locked(cntr);
	rdmx_lock_release(&cntr->domain->lock);
}

static uint64_t rdmx_cntr_read(struct fid_cntr *cntr_fid)
{
	struct rdmx_cntr *cntr = rdmx_cntr(cntr_fid);

	rdmx_cntr_progress(cntr);
	return rdmx_cntr_load(&cntr->value);
}

static uint64_t rdmx_cntr_readerr(struct fid_cntr *cntr_fid)
{
	struct rdmx_cntr *cntr = rdmx_cntr(cntr_fid);

	rdmx_cntr_progress(cntr);
	return rdmx_cntr_load(&cntr->err);
}

static int rdmx_cntr_add(struct fid_cntr *cntr_fid, uint64_t value)
{
	rdmx_cntr_move(rdmx_cntr(cntr_fid), &rdmx_cntr(cntr_fid)->value, value, false);
	return 0;
}

static int rdmx_cntr_set(struct fid_cntr *cntr_fid, uint64_t value)
{
	rdmx_cntr_move(rdmx_cntr(cntr_fid), &rdmx_cntr(cntr_fid)->value, value, true);
	return 0;
}

static int rdmx_cntr_adderr(struct fid_cntr *cntr_fid, uint64_t value)
{
	rdmx_cntr_move(rdmx_cntr(cntr_fid), &rdmx_cntr(cntr_fid)->err, value, false);
	return 0;
}

static int rdmx_cntr_seterr(struct fid_cntr *cntr_fid, uint64_t value)
{
	rdmx_cntr_move(rdmx_cntr(cntr_fid), &rdmx_cntr(cntr_fid)->err, value, true);
	return 0;
}

/*
 * fi_cntr_wait: 0 at the threshold, -FI_EAVAIL when the error count
 * changed meanwhile, -FI_ETIMEDOUT. A counter without a wait object
 * (FI_WAIT_NONE, which fi_cntr(3) leaves undefined here) polls.
 */
static int rdmx_cntr_wait(struct fid_cntr *cntr_fid, uint64_t threshold, int timeout)
{
	struct rdmx_cntr *cntr = rdmx_cntr(cntr_fid);
	struct rdmx_cntr_waiter w = {
		.waitable.ops = &rdmx_cntr_waiter_ops,
		.cntr = cntr,
		.threshold = threshold,
		.err = rdmx_cntr_load(&cntr->err),
	};
	int ret;

	rdmx_wait_join(cntr->waitable.wait, &w.waitable);
	ret = rdmx_wait_for(cntr->waitable.wait, &w.waitable, timeout);
	rdmx_wait_leave(&w.waitable);
	if (ret)
		return ret;
	return rdmx_cntr_load(&cntr->value) >= threshold ? 0 : -FI_EAVAIL;
}

static int rdmx_cntr_control(struct fid *fid, int command, void *arg)
{
	struct rdmx_cntr *cntr = rdmx_container_of(fid, struct rdmx_cntr, cntr_fid.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	return rdmx_wait_getwait(cntr->waitable.wait, arg);
}

static int rdmx_cntr_close(struct fid *fid)
{
	struct rdmx_cntr *cntr = rdmx_container_of(fid, struct rdmx_cntr, cntr_fid.fid);

	if (rdmx_ref_read(&cntr->refs)) {
		RDMX_WARN(FI_LOG_CNTR, "counter still bound to endpoints\n");
		return -FI_EBUSY;
	}
	rdmx_epset_destruct(&cntr->eps);
	rdmx_wait_leave(&cntr->waitable);
	rdmx_wait_put(cntr->waitable.wait);
	rdmx_ref_put(&cntr->domain->refs);
	free(cntr);
	return 0;
}

static struct fi_ops rdmx_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_cntr_close,
	.bind = rdmx_no_bind,
	.control = rdmx_cntr_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_cntr rdmx_cntr_ops = {
	.size = sizeof(struct fi_ops_cntr),
	.read = rdmx_cntr_read,
	.readerr = rdmx_cntr_readerr,
	.add = rdmx_cntr_add,
	.set = rdmx_cntr_set,
	.wait = rdmx_cntr_wait,
	.adderr = rdmx_cntr_adderr,
	.seterr = rdmx_cntr_seterr,
};

int rdmx_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		   struct fid_cntr **cntr_p, void *context)
{
	struct rdmx_domain *dom = rdmx_domain(domain);
	struct fi_cntr_attr def = { .events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE };
	struct rdmx_wait *wait;
	struct rdmx_cntr *cntr;
	int ret;

	if (!attr)
		attr = &def;
	if (attr->events != FI_CNTR_EVENTS_COMP || attr->flags) {
		RDMX_WARN(FI_LOG_CNTR, "counter events %d or flags %#lx not supported\n",
			  attr->events, (unsigned long) attr->flags);
		return -FI_EINVAL;
	}
	cntr = calloc(1, sizeof(*cntr));
	if (!cntr)
		return -FI_ENOMEM;
	ret = rdmx_wait_get(attr->wait_obj, attr->wait_set, &wait);
	if (ret) {
		free(cntr);
		return ret;
	}
	cntr->domain = dom;
	cntr->waitable.ops = &rdmx_cntr_waitable_ops;
	rdmx_wait_join(wait, &cntr->waitable);
	cntr->cntr_fid.fid.fclass = FI_CLASS_CNTR;
	cntr->cntr_fid.fid.context = context;
	cntr->cntr_fid.fid.ops = &rdmx_cntr_fi_ops;
	cntr->cntr_fid.ops = &rdmx_cntr_ops;
	rdmx_ref_get(&dom->refs);
	*cntr_p = &cntr->cntr_fid;
	return 0;
}
