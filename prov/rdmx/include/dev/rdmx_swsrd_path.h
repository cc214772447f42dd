/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx: swsrd's paths to one peer (FI_RDMX_PATHS; docs/protocol.md,
 * "Paths"). A device may send a peer's packets from several source
 * addresses of one host (udp: several source ports), which an ECMP
 * fabric hashes onto different routes. New packets go in runs of
 * RDMX_SRD_PATH_RUN consecutive psns, a run per path in turn, so that
 * the kernel still segments a run as one send and a path's packets stay
 * in order among themselves. Per path the engine keeps what the packets
 * sent on it once tell: the share lost (a moving average) and the
 * smoothed round trip. A path that loses much more than the best one,
 * or whose round trips are much longer, is bad: it carries only one short
 * run in RDMX_SRD_PATH_PROBE (so that its figures stay current and it comes
 * back once healthy), its losses do not shrink the congestion window
 * (the path, not the network's load, drops them), and resends go by the
 * best path. A hole is lost once a packet sent after it on the same path
 * was acknowledged RDMX_SRD_DUPTHRESH psns later: runs on paths of
 * different lengths arrive out of order without being lost. A timeout
 * counts as its path's loss only when a later packet of another path got
 * through: on a host too slow for its timers, every path times out
 * alike, and none is worse than the others.
 */
#ifndef RDMX_SWSRD_PATH_H
#define RDMX_SWSRD_PATH_H

#include <stdbool.h>
#include <stdint.h>

#define RDMX_SRD_PATHS_MAX	8
#define RDMX_SRD_PATH_RUN	32	/* new packets per run */
#define RDMX_SRD_PATH_PROBE	16	/* a bad path's share: one run in this many, */
#define RDMX_SRD_PATH_PROBE_RUN	8	/* of this many packets */

struct rdmx_srd_paths {
	uint8_t		cnt;		/* paths in use; 1: none of this */
	uint8_t		cur;		/* the run's path */
	uint16_t	run_left;	/* new packets the run may still take */
	uint32_t	runs;		/* runs begun */
	bool		high_set[RDMX_SRD_PATHS_MAX];
	uint32_t	high[RDMX_SRD_PATHS_MAX];	/* latest psn sent once
							   and acknowledged */
	uint32_t	loss[RDMX_SRD_PATHS_MAX];	/* share lost, 1/65536 */
	uint64_t	srtt_ns[RDMX_SRD_PATHS_MAX];	/* 0: no sample yet */
};

/* A session's paths: cnt of them (at most RDMX_SRD_PATHS_MAX), all healthy. */
void rdmx_srd_paths_init(struct rdmx_srd_paths *p, unsigned cnt);

/* The path of a new packet; *probe_p: it goes by a bad path to measure it. */
unsigned rdmx_srd_path_next(struct rdmx_srd_paths *p, bool *probe_p);

/* The path a resend takes: the one losing least, then the shortest. */
unsigned rdmx_srd_path_best(const struct rdmx_srd_paths *p);

/* Whether path is bad (see above). */
bool rdmx_srd_path_bad(const struct rdmx_srd_paths *p, unsigned path);

/* A packet sent once, by path, was acknowledged after rtt. */
void rdmx_srd_path_delivered(struct rdmx_srd_paths *p, unsigned path, uint32_t psn,
			     uint64_t rtt);

/*
 * A packet first sent by path was found lost. Returns whether the loss
 * tells of congestion (the path is not a bad one).
 */
bool rdmx_srd_path_lost(struct rdmx_srd_paths *p, unsigned path);

/*
 * Whether a packet sent once after psn by another path than path was
 * acknowledged: a timeout of psn then tells of its path, not of a slow
 * peer or host, which would have held the other paths' packets as well.
 */
bool rdmx_srd_path_overtaken(const struct rdmx_srd_paths *p, unsigned path, uint32_t psn);

/* Whether the hole at psn, first sent by path, is lost (see above). */
bool rdmx_srd_path_passed(const struct rdmx_srd_paths *p, unsigned path, uint32_t psn,
			  uint32_t dupthresh);

#endif /* RDMX_SWSRD_PATH_H */
