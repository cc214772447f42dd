/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_wait: blocking waits between two processes (scripts/wait.sh). A
 * receiver that sleeps in the kernel must cost no CPU while idle, keep
 * receiving while it sleeps between arrivals, and, with automatic
 * progress, keep its peer while it makes no libfabric call at all; with
 * manual progress its peer's sends end as documented. Public libfabric
 * API only; the one rdmx extension it opens (the endpoint's statistics,
 * to name the lane a peer was reached by) it does without elsewhere.
 *
 * The sender (the client) learns the receiver's (the server's) address
 * from fi_getinfo(host, port) and sends a HELLO with its own address and
 * its options, which must match the receiver's. The receiver answers at
 * the end with a DONE carrying its verdict, which the sender waits for:
 * neither closes while the other still needs it. Modes (-m, the same on
 * both sides):
 *
 *   idle    the receiver, a receive posted, blocks in fi_cq_sread (CQ
 *           FI_WAIT_UNSPEC) for --idle-ms with nothing arriving: it must
 *           return -FI_EAGAIN no sooner and less than --max-late-ms later,
 *           having used (getrusage, user + system, the whole process)
 *           less than --max-cpu-pct of that wall time. It prints
 *           wall_ms, cpu_ms and wakeups (voluntary context switches).
 *           The sender waits for DONE in fi_cq_sread meanwhile.
 *   sread   the sender streams -n tagged messages of 1 B to 256 KiB
 *           (eager, medium and long), at most 64 in flight; the receiver
 *           takes every completion through fi_cq_sread, and checks every
 *           payload, its length, tag and the guard bytes after it.
 *   fd      the same, the receiver's CQ FI_WAIT_FD: fi_cq_read, and when
 *           it is empty fi_trywait, then poll() on FI_GETWAIT's fd.
 *   cntr    the same counted: both CQs bound with FI_SELECTIVE_COMPLETION
 *           and a counter (FI_WAIT_UNSPEC) bound FI_SEND on the sender,
 *           FI_RECV on the receiver, waited on with fi_cntr_wait; at the
 *           end each counter holds exactly the operations of its side
 *           (the stream and HELLO), no error, and the CQs no entry of the
 *           stream.
 *   auto    the receiver's domain asks FI_PROGRESS_AUTO (data and
 *           control). It sends GO, posts a receive for every message and
 *           then computes (sleeps; --busy: spins) for --compute-ms
 *           without any libfabric call, then takes and checks every
 *           message. From GO the sender sends one message (sizes as in
 *           the stream) every --interval-ms, the first an interval after
 *           GO, the last a second before the end; each send (transmit complete: the receiver's rdmx
 *           acknowledged it) must complete without error within
 *           --complete-ms of its post.
 *   manual  the same with manual progress, and --sends messages of at
 *           most 4 KiB sent at the interval from GO. --expect says what
 *           the sender must see: unreach, every send fails with
 *           FI_EHOSTUNREACH no sooner than --unreach-ms after the first
 *           was posted and within --complete-ms past that; complete,
 *           every send completes without error within --complete-ms.
 *           Once they ended the sender sends one more message (AGAIN),
 *           which must complete (after unreach: once the receiver is
 *           back, in a new session). The receiver takes what comes until
 *           AGAIN: the messages it got must be the first ones sent, in
 *           order, intact; it prints how many (delivered=N).
 *
 * Clock readings (CLOCK_MONOTONIC, the same clock for both processes on
 * one host) are printed as name_ns=N for the script to compare: the
 * receiver's compute_start_ns and compute_end_ns; the sender's
 * first_post_ns, last_post_ns, first_end_ns and last_end_ns (its sends'
 * completions or failures) and again_end_ns. Each side's PASS line names
 * the lane its peer was reached by while both were there (lane=shm,
 * lane=nic).
 *
 *   receiver: rdmx_wait -r -m mode [-b addr] -p port [options]
 *   sender:   rdmx_wait -m mode -p port [options] host
 *
 * Every wait is bounded: -t seconds without progress (30), and the
 * modes' own durations. Exit status: 0 with a last line
 * "rdmx_wait: PASS ...", 1 on failure, 2 on bad options.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_ext_rdmx.h>
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
/* Tags: control messages by type; data messages by index. */
#define WT_TAG_CTL	(1ULL << 62)
#define WT_TAG_DATA	(1ULL << 61)
#define WT_TAG_INDEX	(WT_TAG_DATA - 1)
#define WT_MIN(a, b)	((a) < (b) ? (a) : (b))

const char *const ft_prog = WT_NAME;

enum wt_mode { WT_IDLE, WT_SREAD, WT_FD, WT_CNTR, WT_AUTO, WT_MANUAL, WT_MODES };

static const char *const wt_mode_names[WT_MODES] = {
	[WT_IDLE] = "idle", [WT_SREAD] = "sread", [WT_FD] = "fd",
	[WT_CNTR] = "cntr", [WT_AUTO] = "auto", [WT_MANUAL] = "manual",
};

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

enum wt_ctl_type { WT_HELLO = 1, WT_GO, WT_DONE, WT_AGAIN };

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

/* ---------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------- */

/*
 * The length of message i: the first is 1 byte and the second 256 KiB;
 * then 55% up to 4 KiB, 15% up to 60,000 bytes (eager), 15% of
 * 65,448..65,536 (medium: longer than one packet of loopback udp or shm,
 * at most FI_RDMX_MEDIUM_MAX), 15% longer (long).
 */
static size_t wt_len(uint64_t i)
{
	uint64_t cls = ft_mix(i) % 100, x = ft_mix(i + 0x9e3779b97f4a7c15ULL);

	if (i == 0)
		return 1;
	if (i == 1)
		return WT_MAX_LEN;
	if (cls < 55)
		return 1 + x % WT_SMALL_MAX;
	if (cls < 70)
		return WT_SMALL_MAX + 1 + x % (60000 - WT_SMALL_MAX);
	if (cls < 85)
		return 65448 + x % 89;
	return 65537 + x % (WT_MAX_LEN - 65536);
}

/* Manual mode's messages: small, one packet each. */
static size_t wt_small_len(uint64_t i)
{
	return 1 + ft_mix(i) % WT_SMALL_MAX;
}

static size_t wt_mode_len(const struct wt *w, uint64_t i)
{
	return w->o->mode == WT_MANUAL ? wt_small_len(i) : wt_len(i);
}

/* Message i's bytes: the pattern from an offset of its own. */
static const uint8_t *wt_payload(const struct wt *w, uint64_t i, size_t len)
{
	return w->pattern + ft_mix(3 * i + 1) % (WT_PATTERN - len + 1);
}

/*
 * Checks a received message i of len bytes in buf (followed by FT_GUARD
 * bytes of FT_POISON); 0 or -FI_EIO after a message.
 */
static int wt_check_payload(const struct wt *w, uint64_t i, const uint8_t *buf, size_t len)
{
	const uint8_t *want = wt_payload(w, i, len);

	for (size_t k = 0; k < len + FT_GUARD; k++) {
		uint8_t exp = k < len ? want[k] : FT_POISON;

		if (buf[k] != exp)
			return ft_fail("message %" PRIu64 " (%zu bytes): byte %zu is 0x%02x, "
				       "want 0x%02x%s", i, len, k, buf[k], exp,
				       k < len ? "" : " (guard)");
	}
	return 0;
}

/* The number of messages of auto and manual modes. */
static uint64_t wt_compute_msgs(const struct wt_opts *o)
{
	if (o->mode == WT_MANUAL)
		return o->sends;
	return (o->compute_ms - WT_TAIL_MS) / o->interval_ms - 1;
}

/* ---------------------------------------------------------------------
 * Time and usage
 * ------------------------------------------------------------------- */

/* Milliseconds until deadline (at least 1), or 0 once it passed. */
static int wt_left_ms(uint64_t deadline)
{
	uint64_t now = ft_now_ns();

	if (now >= deadline)
		return 0;
	return (int) WT_MIN((deadline - now + 999999) / 1000000, (uint64_t) INT32_MAX);
}

static uint64_t wt_tv_ns(const struct timeval *tv)
{
	return (uint64_t) tv->tv_sec * 1000000000ULL + (uint64_t) tv->tv_usec * 1000ULL;
}

/* The CPU time of the process (user + system) and its voluntary context switches. */
static void wt_usage(uint64_t *cpu_ns, uint64_t *nvcsw)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*cpu_ns = wt_tv_ns(&ru.ru_utime) + wt_tv_ns(&ru.ru_stime);
	*nvcsw = (uint64_t) ru.ru_nvcsw;
}

/* Sleeps until the clock is at until, or spins there with busy. */
static void wt_compute_until(uint64_t until, bool busy)
{
	struct timespec ts = {
		.tv_sec = (time_t) (until / 1000000000ULL),
		.tv_nsec = (long) (until % 1000000000ULL),
	};

	if (busy) {
		while (ft_now_ns() < until)
			;
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---------------------------------------------------------------------
 * Completions
 * ------------------------------------------------------------------- */

/*
 * Waits for completions as the mode says (fd mode on the receiver:
 * fi_trywait and poll(); else fi_cq_sread) until deadline: up to max
 * entries into e and their number; -FI_EAVAIL with the error entry in
 * *err (text in text); or an error printed (-FI_ETIMEDOUT on time). With
 * what NULL, a wait that times out returns 0 quietly.
 */
static int wt_cq_wait(struct wt *w, struct fi_cq_tagged_entry *e, size_t max,
		      struct fi_cq_err_entry *err, char *text, size_t text_len,
		      uint64_t deadline, const char *what)
{
	bool by_fd = w->o->mode == WT_FD && w->o->receiver;

	for (;;) {
		int left = wt_left_ms(deadline);
		ssize_t ret;

		ret = by_fd ? fi_cq_read(w->rdm.cq, e, max) :
		      fi_cq_sread(w->rdm.cq, e, max, NULL, left ? left : 1);
		if (ret > 0)
			return (int) ret;
		if (ret == -FI_EAVAIL)
			return ft_cq_readerr(w->rdm.cq, err, text, text_len) ?
			       -FI_EIO : -FI_EAVAIL;
		if (ret != -FI_EAGAIN)
			return ft_err(by_fd ? "fi_cq_read" : "fi_cq_sread", ret);
		if (!left && !what)
			return 0;
		if (!left) {
			ft_fail("timed out waiting for %s", what);
			return -FI_ETIMEDOUT;
		}
		if (by_fd) {
			struct fid *fids[1] = { &w->rdm.cq->fid };
			struct pollfd pfd = { .fd = w->fd, .events = POLLIN };

			ret = fi_trywait(w->rdm.fabric, fids, 1);
			if (ret == -FI_EAGAIN)
				continue;
			if (ret)
				return ft_err("fi_trywait", ret);
			w->trywaits++;
			ret = poll(&pfd, 1, left);
			if (ret < 0 && errno != EINTR)
				return ft_fail("poll: %s", strerror(errno));
			w->polls += ret > 0;
		}
	}
}

/*
 * Waits for one completion that must succeed (an error entry fails it):
 * 0 with *e, or an error printed.
 */
static int wt_cq_one(struct wt *w, struct fi_cq_tagged_entry *e, uint64_t deadline,
		     const char *what)
{
	struct fi_cq_err_entry err;
	char text[256];
	int ret = wt_cq_wait(w, e, 1, &err, text, sizeof(text), deadline, what);

	if (ret == -FI_EAVAIL)
		return ft_fail("%s: error completion: %s", what, text);
	return ret < 0 ? ret : 0;
}

/* Posts a tagged send, progressing while it gets -FI_EAGAIN until deadline. */
static int wt_tsend(struct wt *w, const void *buf, size_t len, uint64_t tag, void *ctx,
		    uint64_t flags, uint64_t deadline)
{
	struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = w->peer, .tag = tag, .context = ctx,
	};
	ssize_t ret;

	while ((ret = flags ? fi_tsendmsg(w->rdm.ep, &msg, flags) :
		      fi_tsend(w->rdm.ep, buf, len, NULL, w->peer, tag, ctx)) == -FI_EAGAIN) {
		if (ft_now_ns() > deadline)
			return ft_fail("fi_tsend: -FI_EAGAIN until the deadline");
		(void) fi_cq_read(w->rdm.cq, NULL, 0);
	}
	return ret ? ft_err("fi_tsend", ret) : 0;
}

/* Posts a tagged receive with flags (FI_COMPLETION) or the endpoint's. */
static int wt_trecv(struct wt *w, void *buf, size_t len, uint64_t tag, void *ctx,
		    uint64_t flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .tag = tag,
		.context = ctx,
	};
	ssize_t ret = flags ? fi_trecvmsg(w->rdm.ep, &msg, flags) :
		      fi_trecv(w->rdm.ep, buf, len, NULL, FI_ADDR_UNSPEC, tag, 0, ctx);

	return ret ? ft_err("fi_trecv", ret) : 0;
}

/* ---------------------------------------------------------------------
 * Control messages
 * ------------------------------------------------------------------- */

/*
 * Control traffic asks FI_COMPLETION: it writes its entries even where
 * the CQ is bound with FI_SELECTIVE_COMPLETION (cntr mode), and the
 * counters count it like the rest.
 */
static int wt_ctl_post_recv(struct wt *w, enum wt_ctl_type type)
{
	memset(&w->ctl_in, 0, sizeof(w->ctl_in));
	w->rx_ops++;
	return wt_trecv(w, &w->ctl_in, sizeof(w->ctl_in), WT_TAG_CTL | type,
			&w->ctl_in_ctx, FI_COMPLETION);
}

/* Waits for the control message posted; 0 or an error printed. */
static int wt_ctl_wait_recv(struct wt *w, enum wt_ctl_type type, uint64_t deadline,
			    const char *what)
{
	struct fi_cq_tagged_entry e;
	int ret = wt_cq_one(w, &e, deadline, what);

	if (ret)
		return ret;
	if (e.op_context != &w->ctl_in_ctx || e.tag != (WT_TAG_CTL | type) ||
	    w->ctl_in.magic != WT_MAGIC || w->ctl_in.type != type)
		return ft_fail("%s: unexpected completion (tag 0x%" PRIx64 ")", what, e.tag);
	return 0;
}

/* Sends a control message and waits for its completion. */
static int wt_ctl_send(struct wt *w, enum wt_ctl_type type, int32_t status,
		       uint64_t deadline, const char *what)
{
	struct fi_cq_tagged_entry e;
	int ret;

	w->ctl_out.magic = WT_MAGIC;
	w->ctl_out.type = type;
	w->ctl_out.status = status;
	w->tx_ops++;
	ret = wt_tsend(w, &w->ctl_out, sizeof(w->ctl_out), WT_TAG_CTL | type,
		       &w->ctl_out_ctx, FI_COMPLETION, deadline);
	if (!ret)
		ret = wt_cq_one(w, &e, deadline, what);
	if (!ret && e.op_context != &w->ctl_out_ctx)
		ret = ft_fail("%s: a completion not of its send", what);
	return ret;
}

/* ---------------------------------------------------------------------
 * Setup
 * ------------------------------------------------------------------- */

static struct fi_info *wt_getinfo(const struct wt_opts *o)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	if (!hints)
		return NULL;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_VIRT_ADDR;
	if (o->receiver && o->mode == WT_AUTO) {
		hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
		hints->domain_attr->control_progress = FI_PROGRESS_AUTO;
	}
	ret = o->host ? fi_getinfo(WT_VERSION, o->host, o->port, 0, hints, &info) :
	      fi_getinfo(WT_VERSION, o->bind_addr, o->port, FI_SOURCE, hints, &info);
	fi_freeinfo(hints);
	if (ret) {
		ft_err("fi_getinfo", ret);
		return NULL;
	}
	return info;
}

/* The CQ: its wait object by mode (the receiver's FI_WAIT_FD in fd mode). */
static int wt_open_cq(struct wt *w)
{
	struct fi_cq_attr attr = {
		.format = FI_CQ_FORMAT_TAGGED,
		.wait_obj = w->o->mode == WT_FD && w->o->receiver ? FI_WAIT_FD :
			    FI_WAIT_UNSPEC,
		.size = 4096,
	};
	int ret = fi_cq_open(w->rdm.domain, &attr, &w->rdm.cq, NULL);

	if (ret)
		return ft_err("fi_cq_open", ret);
	if (attr.wait_obj != FI_WAIT_FD)
		return 0;
	ret = fi_control(&w->rdm.cq->fid, FI_GETWAIT, &w->fd);
	return ret ? ft_err("fi_control (FI_GETWAIT)", ret) : 0;
}

static int wt_open_cntr(struct wt *w)
{
	struct fi_cntr_attr attr = {
		.events = FI_CNTR_EVENTS_COMP,
		.wait_obj = FI_WAIT_UNSPEC,
	};
	int ret = fi_cntr_open(w->rdm.domain, &attr, &w->cntr, NULL);

	if (ret)
		return ft_err("fi_cntr_open", ret);
	ret = fi_ep_bind(w->rdm.ep, &w->cntr->fid, w->o->receiver ? FI_RECV : FI_SEND);
	return ret ? ft_err("fi_ep_bind (cntr)", ret) : 0;
}

/*
 * Opens what the mode needs and enables the endpoint; 0 or an error
 * printed (what was opened stays for wt_close).
 */
static int wt_open(struct wt *w)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	uint64_t sel = w->o->mode == WT_CNTR ? FI_SELECTIVE_COMPLETION : 0;
	int ret;

	ret = fi_fabric(w->info->fabric_attr, &w->rdm.fabric, NULL);
	if (ret)
		return ft_err("fi_fabric", ret);
	ret = fi_domain(w->rdm.fabric, w->info, &w->rdm.domain, NULL);
	if (ret)
		return ft_err("fi_domain", ret);
	ret = wt_open_cq(w);
	if (ret)
		return ret;
	ret = fi_av_open(w->rdm.domain, &av_attr, &w->rdm.av, NULL);
	if (ret)
		return ft_err("fi_av_open", ret);
	ret = fi_endpoint(w->rdm.domain, w->info, &w->rdm.ep, NULL);
	if (ret)
		return ft_err("fi_endpoint", ret);
	ret = fi_ep_bind(w->rdm.ep, &w->rdm.cq->fid, FI_TRANSMIT | FI_RECV | sel);
	if (ret)
		return ft_err("fi_ep_bind (cq)", ret);
	ret = fi_ep_bind(w->rdm.ep, &w->rdm.av->fid, 0);
	if (ret)
		return ft_err("fi_ep_bind (av)", ret);
	if (w->o->mode == WT_CNTR && (ret = wt_open_cntr(w)))
		return ret;
	ret = fi_enable(w->rdm.ep);
	return ret ? ft_err("fi_enable", ret) : 0;
}

static void wt_close(struct wt *w, int *status)
{
	ft_rdm_close_ep(&w->rdm, status);
	ft_close_fid(w->cntr ? &w->cntr->fid : NULL, "fi_close (cntr)", status);
	ft_rdm_close(&w->rdm, status);
}

/*
 * The lane the peer is reached by, as rdmx's statistics say (shm, nic),
 * or "unknown" under another provider.
 */
static const char *wt_lane(struct wt *w)
{
	struct fi_rdmx_ep_ops *ops;
	struct fi_rdmx_ep_stats st;

	if (fi_open_ops(&w->rdm.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) ||
	    ops->query_stats(w->rdm.ep, &st))
		return "unknown";
	return st.shm_peers ? "shm" : "nic";
}

/* rdmx's statistics of the endpoint on stderr, after a failure, if there are any. */
static void wt_print_stats(struct wt *w)
{
	struct fi_rdmx_ep_ops *ops;
	struct fi_rdmx_ep_stats st;

	if (fi_open_ops(&w->rdm.ep->fid, FI_RDMX_EP_OPS, 0, (void **) &ops, NULL) ||
	    ops->query_stats(w->rdm.ep, &st))
		return;
	fprintf(stderr, WT_NAME ": stats: retransmits=%" PRIu64 " rnr_sent=%" PRIu64
		" rnr_received=%" PRIu64 " rnr_backoffs=%" PRIu64 " eagain=%" PRIu64
		" rx_unexpected=%" PRIu64 " peers_unreachable=%" PRIu64 " shm_peers=%" PRIu64
		" budget_refused=%" PRIu64 "\n", st.retransmits, st.rnr_sent, st.rnr_received,
		st.rnr_backoffs, st.eagain, st.rx_unexpected, st.peers_unreachable,
		st.shm_peers, st.budget_refused);
}

/* ---------------------------------------------------------------------
 * Idle
 * ------------------------------------------------------------------- */

/* The receiver's idle sread: -FI_EAGAIN on time, at a small CPU cost. */
static int wt_idle_receiver(struct wt *w)
{
	static uint8_t buf[64];
	static struct fi_context ctx;
	const struct wt_opts *o = w->o;
	struct fi_cq_tagged_entry e;
	uint64_t cpu0, cpu1, cs0, cs1, t0, wall_ms, cpu_us;
	ssize_t ret;

	ret = wt_trecv(w, buf, sizeof(buf), WT_TAG_DATA, &ctx, 0);
	if (ret)
		return (int) ret;
	wt_usage(&cpu0, &cs0);
	t0 = ft_now_ns();
	ret = fi_cq_sread(w->rdm.cq, &e, 1, NULL, (int) o->idle_ms);
	wall_ms = (ft_now_ns() - t0) / 1000000;
	wt_usage(&cpu1, &cs1);
	cpu_us = (cpu1 - cpu0) / 1000;
	printf(WT_NAME ": idle fi_cq_sread(%" PRIu64 " ms) returned %zd (%s): "
	       "wall_ms=%" PRIu64 " cpu_ms=%" PRIu64 ".%03" PRIu64 " (cpu_us=%" PRIu64 ") "
	       "wakeups=%" PRIu64 "\n", o->idle_ms, ret, fi_strerror((int) -ret), wall_ms,
	       cpu_us / 1000, cpu_us % 1000, cpu_us, cs1 - cs0);
	if (ret != -FI_EAGAIN)
		return ft_fail("idle sread: %zd, want -FI_EAGAIN", ret);
	if (wall_ms < o->idle_ms || wall_ms >= o->idle_ms + o->max_late_ms)
		return ft_fail("idle sread took %" PRIu64 " ms, want [%" PRIu64 ", %" PRIu64 ")",
			       wall_ms, o->idle_ms, o->idle_ms + o->max_late_ms);
	if (cpu_us * 100 >= wall_ms * 1000 * o->max_cpu_pct)
		return ft_fail("idle sread used %" PRIu64 " us of CPU in %" PRIu64 " ms, "
			       "limit %" PRIu64 "%%", cpu_us, wall_ms, o->max_cpu_pct);
	return 0;
}

/* ---------------------------------------------------------------------
 * Stream: sender
 * ------------------------------------------------------------------- */

/* Completions of stream sends: through the counter, else the CQ. */
static int wt_stream_sent(struct wt *w, uint64_t posted, uint64_t *done, uint64_t deadline)
{
	struct fi_cq_tagged_entry e[WT_BATCH];
	struct fi_cq_err_entry err;
	char text[256];
	int ret;

	if (w->cntr) {
		/* The send counter counted HELLO as well. */
		uint64_t base = w->tx_ops - posted;

		ret = fi_cntr_wait(w->cntr, base + *done + 1, wt_left_ms(deadline));
		if (ret)
			return ft_err("fi_cntr_wait (sends)", ret);
		*done = fi_cntr_read(w->cntr) - base;
		return fi_cntr_readerr(w->cntr) ?
		       ft_fail("the send counter counts %" PRIu64 " errors",
			       fi_cntr_readerr(w->cntr)) : 0;
	}
	ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline, "stream sends");
	if (ret == -FI_EAVAIL)
		return ft_fail("a stream send failed: %s", text);
	if (ret < 0)
		return ret;
	for (int k = 0; k < ret; k++) {
		if (e[k].op_context < (void *) w->ctx ||
		    e[k].op_context >= (void *) (w->ctx + WT_WINDOW))
			return ft_fail("a completion not of a stream send");
		if (ft_check_cq_flags(e[k].flags, FI_SEND | FI_TAGGED,
				      FI_SEND | FI_RECV | FI_TAGGED, "stream send"))
			return -FI_EIO;
	}
	*done += (uint64_t) ret;
	return 0;
}

static int wt_stream_sender(struct wt *w)
{
	uint64_t n = w->o->count, posted = 0, done = 0, t0 = ft_now_ns();
	uint64_t stall = (uint64_t) w->o->timeout_s * 1000000000ULL;
	uint64_t deadline = ft_now_ns() + stall;
	int ret = 0;

	while (!ret && done < n) {
		while (!ret && posted < n && posted - done < WT_WINDOW) {
			size_t len = wt_len(posted);

			w->tx_ops++;
			ret = wt_tsend(w, wt_payload(w, posted, len), len,
				       WT_TAG_DATA | posted, &w->ctx[posted % WT_WINDOW], 0,
				       deadline);
			posted++;
		}
		if (!ret) {
			uint64_t before = done;

			ret = wt_stream_sent(w, posted, &done, deadline);
			if (done > before)
				deadline = ft_now_ns() + stall;
		}
	}
	if (!ret)
		printf(WT_NAME ": sender: %" PRIu64 " sends completed without error "
		       "(send_ms=%" PRIu64 ")\n", n, (ft_now_ns() - t0) / 1000000);
	return ret;
}

/* ---------------------------------------------------------------------
 * Stream: receiver
 * ------------------------------------------------------------------- */

/* The receiver's buffers: one slot per message in flight, and its index. */
struct wt_slots {
	uint8_t		*buf;
	uint64_t	index[WT_WINDOW];
};

static uint8_t *wt_slot(struct wt_slots *s, unsigned k)
{
	return s->buf + (size_t) k * (WT_MAX_LEN + FT_GUARD);
}

/* Posts the receive of message i in its slot, guard bytes poisoned after it. */
static int wt_post_data(struct wt *w, struct wt_slots *s, uint64_t i)
{
	unsigned k = (unsigned) (i % WT_WINDOW);
	size_t len = wt_len(i);

	s->index[k] = i;
	memset(wt_slot(s, k) + len, FT_POISON, FT_GUARD);
	w->rx_ops++;
	return wt_trecv(w, wt_slot(s, k), WT_MAX_LEN, WT_TAG_DATA | i, &w->ctx[k], 0);
}

/* Checks a completion of the stream's receives; its slot goes to *k. */
static int wt_check_rx(struct wt *w, struct wt_slots *s, const struct fi_cq_tagged_entry *e,
		       unsigned *k)
{
	uint64_t i;
	int ret;

	if (e->op_context < (void *) w->ctx || e->op_context >= (void *) (w->ctx + WT_WINDOW))
		return ft_fail("a completion not of a stream receive");
	*k = (unsigned) ((struct fi_context *) e->op_context - w->ctx);
	i = s->index[*k];
	ret = ft_check_cq_flags(e->flags, FI_RECV | FI_TAGGED, FI_SEND | FI_RECV | FI_TAGGED,
				"stream receive");
	if (ret)
		return ret;
	if (e->tag != (WT_TAG_DATA | i) || e->len != wt_len(i))
		return ft_fail("receive %" PRIu64 ": tag 0x%" PRIx64 " len %zu, want len %zu",
			       i, e->tag, e->len, wt_len(i));
	return wt_check_payload(w, i, wt_slot(s, *k), e->len);
}

/* Takes the stream through the CQ (sread or fd mode), reposting as it goes. */
static int wt_stream_by_cq(struct wt *w, struct wt_slots *s, uint64_t deadline_step)
{
	struct fi_cq_tagged_entry e[WT_BATCH];
	struct fi_cq_err_entry err;
	uint64_t n = w->o->count, got = 0, deadline = ft_now_ns() + deadline_step;
	char text[256];
	int ret = 0;

	for (uint64_t i = 0; !ret && i < n && i < WT_WINDOW; i++)
		ret = wt_post_data(w, s, i);
	while (!ret && got < n) {
		ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline,
				 "stream messages");
		if (ret == -FI_EAVAIL)
			return ft_fail("a stream receive failed: %s", text);
		for (int j = 0; ret > 0 && j < ret; j++) {
			unsigned k = 0;
			int r = wt_check_rx(w, s, &e[j], &k);

			if (!r && s->index[k] + WT_WINDOW < n)
				r = wt_post_data(w, s, s->index[k] + WT_WINDOW);
			if (r)
				return r;
			got++;
		}
		if (ret > 0) {
			ret = 0;
			deadline = ft_now_ns() + deadline_step;
		}
	}
	return ret;
}

/*
 * Takes the stream counted, a batch of receives at a time (they complete
 * in any order): posts a batch, waits until the counter has them all,
 * checks every buffer.
 */
static int wt_stream_by_cntr(struct wt *w, struct wt_slots *s, uint64_t deadline_step)
{
	uint64_t n = w->o->count;
	int ret = 0;

	for (uint64_t first = 0; !ret && first < n; first += WT_WINDOW) {
		uint64_t last = WT_MIN(first + WT_WINDOW, n);

		for (uint64_t i = first; !ret && i < last; i++)
			ret = wt_post_data(w, s, i);
		if (!ret)
			ret = fi_cntr_wait(w->cntr, w->rx_ops, (int) (deadline_step / 1000000));
		if (ret)
			return ft_err("fi_cntr_wait (receives)", ret);
		if (fi_cntr_readerr(w->cntr))
			return ft_fail("the receive counter counts errors");
		for (uint64_t i = first; !ret && i < last; i++)
			ret = wt_check_payload(w, i, wt_slot(s, (unsigned) (i % WT_WINDOW)),
					       wt_len(i));
	}
	return ret;
}

/* Nothing of the stream may be in a CQ bound FI_SELECTIVE_COMPLETION. */
static int wt_cntr_exact(struct wt *w, const char *side)
{
	struct fi_cq_tagged_entry e;
	uint64_t v = fi_cntr_read(w->cntr), errs = fi_cntr_readerr(w->cntr);
	uint64_t want = w->o->receiver ? w->rx_ops : w->tx_ops;
	ssize_t ret = fi_cq_read(w->rdm.cq, &e, 1);

	printf(WT_NAME ": %s: counter=%" PRIu64 " errors=%" PRIu64 " (want %" PRIu64 ")\n",
	       side, v, errs, want);
	if (v != want || errs)
		return ft_fail("%s: the counter holds %" PRIu64 " (%" PRIu64 " errors), "
			       "want %" PRIu64, side, v, errs, want);
	if (ret != -FI_EAGAIN)
		return ft_fail("%s: the CQ holds an entry (%zd): selective completion "
			       "not honoured", side, ret);
	return 0;
}

static int wt_stream_receiver(struct wt *w)
{
	uint64_t step = (uint64_t) w->o->timeout_s * 1000000000ULL, t0, cpu0, cpu1, cs0, cs1;
	struct wt_slots s = { .buf = calloc(WT_WINDOW, WT_MAX_LEN + FT_GUARD) };
	int ret;

	if (!s.buf)
		return ft_fail("out of memory");
	wt_usage(&cpu0, &cs0);
	t0 = ft_now_ns();
	ret = w->cntr ? wt_stream_by_cntr(w, &s, step) : wt_stream_by_cq(w, &s, step);
	wt_usage(&cpu1, &cs1);
	if (!ret)
		printf(WT_NAME ": receiver: %" PRIu64 " messages checked, every completion "
		       "by %s (recv_ms=%" PRIu64 " cpu_ms=%" PRIu64 " sleeps=%" PRIu64 ")\n",
		       w->o->count, w->cntr ? "fi_cntr_wait" :
		       w->o->mode == WT_FD ? "fi_trywait + poll" : "fi_cq_sread",
		       (ft_now_ns() - t0) / 1000000, (cpu1 - cpu0) / 1000000, cs1 - cs0);
	if (!ret && w->o->mode == WT_FD)
		printf(WT_NAME ": receiver: fi_trywait let it sleep %" PRIu64 " times, poll() "
		       "found the fd readable %" PRIu64 " times (trywaits=%" PRIu64 ")\n",
		       w->trywaits, w->polls, w->trywaits);
	/*
	 * sread and fd wait for each completion as the sender's window lets
	 * it come, so they sleep thousands of times. A counted receiver waits
	 * once per batch, for messages that may all be there already when
	 * the sender runs ahead (unexpected): whether it sleeps depends on
	 * the machine's load, not on rdmx (test_counters sees it wake).
	 */
	if (!ret && cs1 == cs0 && !w->cntr)
		ret = ft_fail("the receiver never slept");
	free(s.buf);
	return ret;
}

/* ---------------------------------------------------------------------
 * Auto and manual: the receiver computes
 * ------------------------------------------------------------------- */

/* Every message of auto or manual mode has a receive and a buffer of its own. */
struct wt_rx_all {
	uint8_t			*mem;
	size_t			*off;
	struct fi_context	*ctx;
	uint64_t		n, got, failed;
};

static void wt_rx_all_free(struct wt_rx_all *r)
{
	free(r->mem);
	free(r->off);
	free(r->ctx);
}

/* Allocates and posts a receive for each of the n messages. */
static int wt_rx_all_post(struct wt *w, struct wt_rx_all *r, uint64_t n)
{
	size_t total = 0;
	int ret = 0;

	r->n = n;
	r->off = calloc(n, sizeof(*r->off));
	r->ctx = calloc(n, sizeof(*r->ctx));
	for (uint64_t i = 0; r->off && i < n; i++) {
		r->off[i] = total;
		total += wt_mode_len(w, i) + FT_GUARD;
	}
	r->mem = malloc(total);
	if (!r->off || !r->ctx || !r->mem)
		return ft_fail("out of memory");
	memset(r->mem, FT_POISON, total);
	for (uint64_t i = 0; !ret && i < n; i++) {
		w->rx_ops++;
		ret = wt_trecv(w, r->mem + r->off[i], wt_mode_len(w, i), WT_TAG_DATA | i,
			       &r->ctx[i], 0);
	}
	return ret;
}

/*
 * One completion of rx_all's receives: checked and counted (an error
 * entry counts as failed, printed). Other completions fail the run,
 * except AGAIN's (*again set).
 */
static int wt_rx_all_take(struct wt *w, struct wt_rx_all *r, const struct fi_cq_tagged_entry *e,
			  bool *again)
{
	uint64_t i;

	if (e->op_context == &w->ctl_in_ctx && w->o->mode == WT_MANUAL) {
		*again = true;
		return e->tag == (WT_TAG_CTL | WT_AGAIN) ? 0 : ft_fail("not AGAIN");
	}
	if (e->op_context < (void *) r->ctx || e->op_context >= (void *) (r->ctx + r->n))
		return ft_fail("a completion not of a receive posted");
	i = (uint64_t) ((struct fi_context *) e->op_context - r->ctx);
	if (e->tag != (WT_TAG_DATA | i) || e->len != wt_mode_len(w, i))
		return ft_fail("receive %" PRIu64 ": tag 0x%" PRIx64 " len %zu, want %zu", i,
			       e->tag, e->len, wt_mode_len(w, i));
	/* One-packet messages complete in the order sent: what came is a prefix. */
	if (w->o->mode == WT_MANUAL && i != r->got)
		return ft_fail("message %" PRIu64 " came after %" PRIu64 " others: not in the "
			       "order sent", i, r->got);
	r->got++;
	return wt_check_payload(w, i, r->mem + r->off[i], e->len);
}

/*
 * Takes completions until want of rx_all's messages arrived (auto) or
 * AGAIN did (manual); error entries fail auto mode, and are counted in
 * manual mode.
 */
static int wt_rx_all_collect(struct wt *w, struct wt_rx_all *r, uint64_t want)
{
	uint64_t step = (uint64_t) w->o->timeout_s * 1000000000ULL;
	uint64_t deadline = ft_now_ns() + step;
	bool again = false;
	int ret = 0;

	while (!ret && (w->o->mode == WT_MANUAL ? !again : r->got < want)) {
		struct fi_cq_tagged_entry e[WT_BATCH];
		struct fi_cq_err_entry err;
		char text[256];

		ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline,
				 w->o->mode == WT_MANUAL ? "AGAIN" : "the messages");
		if (ret == -FI_EAVAIL && w->o->mode == WT_MANUAL) {
			printf(WT_NAME ": receiver: an error entry: %s\n", text);
			r->failed++;
			ret = 1;
			continue;
		}
		if (ret == -FI_EAVAIL)
			return ft_fail("a receive failed: %s", text);
		for (int j = 0; ret > 0 && j < ret; j++) {
			int r2 = wt_rx_all_take(w, r, &e[j], &again);

			if (r2)
				return r2;
		}
		if (ret > 0) {
			ret = 0;
			deadline = ft_now_ns() + step;
		}
	}
	return ret;
}

static int wt_compute_receiver(struct wt *w)
{
	const struct wt_opts *o = w->o;
	uint64_t n = wt_compute_msgs(o), start, end;
	uint64_t deadline = ft_deadline_ns(o->timeout_s);
	struct wt_rx_all r = { 0 };
	/*
	 * GO first, alone: its completion is the next one. The sender's
	 * first messages may come before their receives: they wait as
	 * unexpected messages.
	 */
	int ret = wt_ctl_send(w, WT_GO, 0, deadline, "GO");

	if (!ret)
		ret = wt_rx_all_post(w, &r, n);
	if (!ret && o->mode == WT_MANUAL)
		ret = wt_ctl_post_recv(w, WT_AGAIN);
	if (ret)
		goto out;
	start = ft_now_ns();
	printf(WT_NAME ": receiver: GO sent, %" PRIu64 " receives posted; computing for "
	       "%" PRIu64 " ms with %s progress (compute_start_ns=%" PRIu64 ")\n", n,
	       o->compute_ms, o->mode == WT_AUTO ? "automatic" : "manual", start);
	wt_compute_until(start + o->compute_ms * 1000000ULL, o->busy);
	end = ft_now_ns();
	printf(WT_NAME ": receiver: computed, no libfabric call for %" PRIu64 " ms "
	       "(compute_end_ns=%" PRIu64 ")\n", (end - start) / 1000000, end);
	ret = wt_rx_all_collect(w, &r, n);
	if (!ret)
		printf(WT_NAME ": receiver: delivered=%" PRIu64 " of %" PRIu64 " messages "
		       "checked, failed=%" PRIu64 "\n", r.got, n, r.failed);
out:
	wt_rx_all_free(&r);
	return ret;
}

/* ---------------------------------------------------------------------
 * Auto and manual: the sender sends at the interval
 * ------------------------------------------------------------------- */

struct wt_sends {
	uint64_t		n, posted, ended, oldest;
	uint64_t		*post_ns;
	bool			*ended_at;
	struct fi_context	*ctx;
	uint64_t		go_ns, first_post_ns, first_end_ns, last_end_ns, max_us;
	uint64_t		max_i;		/* the send that took max_us */
};

/* The time by which send i must have ended. */
static uint64_t wt_send_bound(const struct wt *w, const struct wt_sends *s, uint64_t i)
{
	if (w->o->expect == WT_EXPECT_UNREACH)
		return s->first_post_ns + (w->o->unreach_ms + w->o->complete_ms) * 1000000ULL;
	return s->post_ns[i] + w->o->complete_ms * 1000000ULL;
}

/* Send i ended (with the error err, or 0) at now: what the mode expects? */
static int wt_send_ended(struct wt *w, struct wt_sends *s, uint64_t i, int err,
			 const char *text, uint64_t now)
{
	uint64_t us = (now - s->post_ns[i]) / 1000, ms = us / 1000;
	bool unreach = w->o->expect == WT_EXPECT_UNREACH;

	if (s->ended_at[i])
		return ft_fail("send %" PRIu64 " ended twice", i);
	s->ended_at[i] = true;
	s->ended++;
	if (!s->first_end_ns)
		s->first_end_ns = now;
	s->last_end_ns = now;
	if (us >= s->max_us) {
		s->max_us = us;
		s->max_i = i;
	}
	while (s->oldest < s->posted && s->ended_at[s->oldest])
		s->oldest++;
	if (unreach && err != FI_EHOSTUNREACH)
		return ft_fail("send %" PRIu64 ": %s, want FI_EHOSTUNREACH", i,
			       err ? text : "completed");
	if (!unreach && err)
		return ft_fail("send %" PRIu64 " failed after %" PRIu64 " ms: %s", i, ms, text);
	if (unreach && now < s->first_post_ns + (w->o->unreach_ms - 50) * 1000000ULL)
		return ft_fail("send %" PRIu64 " failed %" PRIu64 " ms after the first post, "
			       "sooner than FI_RDMX_UNREACH_MS (%" PRIu64 ")", i,
			       (now - s->first_post_ns) / 1000000, w->o->unreach_ms);
	return 0;
}

/* Takes the completions there are, or waits for one until deadline (quietly). */
static int wt_sends_reap(struct wt *w, struct wt_sends *s, uint64_t deadline)
{
	struct fi_cq_tagged_entry e[WT_BATCH];
	struct fi_cq_err_entry err;
	char text[256];
	int ret = wt_cq_wait(w, e, WT_BATCH, &err, text, sizeof(text), deadline, NULL);

	if (ret == -FI_EAVAIL) {
		if (err.op_context < (void *) s->ctx || err.op_context >= (void *) (s->ctx + s->n))
			return ft_fail("an error entry not of a send: %s", text);
		return wt_send_ended(w, s, (uint64_t) ((struct fi_context *) err.op_context -
				     s->ctx), err.err, text, ft_now_ns());
	}
	for (int k = 0; ret > 0 && k < ret; k++) {
		int r;

		if (e[k].op_context < (void *) s->ctx || e[k].op_context >= (void *) (s->ctx + s->n))
			return ft_fail("a completion not of a send");
		r = wt_send_ended(w, s, (uint64_t) ((struct fi_context *) e[k].op_context -
				  s->ctx), 0, "", ft_now_ns());
		if (r)
			return r;
	}
	return ret < 0 ? ret : 0;
}

/* Posts send i, the mode's size. */
static int wt_sends_post(struct wt *w, struct wt_sends *s)
{
	uint64_t i = s->posted;
	size_t len = wt_mode_len(w, i);
	uint64_t now = ft_now_ns();

	s->post_ns[i] = now;
	if (!s->first_post_ns)
		s->first_post_ns = now;
	s->posted++;
	return wt_tsend(w, wt_payload(w, i, len), len, WT_TAG_DATA | i, &s->ctx[i], 0,
			now + w->o->complete_ms * 1000000ULL);
}

/*
 * Sends the n messages at the interval from GO, taking completions in
 * between, until each ended as expected, within its bound.
 */
static int wt_sends_run(struct wt *w, struct wt_sends *s)
{
	uint64_t interval = w->o->interval_ms * 1000000ULL;
	int ret = 0;

	while (!ret && s->ended < s->n) {
		uint64_t now = ft_now_ns(), next = UINT64_MAX, bound = UINT64_MAX;

		/*
		 * Send i at GO + (i + 1) intervals: the first comes once the
		 * receiver took GO's completion and stopped calling, so no
		 * acknowledgement of it is sent before the computation.
		 */
		if (s->posted < s->n) {
			next = s->go_ns + (s->posted + 1) * interval;
			if (now >= next) {
				ret = wt_sends_post(w, s);
				continue;
			}
		}
		if (s->oldest < s->posted) {
			bound = wt_send_bound(w, s, s->oldest);
			if (now > bound)
				return ft_fail("send %" PRIu64 " (%zu bytes) has not ended %" PRIu64
					       " ms after its post", s->oldest,
					       wt_mode_len(w, s->oldest),
					       (now - s->post_ns[s->oldest]) / 1000000);
		}
		ret = wt_sends_reap(w, s, next < bound ? next : bound);
	}
	return ret;
}

static int wt_compute_sender(struct wt *w)
{
	const struct wt_opts *o = w->o;
	uint64_t deadline = ft_deadline_ns(o->timeout_s);
	struct wt_sends s = { .n = wt_compute_msgs(o) };
	int ret;

	s.post_ns = calloc(s.n, sizeof(*s.post_ns));
	s.ended_at = calloc(s.n, sizeof(*s.ended_at));
	s.ctx = calloc(s.n, sizeof(*s.ctx));
	ret = s.post_ns && s.ended_at && s.ctx ? 0 : ft_fail("out of memory");
	/* Posted once HELLO completed: GO's completion is the next one. */
	if (!ret)
		ret = wt_ctl_post_recv(w, WT_GO);
	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_GO, deadline, "GO");
	s.go_ns = ft_now_ns();
	if (!ret)
		ret = wt_sends_run(w, &s);
	if (!ret)
		printf(WT_NAME ": sender: sends=%" PRIu64 " at %" PRIu64 " ms intervals, %s "
		       "(first_post_ns=%" PRIu64 " last_post_ns=%" PRIu64 " first_end_ns=%" PRIu64
		       " last_end_ns=%" PRIu64 " max_us=%" PRIu64 " (send %" PRIu64 ", %zu bytes)"
		       " first_end_ms=%" PRIu64 ")\n",
		       s.n, o->interval_ms, o->expect == WT_EXPECT_UNREACH ?
		       "each failed with FI_EHOSTUNREACH" : "each completed without error",
		       s.first_post_ns, s.post_ns[s.n - 1], s.first_end_ns, s.last_end_ns,
		       s.max_us, s.max_i, wt_mode_len(w, s.max_i),
		       (s.first_end_ns - s.first_post_ns) / 1000000);
	free(s.post_ns);
	free(s.ended_at);
	free(s.ctx);
	return ret;
}

/*
 * Manual mode, once the sends ended: one more send, which must be
 * delivered once the receiver is back (a new session after unreach).
 */
static int wt_again(struct wt *w)
{
	uint64_t t0 = ft_now_ns();
	uint64_t deadline = t0 + (w->o->compute_ms + (uint64_t) w->o->timeout_s * 1000) * 1000000ULL;
	int ret = wt_ctl_send(w, WT_AGAIN, 0, deadline, "AGAIN");

	if (!ret)
		printf(WT_NAME ": sender: AGAIN, sent after the sends ended, completed "
		       "(again_ms=%" PRIu64 " again_end_ns=%" PRIu64 ")\n",
		       (ft_now_ns() - t0) / 1000000, ft_now_ns());
	return ret;
}

/* ---------------------------------------------------------------------
 * The two sides
 * ------------------------------------------------------------------- */

/* Takes the sender's HELLO: its options must be ours; its address goes into the AV. */
static int wt_hello(struct wt *w)
{
	const struct wt_opts *o = w->o;
	const struct wt_ctl *h = &w->ctl_in;
	int ret = wt_ctl_post_recv(w, WT_HELLO);

	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_HELLO, ft_deadline_ns(o->timeout_s), "HELLO");
	if (ret)
		return ret;
	if (h->mode != o->mode || h->count != o->count || h->compute_ms != o->compute_ms ||
	    h->interval_ms != o->interval_ms || h->sends != o->sends ||
	    h->addrlen > WT_ADDR_MAX)
		return ft_fail("the sender's options differ from the receiver's");
	return ft_rdm_insert(&w->rdm, h->addr, &w->peer, "fi_av_insert (sender)");
}

static int wt_receiver_run(struct wt *w)
{
	int ret;

	switch (w->o->mode) {
	case WT_IDLE:
		return wt_idle_receiver(w);
	case WT_SREAD:
	case WT_FD:
		return wt_stream_receiver(w);
	case WT_CNTR:
		ret = wt_stream_receiver(w);
		return ret ? ret : wt_cntr_exact(w, "receiver");
	default:
		return wt_compute_receiver(w);
	}
}

static int wt_receiver(struct wt *w)
{
	const char *lane;
	int ret = ft_rdm_print_listening(&w->rdm, "mode %s, pid %d",
					 wt_mode_names[w->o->mode], (int) getpid());

	if (!ret)
		ret = wt_hello(w);
	if (ret)
		return ret;
	ret = wt_receiver_run(w);
	if (ret)
		wt_print_stats(w);
	/*
	 * The lane while both are still there: a handshake may settle it
	 * after the first messages, and the sender's close (once DONE came)
	 * takes it back to the NIC.
	 */
	lane = wt_lane(w);
	/* The verdict, so that the sender ends now either way. */
	if (wt_ctl_send(w, WT_DONE, ret ? 1 : 0, ft_deadline_ns(w->o->timeout_s), "DONE") &&
	    !ret)
		ret = -FI_EIO;
	if (!ret)
		printf(WT_NAME ": PASS receiver (mode %s, lane=%s)\n",
		       wt_mode_names[w->o->mode], lane);
	return ret;
}

/* Sends HELLO: our options and address. */
static int wt_send_hello(struct wt *w)
{
	const struct wt_opts *o = w->o;
	size_t len = WT_ADDR_MAX;
	int ret = fi_getname(&w->rdm.ep->fid, w->ctl_out.addr, &len);

	if (ret)
		return ft_err("fi_getname", ret);
	w->ctl_out.addrlen = (uint32_t) len;
	w->ctl_out.mode = o->mode;
	w->ctl_out.count = o->count;
	w->ctl_out.compute_ms = o->compute_ms;
	w->ctl_out.interval_ms = o->interval_ms;
	w->ctl_out.sends = o->sends;
	return wt_ctl_send(w, WT_HELLO, 0, ft_deadline_ns(w->o->timeout_s), "HELLO");
}

static int wt_sender_run(struct wt *w)
{
	int ret;

	switch (w->o->mode) {
	case WT_IDLE:
		return 0;
	case WT_SREAD:
	case WT_FD:
		return wt_stream_sender(w);
	case WT_CNTR:
		ret = wt_stream_sender(w);
		return ret ? ret : wt_cntr_exact(w, "sender");
	case WT_AUTO:
		return wt_compute_sender(w);
	default:
		ret = wt_compute_sender(w);
		return ret ? ret : wt_again(w);
	}
}

/* Waits for the receiver's DONE, as long as its mode may take. */
static int wt_wait_done(struct wt *w)
{
	const struct wt_opts *o = w->o;
	uint64_t ms = (uint64_t) o->timeout_s * 1000 + (o->mode == WT_IDLE ? o->idle_ms :
		      o->mode >= WT_AUTO ? o->compute_ms : 0);
	uint64_t cpu0, cpu1, cs0, cs1, t0 = ft_now_ns();
	int ret = wt_ctl_post_recv(w, WT_DONE);

	wt_usage(&cpu0, &cs0);
	if (!ret)
		ret = wt_ctl_wait_recv(w, WT_DONE, t0 + ms * 1000000ULL, "DONE");
	wt_usage(&cpu1, &cs1);
	if (ret)
		return ret;
	if (o->mode == WT_IDLE)
		printf(WT_NAME ": sender: waited for DONE in fi_cq_sread (wall_ms=%" PRIu64
		       " cpu_ms=%" PRIu64 " wakeups=%" PRIu64 ")\n", (ft_now_ns() - t0) / 1000000,
		       (cpu1 - cpu0) / 1000000, cs1 - cs0);
	return w->ctl_in.status ? ft_fail("the receiver failed") : 0;
}

static int wt_sender(struct wt *w)
{
	const char *lane;
	int ret = ft_rdm_insert(&w->rdm, w->info->dest_addr, &w->peer, "fi_av_insert");

	if (!ret)
		ret = wt_send_hello(w);
	if (!ret)
		ret = wt_sender_run(w);
	if (ret)
		wt_print_stats(w);
	/* The lane before DONE: the receiver closes once DONE went. */
	lane = wt_lane(w);
	if (!ret)
		ret = wt_wait_done(w);
	if (!ret)
		printf(WT_NAME ": PASS sender (mode %s, lane=%s)\n", wt_mode_names[w->o->mode],
		       lane);
	return ret;
}

/* ---------------------------------------------------------------------
 * Options and main
 * ------------------------------------------------------------------- */

static int wt_parse_mode(const char *s, enum wt_mode *mode)
{
	for (int m = 0; m < WT_MODES; m++) {
		if (!strcmp(s, wt_mode_names[m])) {
			*mode = (enum wt_mode) m;
			return 0;
		}
	}
	fprintf(stderr, WT_NAME ": unknown mode %s\n", s);
	return -1;
}

static int wt_parse_expect(const char *s, enum wt_expect *expect)
{
	if (!strcmp(s, "unreach"))
		*expect = WT_EXPECT_UNREACH;
	else if (!strcmp(s, "complete"))
		*expect = WT_EXPECT_COMPLETE;
	else
		return -1;
	return 0;
}

/* The long options: each sets a number of wt_opts, or a flag. */
static int wt_parse_long(int c, const char *arg, struct wt_opts *o)
{
	switch (c) {
	case 'I':
		return ft_parse_num(arg, 1, 3600000, &o->idle_ms);
	case 'C':
		return ft_parse_num(arg, 1, 100, &o->max_cpu_pct);
	case 'L':
		return ft_parse_num(arg, 1, 3600000, &o->max_late_ms);
	case 'M':
		return ft_parse_num(arg, WT_TAIL_MS + 1, 3600000, &o->compute_ms);
	case 'V':
		return ft_parse_num(arg, 1, 60000, &o->interval_ms);
	case 'D':
		return ft_parse_num(arg, 1, 3600000, &o->complete_ms);
	case 'S':
		return ft_parse_num(arg, 1, 10000, &o->sends);
	case 'U':
		return ft_parse_num(arg, 100, 3600000, &o->unreach_ms);
	case 'E':
		return wt_parse_expect(arg, &o->expect);
	case 'B':
		o->busy = true;
		return 0;
	default:
		return -1;
	}
}

static int wt_parse(int argc, char **argv, struct wt_opts *o)
{
	static const struct option longs[] = {
		{ "idle-ms", required_argument, NULL, 'I' },
		{ "max-cpu-pct", required_argument, NULL, 'C' },
		{ "max-late-ms", required_argument, NULL, 'L' },
		{ "compute-ms", required_argument, NULL, 'M' },
		{ "interval-ms", required_argument, NULL, 'V' },
		{ "complete-ms", required_argument, NULL, 'D' },
		{ "sends", required_argument, NULL, 'S' },
		{ "unreach-ms", required_argument, NULL, 'U' },
		{ "expect", required_argument, NULL, 'E' },
		{ "busy", no_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_mode = false;
	int c, ret = 0;

	*o = (struct wt_opts) {
		.count = 20000, .idle_ms = 10000, .max_cpu_pct = 2, .max_late_ms = 1500,
		.compute_ms = 60000, .interval_ms = 100, .complete_ms = 1000, .sends = 20,
		.unreach_ms = 5000, .timeout_s = 30,
	};
	while (!ret && (c = getopt_long(argc, argv, "rm:b:p:n:t:", longs, NULL)) != -1) {
		if (c == 'r')
			o->receiver = true;
		else if (c == 'm')
			ret = wt_parse_mode(optarg, &o->mode), have_mode = !ret;
		else if (c == 'b')
			o->bind_addr = optarg;
		else if (c == 'p')
			o->port = optarg;
		else if (c == 'n')
			ret = ft_parse_num(optarg, 1, WT_TAG_INDEX, &o->count);
		else if (c == 't')
			ret = ft_parse_timeout(optarg, &o->timeout_s);
		else
			ret = wt_parse_long(c, optarg, o);
	}
	if (ret || !have_mode || ft_parse_host(argc, argv, &o->host) || !o->port ||
	    !o->receiver == !o->host)
		return -1;
	/* The sender of manual mode must be told what to expect. */
	if (o->mode == WT_MANUAL && !o->receiver && o->expect == WT_EXPECT_NONE)
		return -1;
	/* Auto mode sends at least one message. */
	if (o->mode == WT_AUTO && (o->compute_ms - WT_TAIL_MS) / o->interval_ms < 2)
		return -1;
	return 0;
}

/* The pattern messages are cut from, the same on both sides. */
static int wt_pattern(struct wt *w)
{
	w->pattern = malloc(WT_PATTERN);
	if (!w->pattern)
		return ft_fail("out of memory");
	ft_pattern_fill(w->pattern, WT_PATTERN, ft_pattern_seed(0, 0, 0, WT_PATTERN));
	return 0;
}

/* Automatic progress given as asked (auto mode's receiver). */
static int wt_check_progress(const struct wt *w)
{
	const struct fi_domain_attr *d = w->info->domain_attr;

	if (!w->o->receiver || w->o->mode != WT_AUTO)
		return 0;
	if (d->data_progress != FI_PROGRESS_AUTO || d->control_progress != FI_PROGRESS_AUTO)
		return ft_fail("fi_getinfo gave progress %d/%d, not FI_PROGRESS_AUTO",
			       d->control_progress, d->data_progress);
	return 0;
}

int main(int argc, char **argv)
{
	struct wt_opts o;
	struct wt w = { .o = &o, .fd = -1 };
	int ret, status = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wt_parse(argc, argv, &o)) {
		fprintf(stderr, "usage: " WT_NAME " -r -m mode [-b addr] -p port [options]\n"
			"       " WT_NAME " -m mode -p port [options] host\n"
			"modes: idle sread fd cntr auto manual; options: -n count, -t timeout_s,\n"
			"  --idle-ms, --max-cpu-pct, --max-late-ms, --compute-ms, --interval-ms,\n"
			"  --complete-ms, --sends, --unreach-ms, --expect unreach|complete, --busy\n");
		return 2;
	}
	w.info = wt_getinfo(&o);
	ret = w.info ? wt_pattern(&w) : -FI_ENODATA;
	if (!ret)
		ret = wt_check_progress(&w);
	if (!ret)
		ret = wt_open(&w);
	if (!ret)
		ret = o.receiver ? wt_receiver(&w) : wt_sender(&w);
	wt_close(&w, &status);
	fi_freeinfo(w.info);
	free(w.pattern);
	if (ret || status) {
		fprintf(stderr, WT_NAME ": FAIL\n");
		return 1;
	}
	return 0;
}
