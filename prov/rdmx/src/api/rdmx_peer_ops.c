/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: the rdmx_peer_ops extension (rdma/fi_ext_rdmx.h): a peer's
 * handshake state, and a callback when a peer connects or is given up.
 */
#include <string.h>

#include "rdmx.h"
#include "rdmx_av.h"
#include "rdmx_conn.h"
#include "rdmx_domain.h"
#include "rdmx_ep.h"
#include "rdmx_peer.h"
#include "rdmx_stubs.h"

_Static_assert((int) FI_RDMX_PEER_IDLE == (int) RDMX_HS_IDLE &&
	       (int) FI_RDMX_PEER_CONNECTING == (int) RDMX_HS_RESET_SENT &&
	       (int) FI_RDMX_PEER_PROBING == (int) RDMX_HS_PROBING &&
	       (int) FI_RDMX_PEER_CONNECTED == (int) RDMX_HS_CONNECTED &&
	       (int) FI_RDMX_PEER_DISCONNECTED == (int) RDMX_HS_DISCONNECTED &&
	       (int) FI_RDMX_PEER_CLOSED == (int) RDMX_HS_CLOSED,
	       "peer states match the handshake's");
_Static_assert(FI_RDMX_PEER_FEAT_CLOSE == RDMX_HS_FEAT_CLOSE &&
	       FI_RDMX_PEER_FEAT_HOST == RDMX_HS_FEAT_HOST,
	       "feature bits match the handshake's");

static struct rdmx_ep *rdmx_peer_ops_ep(struct fid_ep *ep_fid)
{
	return ep_fid && ep_fid->fid.fclass == FI_CLASS_EP ? rdmx_ep(ep_fid) : NULL;
}

static int rdmx_peer_query(struct fid_ep *ep_fid, fi_addr_t addr,
			   struct fi_rdmx_peer_attr *attr)
{
	struct rdmx_ep *ep = rdmx_peer_ops_ep(ep_fid);
	const struct rdmx_peer *peer;
	int ret = 0;

	if (!ep || !attr)
		return -FI_EINVAL;
	rdmx_lock_acquire(&ep->domain->lock);
	if (!ep->av || !rdmx_av_addr(ep->av, addr)) {
		ret = -FI_EINVAL;
	} else {
		/* An address nothing was sent to or heard from has no peer yet. */
		peer = rdmx_peer_find(ep, addr);
		*attr = (struct fi_rdmx_peer_attr) {
			.state = peer ? (enum fi_rdmx_peer_state) peer->hs.state :
					FI_RDMX_PEER_IDLE,
			.version = peer ? peer->hs.version : 0,
			.features = peer ? peer->hs.peer_features : 0,
		};
	}
	rdmx_lock_release(&ep->domain->lock);
	return ret;
}

static int rdmx_peer_set_callback(struct fid_ep *ep_fid, fi_rdmx_peer_cb cb, void *arg)
{
	struct rdmx_ep *ep = rdmx_peer_ops_ep(ep_fid);

	if (!ep)
		return -FI_EINVAL;
	rdmx_lock_acquire(&ep->domain->lock);
	ep->peer_cb = cb;
	ep->peer_cb_arg = arg;
	rdmx_lock_release(&ep->domain->lock);
	return 0;
}

static struct fi_rdmx_peer_ops rdmx_peer_ext_ops = {
	.size = sizeof(struct fi_rdmx_peer_ops),
	.query = rdmx_peer_query,
	.set_callback = rdmx_peer_set_callback,
};

int rdmx_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			 void **ops, void *context)
{
	if (!name || strcmp(name, FI_RDMX_PEER_OPS) || flags || !ops)
		return rdmx_no_ops_open(fid, name, flags, ops, context);
	*ops = &rdmx_peer_ext_ops;
	return 0;
}
