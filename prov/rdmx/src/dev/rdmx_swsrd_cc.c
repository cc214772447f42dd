/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: swsrd's congestion window (see rdmx_swsrd_cc.h). */
#include "rdmx.h"
#include "rdmx_swsrd_cc.h"

void rdmx_srd_cc_init(struct rdmx_srd_cc *cc, uint64_t now)
{
	memset(cc, 0, sizeof(*cc));
	cc->cwnd_x16 = RDMX_SRD_CWND_INIT;
	cc->ssthresh_x16 = UINT32_MAX;
	cc->mark_ns = now;
	cc->allow = 3 * RDMX_SRD_QUANTUM;
}

void rdmx_srd_cc_datagram(struct rdmx_srd_cc *cc, size_t bytes)
{
	if (bytes <= cc->dgram_max)
		return;
	cc->dgram_max = (uint32_t) RDMX_MIN(bytes, UINT32_MAX);
	cc->allow = (uint32_t) RDMX_MAX(RDMX_MIN(RDMX_SRD_ALLOW_BYTES / bytes,
						 8 * RDMX_SRD_QUANTUM),
					3 * RDMX_SRD_QUANTUM);
}

void rdmx_srd_cc_rtt(struct rdmx_srd_cc *cc, uint64_t rtt, uint64_t now)
{
	if (!cc->min_rtt_ns || rtt <= cc->min_rtt_ns ||
	    now - cc->min_rtt_at > RDMX_SRD_MIN_RTT_NS) {
		cc->min_rtt_ns = RDMX_MAX(rtt, 1);
		cc->min_rtt_at = now;
	}
}

/*
 * Once per round trip: the product the last one delivered. The largest of
 * recent intervals counts, fading by 1/32 per interval; an interval that
 * spans an idle pause (nothing to send) measures the pause, not the path,
 * and is not counted.
 */
static void rdmx_srd_cc_measure(struct rdmx_srd_cc *cc, uint64_t srtt, uint64_t now)
{
	uint64_t span = now - cc->mark_ns;
	uint64_t round = RDMX_MAX(srtt, cc->min_rtt_ns);

	if (!cc->min_rtt_ns || span < round)
		return;
	if (span <= 4 * round) {
		uint64_t bdp = (cc->delivered - cc->mark_delivered) * 16 *
			       cc->min_rtt_ns / span;

		cc->bdp_x16 = (uint32_t) RDMX_MIN(RDMX_MAX(bdp, cc->bdp_x16 - cc->bdp_x16 / 32),
						  UINT32_MAX / 4);
	}
	cc->mark_ns = now;
	cc->mark_delivered = cc->delivered;
}

/*
 * What the window grows by per window of data past slow start: half the
 * way back to where the last loss event found it, at most a quantum,
 * at least a packet (BIC's binary search increase).
 */
static uint32_t rdmx_srd_cc_step(const struct rdmx_srd_cc *cc)
{
	uint32_t back = cc->cwnd_x16 < cc->wmax_x16 ? (cc->wmax_x16 - cc->cwnd_x16) / 2 : 0;

	return RDMX_MAX(RDMX_MIN(back, RDMX_SRD_QUANTUM * 16), 16);
}

void rdmx_srd_cc_acked(struct rdmx_srd_cc *cc, uint32_t newly, uint64_t srtt,
		       uint32_t limit, uint64_t now)
{
	uint32_t pkts = RDMX_MAX(cc->cwnd_x16 / 16, 1);
	uint32_t grow = cc->cwnd_x16 < cc->ssthresh_x16 ? newly * 16 :
			RDMX_MAX(newly * rdmx_srd_cc_step(cc) / pkts, 1);
	uint32_t cap = limit * 16;

	cc->delivered += newly;
	rdmx_srd_cc_measure(cc, srtt, now);
	if (cc->bdp_x16)
		cap = RDMX_MIN(2 * cc->bdp_x16 + cc->allow * 16, cap);
	cc->cwnd_x16 = RDMX_MIN(cc->cwnd_x16 + grow, cap);
}

void rdmx_srd_cc_loss(struct rdmx_srd_cc *cc, bool silent)
{
	uint32_t floor = RDMX_MIN(cc->bdp_x16 + RDMX_SRD_QUANTUM * 16, cc->cwnd_x16);

	cc->wmax_x16 = silent ? 0 : cc->cwnd_x16;
	if (silent) {
		/* Nothing gets through: what was measured may be gone too. */
		cc->bdp_x16 /= 2;
		floor = 0;
	}
	cc->cwnd_x16 = RDMX_MAX(RDMX_MAX(cc->cwnd_x16 / 2, floor), RDMX_SRD_CWND_MIN);
	cc->ssthresh_x16 = cc->cwnd_x16;
}
