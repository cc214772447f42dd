/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: what its files share (main.c says what the program does):
 * limits, tags, the modes and options, the control message, the
 * program's state, and the functions one file calls in another.
 */
#ifndef RDMX_WAIT_H
#define RDMX_WAIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "ft_common.h"
#include "ft_fabric.h"

#define WT_NAME		"rdmx_wait"
#define WT_VERSION	FI_VERSION(1, 17)
#define WT_MAGIC	0x57414954u		/* "WAIT" */
#define WT_MAX_LEN	(256u * 1024)		/* the longest message */
#define WT_SMALL_MAX	4096u			/* the longest of manual mode */
#define WT_PATTERN	(2u * WT_MAX_LEN)	/* bytes messages are cut from */
#define WT_WINDOW	64			/* stream messages in flight */
#define WT_BATCH	16			/* completions one read takes */
#define WT_ADDR_MAX	256
#define WT_TAIL_MS	1000			/* auto: no send in the last second */
#define WT_BURST	1000			/* sread, fd: messages between gaps */
#define WT_GAP_MS	5			/* sread, fd: the sender's pause */
/* Tags: control messages by type; data messages by index. */
#define WT_TAG_CTL	(1ULL << 62)
#define WT_TAG_DATA	(1ULL << 61)
#define WT_TAG_INDEX	(WT_TAG_DATA - 1)
#define WT_MIN(a, b)	((a) < (b) ? (a) : (b))

enum wt_mode { WT_IDLE, WT_SREAD, WT_FD, WT_CNTR, WT_AUTO, WT_MANUAL, WT_MODES };

enum wt_expect { WT_EXPECT_NONE, WT_EXPECT_UNREACH, WT_EXPECT_COMPLETE };

struct wt_opts {
	bool		receiver;
	bool		busy;
	enum wt_mode	mode;
	enum wt_expect	expect;
	const char	*bind_addr;
	const char	*port;
	const char	*host;
	uint64_t	count;		/* stream messages */
	uint64_t	idle_ms;
	uint64_t	max_cpu_pct;
	uint64_t	max_late_ms;
	uint64_t	compute_ms;
	uint64_t	interval_ms;
	uint64_t	complete_ms;
	uint64_t	sends;		/* manual */
	uint64_t	unreach_ms;
	int		timeout_s;
};

enum wt_ctl_type { WT_HELLO = 1, WT_GO, WT_DONE, WT_AGAIN, WT_CAUGHT };

/* A control message; the HELLO carries the sender's options and address. */
struct wt_ctl {
	uint32_t	magic;
	uint32_t	type;
	uint32_t	mode;
	int32_t		status;		/* DONE: the receiver's verdict */
	uint64_t	count;
	uint64_t	compute_ms;
	uint64_t	interval_ms;
	uint64_t	sends;
	uint32_t	addrlen;
	uint8_t		addr[WT_ADDR_MAX];
};

struct wt {
	const struct wt_opts	*o;
	struct fi_info		*info;
	struct ft_rdm		rdm;
	struct fid_cntr		*cntr;		/* cntr mode */
	int			fd;		/* fd mode: FI_GETWAIT's */
	fi_addr_t		peer;
	uint8_t			*pattern;	/* what every message is cut from */
	struct wt_ctl		ctl_in, ctl_out;
	struct fi_context	ctl_in_ctx, ctl_out_ctx;
	struct fi_context	ctx[WT_WINDOW];
	uint64_t		tx_ops, rx_ops;	/* sends and receives posted */
	uint64_t		trywaits, polls; /* fd mode: fi_trywait 0, poll() */
};

/* main.c */
extern const char *const wt_mode_names[WT_MODES];

/* setup.c */
struct fi_info *wt_getinfo(const struct wt_opts *o);
int wt_pattern(struct wt *w);
int wt_check_progress(const struct wt *w);
int wt_open(struct wt *w);
void wt_close(struct wt *w, int *status);
const char *wt_lane(struct wt *w);
void wt_print_stats(struct wt *w);

/* comp.c */
size_t wt_len(uint64_t i);
const uint8_t *wt_payload(const struct wt *w, uint64_t i, size_t len);
int wt_check_payload(const struct wt *w, uint64_t i, const uint8_t *buf, size_t len);
int wt_left_ms(uint64_t deadline);
void wt_usage(uint64_t *cpu_ns, uint64_t *nvcsw);
int wt_cq_wait(struct wt *w, struct fi_cq_tagged_entry *e, size_t max,
	       struct fi_cq_err_entry *err, char *text, size_t text_len,
	       uint64_t deadline, const char *what);
int wt_cq_one(struct wt *w, struct fi_cq_tagged_entry *e, uint64_t deadline,
	      const char *what);
int wt_tsend(struct wt *w, const void *buf, size_t len, uint64_t tag, void *ctx,
	     uint64_t flags, uint64_t deadline);
int wt_trecv(struct wt *w, void *buf, size_t len, uint64_t tag, void *ctx,
	     uint64_t flags);

/* ctl.c */
int wt_ctl_post_recv(struct wt *w, enum wt_ctl_type type);
int wt_ctl_wait_recv(struct wt *w, enum wt_ctl_type type, uint64_t deadline,
		     const char *what);
int wt_ctl_send(struct wt *w, enum wt_ctl_type type, int32_t status,
		uint64_t deadline, const char *what);
int wt_receiver(struct wt *w);
int wt_sender(struct wt *w);

/* idle.c */
int wt_idle_receiver(struct wt *w);

/* stream.c */
int wt_stream_sender(struct wt *w);
int wt_stream_receiver(struct wt *w);
int wt_cntr_exact(struct wt *w, const char *side);

/* compute.c */
void wt_compute_until(uint64_t until, bool busy);
int wt_compute_receiver(struct wt *w);
int wt_compute_sender(struct wt *w);
int wt_again(struct wt *w);

#endif /* RDMX_WAIT_H */
