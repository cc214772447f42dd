/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: swsrd header codec (see rdmx_wire_srd.h and docs/protocol.md). */
#include <endian.h>

#include "rdmx.h"
#include "rdmx_wire_srd.h"

void rdmx_wire_srd_encode(struct rdmx_wire_srd *wire, const struct rdmx_srd_hdr *hdr)
{
	wire->magic = htole16(RDMX_SRD_MAGIC);
	wire->type = (uint8_t) hdr->type;
	wire->flags = (uint8_t) hdr->flags;
	wire->epoch = htole32(hdr->epoch);
	wire->psn = htole32(hdr->psn);
	wire->ack_epoch = htole32(hdr->ack_epoch);
	wire->ack = htole32(hdr->ack);
	wire->reserved = 0;
	wire->sack = htole64(hdr->sack);
	wire->dst_tag = htole64(hdr->dst_tag);
	wire->src_tag = htole64(hdr->src_tag);
}

int rdmx_wire_srd_decode(const void *buf, size_t len, struct rdmx_srd_hdr *hdr)
{
	/* A copy: a datagram need not start 8-byte aligned (a raw socket's). */
	struct rdmx_wire_srd copy, *wire = &copy;

	if (len < sizeof(*wire))
		return -FI_EINVAL;
	memcpy(wire, buf, sizeof(*wire));
	if (le16toh(wire->magic) != RDMX_SRD_MAGIC ||
	    !wire->type || wire->type >= RDMX_SRD_TYPE_MAX ||
	    (wire->flags & ~RDMX_SRD_FLAGS_KNOWN) || wire->reserved)
		return -FI_EINVAL;
	hdr->type = wire->type;
	hdr->flags = wire->flags;
	if (((hdr->type != RDMX_SRD_DATA && hdr->type != RDMX_SRD_UNREL) ||
	     (hdr->flags & RDMX_SRD_SKIP)) && len != sizeof(*wire))
		return -FI_EINVAL;
	if (hdr->type == RDMX_SRD_DATA ? (hdr->flags & RDMX_SRD_TOO_BIG) :
	    hdr->flags & ~(hdr->type == RDMX_SRD_RNR ? RDMX_SRD_TOO_BIG : 0))
		return -FI_EINVAL;
	hdr->epoch = le32toh(wire->epoch);
	hdr->psn = le32toh(wire->psn);
	hdr->ack_epoch = le32toh(wire->ack_epoch);
	hdr->ack = le32toh(wire->ack);
	hdr->sack = le64toh(wire->sack);
	hdr->dst_tag = le64toh(wire->dst_tag);
	hdr->src_tag = le64toh(wire->src_tag);
	if (hdr->type == RDMX_SRD_UNREL)
		return hdr->epoch || hdr->psn || hdr->ack_epoch || hdr->ack ||
		       hdr->sack || hdr->dst_tag || hdr->src_tag ? -FI_EINVAL : 0;
	if (!hdr->src_tag || (hdr->type == RDMX_SRD_CHALLENGE &&
			      (hdr->flags || hdr->ack_epoch)))
		return -FI_EINVAL;
	return 0;
}
