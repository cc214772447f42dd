/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: wait objects and wait sets, uDAPL's consumer notification
 * object: the wait_obj of a CQ, a counter or an EQ, fi_wait_open,
 * fi_wait, fi_trywait and FI_GETWAIT.
 *
 * A wait watches members (struct rdmx_waitable: a CQ, a counter, an EQ,
 * a domain's progress thread) and sleeps in the kernel until one of them
 * may have something, on an epoll set of
 * - the descriptors of the devices behind its members' endpoints
 *   (rdmx_lanes_wait_fds), readable when a packet came;
 * - an eventfd that writers poke when a thread may be asleep: a
 *   completion written by another thread, fi_cq_signal, fi_eq_write;
 * - a timerfd that fi_trywait sets to the transport's next timer.
 * With manual progress the thread that sleeps runs the transport itself:
 * it sleeps no later than its members' endpoints must run their timers
 * (rdmx_ep_wait_arm: retransmissions, delayed acks, keepalive), then
 * progresses and sleeps again, so its peers keep it.
 *
 * FI_GETWAIT gives the epoll descriptor (FI_WAIT_FD, FI_WAIT_UNSPEC) or
 * the mutex and condition (FI_WAIT_MUTEX_COND) that pokes broadcast;
 * fi_trywait checks and arms members before the application sleeps on
 * those itself (fi_poll(3)).
 */
#ifndef RDMX_WAIT_H
#define RDMX_WAIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <rdma/fi_eq.h>

#include "rdmx_list.h"

struct rdmx_wait;
struct rdmx_waitable;

struct rdmx_waitable_ops {
	/*
	 * Progresses what stands behind the member, and says whether it has
	 * something for its reader: 1 it has; -FI_EAGAIN not yet, but
	 * progress has work already (check again rather than sleep); 0 it
	 * has not, and with arm its endpoints are armed for a sleep and
	 * *due_p is lowered to when they must progress anyway. Takes the
	 * locks it needs.
	 */
	int	(*check)(struct rdmx_waitable *m, bool arm, uint64_t *due_p);
};

struct rdmx_waitable {
	const struct rdmx_waitable_ops	*ops;
	struct rdmx_wait		*wait;	/* NULL: FI_WAIT_NONE */
	struct rdmx_dlist		link;	/* on rdmx_wait.members */
};

struct rdmx_wait_fd {
	int		fd;
	unsigned	refs;	/* members' endpoints that brought it */
};

struct rdmx_wait {
	struct fid_wait		wait_fid;	/* a wait set's (fi_wait_open) */
	enum fi_wait_obj	obj;		/* FD, MUTEX_COND or YIELD */
	bool			is_set;		/* opened by fi_wait_open */
	int			epfd;		/* FI_GETWAIT's descriptor */
	int			evfd;		/* poked by writers */
	int			tfd;		/* fi_trywait's timer */
	int			sleepers;	/* threads that may be asleep in
						   rdmx_wait_for (atomic) */
	bool			poked;		/* since they last woke (atomic) */
	bool			armed;		/* fi_trywait ran, not poked since:
						   the application may sleep on
						   epfd (atomic) */
	pthread_mutex_t		lock;		/* members; held over a round of
						   checks, before domain locks */
	pthread_mutex_t		fd_lock;	/* fds; taken under domain locks,
						   and nothing under it */
	pthread_mutex_t		app_mutex;	/* FI_WAIT_MUTEX_COND's */
	pthread_cond_t		app_cond;
	struct rdmx_dlist	members;	/* of rdmx_waitable */
	struct rdmx_wait_fd	*fds;
	size_t			nfds;
	int			refs;		/* members (a wait set's) */
};

/*
 * A wait of kind obj (FI_WAIT_UNSPEC, FI_WAIT_FD, FI_WAIT_MUTEX_COND,
 * FI_WAIT_YIELD) for one object; FI_WAIT_NONE gives NULL. For
 * FI_WAIT_SET, the set of attr_set joined (its reference taken). 0,
 * -FI_EINVAL (no set named, or a kind not offered) or -FI_E* of the
 * kernel.
 */
int rdmx_wait_get(enum fi_wait_obj obj, struct fid_wait *attr_set,
		  struct rdmx_wait **wait_p);
/* Lets go of what rdmx_wait_get gave (a set's reference; else frees it). */
void rdmx_wait_put(struct rdmx_wait *wait);

/* m watched by wait (m->wait set), and no longer (m->wait kept, to put). */
void rdmx_wait_join(struct rdmx_wait *wait, struct rdmx_waitable *m);
void rdmx_wait_leave(struct rdmx_waitable *m);

/*
 * The n descriptors of an endpoint that joined a member of wait go into
 * (and leave) its epoll set, counted per descriptor. 0 or -FI_E*.
 */
int rdmx_wait_add_fds(struct rdmx_wait *wait, const int *fds, int n);
void rdmx_wait_del_fds(struct rdmx_wait *wait, const int *fds, int n);

/* rdmx_wait_poke of a wait that is there. */
void rdmx_wait_wake(struct rdmx_wait *wait);

/*
 * Something a sleeper may be waiting for happened (a completion, a
 * signal, an event): wakes the threads asleep on wait, a system call
 * only when one may be. wait may be NULL. Inline: every completion
 * pokes, and most CQs and endpoints have no wait.
 */
static inline void rdmx_wait_poke(struct rdmx_wait *wait)
{
	if (wait)
		rdmx_wait_wake(wait);
}

/*
 * Sleeps until m has something (m NULL: any member of wait), progressing
 * every member meanwhile; timeout in ms, negative for none. With wait
 * NULL (FI_WAIT_NONE) it polls m, yielding the CPU in between. 0, or
 * -FI_ETIMEDOUT.
 */
int rdmx_wait_for(struct rdmx_wait *wait, struct rdmx_waitable *m, int timeout);

/*
 * fi_trywait for one member (m NULL: every member of wait): -FI_EAGAIN
 * when it has something or progress has work; else 0, with the members
 * armed and the timer set, so the application may sleep on FI_GETWAIT's
 * object.
 */
int rdmx_wait_try(struct rdmx_wait *wait, struct rdmx_waitable *m);

/* fi_control(FI_GETWAIT) on an object with wait: 0 or -FI_E*. */
int rdmx_wait_getwait(struct rdmx_wait *wait, void *arg);

/* fi_wait_open and fi_trywait (the fabric's ops). */
int rdmx_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
		   struct fid_wait **waitset);
int rdmx_trywait(struct fid_fabric *fabric, struct fid **fids, int count);

#endif /* RDMX_WAIT_H */
