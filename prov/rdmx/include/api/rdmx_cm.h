/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: connected endpoints (FI_EP_MSG) and passive endpoints, with
 * uDAPL's connection management: a passive side listening at a service
 * point with a backlog, an active side that connects with private data,
 * accept and reject with private data, disconnection, and time-outs.
 *
 * An FI_EP_MSG endpoint is an RDM endpoint (struct rdmx_ep, cm set) with
 * an AV of its own that holds the listener it connects to and then its
 * one peer; once connected it takes packets from nobody else (av_only).
 * A passive
 * endpoint is an RDM endpoint of its own domain at the listening
 * address. The connection steps (rdmx_wire_cm) are tagged messages of
 * RDMX_CM_TAG between them, reliable as any: a connector whose listener
 * never answers gets FI_ETIMEDOUT after FI_RDMX_CONNECT_MS.
 *
 *   connector                listener (pep)              acceptor (ep)
 *   fi_connect: REQ  ------>  FI_CONNREQ
 *                             fi_accept(ep) <------------ FI_CONNECTED
 *   FI_CONNECTED  <--------   ACCEPT (the acceptor's name)
 *   or: FI_ECONNREFUSED <--   REJECT (fi_reject)
 *
 * The acceptor is up at fi_accept, as with TCP: the connector's next
 * request may reach the listener before anything else the acceptor
 * could wait for. What it sends then may reach the connector before the
 * ACCEPT does; a connector takes packets from strangers until it is up.
 *
 * The acceptor keeps its own address, which ACCEPT names and its packets
 * come from, but shows its listener's (fi_getname), and the connector
 * shows the address it connected to (fi_getpeer): TCP's naming, which
 * fabtests' fi_msg_sockets checks.
 *
 * Every later step goes between the two endpoints, which know each
 * other from their AVs: DISC (fi_shutdown), or a session that ends
 * (a close notice, a peer gone), is FI_SHUTDOWN at the other.
 *
 * A listener takes connection requests only from a connector that can
 * receive at the address it sends from (the RDM session's tags); it
 * keeps at most its backlog of them unanswered and refuses the rest, and
 * a request answered or refused leaves nothing behind.
 */
#ifndef RDMX_CM_H
#define RDMX_CM_H

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include "rdmx_comp.h"
#include "rdmx_eq.h"
#include "rdmx_list.h"
#include "rdmx_wire.h"

struct rdmx_ep;
struct rdmx_pep;

/* Bytes of the largest connection step. */
#define RDMX_CM_MSG_MAX		(sizeof(struct rdmx_wire_cm) + RDMX_CM_DATA_MAX)
/* Connection steps an endpoint has posted for, and may have in flight. */
#define RDMX_CM_RX		4
#define RDMX_CM_TX		4

/* A connection step being sent or received. */
struct rdmx_cm_buf {
	bool		busy;
	size_t		len;
	uint8_t		data[RDMX_CM_MSG_MAX];
};

/* FI_CONNREQ's handle (info->handle): a request the listener holds. */
struct rdmx_connreq {
	struct fid		fid;		/* FI_CLASS_CONNREQ */
	struct rdmx_pep		*pep;		/* NULL once the pep closed */
	struct rdmx_dlist	link;		/* on the pep's pending */
	bool			claimed;	/* by an endpoint (fi_endpoint):
						   answered at its fi_accept or
						   close, never by fi_reject */
	uint64_t		conn_id;
	fi_addr_t		from;		/* the connector, in the pep's AV */
	size_t			name_len;
	uint8_t			name[RDMX_CM_NAME_MAX];	/* the connector's */
};

enum rdmx_cm_state {
	RDMX_CM_IDLE,		/* neither connecting nor accepting yet */
	RDMX_CM_CONNECTING,	/* REQ sent, no answer yet */
	RDMX_CM_CONNECTED,
	RDMX_CM_DOWN,		/* refused, timed out, shut down: for good */
};

struct rdmx_cm;

/*
 * One direction's completion sink of a FI_EP_MSG endpoint, in front of
 * the application's: a tagged completion is a connection step's, the
 * rest pass through to app.
 */
struct rdmx_cm_filter {
	struct rdmx_comp	comp;
	struct rdmx_comp	*app;
	struct rdmx_cm		*cm;
	bool			rx;
};

/* What a FI_EP_MSG endpoint adds to the RDM endpoint. */
struct rdmx_cm {
	struct rdmx_ep		*ep;
	enum rdmx_cm_state	state;
	struct fid_eq		*eq;
	struct rdmx_eq_source	src;		/* in eq's sources */
	struct fid_av		*av;		/* its own: listener, peer */
	fi_addr_t		listener;
	fi_addr_t		peer;		/* from ACCEPT, or the request's */
	uint64_t		conn_id;
	uint64_t		deadline;	/* CONNECTING: FI_ETIMEDOUT then */
	bool			disc_early;	/* CONNECTING: the acceptor's DISC
						   came before the ACCEPT */
	struct rdmx_connreq	*req;		/* from info->handle, to accept */
	size_t			peer_len;	/* fi_getpeer's address: 0 until */
	uint8_t			peer_name[RDMX_CM_NAME_MAX];	/* connected */
	size_t			shown_len;	/* an acceptor's fi_getname: */
	uint8_t			shown[RDMX_CM_NAME_MAX];	/* its listener's */
	struct rdmx_cm_filter	tx_filter, rx_filter;
	struct rdmx_cm_buf	rx[RDMX_CM_RX];
	struct rdmx_cm_buf	tx[RDMX_CM_TX];
};

/*
 * A FI_EP_MSG endpoint being opened (ep->cm NULL before): its AV and
 * state, the request to accept from info->handle. 0 or -FI_E*.
 */
int rdmx_cm_open(struct rdmx_ep *ep, const struct fi_info *info);
/* At fi_close, first: leaves its EQ, refuses a request it did not accept. */
void rdmx_cm_leave(struct rdmx_ep *ep);
/* At fi_close, last (the AV detached): frees the AV and the state. */
void rdmx_cm_free(struct rdmx_ep *ep);
/* fi_ep_bind of an EQ. 0 or -FI_EINVAL (a second one). */
int rdmx_cm_bind_eq(struct rdmx_ep *ep, struct fid_eq *eq);
/* At fi_enable, domain lock held: the filters, the posted steps. 0 or -FI_E*. */
int rdmx_cm_enable(struct rdmx_ep *ep);

/* A FI_EP_MSG endpoint's fi_ops_cm calls (fi_cm(3)). */
int rdmx_cm_connect(struct fid_ep *ep, const void *addr, const void *param, size_t paramlen);
int rdmx_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int rdmx_cm_shutdown(struct fid_ep *ep, uint64_t flags);
int rdmx_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen);
int rdmx_cm_getname(fid_t fid, void *addr, size_t *addrlen);
int rdmx_cm_setname(fid_t fid, void *addr, size_t addrlen);

/* fi_passive_ep (the fabric's op). */
int rdmx_pep_open(struct fid_fabric *fabric, struct fi_info *info, struct fid_pep **pep_p,
		  void *context);

/*
 * fi_endpoint of info->handle req: claims it for the endpoint and gives
 * its listener's name (name: *len bytes of room; *len: its length). 0,
 * or -FI_EBUSY when another endpoint did.
 */
int rdmx_pep_claim(struct rdmx_connreq *req, void *name, size_t *len);

/*
 * fi_accept's step at the listener: sends ACCEPT with the acceptor's
 * name and data for req, which it frees. 0 or -FI_E*.
 */
int rdmx_pep_accept(struct rdmx_connreq *req, const void *name, size_t name_len,
		    const void *data, size_t len);
/* A request no endpoint will accept (its endpoint closed): refused. */
void rdmx_pep_drop(struct rdmx_connreq *req);

/*
 * A passive endpoint that does not listen gives its address (canonical,
 * to canon) to an active endpoint being opened with it as info->handle,
 * and closes its own use of it. 0, or -FI_EOPBADSTATE when it listens
 * or gave it already.
 */
int rdmx_pep_yield(struct fid *pep, void *canon);

#endif /* RDMX_CM_H */
