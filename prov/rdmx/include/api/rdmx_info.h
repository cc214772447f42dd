/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: fi_getinfo. Builds one fi_info per device domain describing what
 * rdmx really does there, and filters and narrows it against the hints.
 */
#ifndef RDMX_INFO_H
#define RDMX_INFO_H

#include <rdma/fabric.h>

#include "rdmx_dev.h"
#include "rdmx_comp.h"	/* RDMX_ERR_DATA_MAX */

/* Capabilities, split the way fi_getinfo(3) splits them. */
#define RDMX_TX_CAPS	(FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_ATOMIC | FI_READ | \
			 FI_WRITE)
#define RDMX_RX_CAPS	(FI_MSG | FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | \
			 FI_SOURCE | FI_SOURCE_ERR | FI_MULTI_RECV | FI_RMA | FI_ATOMIC | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT)
#define RDMX_DOM_CAPS	(FI_LOCAL_COMM | FI_REMOTE_COMM)
#define RDMX_CAPS	(RDMX_TX_CAPS | RDMX_RX_CAPS | RDMX_DOM_CAPS)
/* A datagram endpoint's (FI_EP_DGRAM, rdmx_ud.h): messages only. */
#define RDMX_UD_TX_CAPS	(FI_MSG | FI_SEND)
#define RDMX_UD_RX_CAPS	(FI_MSG | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE)
#define RDMX_UD_CAPS	(RDMX_UD_TX_CAPS | RDMX_UD_RX_CAPS | RDMX_DOM_CAPS)
/*
 * A connected endpoint's (FI_EP_MSG, rdmx_cm.h): the RDM endpoint's but
 * what names a sender; its tags are 63 bits (bit 63 marks its connection
 * steps, RDMX_CM_TAG_BIT).
 */
#define RDMX_MSG_NOT_CAPS (FI_DIRECTED_RECV | FI_SOURCE | FI_SOURCE_ERR)
#define RDMX_MSG_CAPS	(RDMX_CAPS & ~(uint64_t) RDMX_MSG_NOT_CAPS)
#define RDMX_MSG_TAG_FORMAT	0x5555555555555555ULL
#define RDMX_PRIMARY_CAPS (FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | \
			 FI_MULTICAST | FI_NAMED_RX_CTX | FI_DIRECTED_RECV | \
			 FI_READ | FI_WRITE | FI_RECV | FI_SEND | \
			 FI_REMOTE_READ | FI_REMOTE_WRITE | FI_VARIABLE_MSG | \
			 FI_HMEM | FI_COLLECTIVE)
#define RDMX_SECONDARY_CAPS (FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | \
			 FI_SHARED_AV | FI_TRIGGER | FI_FENCE | \
			 FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SOURCE_ERR | \
			 FI_RMA_PMEM)

/*
 * Capabilities that change what an application that did not ask for them
 * sees: given only when asked for (an error entry for every message from
 * outside the AV, with FI_SOURCE_ERR).
 */
#define RDMX_ASKED_CAPS	FI_SOURCE_ERR

/* Largest message: the long protocol streams any size (1 TiB). */
#define RDMX_MAX_MSG_SIZE	(1ULL << 40)
/* Largest inject_size: the bytes every send entry keeps room for. */
#define RDMX_INJECT_MAX		65536
/*
 * Completion levels rdmx cannot give (fi_cq(3)): refused in hints'
 * tx op_flags, in an endpoint's op flags and per operation, never
 * weakened. FI_MATCH_COMPLETE would need the DACK of an unexpected
 * message held until a receive takes it; FI_COMMIT_COMPLETE is for
 * persistent memory, which rdmx does not know.
 */
#define RDMX_TX_LEVELS_REFUSED	(FI_MATCH_COMPLETE | FI_COMMIT_COMPLETE)

/*
 * The completion levels an endpoint refuses: a datagram endpoint's
 * delivers nothing for sure, so FI_DELIVERY_COMPLETE too (fi_cq(3):
 * reliable endpoints only).
 */
static inline uint64_t rdmx_levels_refused(enum fi_ep_type type)
{
	return RDMX_TX_LEVELS_REFUSED | (type == FI_EP_DGRAM ? FI_DELIVERY_COMPLETE : 0);
}
/* The default completion level rdmx advertises in tx_attr->op_flags. */
#define RDMX_TX_OP_FLAGS	FI_TRANSMIT_COMPLETE

/*
 * Send-after-send: receives match messages in their sender's order; and
 * atomics to one peer are applied in the order they were posted (each is
 * one message, applied as it is admitted in order).
 */
#define RDMX_MSG_ORDER		(FI_ORDER_SAS | FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | \
				 FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW)

/* The fi_info rdmx offers on one device domain; NULL on no memory. */
struct fi_info *rdmx_info_base(const struct rdmx_dev_ops *ops,
			       const struct rdmx_dev_domain *dom,
			       uint32_t version);

/*
 * The largest message of a datagram endpoint of device ops: the
 * smallest datagram of every domain it lists, less rdmx's header. The
 * same on each entry and each endpoint of a host, whichever interface
 * it is on: a peer that picked another domain (loopback's 64 KiB for
 * 127.0.0.1 beside a NIC's 1,500 bytes) sends nothing the endpoint
 * could not take. 0 when the device lists none.
 */
size_t rdmx_info_dgram_max(const struct rdmx_dev_ops *ops);

/*
 * Turns rdmx_info_base's entry into a datagram endpoint's (FI_EP_DGRAM):
 * its caps, no order, messages of one datagram of at most max_msg bytes
 * (rdmx_info_dgram_max).
 */
void rdmx_info_dgram(struct fi_info *info, size_t max_msg);

/* Turns rdmx_info_base's entry into a connected endpoint's (FI_EP_MSG). */
void rdmx_info_msg(struct fi_info *info);

/*
 * Whether prov satisfies hints (fi_getinfo(3) rules); 0 or -FI_ENODATA,
 * logging at info level which attribute did not fit.
 */
int rdmx_info_check(const struct fi_info *prov, const struct fi_info *hints,
		    uint32_t version);

/* Narrows prov to what the hints asked for (caps, modes, levels). */
void rdmx_info_narrow(struct fi_info *prov, const struct fi_info *hints,
		      uint32_t version);

/* The provider's getinfo entry point. */
int rdmx_getinfo(uint32_t version, const char *node, const char *service,
		 uint64_t flags, const struct fi_info *hints,
		 struct fi_info **info);

#endif /* RDMX_INFO_H */
