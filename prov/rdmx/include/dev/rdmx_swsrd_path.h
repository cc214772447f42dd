/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: swsrd's paths to one peer (FI_RDMX_PATHS; docs/protocol.md,
 * "Paths"). A device may send a peer's packets from several source
 * addresses of one host (udp: several source ports), which an ECMP
 * fabric hashes onto different routes. New packets go in runs of
 * RDMX_SRD_PATH_RUN consecutive psns, a run per healthy path in turn, so
 * that the kernel still segments a run as one send and a path's packets
 * stay in order among themselves. Per path the engine keeps what the
 * packets sent on it once tell: the share lost (a moving average) and
 * the smoothed round trip. A path that loses much more than the best
 * one, or whose round trips are much longer, is bad: one run in
 * RDMX_SRD_PATH_PROBE, a short one, goes by a bad path (so that its
 * figures stay current and it comes back once healthy), its losses do
 * not shrink the congestion window (the path, not the network's load,
 * drops them), and resends go by the best path but the one the last
 * copy took.
 *
 * What counts as a path's loss: a hole that a packet of the same path
 * at least RDMX_SRD_DUPTHRESH psns later overtook (paths of different
 * lengths reorder without losing); a timeout only when a later packet of
 * another path got through, or acks kept coming without it, or the path
 * never delivered anything while another did (on a host too slow for its
 * timers every path times out alike; rdmx_swsrd.c).
 */
#ifndef RDMX_SWSRD_PATH_H
#define RDMX_SWSRD_PATH_H

#include <stdbool.h>
#include <stdint.h>

#define RDMX_SRD_PATHS_MAX	8
#define RDMX_SRD_PATH_RUN	32	/* new packets per run */
#define RDMX_SRD_PATH_PROBE	32	/* one run in this many probes a bad path, */
#define RDMX_SRD_PATH_PROBE_RUN	8	/* with this many packets */

struct rdmx_srd_paths {
	uint8_t		cnt;		/* paths in use; 1: none of this */
	uint8_t		cur;		/* the run's path */
	uint8_t		probe_next;	/* the bad path probed next, or after */
	uint16_t	run_left;	/* new packets the run may still take */
	uint32_t	runs;		/* runs begun */
	bool		high_set[RDMX_SRD_PATHS_MAX];
	uint32_t	high[RDMX_SRD_PATHS_MAX];	/* latest psn sent once
							   and acknowledged */
	uint32_t	last_sent[RDMX_SRD_PATHS_MAX];	/* latest psn first sent */
	uint32_t	loss[RDMX_SRD_PATHS_MAX];	/* share lost, 1/65536 */
	uint64_t	srtt_ns[RDMX_SRD_PATHS_MAX];	/* 0: no sample yet */
	/* When the latest packet sent once by the path and acknowledged was
	   sent (kept with one path too). */
	uint64_t	acked_sent_ns[RDMX_SRD_PATHS_MAX];
};

/* What acks tell of a hole in the psns acknowledged. */
enum rdmx_srd_hole {
	RDMX_SRD_HOLE_WAIT,	/* nothing yet */
	RDMX_SRD_HOLE_LOST,	/* it was lost: its path's loss */
	RDMX_SRD_HOLE_LATE,	/* resend it, but it may only be late */
};

/* A session's paths: cnt of them (at most RDMX_SRD_PATHS_MAX), all healthy. */
void rdmx_srd_paths_init(struct rdmx_srd_paths *p, unsigned cnt);

/*
 * The path of the new packet psn; *probe_p: it goes by a bad path to
 * measure it.
 */
unsigned rdmx_srd_path_next(struct rdmx_srd_paths *p, uint32_t psn, bool *probe_p);

/*
 * The path a resend takes: of the paths but avoid (the last copy's;
 * any number of cnt or more avoids none, and one path is taken anyway),
 * the one losing least, then one with a round trip measured, then the
 * shortest.
 */
unsigned rdmx_srd_path_best(const struct rdmx_srd_paths *p, unsigned avoid);

/* Whether path is bad (see above). */
bool rdmx_srd_path_bad(const struct rdmx_srd_paths *p, unsigned path);

/* A packet sent once, by path, was acknowledged after rtt. */
void rdmx_srd_path_delivered(struct rdmx_srd_paths *p, unsigned path, uint32_t psn,
			     uint64_t rtt);

/*
 * A packet first sent by path was lost. Returns whether the loss tells
 * of congestion (the path is not a bad one).
 */
bool rdmx_srd_path_lost(struct rdmx_srd_paths *p, unsigned path);

/* A packet sent once by path at sent_ns was acknowledged. */
static inline void rdmx_srd_path_acked(struct rdmx_srd_paths *p, unsigned path,
				       uint64_t sent_ns)
{
	if (sent_ns > p->acked_sent_ns[path])
		p->acked_sent_ns[path] = sent_ns;
}

/*
 * Whether a timeout of a packet sent once by path at sent_ns tells of the
 * path: a packet sent once by another path more than margin_ns after it
 * was acknowledged (paths of equal length reorder a little), or the path
 * never delivered a packet while another did.
 */
bool rdmx_srd_path_blamed(const struct rdmx_srd_paths *p, unsigned path, uint64_t sent_ns,
			  uint64_t margin_ns);

/*
 * Whether a packet sent once by another path than path, at or after
 * sent_ns, was acknowledged.
 */
bool rdmx_srd_path_passed(const struct rdmx_srd_paths *p, unsigned path, uint64_t sent_ns);

/*
 * The hole at psn, first sent by path age_ns ago, once packets at least
 * dupthresh psns after it (of any path) were acknowledged: LOST when one
 * of its own path did; else LATE on a bad path (its next run may be
 * far), or when none of its path follows it and it is older than its
 * path's round trip and a quarter (srtt_ns: the peer's, while the path
 * has none); else WAIT.
 */
enum rdmx_srd_hole rdmx_srd_path_hole(const struct rdmx_srd_paths *p, unsigned path,
				      uint32_t psn, uint32_t una, uint64_t age_ns,
				      uint64_t srtt_ns, uint32_t dupthresh);

#endif /* RDMX_SWSRD_PATH_H */
