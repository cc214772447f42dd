/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx: swsrd's paths to one peer (see rdmx_swsrd_path.h). */
#include "rdmx.h"
#include "rdmx_swsrd_path.h"

#define RDMX_SRD_PATH_ONE	65536u		/* the whole, for loss shares */
#define RDMX_SRD_PATH_GAIN	6		/* averages move 1/64 per packet */
/* Bad: losing more than twice the best path's share and 3 in 100 more... */
#define RDMX_SRD_PATH_LOSS_MARGIN	(3 * RDMX_SRD_PATH_ONE / 100)
/* ...or round trips longer than four times the best's and 1 ms more. */
#define RDMX_SRD_PATH_RTT_MARGIN_NS	1000000ULL

void rdmx_srd_paths_init(struct rdmx_srd_paths *p, unsigned cnt)
{
	memset(p, 0, sizeof(*p));
	p->cnt = (uint8_t) RDMX_MAX(RDMX_MIN(cnt, RDMX_SRD_PATHS_MAX), 1);
}

/* Whether path k is a better resend path than path b. */
static bool rdmx_srd_path_better(const struct rdmx_srd_paths *p, unsigned k, unsigned b)
{
	if (p->loss[k] != p->loss[b])
		return p->loss[k] < p->loss[b];
	/* A path never measured may be dead: one that delivered is better. */
	if (!p->srtt_ns[k] != !p->srtt_ns[b])
		return p->srtt_ns[k];
	return p->srtt_ns[k] < p->srtt_ns[b];
}

unsigned rdmx_srd_path_best(const struct rdmx_srd_paths *p, unsigned avoid)
{
	unsigned best = avoid == 0 && p->cnt > 1 ? 1 : 0;

	for (unsigned k = best + 1; k < p->cnt; k++)
		if (k != avoid && rdmx_srd_path_better(p, k, best))
			best = k;
	return best;
}

bool rdmx_srd_path_bad(const struct rdmx_srd_paths *p, unsigned path)
{
	unsigned best = rdmx_srd_path_best(p, p->cnt);

	return p->loss[path] > 2 * p->loss[best] + RDMX_SRD_PATH_LOSS_MARGIN ||
	       (p->srtt_ns[path] && p->srtt_ns[best] &&
		p->srtt_ns[path] > 4 * p->srtt_ns[best] + RDMX_SRD_PATH_RTT_MARGIN_NS);
}

/* The bad path to probe, from probe_next on; cnt when none is bad. */
static unsigned rdmx_srd_path_probed(struct rdmx_srd_paths *p)
{
	for (unsigned i = 0; i < p->cnt; i++) {
		unsigned k = (p->probe_next + i) % p->cnt;

		if (rdmx_srd_path_bad(p, k)) {
			p->probe_next = (uint8_t) ((k + 1) % p->cnt);
			return k;
		}
	}
	return p->cnt;
}

unsigned rdmx_srd_path_next(struct rdmx_srd_paths *p, uint32_t psn, bool *probe_p)
{
	unsigned k = p->cnt;

	*probe_p = false;
	if (p->cnt == 1)
		return 0;
	if (p->run_left) {
		p->run_left--;
		p->last_sent[p->cur] = psn;
		return p->cur;
	}
	p->runs++;
	if (!(p->runs % RDMX_SRD_PATH_PROBE))
		k = rdmx_srd_path_probed(p);
	*probe_p = k < p->cnt;
	if (!*probe_p) {
		/* The next healthy path; the best one is. */
		k = p->cur;
		do
			k = (k + 1) % p->cnt;
		while (rdmx_srd_path_bad(p, k));
	}
	p->cur = (uint8_t) k;
	p->run_left = (*probe_p ? RDMX_SRD_PATH_PROBE_RUN : RDMX_SRD_PATH_RUN) - 1;
	p->last_sent[k] = psn;
	return k;
}

void rdmx_srd_path_delivered(struct rdmx_srd_paths *p, unsigned path, uint32_t psn,
			     uint64_t rtt)
{
	p->loss[path] -= p->loss[path] >> RDMX_SRD_PATH_GAIN;
	p->srtt_ns[path] = p->srtt_ns[path] ? (7 * p->srtt_ns[path] + rtt) / 8 : RDMX_MAX(rtt, 1);
	if (!p->high_set[path] || (int32_t) (psn - p->high[path]) > 0)
		p->high[path] = psn;
	p->high_set[path] = true;
}

bool rdmx_srd_path_lost(struct rdmx_srd_paths *p, unsigned path)
{
	p->loss[path] += (RDMX_SRD_PATH_ONE - p->loss[path]) >> RDMX_SRD_PATH_GAIN;
	return !rdmx_srd_path_bad(p, path);
}

/*
 * How far path's latest acknowledged psn is past psn; negative when it
 * is not, or when it is behind una (news of an old window, which after
 * 2^31 psns would read as ahead).
 */
static int32_t rdmx_srd_path_ahead(const struct rdmx_srd_paths *p, unsigned path,
				   uint32_t psn, uint32_t una)
{
	if (!p->high_set[path] || (int32_t) (p->high[path] - una) < 0)
		return -1;
	return (int32_t) (p->high[path] - psn);
}

bool rdmx_srd_path_blamed(const struct rdmx_srd_paths *p, unsigned path, uint64_t sent_ns,
			  uint64_t margin_ns)
{
	if (rdmx_srd_path_passed(p, path, sent_ns + margin_ns + 1))
		return true;
	for (unsigned k = 0; k < p->cnt; k++)
		if (k != path && !p->high_set[path] && p->high_set[k])
			return true;
	return false;
}

bool rdmx_srd_path_passed(const struct rdmx_srd_paths *p, unsigned path, uint64_t sent_ns)
{
	for (unsigned k = 0; k < p->cnt; k++)
		if (k != path && p->acked_sent_ns[k] >= sent_ns)
			return true;
	return false;
}

enum rdmx_srd_hole rdmx_srd_path_hole(const struct rdmx_srd_paths *p, unsigned path,
				      uint32_t psn, uint32_t una, uint64_t age_ns,
				      uint64_t srtt_ns, uint32_t dupthresh)
{
	uint64_t rtt = p->srtt_ns[path] ? p->srtt_ns[path] : srtt_ns;

	if (rdmx_srd_path_ahead(p, path, psn, una) >= (int32_t) dupthresh)
		return RDMX_SRD_HOLE_LOST;
	if (rdmx_srd_path_bad(p, path))
		return RDMX_SRD_HOLE_LATE;
	/* The path's newest: nothing of its own may come to overtake it. */
	if ((int32_t) (p->last_sent[path] - psn) < (int32_t) dupthresh && age_ns > rtt + rtt / 4)
		return RDMX_SRD_HOLE_LATE;
	return RDMX_SRD_HOLE_WAIT;
}
