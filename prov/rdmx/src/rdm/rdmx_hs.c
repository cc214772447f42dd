/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: the probe handshake state machine (see rdmx_hs.h). */
#include "rdmx.h"
#include "rdmx_hs.h"

static const char *const rdmx_hs_states[] = {
	[RDMX_HS_IDLE] = "idle",
	[RDMX_HS_RESET_SENT] = "reset sent",
	[RDMX_HS_PROBING] = "probing",
	[RDMX_HS_CONNECTED] = "connected",
	[RDMX_HS_DISCONNECTED] = "disconnected",
	[RDMX_HS_CLOSED] = "closed",
};

const char *rdmx_hs_state_str(enum rdmx_hs_state state)
{
	return (unsigned) state < RDMX_ARRAY_SIZE(rdmx_hs_states) ? rdmx_hs_states[state] : "?";
}

void rdmx_hs_init(struct rdmx_hs *hs, const struct rdmx_hs_local *local,
		  const struct rdmx_hs_cfg *cfg, const struct rdmx_hs_ops *ops, void *ctx)
{
	*hs = (struct rdmx_hs) {
		.local = local,
		.cfg = cfg,
		.ops = ops,
		.ctx = ctx,
		.state = RDMX_HS_IDLE,
	};
}

/* A message of type from us, naming the peer's incarnation as we know it. */
static void rdmx_hs_send(struct rdmx_hs *hs, enum rdmx_hs_type type, uint32_t seq)
{
	const struct rdmx_hs_local *l = hs->local;
	struct rdmx_hs_msg msg = {
		.type = type,
		.incarnation = l->incarnation,
		.peer_incarnation = type == RDMX_HS_RESET ? 0 : hs->peer_incarnation,
		.seq = seq,
	};

	/* A CLOSE names both sessions: ours here, the peer's in seq. */
	if (type == RDMX_HS_CLOSE)
		msg.session = hs->session;
	if (type == RDMX_HS_RESET || type == RDMX_HS_ACK) {
		msg.session = hs->session;
		msg.probe_version = l->probe_version;
		msg.features = l->features;
		msg.rx_max = l->rx_max;
		msg.host = l->host;
		msg.pid = l->pid;
		msg.shm_fd = l->shm_fd;
		msg.shm_token = l->shm_token;
		/* A legacy endpoint knows no range. */
		if (l->probe_version > RDMX_HS_PROBE_LEGACY) {
			msg.proto_min = l->proto_min;
			msg.proto_max = l->proto_max;
		}
	}
	hs->ops->send(hs->ctx, &msg);
}

bool rdmx_hs_same_host(const struct rdmx_hs *hs)
{
	return (hs->local->features & RDMX_HS_FEAT_HOST) &&
	       (hs->peer_features & RDMX_HS_FEAT_HOST) &&
	       hs->local->host && hs->peer_host == hs->local->host;
}

uint64_t rdmx_hs_bind(const struct rdmx_hs *hs, bool we_expose)
{
	uint64_t ours = hs->local->incarnation, theirs = hs->peer_incarnation;
	uint64_t e_inc = we_expose ? ours : theirs, r_inc = we_expose ? theirs : ours;
	uint32_t e_ses = we_expose ? hs->session : hs->peer_session;
	uint32_t r_ses = we_expose ? hs->peer_session : hs->session;

	return rdmx_mix64(rdmx_mix64(rdmx_mix64(e_inc) ^ r_inc) ^
			  ((uint64_t) e_ses << 32 | r_ses));
}

uint32_t rdmx_hs_negotiate(const struct rdmx_hs_local *local, const struct rdmx_hs_msg *msg)
{
	uint32_t lo = local->proto_min, hi = local->proto_max;

	if (local->probe_version <= RDMX_HS_PROBE_LEGACY ||
	    msg->probe_version <= RDMX_HS_PROBE_LEGACY)
		return lo <= RDMX_PROTO_LEGACY && RDMX_PROTO_LEGACY <= hi ?
		       RDMX_PROTO_LEGACY : 0;
	lo = RDMX_MAX(lo, msg->proto_min);
	hi = RDMX_MIN(hi, msg->proto_max);
	return lo <= hi ? hi : 0;
}

static void rdmx_hs_disconnect(struct rdmx_hs *hs, int err)
{
	hs->state = RDMX_HS_DISCONNECTED;
	hs->deadline = 0;
	hs->ping_out = false;
	hs->ops->event(hs->ctx, RDMX_HS_EV_DISCONNECTED, err);
}

static void rdmx_hs_send_probes(struct rdmx_hs *hs)
{
	for (uint32_t i = 0; i < hs->cfg->probes; i++) {
		if (!(hs->probes_acked & (1ULL << i)))
			rdmx_hs_send(hs, RDMX_HS_PROBE, hs->probe_seq + i);
	}
}

/* Ends the reset step with the peer's RESET or ACK: negotiate, then probe. */
static void rdmx_hs_accept(struct rdmx_hs *hs, const struct rdmx_hs_msg *msg, uint64_t now)
{
	uint32_t version = rdmx_hs_negotiate(hs->local, msg);

	hs->peer_incarnation = msg->incarnation;
	hs->peer_session = msg->session;
	hs->peer_features = msg->features;
	hs->peer_rx_max = msg->rx_max;
	/* What a peer without HOST left out is unknown, whatever it sent. */
	hs->peer_host = msg->features & RDMX_HS_FEAT_HOST ? msg->host : 0;
	hs->peer_pid = msg->features & RDMX_HS_FEAT_HOST ? msg->pid : 0;
	hs->peer_shm_fd = msg->shm_fd;
	hs->peer_shm_token = msg->shm_token;
	if (!version) {
		hs->version = 0;
		rdmx_hs_disconnect(hs, FI_ENOPROTOOPT);
		return;
	}
	hs->version = version;
	hs->state = RDMX_HS_PROBING;
	hs->probe_seq += RDMX_HS_PROBES_MAX;	/* a new round: old answers miss */
	hs->probes_acked = 0;
	hs->tries = 1;
	hs->deadline = now + hs->cfg->retry_ns;
	rdmx_hs_send_probes(hs);
}

void rdmx_hs_connect(struct rdmx_hs *hs, uint64_t now)
{
	if (hs->state != RDMX_HS_IDLE && hs->state != RDMX_HS_DISCONNECTED)
		return;
	hs->state = RDMX_HS_RESET_SENT;
	hs->session++;
	hs->tries = 1;
	hs->deadline = now + hs->cfg->retry_ns;
	rdmx_hs_send(hs, RDMX_HS_RESET, 0);
}

static void rdmx_hs_on_reset(struct rdmx_hs *hs, const struct rdmx_hs_msg *msg, uint64_t now)
{
	bool known = hs->peer_incarnation && hs->state != RDMX_HS_IDLE;
	bool same = msg->incarnation == hs->peer_incarnation;

	/*
	 * The endpoint of that incarnation closed: a RESET under it is a late
	 * or forged copy. Only a new endpoint at the address starts over.
	 */
	if (hs->state == RDMX_HS_CLOSED && same)
		return;
	/* A RESET of a session the peer has since replaced. */
	if (known && same && (int32_t) (msg->session - hs->peer_session) < 0)
		return;
	if (known && (!same || msg->session != hs->peer_session)) {
		/* Restarted or starting over: nothing old may mix with the new. */
		hs->ops->event(hs->ctx, RDMX_HS_EV_RESTARTED, 0);
		hs->state = RDMX_HS_IDLE;
	}
	hs->peer_incarnation = msg->incarnation;
	hs->peer_session = msg->session;
	rdmx_hs_send(hs, RDMX_HS_ACK, msg->session);
	/* A repeat of a RESET already taken needs the ACK only. */
	if (hs->state == RDMX_HS_PROBING || hs->state == RDMX_HS_CONNECTED)
		return;
	rdmx_hs_accept(hs, msg, now);
}

/* A probe answer of this round: CONNECTED once all are in. */
static void rdmx_hs_on_probe_ack(struct rdmx_hs *hs, uint32_t seq, uint64_t now)
{
	uint32_t i = seq - hs->probe_seq;
	uint64_t all = hs->cfg->probes >= 64 ? ~0ULL : (1ULL << hs->cfg->probes) - 1;

	if (hs->state != RDMX_HS_PROBING || i >= hs->cfg->probes)
		return;
	hs->probes_acked |= 1ULL << i;
	if (hs->probes_acked != all)
		return;
	hs->state = RDMX_HS_CONNECTED;
	hs->tries = 0;
	hs->ping_out = false;
	hs->last_heard = now;
	hs->deadline = now + hs->cfg->ping_interval_ns;
	hs->ops->event(hs->ctx, RDMX_HS_EV_CONNECTED, 0);
}

/*
 * The peer closes: honoured only when the CLOSE names the session under
 * way, both incarnations (checked by the caller) and both sessions, so a
 * copy of an older session's CLOSE, or one forged without them, changes
 * nothing.
 */
static void rdmx_hs_on_close(struct rdmx_hs *hs, const struct rdmx_hs_msg *msg)
{
	if ((hs->state != RDMX_HS_PROBING && hs->state != RDMX_HS_CONNECTED) ||
	    !hs->peer_incarnation || msg->session != hs->peer_session ||
	    msg->seq != hs->session)
		return;
	hs->state = RDMX_HS_CLOSED;
	hs->deadline = 0;
	hs->ping_out = false;
	hs->ops->event(hs->ctx, RDMX_HS_EV_CLOSED, FI_ECONNRESET);
}

bool rdmx_hs_close(struct rdmx_hs *hs)
{
	if ((hs->state != RDMX_HS_PROBING && hs->state != RDMX_HS_CONNECTED) ||
	    !(hs->peer_features & RDMX_HS_FEAT_CLOSE))
		return false;
	rdmx_hs_send(hs, RDMX_HS_CLOSE, hs->peer_session);
	return true;
}

void rdmx_hs_lost(struct rdmx_hs *hs)
{
	if (hs->state == RDMX_HS_RESET_SENT || hs->state == RDMX_HS_PROBING ||
	    hs->state == RDMX_HS_CONNECTED)
		rdmx_hs_disconnect(hs, FI_EHOSTUNREACH);
}

void rdmx_hs_reopen(struct rdmx_hs *hs)
{
	if (hs->state == RDMX_HS_CLOSED)
		hs->state = RDMX_HS_DISCONNECTED;
}

void rdmx_hs_recv(struct rdmx_hs *hs, const struct rdmx_hs_msg *msg, uint64_t now)
{
	if (!msg->incarnation)
		return;
	if (msg->type == RDMX_HS_RESET) {
		rdmx_hs_on_reset(hs, msg, now);
		return;
	}
	/*
	 * The answer to our current RESET: whichever incarnation sends it is
	 * the peer from now on (after a disconnect we kept nothing of the old).
	 */
	if (msg->type == RDMX_HS_ACK) {
		if (hs->state == RDMX_HS_RESET_SENT &&
		    msg->peer_incarnation == hs->local->incarnation &&
		    (msg->seq == hs->session || msg->probe_version <= RDMX_HS_PROBE_LEGACY))
			rdmx_hs_accept(hs, msg, now);
		return;
	}
	/* Everything else names both incarnations: stale ones are ignored. */
	if (msg->peer_incarnation != hs->local->incarnation ||
	    (hs->peer_incarnation && msg->incarnation != hs->peer_incarnation))
		return;
	switch (msg->type) {
	case RDMX_HS_PROBE:
		if (hs->peer_incarnation && hs->state != RDMX_HS_CLOSED)
			rdmx_hs_send(hs, RDMX_HS_PROBE_ACK, msg->seq);
		break;
	case RDMX_HS_PROBE_ACK:
		rdmx_hs_on_probe_ack(hs, msg->seq, now);
		break;
	case RDMX_HS_PING:
		if (hs->state == RDMX_HS_CONNECTED)
			rdmx_hs_send(hs, RDMX_HS_PONG, msg->seq);
		break;
	case RDMX_HS_PONG:
		if (hs->ping_out && msg->seq == hs->ping_seq)
			rdmx_hs_heard(hs, now);
		break;
	case RDMX_HS_CLOSE:
		rdmx_hs_on_close(hs, msg);
		break;
	default:
		break;
	}
}

/* CONNECTED: pings the silent peer; gives it up after ping_retries. */
static void rdmx_hs_ping(struct rdmx_hs *hs, uint64_t now)
{
	if (hs->ping_out && hs->tries >= hs->cfg->ping_retries) {
		rdmx_hs_disconnect(hs, FI_EHOSTUNREACH);
		return;
	}
	if (!hs->ping_out)
		hs->ping_seq++;
	hs->ping_out = true;
	hs->tries++;
	hs->deadline = now + hs->cfg->ping_timeout_ns;
	rdmx_hs_send(hs, RDMX_HS_PING, hs->ping_seq);
}

void rdmx_hs_probe(struct rdmx_hs *hs, uint64_t now, uint64_t silence_ns)
{
	if (hs->state != RDMX_HS_CONNECTED || hs->ping_out ||
	    now - hs->last_heard < silence_ns)
		return;
	rdmx_hs_ping(hs, now);
}

void rdmx_hs_timer(struct rdmx_hs *hs, uint64_t now)
{
	if (!hs->deadline || now < hs->deadline)
		return;
	switch (hs->state) {
	case RDMX_HS_RESET_SENT:
	case RDMX_HS_PROBING:
		if (hs->tries >= hs->cfg->tries) {
			rdmx_hs_disconnect(hs, FI_EHOSTUNREACH);
			return;
		}
		hs->tries++;
		hs->deadline = now + hs->cfg->retry_ns;
		if (hs->state == RDMX_HS_RESET_SENT)
			rdmx_hs_send(hs, RDMX_HS_RESET, 0);
		else
			rdmx_hs_send_probes(hs);
		break;
	case RDMX_HS_CONNECTED:
		rdmx_hs_ping(hs, now);
		break;
	default:
		hs->deadline = 0;
		break;
	}
}
