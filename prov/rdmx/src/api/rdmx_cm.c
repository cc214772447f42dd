/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the connection steps of FI_EP_MSG endpoints (see rdmx_cm.h). */
#include <stdlib.h>

#include "rdmx.h"
#include "rdmx_av.h"
#include "rdmx_clock.h"
#include "rdmx_cm.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_lane.h"
#include "rdmx_wait.h"
#include "rdmx_rx.h"
#include "rdmx_tx.h"

/* A device address (canonical, as shown) fits a connection step's name. */
_Static_assert(RDMX_DEV_ADDR_MAX <= RDMX_CM_NAME_MAX, "device address in a name");

static struct rdmx_av *rdmx_cm_av(const struct rdmx_cm *cm)
{
	return rdmx_container_of(cm->av, struct rdmx_av, av_fid);
}

/*
 * The endpoint's device address, which the connection steps carry (an
 * acceptor's fi_getname shows its listener's instead); its length.
 */
static size_t rdmx_cm_name(struct rdmx_ep *ep, uint8_t *name)
{
	size_t len = RDMX_CM_NAME_MAX;

	return rdmx_ep_getname(&ep->ep_fid.fid, name, &len) ? 0 : len;
}

/*
 * Stores an application-form address in the endpoint's AV, and its
 * canonical form in canon; FI_ADDR_NOTAVAIL if bad.
 */
static fi_addr_t rdmx_cm_store(struct rdmx_cm *cm, const void *addr, size_t len,
			       uint8_t *canon)
{
	if (cm->ep->domain->dev_ops->addr_canon(addr, len, canon))
		return FI_ADDR_NOTAVAIL;
	return rdmx_av_store(rdmx_cm_av(cm), canon);
}

/* Queues a connection step to dest, domain lock held; 0 or -FI_E*. */
static int rdmx_cm_send(struct rdmx_cm *cm, fi_addr_t dest, const struct rdmx_cm_msg *msg)
{
	struct rdmx_cm_buf *b = NULL;
	struct rdmx_send_req req = {
		.iov_cnt = 1,
		.dest = dest,
		.tag = RDMX_CM_TAG,
		.flags = FI_TAGGED | FI_COMPLETION,
	};
	struct iovec iov;
	ssize_t ret;

	for (size_t i = 0; i < RDMX_CM_TX && !b; i++)
		b = cm->tx[i].busy ? NULL : &cm->tx[i];
	if (!b)
		return -FI_EAGAIN;
	b->len = rdmx_wire_cm_encode(b->data, msg);
	iov = (struct iovec) { b->data, b->len };
	req.iov = &iov;
	req.context = b;
	ret = rdmx_send(cm->ep, &req);
	b->busy = !ret;
	return (int) ret;
}

/* Posts b for the next connection step, domain lock held. */
static int rdmx_cm_post(struct rdmx_cm *cm, struct rdmx_cm_buf *b)
{
	struct iovec iov = { b->data, sizeof(b->data) };
	struct rdmx_recv_req req = {
		.iov = &iov,
		.iov_cnt = 1,
		.src = FI_ADDR_UNSPEC,
		.tag = RDMX_CM_TAG,
		.context = b,
		.flags = FI_TAGGED | FI_COMPLETION,
	};

	return (int) rdmx_recv(cm->ep, &req);
}

/* The connection is over for good: err (0: FI_SHUTDOWN) goes to the EQ. */
static void rdmx_cm_down(struct rdmx_cm *cm, int err, const void *data, size_t len)
{
	struct fi_eq_cm_entry entry = { .fid = &cm->ep->ep_fid.fid };

	cm->state = RDMX_CM_DOWN;
	cm->ep->conn_peer = FI_ADDR_NOTAVAIL;
	cm->ep->av_only = true;
	/* Closing (rdmx_cm_leave): nobody reads its events any more. */
	if (!cm->eq)
		return;
	if (err)
		(void) rdmx_eq_push_err(cm->eq, &cm->ep->ep_fid.fid, err, data, len);
	else
		(void) rdmx_eq_push(cm->eq, FI_SHUTDOWN, &entry, sizeof(entry));
}

/*
 * The connection is up: FI_CONNECTED with the peer's private data. From
 * now on the endpoint hears its AV only: its peer.
 */
static void rdmx_cm_up(struct rdmx_cm *cm, fi_addr_t peer, const void *data, size_t len)
{
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + RDMX_CM_DATA_MAX];
	struct fi_eq_cm_entry entry = { .fid = &cm->ep->ep_fid.fid };

	cm->state = RDMX_CM_CONNECTED;
	cm->peer = peer;
	cm->ep->conn_peer = peer;
	cm->ep->av_only = true;
	memcpy(buf, &entry, sizeof(entry));
	if (len)
		memcpy(buf + sizeof(entry), data, len);
	if (cm->eq)
		(void) rdmx_eq_push(cm->eq, FI_CONNECTED, buf, sizeof(entry) + len);
}

/*
 * The listener's ACCEPT of our request, with the acceptor's name: where
 * our packets go from now on. fi_getpeer still shows the address we
 * connected to, as the acceptor's fi_getname does.
 */
static void rdmx_cm_accepted(struct rdmx_cm *cm, const struct rdmx_cm_msg *msg)
{
	uint8_t canon[RDMX_DEV_ADDR_MAX];
	fi_addr_t peer = rdmx_cm_store(cm, msg->name, msg->name_len, canon);
	char text[96];

	if (peer == FI_ADDR_NOTAVAIL) {
		rdmx_cm_down(cm, FI_ECONNREFUSED, NULL, 0);
		return;
	}
	cm->ep->domain->dev_ops->addr_str(canon, text, sizeof(text));
	RDMX_INFO(FI_LOG_EP_CTRL, "connected: the acceptor is at %s\n", text);
	cm->peer_len = cm->ep->domain->dev_ops->addr_len(cm->peer_name);
	rdmx_cm_up(cm, peer, msg->data, msg->data_len);
	if (cm->disc_early)
		rdmx_cm_down(cm, 0, NULL, 0);
}

/* A step of this connection (its id checked) from the endpoint at from. */
static void rdmx_cm_step(struct rdmx_cm *cm, const struct rdmx_cm_msg *msg, fi_addr_t from)
{
	bool from_listener = cm->state == RDMX_CM_CONNECTING && from == cm->listener;
	bool from_peer = from == cm->peer;

	if (msg->type == RDMX_CM_ACCEPT && from_listener)
		rdmx_cm_accepted(cm, msg);
	else if (msg->type == RDMX_CM_REJECT && from_listener)
		rdmx_cm_down(cm, FI_ECONNREFUSED, msg->data, msg->data_len);
	else if (msg->type == RDMX_CM_DISC && from_peer && cm->state == RDMX_CM_CONNECTED)
		rdmx_cm_down(cm, 0, NULL, 0);
	/*
	 * The acceptor's DISC came before the listener's ACCEPT (they come
	 * from two endpoints, in no order): FI_SHUTDOWN right after
	 * FI_CONNECTED. The connection's id vouches for it.
	 */
	else if (msg->type == RDMX_CM_DISC && cm->state == RDMX_CM_CONNECTING &&
		 from != cm->listener)
		cm->disc_early = true;
}

/* A posted step ended (err positive, or 0): handled, and posted again. */
static void rdmx_cm_arrived(struct rdmx_cm *cm, const struct rdmx_cq_entry *entry, int err)
{
	struct rdmx_cm_buf *b = entry->op_context;
	struct rdmx_cm_msg msg;

	if (err == FI_ECANCELED)
		return;
	if (!err && !rdmx_wire_cm_decode(b->data, entry->len, &msg) &&
	    msg.conn_id == cm->conn_id)
		rdmx_cm_step(cm, &msg, entry->src);
	else
		cm->ep->stats.rx_malformed++;
	(void) rdmx_cm_post(cm, b);
}

/*
 * A step we sent ended: a request that could not reach its listener ends
 * the connect; fi_shutdown's DISC, delivered or not, is the local
 * FI_SHUTDOWN, so that the steps before it are out before the
 * application learns it may close.
 */
static void rdmx_cm_sent(struct rdmx_cm *cm, struct rdmx_cm_buf *b, int err)
{
	uint8_t type = b->data[offsetof(struct rdmx_wire_cm, type)];

	b->busy = false;
	if (err && cm->state == RDMX_CM_CONNECTING && type == RDMX_CM_REQ)
		rdmx_cm_down(cm, err == FI_EHOSTUNREACH ? FI_ETIMEDOUT : FI_ECONNREFUSED,
			     NULL, 0);
	else if (type == RDMX_CM_DISC)
		rdmx_cm_down(cm, 0, NULL, 0);
}

/* Whether a completion is a connection step's: the application's tags lack its bit. */
static bool rdmx_cm_is_step(const struct rdmx_cq_entry *entry)
{
	return (entry->flags & FI_TAGGED) && (entry->tag & RDMX_CM_TAG_BIT);
}

static struct rdmx_cm_filter *rdmx_cm_filter(struct rdmx_comp *comp)
{
	return rdmx_container_of(comp, struct rdmx_cm_filter, comp);
}

static void rdmx_cm_step_ended(struct rdmx_cm_filter *f, const struct rdmx_cq_entry *entry,
			       int err)
{
	if (f->rx)
		rdmx_cm_arrived(f->cm, entry, err);
	else
		rdmx_cm_sent(f->cm, entry->op_context, err);
}

static int rdmx_cm_filter_write(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry)
{
	struct rdmx_cm_filter *f = rdmx_cm_filter(comp);

	if (!rdmx_cm_is_step(entry))
		return f->app->ops->write(f->app, entry);
	rdmx_cm_step_ended(f, entry, 0);
	return 0;
}

static int rdmx_cm_filter_write_err(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
				    int err, size_t olen, const char *text)
{
	struct rdmx_cm_filter *f = rdmx_cm_filter(comp);

	if (!rdmx_cm_is_step(entry))
		return f->app->ops->write_err(f->app, entry, err, olen, text);
	rdmx_cm_step_ended(f, entry, err);
	return 0;
}

static int rdmx_cm_filter_outcome(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
				  int err, size_t olen, const char *text)
{
	struct rdmx_cm_filter *f = rdmx_cm_filter(comp);

	if (!rdmx_cm_is_step(entry))
		return f->app->ops->outcome(f->app, entry, err, olen, text);
	rdmx_cm_step_ended(f, entry, err);
	return 0;
}

static void rdmx_cm_filter_count(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry)
{
	struct rdmx_cm_filter *f = rdmx_cm_filter(comp);

	if (!rdmx_cm_is_step(entry))
		f->app->ops->count(f->app, entry);
	else
		rdmx_cm_step_ended(f, entry, 0);
}

/* Never a step: a connected endpoint has no FI_SOURCE_ERR (RDMX_MSG_NOT_CAPS). */
static int rdmx_cm_filter_source_err(struct rdmx_comp *comp, const struct rdmx_cq_entry *entry,
				     const void *addr, size_t len)
{
	struct rdmx_cm_filter *f = rdmx_cm_filter(comp);

	return f->app->ops->source_err(f->app, entry, addr, len);
}

static const struct rdmx_comp_ops rdmx_cm_filter_ops = {
	.write = rdmx_cm_filter_write,
	.write_err = rdmx_cm_filter_write_err,
	.outcome = rdmx_cm_filter_outcome,
	.count = rdmx_cm_filter_count,
	.source_err = rdmx_cm_filter_source_err,
};

/* The session with the peer (or the listener) ended under us. */
static void rdmx_cm_peer_changed(struct fid_ep *ep_fid, fi_addr_t addr,
				 enum fi_rdmx_peer_state state, int err, void *arg)
{
	struct rdmx_cm *cm = arg;

	(void) ep_fid;
	if (state != FI_RDMX_PEER_DISCONNECTED && state != FI_RDMX_PEER_CLOSED)
		return;
	if (cm->state == RDMX_CM_CONNECTING && addr == cm->listener)
		rdmx_cm_down(cm, err == FI_EHOSTUNREACH ? FI_ETIMEDOUT : FI_ECONNREFUSED,
			     NULL, 0);
	else if (cm->state == RDMX_CM_CONNECTED && addr == cm->peer)
		rdmx_cm_down(cm, 0, NULL, 0);
}

/* The endpoint as its EQ's source: progressed, its connect timed. */
static int rdmx_cm_progress(struct rdmx_eq_source *src, bool arm, uint64_t *due_p)
{
	struct rdmx_cm *cm = rdmx_container_of(src, struct rdmx_cm, src);
	struct rdmx_ep *ep = cm->ep;
	int ret = 0;

	rdmx_lock_acquire(&ep->domain->lock);
	rdmx_ep_progress(ep);
	if (cm->state == RDMX_CM_CONNECTING && rdmx_clock_ns() >= cm->deadline)
		rdmx_cm_down(cm, FI_ETIMEDOUT, NULL, 0);
	if (arm) {
		ret = rdmx_ep_wait_arm(ep, due_p);
		if (cm->state == RDMX_CM_CONNECTING)
			*due_p = RDMX_MIN(*due_p, cm->deadline);
	}
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

int rdmx_cm_open(struct rdmx_ep *ep, const struct fi_info *info)
{
	struct fi_av_attr av_attr = { .type = FI_AV_UNSPEC, .count = 2 };
	uint8_t shown[RDMX_CM_NAME_MAX];
	size_t shown_len = sizeof(shown);
	struct rdmx_cm *cm;
	struct rdmx_av *av;
	int ret;

	/* A passive endpoint's handle gave its address (rdmx_pep_yield). */
	struct rdmx_connreq *req = info->handle && info->handle->fclass == FI_CLASS_CONNREQ ?
				   rdmx_container_of(info->handle, struct rdmx_connreq, fid) : NULL;

	if (info->handle && !req && info->handle->fclass != FI_CLASS_PEP)
		return -FI_EINVAL;
	/* A request is accepted by one endpoint, which shows its listener's name. */
	if (req && (ret = rdmx_pep_claim(req, shown, &shown_len)))
		return ret;
	cm = calloc(1, sizeof(*cm));
	if (!cm)
		return -FI_ENOMEM;
	ret = rdmx_av_open(&ep->domain->domain_fid, &av_attr, &cm->av, NULL);
	if (ret) {
		free(cm);
		return ret;
	}
	av = rdmx_cm_av(cm);
	ret = rdmx_av_attach(av, ep);
	if (ret) {
		fi_close(&cm->av->fid);
		free(cm);
		return ret;
	}
	cm->ep = ep;
	cm->listener = cm->peer = FI_ADDR_NOTAVAIL;
	cm->src.progress = rdmx_cm_progress;
	cm->req = req;
	if (req) {
		cm->shown_len = shown_len;
		memcpy(cm->shown, shown, shown_len);
	}
	ep->cm = cm;
	ep->av = av;
	ep->addrs = &av->lookups;
	ep->conn_peer = FI_ADDR_NOTAVAIL;
	/*
	 * A connector hears strangers until it is up: its acceptor, whose
	 * name the listener's ACCEPT brings, may send first. An acceptor
	 * hears its AV only: the connector, once it accepted.
	 */
	ep->av_only = req != NULL;
	ep->peer_cb = rdmx_cm_peer_changed;
	ep->peer_cb_arg = cm;
	return 0;
}

void rdmx_cm_leave(struct rdmx_ep *ep)
{
	struct rdmx_cm *cm = ep->cm;
	struct rdmx_wait *wait = cm->eq ? rdmx_eq_wait(cm->eq) : NULL;
	int fds[2], n = rdmx_lanes_wait_fds(&ep->lanes, fds);

	/* Out of the EQ's wait now: rdmx_ep_watch will not find the EQ. */
	if (wait && ep->watched)
		rdmx_wait_del_fds(wait, fds, n);
	if (cm->eq)
		rdmx_eq_detach(cm->eq, &cm->src);
	rdmx_lock_acquire(&ep->domain->lock);
	cm->eq = NULL;
	rdmx_lock_release(&ep->domain->lock);
	if (cm->req)
		rdmx_pep_drop(cm->req);
	cm->req = NULL;
}

void rdmx_cm_free(struct rdmx_ep *ep)
{
	fi_close(&ep->cm->av->fid);
	free(ep->cm);
	ep->cm = NULL;
}

int rdmx_cm_bind_eq(struct rdmx_ep *ep, struct fid_eq *eq)
{
	if (ep->cm->eq) {
		RDMX_WARN(FI_LOG_EP_CTRL, "one EQ per endpoint\n");
		return -FI_EINVAL;
	}
	ep->cm->eq = eq;
	rdmx_eq_attach(eq, &ep->cm->src);
	return 0;
}

int rdmx_cm_enable(struct rdmx_ep *ep)
{
	struct rdmx_cm *cm = ep->cm;
	struct rdmx_cm_filter *filters[2] = { &cm->tx_filter, &cm->rx_filter };
	struct rdmx_comp **comps[2] = { &ep->tx_comp, &ep->rx_comp };
	struct rdmx_sink *sinks[2] = { &ep->tx_sink, &ep->rx_sink };
	int ret = 0;

	for (int d = 0; d < 2; d++) {
		*filters[d] = (struct rdmx_cm_filter) {
			.comp.ops = &rdmx_cm_filter_ops,
			.app = &sinks[d]->comp,
			.cm = cm,
			.rx = d == 1,
		};
		*comps[d] = &filters[d]->comp;
	}
	for (size_t i = 0; i < RDMX_CM_RX && !ret; i++)
		ret = rdmx_cm_post(cm, &cm->rx[i]);
	return ret;
}

int rdmx_cm_connect(struct fid_ep *ep_fid, const void *addr, const void *param,
		    size_t paramlen)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	struct rdmx_cm *cm = ep->cm;
	uint8_t name[RDMX_CM_NAME_MAX];
	struct rdmx_cm_msg msg = { .type = RDMX_CM_REQ, .data = param, .data_len = paramlen };
	int ret;

	if (!addr || paramlen > RDMX_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	if (!cm->eq)
		return -FI_ENOEQ;
	if (!ep->enabled && (ret = fi_enable(ep_fid)))
		return ret;
	msg.name_len = rdmx_cm_name(ep, name);
	msg.name = name;
	rdmx_lock_acquire(&ep->domain->lock);
	if (cm->state != RDMX_CM_IDLE || cm->req) {
		ret = cm->state == RDMX_CM_CONNECTED ? -FI_EISCONN : -FI_EOPBADSTATE;
	} else {
		/* The address fi_getpeer shows once connected. */
		cm->listener = rdmx_cm_store(cm, addr, ep->domain->dev_ops->addr_size,
					     cm->peer_name);
		cm->conn_id = rdmx_random64() | 1;
		msg.conn_id = cm->conn_id;
		ret = cm->listener == FI_ADDR_NOTAVAIL ? -FI_EINVAL :
		      rdmx_cm_send(cm, cm->listener, &msg);
		if (!ret) {
			cm->state = RDMX_CM_CONNECTING;
			cm->deadline = rdmx_clock_ns() + g_rdmx_params.connect_ms * 1000000ULL;
		}
	}
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

int rdmx_cm_accept(struct fid_ep *ep_fid, const void *param, size_t paramlen)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	struct rdmx_cm *cm = ep->cm;
	struct rdmx_connreq *req = cm->req;
	uint8_t name[RDMX_CM_NAME_MAX], canon[RDMX_DEV_ADDR_MAX];
	size_t name_len;
	int ret = 0;

	if (paramlen > RDMX_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	if (!req)
		return -FI_EOPBADSTATE;
	if (!cm->eq)
		return -FI_ENOEQ;
	if (!ep->enabled && (ret = fi_enable(ep_fid)))
		return ret;
	name_len = rdmx_cm_name(ep, name);
	rdmx_lock_acquire(&ep->domain->lock);
	cm->peer = rdmx_cm_store(cm, req->name, req->name_len, canon);
	cm->conn_id = req->conn_id;
	if (cm->peer == FI_ADDR_NOTAVAIL) {
		ret = -FI_EINVAL;
		cm->state = RDMX_CM_DOWN;
	} else {
		/* Canonical: not the padding the request's bytes came with. */
		cm->peer_len = ep->domain->dev_ops->addr_len(canon);
		memcpy(cm->peer_name, canon, cm->peer_len);
	}
	rdmx_lock_release(&ep->domain->lock);
	/* The listener answers: the connector hears only from its AV. */
	cm->req = NULL;
	if (ret) {
		rdmx_pep_drop(req);
		return ret;
	}
	ret = rdmx_pep_accept(req, name, name_len, param, paramlen);
	/*
	 * Up before fi_accept returns, as the connector's FI_CONNECTED may
	 * come before the listener's next request: the connector takes what
	 * we send before it heard the ACCEPT (it hears strangers while
	 * connecting).
	 */
	rdmx_lock_acquire(&ep->domain->lock);
	if (ret)
		cm->state = RDMX_CM_DOWN;
	else
		rdmx_cm_up(cm, cm->peer, NULL, 0);
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

int rdmx_cm_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct rdmx_ep *ep = rdmx_ep(ep_fid);
	struct rdmx_cm *cm = ep->cm;
	int ret = 0;

	if (flags)
		return -FI_EBADFLAGS;
	rdmx_lock_acquire(&ep->domain->lock);
	if (cm->state == RDMX_CM_CONNECTED) {
		/*
		 * After every message sent before it (send-after-send); its
		 * completion is FI_SHUTDOWN here too, as libfabric's
		 * providers write one on both sides.
		 */
		cm->state = RDMX_CM_DOWN;
		ep->conn_peer = FI_ADDR_NOTAVAIL;
		if (rdmx_cm_send(cm, cm->peer, &(struct rdmx_cm_msg) {
					.type = RDMX_CM_DISC, .conn_id = cm->conn_id }))
			rdmx_cm_down(cm, 0, NULL, 0);
	} else {
		ret = -FI_ENOTCONN;
	}
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

int rdmx_cm_getpeer(struct fid_ep *ep_fid, void *addr, size_t *addrlen)
{
	struct rdmx_cm *cm = rdmx_ep(ep_fid)->cm;

	if (!cm->peer_len)
		return -FI_ENOTCONN;
	return rdmx_copy_out(cm->peer_name, cm->peer_len, addr, addrlen);
}

/*
 * An acceptor shows its listener's address, as TCP's accepted sockets
 * share the listening port (its packets use a port of its own, which
 * ACCEPT told the connector); any other shows its own.
 */
int rdmx_cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct rdmx_cm *cm = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid)->cm;

	if (cm->shown_len)
		return rdmx_copy_out(cm->shown, cm->shown_len, addr, addrlen);
	return rdmx_ep_getname(fid, addr, addrlen);
}

/* An acceptor's address is its listener's: it cannot be changed. */
int rdmx_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct rdmx_cm *cm = rdmx_container_of(fid, struct rdmx_ep, ep_fid.fid)->cm;

	if (cm->shown_len) {
		RDMX_WARN(FI_LOG_EP_CTRL, "fi_setname of an accepting endpoint\n");
		return -FI_EOPBADSTATE;
	}
	return rdmx_ep_setname(fid, addr, addrlen);
}
