/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: passive endpoints, uDAPL's public service point, and the
 * connection requests they hold (see rdmx_cm.h). A passive endpoint is
 * an RDM endpoint of a domain of its own at the listening address,
 * reached through libfabric's own calls; its EQ progresses it.
 */
#include <pthread.h>
#include <stdlib.h>

#include <rdma/fi_tagged.h>

#include "rdmx.h"
#include "rdmx_cm.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_fabric.h"
#include "rdmx_lane.h"
#include "rdmx_stubs.h"
#include "rdmx_wait.h"

/* Requests posted for, and answers in flight at most. */
#define RDMX_PEP_RX		16
#define RDMX_PEP_TX		16
/* Requests held unanswered at most, when the EQ has no size (fi_listen(3)). */
#define RDMX_PEP_BACKLOG	64
/* Progress rounds an answer waits for a free send at most. */
#define RDMX_PEP_SEND_TRIES	1000

struct rdmx_pep {
	struct fid_pep		pep_fid;
	struct fi_info		*info;		/* FI_CONNREQ's come from it */
	struct fid_domain	*domain;	/* of the RDM endpoint below */
	struct fid_av		*av;		/* connectors being answered */
	struct fid_cq		*cq;
	struct fid_ep		*ep;		/* at the listening address; NULL
						   once given away (rdmx_pep_yield) */
	uint8_t			name[RDMX_DEV_ADDR_MAX];	/* then its name */
	size_t			name_len;
	struct fid_eq		*eq;
	struct rdmx_eq_source	src;		/* in eq's sources */
	pthread_mutex_t		lock;		/* what follows */
	bool			listening;
	size_t			backlog;
	size_t			pending_cnt;
	struct rdmx_dlist	pending;	/* of rdmx_connreq, unanswered */
	struct rdmx_cm_buf	rx[RDMX_PEP_RX];
	struct rdmx_cm_buf	tx[RDMX_PEP_TX];
	fi_addr_t		tx_to[RDMX_PEP_TX];	/* removed once sent */
	bool			tx_done[RDMX_PEP_TX];	/* sent: tx_to goes once
							   the CQ is drained */
};

static struct rdmx_pep *rdmx_pep(struct fid *fid)
{
	return rdmx_container_of(fid, struct rdmx_pep, pep_fid.fid);
}

/* Posts b for the next request. */
static void rdmx_pep_post(struct rdmx_pep *pep, struct rdmx_cm_buf *b)
{
	(void) fi_trecv(pep->ep, b->data, sizeof(b->data), NULL, FI_ADDR_UNSPEC, RDMX_CM_TAG,
			0, b);
}

/* Sends an answer to the connector at to (pep->lock held); 0 or -FI_E*. */
static int rdmx_pep_send(struct rdmx_pep *pep, fi_addr_t to, const struct rdmx_cm_msg *msg)
{
	ssize_t ret = -FI_EAGAIN;

	for (size_t i = 0; i < RDMX_PEP_TX; i++) {
		struct rdmx_cm_buf *b = &pep->tx[i];

		if (b->busy)
			continue;
		b->len = rdmx_wire_cm_encode(b->data, msg);
		pep->tx_to[i] = to;
		ret = fi_tsend(pep->ep, b->data, b->len, NULL, to, RDMX_CM_TAG, b);
		b->busy = !ret;
		break;
	}
	return (int) ret;
}

/*
 * An answer went out (or failed). Its connector leaves the AV only once
 * the CQ is drained (rdmx_pep_forget): an entry of a later request from
 * it, already queued, names it by that slot, which another sender could
 * take in between.
 */
static void rdmx_pep_sent(struct rdmx_pep *pep, struct rdmx_cm_buf *b)
{
	pep->tx_done[b - pep->tx] = true;
}

/* The CQ is drained: connectors answered leave the AV, their buffers free. */
static void rdmx_pep_forget(struct rdmx_pep *pep)
{
	for (size_t i = 0; i < RDMX_PEP_TX; i++) {
		if (!pep->tx_done[i])
			continue;
		(void) fi_av_remove(pep->av, &pep->tx_to[i], 1, 0);
		pep->tx_done[i] = false;
		pep->tx[i].busy = false;
	}
}

/* Takes req off the pending list (pep->lock held). */
static void rdmx_pep_unpend(struct rdmx_pep *pep, struct rdmx_connreq *req)
{
	rdmx_dlist_remove(&req->link);
	pep->pending_cnt--;
}

/*
 * Whether a request from the sender at name is held already: a sender
 * (one endpoint) has one request at a time, so that one cannot fill the
 * backlog.
 */
static bool rdmx_pep_holds(const struct rdmx_pep *pep, const void *name, size_t len)
{
	const struct rdmx_dlist *it;

	rdmx_dlist_foreach(&pep->pending, it) {
		const struct rdmx_connreq *req =
			rdmx_container_of(it, const struct rdmx_connreq, link);

		if (req->name_len == len && !memcmp(req->name, name, len))
			return true;
	}
	return false;
}

/* FI_CONNREQ for req: an fi_info for the endpoint to accept it with. */
static int rdmx_pep_announce(struct rdmx_pep *pep, struct rdmx_connreq *req,
			     const struct rdmx_cm_msg *msg)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + RDMX_CM_DATA_MAX];
	struct fi_eq_cm_entry entry = { .fid = &pep->pep_fid.fid };
	const struct rdmx_dev_ops *ops = rdmx_domain(pep->domain)->dev_ops;
	struct fi_info *info = fi_dupinfo(pep->info);
	uint8_t canon[RDMX_DEV_ADDR_MAX];
	struct rdmx_dev_domain where;
	int ret;

	if (!info)
		return -FI_ENOMEM;
	/*
	 * The acceptor is an endpoint of its own (a port of its own), on
	 * the domain that routes to the connector.
	 */
	if (ops->addr_canon(req->name, req->name_len, canon) ||
	    ops->domains(NULL, canon, &where, 1) != 1) {
		fi_freeinfo(info);
		return -FI_EINVAL;
	}
	free(info->src_addr);
	info->src_addrlen = ops->addr_len(where.addr);
	info->src_addr = malloc(info->src_addrlen);
	if (info->src_addr)
		memcpy(info->src_addr, where.addr, info->src_addrlen);
	free(info->domain_attr->name);
	info->domain_attr->name = strdup(where.name);
	free(info->dest_addr);
	info->dest_addr = malloc(req->name_len);
	if (!info->src_addr || !info->domain_attr->name || !info->dest_addr) {
		fi_freeinfo(info);
		return -FI_ENOMEM;
	}
	memcpy(info->dest_addr, req->name, req->name_len);
	info->dest_addrlen = req->name_len;
	info->handle = &req->fid;
	entry.info = info;
	memcpy(buf, &entry, sizeof(entry));
	memcpy(buf + sizeof(entry), msg->data, msg->data_len);
	ret = rdmx_eq_push(pep->eq, FI_CONNREQ, buf, sizeof(entry) + msg->data_len);
	if (ret)
		fi_freeinfo(info);
	return ret;
}

/*
 * A request from the sender at name (its source address, which its
 * session proved it receives at): held and announced, or refused when
 * the backlog is full or the sender has a request held already (pep->lock
 * held). The answer goes to the sender, whatever address the request
 * names.
 */
static void rdmx_pep_request(struct rdmx_pep *pep, const struct rdmx_cm_msg *msg,
			     const void *name, size_t name_len)
{
	struct rdmx_cm_msg no = { .type = RDMX_CM_REJECT, .conn_id = msg->conn_id };
	struct rdmx_connreq *req = NULL;
	fi_addr_t from = FI_ADDR_NOTAVAIL;

	if (msg->type != RDMX_CM_REQ || name_len > sizeof(req->name) ||
	    fi_av_insert(pep->av, name, 1, &from, 0, NULL) != 1)
		return;
	if (pep->pending_cnt < pep->backlog && !rdmx_pep_holds(pep, name, name_len))
		req = calloc(1, sizeof(*req));
	if (!req) {
		if (rdmx_pep_send(pep, from, &no))
			(void) fi_av_remove(pep->av, &from, 1, 0);
		return;
	}
	req->fid.fclass = FI_CLASS_CONNREQ;
	req->pep = pep;
	req->conn_id = msg->conn_id;
	req->from = from;
	req->name_len = name_len;
	memcpy(req->name, name, name_len);
	if (rdmx_pep_announce(pep, req, msg)) {
		free(req);
		if (rdmx_pep_send(pep, from, &no))
			(void) fi_av_remove(pep->av, &from, 1, 0);
		return;
	}
	rdmx_dlist_insert_tail(&pep->pending, &req->link);
	pep->pending_cnt++;
}

/*
 * One completion of the listening endpoint (err: its error, positive);
 * a request's sender is at name (name_len bytes; NULL if unknown).
 */
static void rdmx_pep_completion(struct rdmx_pep *pep, struct rdmx_cm_buf *b, uint64_t flags,
				size_t len, int err, const void *name, size_t name_len)
{
	struct rdmx_cm_msg msg;

	if (flags & FI_SEND) {
		rdmx_pep_sent(pep, b);
		return;
	}
	if (err == FI_ECANCELED)
		return;
	if (!err && name && !rdmx_wire_cm_decode(b->data, len, &msg))
		rdmx_pep_request(pep, &msg, name, name_len);
	rdmx_pep_post(pep, b);
}

/*
 * Reads one completion of the listening endpoint and handles it; false
 * when there was none. A request from a sender outside the AV (all but
 * those being answered) comes as FI_SOURCE_ERR's error entry, which
 * carries the sender's address.
 */
static bool rdmx_pep_reap(struct rdmx_pep *pep)
{
	const struct rdmx_dev_ops *ops = rdmx_domain(pep->domain)->dev_ops;
	uint8_t name[RDMX_DEV_ADDR_MAX];
	struct fi_cq_err_entry err = { .err_data = name, .err_data_size = sizeof(name) };
	struct fi_cq_tagged_entry e;
	size_t name_len = sizeof(name);
	fi_addr_t from = FI_ADDR_NOTAVAIL;
	ssize_t n = fi_cq_readfrom(pep->cq, &e, 1, &from);

	if (n == 1) {
		bool known = !(e.flags & FI_RECV) ||
			     (!fi_av_lookup(pep->av, from, name, &name_len) &&
			      name_len <= sizeof(name));

		rdmx_pep_completion(pep, e.op_context, e.flags, e.len, 0, known ? name : NULL,
				    name_len);
		return true;
	}
	if (n != -FI_EAVAIL || fi_cq_readerr(pep->cq, &err, 0) != 1)
		return false;
	/* A caller before API 1.5 gets our copy, and no size: the address tells it. */
	if (err.err == FI_EADDRNOTAVAIL && (err.flags & FI_RECV) && err.err_data)
		rdmx_pep_completion(pep, err.op_context, err.flags, err.len, 0, err.err_data,
				    RDMX_MIN(ops->addr_len(err.err_data), sizeof(name)));
	else
		rdmx_pep_completion(pep, err.op_context, err.flags, 0, err.err, NULL, 0);
	return true;
}

/* The passive endpoint as its EQ's source: requests taken, answers finished. */
static int rdmx_pep_progress(struct rdmx_eq_source *src, bool arm, uint64_t *due_p)
{
	struct rdmx_pep *pep = rdmx_container_of(src, struct rdmx_pep, src);
	struct rdmx_ep *ep = rdmx_ep(pep->ep);
	int ret = 0;

	pthread_mutex_lock(&pep->lock);
	while (pep->listening && rdmx_pep_reap(pep))
		;
	rdmx_pep_forget(pep);
	if (arm && pep->listening) {
		rdmx_lock_acquire(&ep->domain->lock);
		ret = rdmx_ep_wait_arm(ep, due_p);
		rdmx_lock_release(&ep->domain->lock);
	}
	pthread_mutex_unlock(&pep->lock);
	return ret;
}

/*
 * Answers req with msg and frees it; 0 or -FI_E*. It leaves the pending
 * list first, whatever comes of the answer: a request is answered once.
 */
static int rdmx_pep_answer(struct rdmx_connreq *req, struct rdmx_cm_msg *msg)
{
	struct rdmx_pep *pep = req->pep;
	uint64_t due = UINT64_MAX;
	int ret = -FI_ECONNABORTED;

	msg->conn_id = req->conn_id;
	if (pep) {
		pthread_mutex_lock(&pep->lock);
		rdmx_pep_unpend(pep, req);
		pthread_mutex_unlock(&pep->lock);
		for (int tries = 0; tries < RDMX_PEP_SEND_TRIES; tries++) {
			pthread_mutex_lock(&pep->lock);
			ret = rdmx_pep_send(pep, req->from, msg);
			pthread_mutex_unlock(&pep->lock);
			if (ret != -FI_EAGAIN)
				break;
			(void) rdmx_pep_progress(&pep->src, false, &due);
		}
		if (ret)
			(void) fi_av_remove(pep->av, &req->from, 1, 0);
	}
	free(req);
	return ret;
}

int rdmx_pep_claim(struct rdmx_connreq *req, void *name, size_t *len)
{
	struct rdmx_pep *pep = req->pep;
	int ret = -FI_EBUSY;

	if (pep)
		pthread_mutex_lock(&pep->lock);
	/*
	 * An unclaimed request's listener is open and listens (its close
	 * frees those), so it has its endpoint; only a claimed one's may be
	 * gone.
	 */
	if (!req->claimed) {
		ret = fi_getname(&pep->ep->fid, name, len);
		req->claimed = !ret;
	}
	if (pep)
		pthread_mutex_unlock(&pep->lock);
	return ret;
}

int rdmx_pep_accept(struct rdmx_connreq *req, const void *name, size_t name_len,
		    const void *data, size_t len)
{
	struct rdmx_cm_msg msg = {
		.type = RDMX_CM_ACCEPT,
		.name = name,
		.name_len = name_len,
		.data = data,
		.data_len = len,
	};

	return rdmx_pep_answer(req, &msg);
}

void rdmx_pep_drop(struct rdmx_connreq *req)
{
	(void) rdmx_pep_answer(req, &(struct rdmx_cm_msg) { .type = RDMX_CM_REJECT });
}

static int rdmx_pep_reject(struct fid_pep *pep_fid, fid_t handle, const void *param,
			   size_t paramlen)
{
	struct rdmx_pep *pep = rdmx_pep(&pep_fid->fid);
	struct rdmx_cm_msg msg = { .type = RDMX_CM_REJECT, .data = param, .data_len = paramlen };
	struct rdmx_connreq *req = NULL;
	struct rdmx_dlist *it;

	if (!handle || paramlen > RDMX_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	/* The handle is looked for, not read: it may be one answered already. */
	pthread_mutex_lock(&pep->lock);
	rdmx_dlist_foreach(&pep->pending, it) {
		struct rdmx_connreq *r = rdmx_container_of(it, struct rdmx_connreq, link);

		if (&r->fid == handle)
			req = r;
	}
	/* One an endpoint took is answered by it (fi_accept, or its close). */
	if (req && req->claimed)
		req = NULL;
	pthread_mutex_unlock(&pep->lock);
	return req ? rdmx_pep_answer(req, &msg) : -FI_EINVAL;
}

/* The listening endpoint's descriptors in (or out of) the EQ's wait. */
static void rdmx_pep_watch(struct rdmx_pep *pep, bool on)
{
	struct rdmx_wait *wait = rdmx_eq_wait(pep->eq);
	int fds[2], n = rdmx_lanes_wait_fds(&rdmx_ep(pep->ep)->lanes, fds);

	if (!wait)
		return;
	if (on)
		(void) rdmx_wait_add_fds(wait, fds, n);
	else
		rdmx_wait_del_fds(wait, fds, n);
}

static int rdmx_pep_listen(struct fid_pep *pep_fid)
{
	struct rdmx_pep *pep = rdmx_pep(&pep_fid->fid);
	int ret;

	if (!pep->eq)
		return -FI_ENOEQ;
	if (!pep->ep)
		return -FI_EOPBADSTATE;
	if (pep->listening)
		return 0;
	ret = fi_enable(pep->ep);
	if (ret)
		return ret;
	for (size_t i = 0; i < RDMX_PEP_RX; i++)
		rdmx_pep_post(pep, &pep->rx[i]);
	rdmx_pep_watch(pep, true);
	pthread_mutex_lock(&pep->lock);
	pep->listening = true;
	pthread_mutex_unlock(&pep->lock);
	return 0;
}

static int rdmx_pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct rdmx_pep *pep = rdmx_pep(fid);

	if (pep->ep)
		return fi_getname(&pep->ep->fid, addr, addrlen);
	return rdmx_copy_out(pep->name, pep->name_len, addr, addrlen);
}

static int rdmx_pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct rdmx_pep *pep = rdmx_pep(fid);

	return pep->listening || !pep->ep ? -FI_EOPBADSTATE :
	       fi_setname(&pep->ep->fid, addr, addrlen);
}

/*
 * Gives the passive endpoint's address to an endpoint being opened: its
 * own endpoint closes, and keeps no claim, so an endpoint whose opening
 * failed after this, or that closed, leaves it to the next one.
 */
int rdmx_pep_yield(struct fid *fid, void *canon)
{
	struct rdmx_pep *pep = rdmx_pep(fid);
	const struct rdmx_dev_ops *ops = rdmx_domain(pep->domain)->dev_ops;
	int ret = 0;

	pthread_mutex_lock(&pep->lock);
	if (pep->listening) {
		pthread_mutex_unlock(&pep->lock);
		return -FI_EOPBADSTATE;
	}
	if (pep->ep) {
		pep->name_len = sizeof(pep->name);
		ret = fi_getname(&pep->ep->fid, pep->name, &pep->name_len);
	}
	if (ret || ops->addr_canon(pep->name, pep->name_len, canon)) {
		ret = -FI_EINVAL;
	} else if (pep->ep) {
		fi_close(&pep->ep->fid);
		pep->ep = NULL;
	}
	pthread_mutex_unlock(&pep->lock);
	return ret;
}

static int rdmx_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct rdmx_pep *pep = rdmx_pep(fid);
	struct fid_eq *eq = rdmx_container_of(bfid, struct fid_eq, fid);

	if (bfid->fclass != FI_CLASS_EQ || flags || pep->eq)
		return -FI_EINVAL;
	pep->eq = eq;
	if (!pep->backlog)
		pep->backlog = rdmx_eq_size(eq) ? rdmx_eq_size(eq) : RDMX_PEP_BACKLOG;
	rdmx_eq_attach(eq, &pep->src);
	return 0;
}

static int rdmx_pep_control(struct fid *fid, int command, void *arg)
{
	struct rdmx_pep *pep = rdmx_pep(fid);

	if (command != FI_BACKLOG)
		return -FI_ENOSYS;
	if (!arg || *(int *) arg <= 0)
		return -FI_EINVAL;
	pthread_mutex_lock(&pep->lock);
	pep->backlog = (size_t) *(int *) arg;
	pthread_mutex_unlock(&pep->lock);
	return 0;
}

static int rdmx_pep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	(void) fid;
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	return rdmx_opt_size_out(RDMX_CM_DATA_MAX, optval, optlen);
}

static int rdmx_pep_close(struct fid *fid)
{
	struct rdmx_pep *pep = rdmx_pep(fid);
	struct rdmx_dlist *it;

	if (pep->eq) {
		rdmx_eq_detach(pep->eq, &pep->src);
		if (pep->listening)
			rdmx_pep_watch(pep, false);
	}
	/*
	 * Requests still held: an endpoint's fails its fi_accept from now
	 * on; the others no one can answer any more.
	 */
	while ((it = rdmx_dlist_pop_front(&pep->pending))) {
		struct rdmx_connreq *req = rdmx_container_of(it, struct rdmx_connreq, link);

		req->pep = NULL;
		if (!req->claimed)
			free(req);
	}
	if (pep->ep)
		fi_close(&pep->ep->fid);
	fi_close(&pep->cq->fid);
	fi_close(&pep->av->fid);
	fi_close(&pep->domain->fid);
	fi_freeinfo(pep->info);
	pthread_mutex_destroy(&pep->lock);
	free(pep);
	return 0;
}

static struct fi_ops rdmx_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = rdmx_pep_close,
	.bind = rdmx_pep_bind,
	.control = rdmx_pep_control,
	.ops_open = rdmx_no_ops_open,
	.tostr = rdmx_no_tostr,
	.ops_set = rdmx_no_ops_set,
};

static struct fi_ops_ep rdmx_pep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = rdmx_no_cancel,
	.getopt = rdmx_pep_getopt,
	.setopt = rdmx_no_setopt,
	.tx_ctx = rdmx_no_tx_ctx,
	.rx_ctx = rdmx_no_rx_ctx,
	.rx_size_left = rdmx_no_size_left,
	.tx_size_left = rdmx_no_size_left,
};

static struct fi_ops_cm rdmx_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = rdmx_pep_setname,
	.getname = rdmx_pep_getname,
	.getpeer = rdmx_no_getpeer,
	.connect = rdmx_no_connect,
	.listen = rdmx_pep_listen,
	.accept = rdmx_no_accept,
	.reject = rdmx_pep_reject,
	.shutdown = rdmx_no_shutdown,
	.join = rdmx_no_join,
};

/* The listening endpoint's objects: an RDM endpoint at info's address. */
static int rdmx_pep_open_ep(struct rdmx_pep *pep, struct fid_fabric *fabric,
			    const struct fi_info *info)
{
	struct fi_av_attr av_attr = { .type = FI_AV_UNSPEC };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_info *rdm = fi_dupinfo(info);
	int ret;

	if (!rdm)
		return -FI_ENOMEM;
	rdm->ep_attr->type = FI_EP_RDM;
	rdm->caps = FI_MSG | FI_TAGGED | FI_SOURCE | FI_SOURCE_ERR;
	rdm->handle = NULL;
	/* A map: the slots of connectors answered are reused. */
	rdm->domain_attr->av_type = FI_AV_MAP;
	/*
	 * No address yet (fi_setname will give it): any domain of the
	 * info's address format will do, and the one named may be
	 * loopback's, which a host with a NIC lists only by address.
	 */
	if (!rdm->src_addr) {
		free(rdm->domain_attr->name);
		rdm->domain_attr->name = NULL;
	}
	ret = fi_domain(fabric, rdm, &pep->domain, NULL);
	if (!ret)
		ret = fi_av_open(pep->domain, &av_attr, &pep->av, NULL);
	if (!ret)
		ret = fi_cq_open(pep->domain, &cq_attr, &pep->cq, NULL);
	if (!ret)
		ret = fi_endpoint(pep->domain, rdm, &pep->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(pep->ep, &pep->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(pep->ep, &pep->cq->fid, FI_TRANSMIT | FI_RECV);
	fi_freeinfo(rdm);
	return ret;
}

int rdmx_pep_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep_p,
		  void *context)
{
	struct rdmx_pep *pep;
	int ret;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	ret = pep->info ? rdmx_pep_open_ep(pep, fabric, info) : -FI_ENOMEM;
	if (ret) {
		if (pep->ep)
			fi_close(&pep->ep->fid);
		if (pep->cq)
			fi_close(&pep->cq->fid);
		if (pep->av)
			fi_close(&pep->av->fid);
		if (pep->domain)
			fi_close(&pep->domain->fid);
		fi_freeinfo(pep->info);
		free(pep);
		return ret;
	}
	pthread_mutex_init(&pep->lock, NULL);
	rdmx_dlist_init(&pep->pending);
	pep->src.progress = rdmx_pep_progress;
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &rdmx_pep_fi_ops;
	pep->pep_fid.ops = &rdmx_pep_ep_ops;
	pep->pep_fid.cm = &rdmx_pep_cm_ops;
	*pep_p = &pep->pep_fid;
	return 0;
}
