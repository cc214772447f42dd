/* rdmx: packet codec (see rdmx_wire.h and docs/protocol.md). */
#include <endian.h>

#include "rdmx.h"
#include "rdmx_wire.h"

static void rdmx_wire_base_encode(struct rdmx_wire_base *base,
				  enum rdmx_pkt_type type, uint32_t flags)
{
	base->magic = htole16(RDMX_WIRE_MAGIC);
	base->version = RDMX_WIRE_VERSION;
	base->type = (uint8_t) type;
	base->flags = htole32(flags);
}

void rdmx_wire_eager_encode(struct rdmx_wire_eager *hdr, uint32_t flags,
			    uint32_t msg_id, uint64_t tag, uint64_t data)
{
	rdmx_wire_base_encode(&hdr->base, RDMX_PKT_EAGER, flags);
	hdr->msg_id = htole32(msg_id);
	hdr->reserved = 0;
	hdr->tag = htole64(tag);
	hdr->data = htole64(data);
}

/* Header bytes of each packet type; 0 marks a type that does not exist. */
static const size_t rdmx_wire_hdr_size[RDMX_PKT_TYPE_MAX] = {
	[RDMX_PKT_EAGER] = sizeof(struct rdmx_wire_eager),
};

int rdmx_wire_decode(const void *buf, size_t len, struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_base *base = buf;
	const struct rdmx_wire_eager *eager = buf;
	size_t hdr;

	if (len < sizeof(*base) || le16toh(base->magic) != RDMX_WIRE_MAGIC ||
	    base->version != RDMX_WIRE_VERSION || base->type >= RDMX_PKT_TYPE_MAX)
		return -FI_EINVAL;
	hdr = rdmx_wire_hdr_size[base->type];
	if (!hdr || len < hdr)
		return -FI_EINVAL;
	pkt->type = base->type;
	pkt->flags = le32toh(base->flags);
	if (pkt->flags & ~RDMX_PKT_FLAGS_KNOWN)
		return -FI_EINVAL;

	/* Only eager exists so far; the table above grows with the types. */
	if (eager->reserved)
		return -FI_EINVAL;
	pkt->msg_id = le32toh(eager->msg_id);
	pkt->tag = le64toh(eager->tag);
	pkt->data = le64toh(eager->data);
	pkt->payload = (const uint8_t *) buf + hdr;
	pkt->payload_len = len - hdr;
	return 0;
}

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
}

int rdmx_wire_srd_decode(const void *buf, size_t len, struct rdmx_srd_hdr *hdr)
{
	const struct rdmx_wire_srd *wire = buf;

	if (len < sizeof(*wire) || le16toh(wire->magic) != RDMX_SRD_MAGIC ||
	    !wire->type || wire->type >= RDMX_SRD_TYPE_MAX ||
	    (wire->flags & ~RDMX_SRD_FLAGS_KNOWN) || wire->reserved)
		return -FI_EINVAL;
	hdr->type = wire->type;
	hdr->flags = wire->flags;
	if ((hdr->type != RDMX_SRD_DATA || (hdr->flags & RDMX_SRD_SKIP)) &&
	    len != sizeof(*wire))
		return -FI_EINVAL;
	if (hdr->type == RDMX_SRD_DATA ? (hdr->flags & RDMX_SRD_TOO_BIG) :
	    hdr->flags & ~(hdr->type == RDMX_SRD_RNR ? RDMX_SRD_TOO_BIG : 0))
		return -FI_EINVAL;
	hdr->epoch = le32toh(wire->epoch);
	hdr->psn = le32toh(wire->psn);
	hdr->ack_epoch = le32toh(wire->ack_epoch);
	hdr->ack = le32toh(wire->ack);
	hdr->sack = le64toh(wire->sack);
	return 0;
}
