/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_stream: rates, and the provider's counters printed (see stream.h). */
#include "stream.h"

double st_seconds(uint64_t from_ns, uint64_t to_ns)
{
	return to_ns > from_ns ? (double) (to_ns - from_ns) / 1e9 : 0.0;
}

double st_mbps(uint64_t bytes, double seconds)
{
	return seconds > 0 ? (double) bytes / seconds / 1e6 : 0.0;
}

#define ST_STAT(field)	{ #field, offsetof(struct fi_rdmx_ep_stats, field) }

static const struct {
	const char	*name;
	size_t		off;
} st_stat_fields[] = {
	ST_STAT(rx_malformed), ST_STAT(rx_dropped), ST_STAT(rx_unexpected),
	ST_STAT(rx_no_recv), ST_STAT(tx_errors), ST_STAT(retransmits),
	ST_STAT(fast_retransmits), ST_STAT(duplicates), ST_STAT(acks_sent),
	ST_STAT(rnr_sent), ST_STAT(rnr_received), ST_STAT(rnr_completions),
	ST_STAT(rnr_backoffs), ST_STAT(eagain), ST_STAT(peers_unreachable),
	ST_STAT(rx_unauth), ST_STAT(challenges), ST_STAT(rx_stale),
	ST_STAT(budget_used), ST_STAT(budget_peak), ST_STAT(budget_refused),
	ST_STAT(anon_peers), ST_STAT(shm_peers), ST_STAT(tx_gso),
	ST_STAT(rx_gro),
};

/* Reads and prints the provider's counters; false when it has none. */
bool st_stats(struct st *st, struct fi_rdmx_ep_stats *stats)
{
	struct fi_rdmx_ep_ops *ops = NULL;
	int ret = fi_open_ops(&st->rdm.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL);

	if (ret || !ops || ops->size < sizeof(*ops) ||
	    ops->query_stats(st->rdm.ep, stats)) {
		printf(ST_NAME ": counters: not available from provider %s (%s); "
		       "their checks are skipped\n", st->info->fabric_attr->prov_name,
		       ret ? fi_strerror(-ret) : "no query_stats");
		return false;
	}
	printf(ST_NAME ": counters:");
	for (size_t i = 0; i < sizeof(st_stat_fields) / sizeof(st_stat_fields[0]); i++)
		printf(" %s=%" PRIu64, st_stat_fields[i].name,
		       *(const uint64_t *) ((const char *) stats + st_stat_fields[i].off));
	printf("\n");
	return true;
}
