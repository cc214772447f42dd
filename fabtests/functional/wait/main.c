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
 *           (eager, medium and long), at most 64 in flight, in bursts of
 *           1,000: after each burst but the last the receiver sends
 *           CAUGHT, and the sender pauses 5 ms once it has it. The
 *           receiver takes every completion through fi_cq_sread, and
 *           checks every payload, its length, tag and the guard bytes
 *           after it; it must have slept (voluntary context switches).
 *   fd      the same, the receiver's CQ FI_WAIT_FD: fi_cq_read, and when
 *           it is empty fi_trywait, then poll() on FI_GETWAIT's fd.
 *   cntr    the same counted, in one burst: both CQs bound with FI_SELECTIVE_COMPLETION
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
#include <getopt.h>

#include "wait.h"

const char *const ft_prog = WT_NAME;

const char *const wt_mode_names[WT_MODES] = {
	[WT_IDLE] = "idle", [WT_SREAD] = "sread", [WT_FD] = "fd",
	[WT_CNTR] = "cntr", [WT_AUTO] = "auto", [WT_MANUAL] = "manual",
};

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
