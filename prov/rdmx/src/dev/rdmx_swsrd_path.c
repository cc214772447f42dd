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

unsigned rdmx_srd_path_best(const struct rdmx_srd_paths *p)
{
	unsigned best = 0;

	for (unsigned k = 1; k < p->cnt; k++)
		if (p->loss[k] < p->loss[best] ||
		    (p->loss[k] == p->loss[best] && p->srtt_ns[k] < p->srtt_ns[best]))
			best = k;
	return best;
}

bool rdmx_srd_path_bad(const struct rdmx_srd_paths *p, unsigned path)
{
	unsigned best = rdmx_srd_path_best(p);

	return p->loss[path] > 2 * p->loss[best] + RDMX_SRD_PATH_LOSS_MARGIN ||
	       (p->srtt_ns[path] && p->srtt_ns[best] &&
		p->srtt_ns[path] > 4 * p->srtt_ns[best] + RDMX_SRD_PATH_RTT_MARGIN_NS);
}

unsigned rdmx_srd_path_next(struct rdmx_srd_paths *p, bool *probe_p)
{
	unsigned k;

	*probe_p = false;
	if (p->cnt == 1)
		return 0;
	if (p->run_left) {
		p->run_left--;
		return p->cur;
	}
	p->runs++;
	if (!(p->runs % RDMX_SRD_PATH_PROBE)) {
		/* Every path in turn, healthy or not. */
		k = (p->runs / RDMX_SRD_PATH_PROBE) % p->cnt;
		*probe_p = rdmx_srd_path_bad(p, k);
	} else {
		/* The next healthy path; the best one is. */
		k = p->cur;
		do
			k = (k + 1) % p->cnt;
		while (rdmx_srd_path_bad(p, k));
	}
	p->cur = (uint8_t) k;
	p->run_left = (*probe_p ? RDMX_SRD_PATH_PROBE_RUN : RDMX_SRD_PATH_RUN) - 1;
	return k;
}

void rdmx_srd_path_delivered(struct rdmx_srd_paths *p, unsigned path, uint32_t psn,
			     uint64_t rtt)
{
	p->loss[path] -= p->loss[path] >> RDMX_SRD_PATH_GAIN;
	p->srtt_ns[path] = p->srtt_ns[path] ? (7 * p->srtt_ns[path] + rtt) / 8 : rtt;
	if (!p->high_set[path] || (int32_t) (psn - p->high[path]) > 0)
		p->high[path] = psn;
	p->high_set[path] = true;
}

bool rdmx_srd_path_lost(struct rdmx_srd_paths *p, unsigned path)
{
	p->loss[path] += (RDMX_SRD_PATH_ONE - p->loss[path]) >> RDMX_SRD_PATH_GAIN;
	return !rdmx_srd_path_bad(p, path);
}

bool rdmx_srd_path_overtaken(const struct rdmx_srd_paths *p, unsigned path, uint32_t psn)
{
	for (unsigned k = 0; k < p->cnt; k++)
		if (k != path && p->high_set[k] && (int32_t) (p->high[k] - psn) > 0)
			return true;
	return false;
}

bool rdmx_srd_path_passed(const struct rdmx_srd_paths *p, unsigned path, uint32_t psn,
			  uint32_t dupthresh)
{
	return p->high_set[path] && (int32_t) (p->high[path] - psn) >= (int32_t) dupthresh;
}
