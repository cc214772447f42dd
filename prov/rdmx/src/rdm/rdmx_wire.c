/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: packet codec (see rdmx_wire.h and docs/protocol.md). */
#include <endian.h>

#include "rdmx.h"
#include "rdmx_atomic.h"
#include "rdmx_wire.h"

static void rdmx_wire_base_encode(struct rdmx_wire_base *base,
				  enum rdmx_pkt_type type, uint32_t flags)
{
	base->magic = htole16(RDMX_WIRE_MAGIC);
	base->version = RDMX_WIRE_VERSION;
	base->type = (uint8_t) type;
	base->flags = htole32(flags);
}

static void rdmx_wire_msg_encode(struct rdmx_wire_eager *hdr,
				 enum rdmx_pkt_type type, uint32_t flags,
				 uint32_t msg_id, uint32_t id, uint64_t tag,
				 uint64_t data)
{
	rdmx_wire_base_encode(&hdr->base, type, flags);
	hdr->msg_id = htole32(msg_id);
	hdr->id = htole32(id);
	hdr->tag = htole64(tag);
	hdr->data = htole64(data);
}

void rdmx_wire_eager_encode(struct rdmx_wire_eager *hdr, uint32_t flags,
			    uint32_t msg_id, uint64_t tag, uint64_t data)
{
	rdmx_wire_msg_encode(hdr, RDMX_PKT_EAGER, flags, msg_id, 0, tag, data);
}

void rdmx_wire_msg_set_id(struct rdmx_wire_eager *hdr, uint32_t id)
{
	hdr->id = htole32(id);
}

void rdmx_wire_dack_encode(struct rdmx_wire_dack *hdr, uint32_t msg_id,
			   uint32_t tx_id, uint32_t status, uint32_t count)
{
	rdmx_wire_base_encode(&hdr->base, RDMX_PKT_DACK, 0);
	hdr->msg_id = htole32(msg_id);
	hdr->tx_id = htole32(tx_id);
	hdr->status = htole32(status);
	hdr->count = htole32(count);
}

void rdmx_wire_medium_encode(struct rdmx_wire_medium *hdr, uint32_t flags,
			     uint32_t msg_id, uint64_t tag, uint64_t data,
			     uint64_t msg_len, uint64_t offset)
{
	rdmx_wire_msg_encode(&hdr->msg, RDMX_PKT_MEDIUM, flags, msg_id, 0, tag, data);
	hdr->msg_len = htole64(msg_len);
	hdr->offset = htole64(offset);
}

void rdmx_wire_rts_encode(struct rdmx_wire_rts *hdr, uint32_t flags,
			  uint32_t msg_id, uint32_t tx_id, uint64_t tag,
			  uint64_t data, uint64_t msg_len)
{
	rdmx_wire_msg_encode(&hdr->msg, RDMX_PKT_RTS, flags, msg_id, tx_id, tag, data);
	hdr->msg_len = htole64(msg_len);
}

void rdmx_wire_read_encode(struct rdmx_wire_read *read, const void *key,
			   const struct iovec *iov, size_t cnt)
{
	memset(read, 0, sizeof(*read));
	memcpy(read->key, key, RDMX_WIRE_RKEY_LEN);
	read->seg_cnt = htole32((uint32_t) cnt);
	for (size_t i = 0; i < cnt; i++) {
		read->seg[i].addr = htole64((uint64_t) (uintptr_t) iov[i].iov_base);
		read->seg[i].len = htole64(iov[i].iov_len);
	}
}

int rdmx_wire_read_decode(const void *buf, size_t len, uint64_t msg_len,
			  void *key, struct iovec *iov)
{
	const struct rdmx_wire_read *read = buf;
	uint32_t cnt;
	uint64_t sum = 0;

	if (len != sizeof(*read))
		return -FI_EINVAL;
	cnt = le32toh(read->seg_cnt);
	if (!cnt || cnt > RDMX_WIRE_READ_SEGS || read->reserved)
		return -FI_EINVAL;
	for (uint32_t i = 0; i < cnt; i++) {
		uint64_t seg_len = le64toh(read->seg[i].len);

		if (seg_len > msg_len - sum)
			return -FI_EINVAL;
		sum += seg_len;
		iov[i].iov_base = (void *) (uintptr_t) le64toh(read->seg[i].addr);
		iov[i].iov_len = seg_len;
	}
	if (sum != msg_len)
		return -FI_EINVAL;
	memcpy(key, read->key, RDMX_WIRE_RKEY_LEN);
	return (int) cnt;
}

void rdmx_wire_cts_encode(struct rdmx_wire_cts *hdr, uint32_t msg_id,
			  uint32_t tx_id, uint32_t rx_id, uint64_t end,
			  uint64_t limit)
{
	rdmx_wire_base_encode(&hdr->base, RDMX_PKT_CTS, 0);
	hdr->msg_id = htole32(msg_id);
	hdr->tx_id = htole32(tx_id);
	hdr->rx_id = htole32(rx_id);
	hdr->reserved = 0;
	hdr->end = htole64(end);
	hdr->limit = htole64(limit);
}

void rdmx_wire_data_encode(struct rdmx_wire_data *hdr, uint32_t msg_id,
			   uint32_t rx_id, uint64_t offset)
{
	rdmx_wire_base_encode(&hdr->base, RDMX_PKT_DATA, 0);
	hdr->msg_id = htole32(msg_id);
	hdr->rx_id = htole32(rx_id);
	hdr->offset = htole64(offset);
}

void rdmx_wire_rma_encode(struct rdmx_wire_rma *rma, uint64_t addr, uint64_t len)
{
	rma->addr = htole64(addr);
	rma->len = htole64(len);
}

void rdmx_wire_atomic_encode(struct rdmx_wire_atomic *atomic, uint8_t op, uint8_t datatype,
			     uint16_t count)
{
	*atomic = (struct rdmx_wire_atomic) {
		.op = op,
		.datatype = datatype,
		.count = htole16(count),
	};
}

/*
 * The rdmx_wire_atomic taken off the front of an atomic's payload: an
 * operation offered on its datatype for its kind (a fetch with
 * RMA_READ), at least one element, the payload exactly the operands
 * (and compare values), each at most RDMX_ATOMIC_MAX_BYTES bytes, and for
 * a fetch the rma's len exactly the old values' bytes.
 */
static int rdmx_wire_decode_atomic(struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_atomic *atomic = (const void *) pkt->payload;
	bool fetch = pkt->flags & RDMX_PKT_RMA_READ;
	enum rdmx_atomic_kind kind;
	size_t bytes, want;

	if (pkt->type != RDMX_PKT_EAGER || (pkt->flags & RDMX_PKT_CQ_DATA) ||
	    pkt->payload_len < sizeof(*atomic) || atomic->reserved)
		return -FI_EINVAL;
	pkt->atomic_op = atomic->op;
	pkt->atomic_datatype = atomic->datatype;
	pkt->atomic_count = le16toh(atomic->count);
	pkt->payload += sizeof(*atomic);
	pkt->payload_len -= sizeof(*atomic);
	kind = !fetch ? RDMX_ATOMIC_WRITE : pkt->atomic_op >= FI_CSWAP ? RDMX_ATOMIC_COMPARE :
	       RDMX_ATOMIC_FETCH;
	if (!rdmx_atomic_valid(kind, pkt->atomic_op, pkt->atomic_datatype))
		return -FI_EINVAL;
	bytes = pkt->atomic_count * rdmx_atomic_size(pkt->atomic_datatype);
	want = pkt->atomic_op == FI_ATOMIC_READ ? 0 : kind == RDMX_ATOMIC_COMPARE ? 2 * bytes :
	       bytes;
	return !bytes || bytes > RDMX_ATOMIC_MAX_BYTES || pkt->payload_len != want ||
	       pkt->rma_len != (fetch ? bytes : 0) ? -FI_EINVAL : 0;
}

/*
 * The RMA flags of a message packet: which combinations exist, and the
 * rdmx_wire_rma taken off the front of the payload.
 */
static int rdmx_wire_decode_rma(struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_rma *rma = (const void *) pkt->payload;
	uint32_t f = pkt->flags;

	if (f & RDMX_PKT_RMA_RESP)
		return f & (RDMX_PKT_TAGGED | RDMX_PKT_CQ_DATA | RDMX_PKT_RMA |
			    RDMX_PKT_RMA_READ | RDMX_PKT_DACK_REQ | RDMX_PKT_READ |
			    RDMX_PKT_ATOMIC) ? -FI_EINVAL : 0;
	if (!(f & RDMX_PKT_RMA))
		return f & (RDMX_PKT_RMA_READ | RDMX_PKT_ATOMIC) ? -FI_EINVAL : 0;
	/* RMA: never tagged, never offered for reading; always answered. */
	if ((f & (RDMX_PKT_TAGGED | RDMX_PKT_READ | RDMX_PKT_VOID)) ||
	    !(f & RDMX_PKT_DACK_REQ) || pkt->payload_len < sizeof(*rma))
		return -FI_EINVAL;
	pkt->rma_addr = le64toh(rma->addr);
	pkt->rma_len = le64toh(rma->len);
	pkt->payload += sizeof(*rma);
	pkt->payload_len -= sizeof(*rma);
	if (f & RDMX_PKT_ATOMIC)
		return rdmx_wire_decode_atomic(pkt);
	if (f & RDMX_PKT_RMA_READ)
		return pkt->type != RDMX_PKT_EAGER || (f & RDMX_PKT_CQ_DATA) ||
		       pkt->payload_len ? -FI_EINVAL : 0;
	return pkt->rma_len ? -FI_EINVAL : 0;
}

/* Header bytes of each packet type; 0 marks a type that does not exist. */
static const size_t rdmx_wire_hdr_size[RDMX_PKT_TYPE_MAX] = {
	[RDMX_PKT_EAGER] = sizeof(struct rdmx_wire_eager),
	[RDMX_PKT_MEDIUM] = sizeof(struct rdmx_wire_medium),
	[RDMX_PKT_RTS] = sizeof(struct rdmx_wire_rts),
	[RDMX_PKT_CTS] = sizeof(struct rdmx_wire_cts),
	[RDMX_PKT_DATA] = sizeof(struct rdmx_wire_data),
	[RDMX_PKT_HS] = RDMX_WIRE_HS_BASE_SIZE,
	[RDMX_PKT_DACK] = sizeof(struct rdmx_wire_dack),
};

/* EAGER, MEDIUM and RTS: the message header and what follows it. */
static int rdmx_wire_decode_msg(const void *buf, struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_eager *msg = buf;
	const struct rdmx_wire_medium *medium = buf;
	const struct rdmx_wire_rts *rts = buf;

	pkt->msg_id = le32toh(msg->msg_id);
	pkt->tx_id = le32toh(msg->id);
	/* An untagged message matches as tag 0, whatever it carries. */
	pkt->tag = (pkt->flags & RDMX_PKT_TAGGED) ? le64toh(msg->tag) : 0;
	pkt->data = le64toh(msg->data);
	if ((pkt->flags & RDMX_PKT_VOID) &&
	    (pkt->type != RDMX_PKT_EAGER || pkt->payload_len))
		return -FI_EINVAL;
	if ((pkt->flags & RDMX_PKT_READ) && pkt->type != RDMX_PKT_RTS)
		return -FI_EINVAL;
	if ((pkt->flags & RDMX_PKT_VOID) && (pkt->flags & RDMX_PKT_DACK_REQ))
		return -FI_EINVAL;
	/* EAGER and MEDIUM carry a send id only for a DACK to name. */
	if (pkt->tx_id && pkt->type != RDMX_PKT_RTS && !(pkt->flags & RDMX_PKT_DACK_REQ))
		return -FI_EINVAL;
	if ((pkt->flags & (RDMX_PKT_RMA | RDMX_PKT_RMA_READ | RDMX_PKT_RMA_RESP |
			   RDMX_PKT_ATOMIC)) && rdmx_wire_decode_rma(pkt))
		return -FI_EINVAL;
	/* RMA: the tag field carries the key, or the read's send id. */
	if (pkt->flags & (RDMX_PKT_RMA | RDMX_PKT_RMA_RESP))
		pkt->tag = le64toh(msg->tag);
	switch (pkt->type) {
	case RDMX_PKT_EAGER:
		pkt->msg_len = pkt->payload_len;
		return 0;
	case RDMX_PKT_MEDIUM:
		pkt->msg_len = le64toh(medium->msg_len);
		pkt->offset = le64toh(medium->offset);
		if (!pkt->payload_len || pkt->offset > pkt->msg_len ||
		    pkt->payload_len > pkt->msg_len - pkt->offset)
			return -FI_EINVAL;
		return 0;
	default:
		pkt->msg_len = le64toh(rts->msg_len);
		/* Only a read descriptor may follow an RTS (rdmx_wire_read_decode). */
		if (pkt->flags & RDMX_PKT_READ)
			return pkt->payload_len == sizeof(struct rdmx_wire_read) ?
			       0 : -FI_EINVAL;
		return pkt->payload_len ? -FI_EINVAL : 0;
	}
}

/* CTS and DATA: flow control of a long message, never flagged. */
static int rdmx_wire_decode_long(const void *buf, struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_cts *cts = buf;
	const struct rdmx_wire_data *data = buf;

	if (pkt->flags)
		return -FI_EINVAL;
	if (pkt->type == RDMX_PKT_CTS) {
		pkt->msg_id = le32toh(cts->msg_id);
		pkt->tx_id = le32toh(cts->tx_id);
		pkt->rx_id = le32toh(cts->rx_id);
		pkt->end = le64toh(cts->end);
		pkt->limit = le64toh(cts->limit);
		return cts->reserved || pkt->payload_len || pkt->limit > pkt->end ?
		       -FI_EINVAL : 0;
	}
	pkt->msg_id = le32toh(data->msg_id);
	pkt->rx_id = le32toh(data->rx_id);
	pkt->offset = le64toh(data->offset);
	return !pkt->payload_len || pkt->offset > UINT64_MAX - pkt->payload_len ?
	       -FI_EINVAL : 0;
}

/* DACK: no flags, no payload, a status in range, a run of 1 to the max. */
static int rdmx_wire_decode_dack(const void *buf, struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_dack *dack = buf;

	pkt->msg_id = le32toh(dack->msg_id);
	pkt->tx_id = le32toh(dack->tx_id);
	pkt->status = le32toh(dack->status);
	pkt->count = le32toh(dack->count);
	return pkt->flags || pkt->payload_len || !pkt->count ||
	       pkt->count > RDMX_WIRE_DACK_RUN_MAX || (pkt->status && pkt->count > 1) ||
	       pkt->status > RDMX_WIRE_DACK_STATUS_MAX ? -FI_EINVAL : 0;
}

/* Bytes of an HS packet whose features are these: up to the last field they name. */
static size_t rdmx_wire_hs_len(uint64_t features)
{
	if (features & RDMX_HS_FEAT_SHM)
		return sizeof(struct rdmx_wire_hs);
	if (features & RDMX_HS_FEAT_HOST)
		return RDMX_WIRE_HS_HOST_SIZE;
	if (features & RDMX_HS_FEAT_RX_MAX)
		return RDMX_WIRE_HS_RX_MAX_SIZE;
	return RDMX_WIRE_HS_BASE_SIZE;
}

/*
 * HS: checks what rdmx_wire_hs_decode will not: flags, type, and that a
 * feature's fields are there when its bit says so (bytes beyond them are
 * a later version's, ignored).
 */
static int rdmx_wire_decode_hs(const void *buf, struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_hs *hs = buf;
	uint32_t type = le32toh(hs->hs_type);
	size_t ext = rdmx_wire_hs_len(le64toh(hs->features)) - RDMX_WIRE_HS_BASE_SIZE;

	return pkt->flags || pkt->payload_len < ext ||
	       type < RDMX_HS_RESET || type > RDMX_HS_CLOSE ? -FI_EINVAL : 0;
}

void rdmx_wire_hs_encode(struct rdmx_wire_hs *hdr, const struct rdmx_hs_msg *msg)
{
	rdmx_wire_base_encode(&hdr->base, RDMX_PKT_HS, 0);
	hdr->hs_type = htole32((uint32_t) msg->type);
	hdr->probe_version = htole32(msg->probe_version);
	hdr->proto_min = htole32(msg->proto_min);
	hdr->proto_max = htole32(msg->proto_max);
	hdr->features = htole64(msg->features);
	hdr->incarnation = htole64(msg->incarnation);
	hdr->peer_incarnation = htole64(msg->peer_incarnation);
	hdr->seq = htole32(msg->seq);
	hdr->session = htole32(msg->session);
	hdr->rx_max = htole32(msg->rx_max);
	if (msg->rx_max)
		hdr->features |= htole64(RDMX_HS_FEAT_RX_MAX);
	/* Without HOST the pid's place is reserved, and zero. */
	hdr->pid = htole32(msg->features & RDMX_HS_FEAT_HOST ? msg->pid : 0);
	hdr->host = htole64(msg->features & RDMX_HS_FEAT_HOST ? msg->host : 0);
	hdr->shm_fd = htole32(msg->features & RDMX_HS_FEAT_SHM ? msg->shm_fd : 0);
	hdr->shm_reserved = 0;
	hdr->shm_token = htole64(msg->features & RDMX_HS_FEAT_SHM ? msg->shm_token : 0);
}

size_t rdmx_wire_hs_size(const struct rdmx_hs_msg *msg)
{
	return rdmx_wire_hs_len(msg->features | (msg->rx_max ? RDMX_HS_FEAT_RX_MAX : 0));
}

void rdmx_wire_hs_decode(const void *buf, size_t len, struct rdmx_hs_msg *msg)
{
	const struct rdmx_wire_hs *hdr = buf;
	bool has_rx_max = (le64toh(hdr->features) & RDMX_HS_FEAT_RX_MAX) &&
			  len >= RDMX_WIRE_HS_RX_MAX_SIZE;
	bool has_host = (le64toh(hdr->features) & RDMX_HS_FEAT_HOST) &&
			len >= RDMX_WIRE_HS_HOST_SIZE;
	/* A queue is named by pid too: SHM counts only with HOST. */
	bool has_shm = has_host && (le64toh(hdr->features) & RDMX_HS_FEAT_SHM) &&
		       len >= sizeof(*hdr);

	*msg = (struct rdmx_hs_msg) {
		.type = (enum rdmx_hs_type) le32toh(hdr->hs_type),
		.probe_version = le32toh(hdr->probe_version),
		.proto_min = le32toh(hdr->proto_min),
		.proto_max = le32toh(hdr->proto_max),
		.features = le64toh(hdr->features),
		.incarnation = le64toh(hdr->incarnation),
		.peer_incarnation = le64toh(hdr->peer_incarnation),
		.seq = le32toh(hdr->seq),
		.session = le32toh(hdr->session),
		.rx_max = has_rx_max ? le32toh(hdr->rx_max) : 0,
		.host = has_host ? le64toh(hdr->host) : 0,
		.pid = has_host ? le32toh(hdr->pid) : 0,
		.shm_fd = has_shm ? le32toh(hdr->shm_fd) : 0,
		.shm_token = has_shm ? le64toh(hdr->shm_token) : 0,
	};
}

int rdmx_wire_decode(const void *buf, size_t len, struct rdmx_pkt *pkt)
{
	const struct rdmx_wire_base *base = buf;
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
	pkt->payload = (const uint8_t *) buf + hdr;
	pkt->payload_len = len - hdr;
	if (pkt->type == RDMX_PKT_HS)
		return rdmx_wire_decode_hs(buf, pkt);
	if (pkt->type == RDMX_PKT_DACK)
		return rdmx_wire_decode_dack(buf, pkt);
	if (pkt->type == RDMX_PKT_CTS || pkt->type == RDMX_PKT_DATA)
		return rdmx_wire_decode_long(buf, pkt);
	return rdmx_wire_decode_msg(buf, pkt);
}

void rdmx_wire_ud_encode(struct rdmx_wire_ud *hdr, uint32_t flags, uint64_t data)
{
	hdr->magic = htole16(RDMX_WIRE_UD_MAGIC);
	hdr->version = RDMX_WIRE_UD_VERSION;
	hdr->flags = (uint8_t) flags;
	hdr->reserved = 0;
	hdr->data = htole64(flags & RDMX_UD_CQ_DATA ? data : 0);
}

int rdmx_wire_ud_decode(const void *buf, size_t len, uint32_t *flags, uint64_t *data)
{
	struct rdmx_wire_ud hdr;

	if (len < sizeof(hdr))
		return -FI_EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	*data = le64toh(hdr.data);
	if (le16toh(hdr.magic) != RDMX_WIRE_UD_MAGIC || hdr.version != RDMX_WIRE_UD_VERSION ||
	    (hdr.flags & ~RDMX_UD_CQ_DATA) || hdr.reserved ||
	    (!(hdr.flags & RDMX_UD_CQ_DATA) && *data))
		return -FI_EINVAL;
	*flags = hdr.flags;
	return 0;
}

size_t rdmx_wire_cm_encode(void *buf, const struct rdmx_cm_msg *msg)
{
	struct rdmx_wire_cm hdr = {
		.magic = htole16(RDMX_WIRE_CM_MAGIC),
		.version = RDMX_WIRE_CM_VERSION,
		.type = (uint8_t) msg->type,
		.data_len = htole16((uint16_t) msg->data_len),
		.name_len = (uint8_t) msg->name_len,
		.conn_id = htole64(msg->conn_id),
	};

	if (msg->name_len)
		memcpy(hdr.name, msg->name, msg->name_len);
	memcpy(buf, &hdr, sizeof(hdr));
	if (msg->data_len)
		memcpy((uint8_t *) buf + sizeof(hdr), msg->data, msg->data_len);
	return sizeof(hdr) + msg->data_len;
}

int rdmx_wire_cm_decode(const void *buf, size_t len, struct rdmx_cm_msg *msg)
{
	const struct rdmx_wire_cm *wire = buf;
	struct rdmx_wire_cm hdr;
	bool named, carries;

	if (len < sizeof(hdr))
		return -FI_EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	msg->type = hdr.type;
	msg->conn_id = le64toh(hdr.conn_id);
	msg->name_len = hdr.name_len;
	msg->name = wire->name;
	msg->data_len = le16toh(hdr.data_len);
	msg->data = (const uint8_t *) buf + sizeof(hdr);
	named = hdr.type == RDMX_CM_REQ || hdr.type == RDMX_CM_ACCEPT;
	carries = named || hdr.type == RDMX_CM_REJECT;
	if (le16toh(hdr.magic) != RDMX_WIRE_CM_MAGIC || hdr.version != RDMX_WIRE_CM_VERSION ||
	    !hdr.type || hdr.type >= RDMX_CM_TYPE_MAX || hdr.reserved || !msg->conn_id ||
	    len != sizeof(hdr) + msg->data_len || msg->data_len > RDMX_CM_DATA_MAX ||
	    (!carries && msg->data_len) || msg->name_len > RDMX_CM_NAME_MAX ||
	    named != (msg->name_len > 0))
		return -FI_EINVAL;
	for (size_t i = msg->name_len; i < RDMX_CM_NAME_MAX; i++)
		if (hdr.name[i])
			return -FI_EINVAL;
	return 0;
}
