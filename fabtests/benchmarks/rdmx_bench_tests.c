/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_bench_tests.c: the tests of rdmx_bench (see rdmx_bench.c): what
 * each runs for a size (its plan, computed alike by both sides), lat, bw
 * and rate, bibw, and their output.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_errno.h>

#include "rdmx_bench.h"

const struct rb_test_desc rb_tests[RB_NTESTS] = {
	[RB_LAT]  = { "lat",  10000, 1,   4u << 20 },
	[RB_BW]   = { "bw",   100,   64,  4u << 20 },
	[RB_BIBW] = { "bibw", 100,   64,  4u << 20 },
	[RB_RATE] = { "rate", 200,   256, 4096 },
};

/* ---------------------------------------------------------------------
 * Plans: what both sides run for one test and size
 * ------------------------------------------------------------------- */

/* The sizes of test t: the -S list, or 1 B up to the test's default top. */
size_t rb_sizes(const struct rb_params *p, enum rb_test t, uint64_t *sizes)
{
	size_t n = 0;

	if (p->nsizes) {
		memcpy(sizes, p->sizes, p->nsizes * sizeof(*sizes));
		return p->nsizes;
	}
	for (uint64_t s = 1; s <= rb_tests[t].top && n < RB_SIZES_MAX; s *= 2)
		sizes[n++] = s;
	return n;
}

/* The window of a bw-like test; -c needs one buffer per slot. */
static uint32_t rb_window(const struct rb_params *p, enum rb_test t, size_t size)
{
	uint32_t w = p->window ? p->window : rb_tests[t].window;

	if (p->verify && size && (uint64_t) w * size > RB_VERIFY_BUDGET)
		w = size >= RB_VERIFY_BUDGET ? 1 : (uint32_t) (RB_VERIFY_BUDGET / size);
	return w;
}

void rb_plan(const struct rb *rb, enum rb_test t, size_t size,
		    struct rb_plan *plan)
{
	const struct rb_params *p = rb->params;
	uint32_t iters = p->iters ? p->iters : rb_tests[t].iters;

	*plan = (struct rb_plan) {
		.test = t,
		.size = size,
		.skip = size > rb->max_msg_size,
		.reps = p->reps ? p->reps : RB_DEFAULT_REPS,
	};
	if (t == RB_LAT) {
		uint32_t warmup = p->warmup != RB_WARMUP_DEFAULT ? p->warmup : 100;

		/* Large ping-pongs take proportionally fewer iterations. */
		if (size > RB_LAT_SCALE_ABOVE) {
			uint64_t scaled = (uint64_t) iters * RB_LAT_SCALE_ABOVE / size;

			iters = scaled > RB_LAT_MIN_ITERS ? (uint32_t) scaled :
				(iters < RB_LAT_MIN_ITERS ? iters : RB_LAT_MIN_ITERS);
			warmup = (uint32_t) ((uint64_t) warmup * RB_LAT_SCALE_ABOVE / size);
			if (warmup < 2 && p->warmup != 0)
				warmup = 2;
		}
		plan->iters = iters;
		plan->warmup = warmup;
		plan->window = 1;
		plan->reps = 1;
		return;
	}
	plan->window = rb_window(p, t, size);
	/* Each repetition moves about RB_REP_BYTES, in 1..iters windows. */
	{
		uint64_t per_window = (uint64_t) plan->window * (size ? size : 1);
		uint64_t windows = RB_REP_BYTES / per_window;

		if (windows < 1)
			windows = 1;
		plan->iters = windows < iters ? (uint32_t) windows : iters;
	}
	plan->warmup = p->warmup != RB_WARMUP_DEFAULT ? p->warmup :
		       (plan->iters / 4 ? plan->iters / 4 : 1);
}

/* ---------------------------------------------------------------------
 * Statistics and output
 * ------------------------------------------------------------------- */

static void rb_print_header(const struct rb *rb, enum rb_test t)
{
	printf("# %s: provider %s, fabric %s, domain %s, inject_size %zu, "
	       "max_msg_size %zu, %u decoy receives%s\n", rb_tests[t].name,
	       rb_prov(rb), rb->fi->fabric_attr->name, rb->fi->domain_attr->name,
	       rb->inject_size, rb->max_msg_size, rb->params->decoys,
	       rb->params->verify ? ", payloads checked" : "");
	if (t == RB_LAT)
		printf("# %10s %8s %12s %12s\n", "bytes", "iters", "median_us", "p99_us");
	else
		printf("# %10s %6s %8s %5s %12s %12s %12s %14s\n", "bytes", "window",
		       "windows", "reps", "MB/s", "min_MB/s", "max_MB/s", "msgs/s");
}

static void rb_print_skip(const struct rb *rb, const struct rb_plan *plan)
{
	const char *metric = plan->test == RB_LAT ? "median_us=n/a p99_us=n/a" :
			     plan->test == RB_RATE ? "mps=n/a mbps=n/a" : "mbps=n/a";

	printf("# %10zu n/a (above max_msg_size %zu)\n", plan->size, rb->max_msg_size);
	printf("RESULT test=%s size=%zu %s max_msg_size=%zu prov=%s\n",
	       rb_tests[plan->test].name, plan->size, metric, rb->max_msg_size,
	       rb_prov(rb));
}

/* lat: half round trips from the samples (round trips in ns). */
static void rb_print_lat(struct rb *rb, const struct rb_plan *plan)
{
	uint32_t n = plan->iters;
	double median = ft_median(rb->samples, n) / 2000.0;
	double p99 = ft_p99(rb->samples, n) / 2000.0;

	printf("# %10zu %8u %12.2f %12.2f\n", plan->size, n, median, p99);
	printf("RESULT test=lat size=%zu median_us=%.2f p99_us=%.2f iters=%u prov=%s\n",
	       plan->size, median, p99, n, rb_prov(rb));
}

/* bw, bibw, rate: samples are the repetitions' durations in ns. */
static void rb_print_bw(struct rb *rb, const struct rb_plan *plan)
{
	uint64_t msgs = (uint64_t) plan->iters * plan->window *
			(plan->test == RB_BIBW ? 2 : 1);
	double bytes = (double) msgs * plan->size;
	double median_ns = ft_median(rb->samples, plan->reps);
	double min_ns = rb->samples[0], max_ns = rb->samples[plan->reps - 1];
	double mbps = bytes * 1e3 / median_ns;
	double mps = msgs * 1e9 / median_ns;

	printf("# %10zu %6u %8u %5u %12.1f %12.1f %12.1f %14.0f\n", plan->size,
	       plan->window, plan->iters, plan->reps, mbps, bytes * 1e3 / max_ns,
	       bytes * 1e3 / min_ns, mps);
	if (plan->test == RB_RATE)
		printf("RESULT test=rate size=%zu mps=%.0f mbps=%.3f window=%u "
		       "windows=%u reps=%u prov=%s\n", plan->size, mps, mbps,
		       plan->window, plan->iters, plan->reps, rb_prov(rb));
	else
		printf("RESULT test=%s size=%zu mbps=%.3f min_mbps=%.3f max_mbps=%.3f "
		       "mps=%.0f window=%u windows=%u reps=%u prov=%s\n",
		       rb_tests[plan->test].name, plan->size, mbps,
		       bytes * 1e3 / max_ns, bytes * 1e3 / min_ns, mps, plan->window,
		       plan->iters, plan->reps, rb_prov(rb));
}

/* ---------------------------------------------------------------------
 * The tests
 * ------------------------------------------------------------------- */

/* Tags: direction (0 client → server, 1 back), slot. */
static uint64_t rb_data_tag(unsigned dir, uint32_t slot)
{
	return RB_TAG_DATA | (uint64_t) dir << 32 | slot;
}

/* Slot buffers exist only with -c; without, every slot shares one. */
static uint8_t *rb_slot(const struct rb *rb, uint8_t *base, uint32_t slot,
			size_t size)
{
	return rb->params->verify ? base + (size_t) slot * size : base;
}

/* Which direction this side sends in: the client 0, the server 1. */
static unsigned rb_my_dir(const struct rb *rb)
{
	return rb->opts.host ? 0 : 1;
}

/* The client of a lat run: timed round trips. */
static int rb_lat_client(struct rb *rb, const struct rb_plan *plan)
{
	uint32_t total = plan->warmup + plan->iters;
	size_t size = plan->size;
	bool inject = rb->params->inject && size <= rb->inject_size;
	struct rb_op *tx = &rb->tx_ops[0], *rx = &rb->rx_ops[0];
	int ret;

	ret = rb_ctrl_post_recv(rb, RB_CTRL_READY);
	if (!ret)
		ret = rb_ctrl_wait_recv(rb, RB_CTRL_READY, size);
	if (!ret)
		ret = rb_post_recv(rb, rx, rb->rx_buf, size, rb->data_desc,
				   rb_data_tag(1, 0));
	for (uint32_t it = 0; !ret && it < total; it++) {
		uint64_t t0;

		if (rb->params->verify)
			ft_pattern_fill(rb->tx_buf, size, ft_pattern_seed(0, it, 0, size));
		t0 = ft_now_ns();
		ret = inject ? rb_post_inject(rb, rb->tx_buf, size, rb_data_tag(0, 0)) :
			       rb_post_send(rb, tx, rb->tx_buf, size, rb->data_desc,
					    rb_data_tag(0, 0));
		if (!ret)
			ret = rb_wait_op(rb, rx, "the pong");
		if (ret)
			break;
		if (it >= plan->warmup)
			rb->samples[it - plan->warmup] = ft_now_ns() - t0;
		if (rb->params->verify)
			ret = ft_pattern_check(rb->rx_buf, size,
					       ft_pattern_seed(1, it, 0, size), 0, rb->what);
		if (!ret && it + 1 < total)
			ret = rb_post_recv(rb, rx, rb->rx_buf, size, rb->data_desc,
					   rb_data_tag(1, 0));
		if (!ret && !inject)
			ret = rb_wait_op(rb, tx, "the ping's send completion");
	}
	if (!ret)
		rb_print_lat(rb, plan);
	return ret;
}

/* The server of a lat run: answers each ping, its next receive posted first. */
static int rb_lat_server(struct rb *rb, const struct rb_plan *plan)
{
	uint32_t total = plan->warmup + plan->iters;
	size_t size = plan->size;
	bool inject = rb->params->inject && size <= rb->inject_size;
	struct rb_op *tx = &rb->tx_ops[0], *rx = &rb->rx_ops[0];
	int ret;

	ret = rb_post_recv(rb, rx, rb->rx_buf, size, rb->data_desc, rb_data_tag(0, 0));
	if (!ret)
		ret = rb_ctrl_send(rb, RB_CTRL_READY, size);
	for (uint32_t it = 0; !ret && it < total; it++) {
		if (rb->params->verify)
			ft_pattern_fill(rb->tx_buf, size, ft_pattern_seed(1, it, 0, size));
		ret = rb_wait_op(rb, rx, "the ping");
		if (!ret && rb->params->verify)
			ret = ft_pattern_check(rb->rx_buf, size,
					       ft_pattern_seed(0, it, 0, size), 0, rb->what);
		if (!ret && it + 1 < total)
			ret = rb_post_recv(rb, rx, rb->rx_buf, size, rb->data_desc,
					   rb_data_tag(0, 0));
		if (!ret)
			ret = inject ? rb_post_inject(rb, rb->tx_buf, size,
						      rb_data_tag(1, 0)) :
				       rb_post_send(rb, tx, rb->tx_buf, size,
						    rb->data_desc, rb_data_tag(1, 0));
		if (!ret && !inject)
			ret = rb_wait_op(rb, tx, "the pong's send completion");
	}
	return ret;
}

/* Posts the receives of window w (dir: the direction they come from). */
static int rb_post_window_recvs(struct rb *rb, const struct rb_plan *plan,
				unsigned dir)
{
	int ret = 0;

	for (uint32_t s = 0; !ret && s < plan->window; s++) {
		if (rb->params->verify)
			memset(rb_slot(rb, rb->rx_buf, s, plan->size), 0, plan->size);
		ret = rb_post_recv(rb, &rb->rx_ops[s],
				   rb_slot(rb, rb->rx_buf, s, plan->size), plan->size,
				   rb->data_desc, rb_data_tag(dir, s));
	}
	return ret;
}

/* Posts the sends of window w in this side's direction. */
static int rb_post_window_sends(struct rb *rb, const struct rb_plan *plan,
				uint64_t w)
{
	unsigned dir = rb_my_dir(rb);
	int ret = 0;

	for (uint32_t s = 0; !ret && s < plan->window; s++) {
		uint8_t *buf = rb_slot(rb, rb->tx_buf, s, plan->size);

		if (rb->params->verify)
			ft_pattern_fill(buf, plan->size, ft_pattern_seed(dir, w, s, plan->size));
		ret = rb_post_send(rb, &rb->tx_ops[s], buf, plan->size, rb->data_desc,
				   rb_data_tag(dir, s));
	}
	return ret;
}

/* Checks the payloads of window w, received from the peer's direction. */
static int rb_check_window(struct rb *rb, const struct rb_plan *plan, uint64_t w)
{
	unsigned dir = !rb_my_dir(rb);
	int ret = 0;

	for (uint32_t s = 0; !ret && s < plan->window; s++)
		ret = ft_pattern_check(rb_slot(rb, rb->rx_buf, s, plan->size), plan->size,
				       ft_pattern_seed(dir, w, s, plan->size), 0, rb->what);
	return ret;
}

/* Data completions counted when a plan starts; window w ends at +(w+1)W. */
struct rb_base {
	uint64_t	tx;
	uint64_t	rx;
};

/* Waits until window w's sends (tx) and/or receives (rx) all completed. */
static int rb_wait_window(struct rb *rb, const struct rb_plan *plan,
			  const struct rb_base *base, uint64_t w, bool tx, bool rx)
{
	uint64_t n = (w + 1) * plan->window;
	int ret = 0;

	if (tx)
		ret = rb_wait(rb, &rb->tx_done, base->tx + n, NULL,
			      "the window's send completions");
	if (!ret && rx)
		ret = rb_wait(rb, &rb->rx_done, base->rx + n, NULL,
			      "the window's messages");
	return ret;
}

/*
 * bw and rate, client: sends the windows. The server posts a window's
 * receives before it acknowledges the previous window (the first before
 * READY), so every message finds its receive posted. Each repetition is
 * timed from its first send to the ACK of its last window.
 */
static int rb_bw_client(struct rb *rb, const struct rb_plan *plan)
{
	uint64_t total = plan->warmup + (uint64_t) plan->reps * plan->iters;
	struct rb_base base = { rb->tx_done, rb->rx_done };
	uint64_t t0 = 0;
	int ret;

	ret = rb_ctrl_post_recv(rb, RB_CTRL_READY);
	if (!ret)
		ret = rb_ctrl_wait_recv(rb, RB_CTRL_READY, plan->size);
	for (uint64_t w = 0; !ret && w < total; w++) {
		bool timed = w >= plan->warmup;
		uint64_t k = w - plan->warmup;

		if (timed && k % plan->iters == 0)
			t0 = ft_now_ns();
		ret = rb_ctrl_post_recv(rb, RB_CTRL_ACK);
		if (!ret)
			ret = rb_post_window_sends(rb, plan, w);
		if (!ret)
			ret = rb_wait_window(rb, plan, &base, w, true, false);
		if (!ret)
			ret = rb_ctrl_wait_recv(rb, RB_CTRL_ACK, w);
		if (!ret && timed && (k + 1) % plan->iters == 0)
			rb->samples[k / plan->iters] = ft_now_ns() - t0;
	}
	if (!ret)
		rb_print_bw(rb, plan);
	return ret;
}

/* bw and rate, server: receives each window, posts the next, acknowledges. */
static int rb_bw_server(struct rb *rb, const struct rb_plan *plan)
{
	uint64_t total = plan->warmup + (uint64_t) plan->reps * plan->iters;
	struct rb_base base = { rb->tx_done, rb->rx_done };
	int ret;

	ret = rb_post_window_recvs(rb, plan, 0);
	if (!ret)
		ret = rb_ctrl_send(rb, RB_CTRL_READY, plan->size);
	for (uint64_t w = 0; !ret && w < total; w++) {
		ret = rb_wait_window(rb, plan, &base, w, false, true);
		if (!ret && rb->params->verify)
			ret = rb_check_window(rb, plan, w);
		if (!ret && w + 1 < total)
			ret = rb_post_window_recvs(rb, plan, 0);
		if (!ret)
			ret = rb_ctrl_send(rb, RB_CTRL_ACK, w);
	}
	return ret;
}

/*
 * bibw, both sides: each sends a window and receives the peer's, posts
 * its next window's receives, then both exchange ACKs before the next
 * window. The client times the repetitions.
 */
static int rb_bibw(struct rb *rb, const struct rb_plan *plan)
{
	uint64_t total = plan->warmup + (uint64_t) plan->reps * plan->iters;
	struct rb_base base = { rb->tx_done, rb->rx_done };
	bool client = rb->opts.host != NULL;
	unsigned peer_dir = !rb_my_dir(rb);
	uint64_t t0 = 0;
	int ret;

	ret = rb_post_window_recvs(rb, plan, peer_dir);
	if (ret)
		return ret;
	if (client) {
		ret = rb_ctrl_post_recv(rb, RB_CTRL_READY);
		if (!ret)
			ret = rb_ctrl_wait_recv(rb, RB_CTRL_READY, plan->size);
		if (!ret)
			ret = rb_ctrl_send(rb, RB_CTRL_GO, plan->size);
	} else {
		ret = rb_ctrl_post_recv(rb, RB_CTRL_GO);
		if (!ret)
			ret = rb_ctrl_send(rb, RB_CTRL_READY, plan->size);
		if (!ret)
			ret = rb_ctrl_wait_recv(rb, RB_CTRL_GO, plan->size);
	}
	for (uint64_t w = 0; !ret && w < total; w++) {
		bool timed = client && w >= plan->warmup;
		uint64_t k = w - plan->warmup;

		if (timed && k % plan->iters == 0)
			t0 = ft_now_ns();
		ret = rb_ctrl_post_recv(rb, RB_CTRL_ACK);
		if (!ret)
			ret = rb_post_window_sends(rb, plan, w);
		if (!ret)
			ret = rb_wait_window(rb, plan, &base, w, true, true);
		if (!ret && rb->params->verify)
			ret = rb_check_window(rb, plan, w);
		if (!ret && w + 1 < total)
			ret = rb_post_window_recvs(rb, plan, peer_dir);
		if (!ret)
			ret = rb_ctrl_send(rb, RB_CTRL_ACK, w);
		if (!ret)
			ret = rb_ctrl_wait_recv(rb, RB_CTRL_ACK, w);
		if (!ret && timed && (k + 1) % plan->iters == 0)
			rb->samples[k / plan->iters] = ft_now_ns() - t0;
	}
	if (!ret && client)
		rb_print_bw(rb, plan);
	return ret;
}

/* Runs one plan on this side. */
static int rb_run_plan(struct rb *rb, const struct rb_plan *plan)
{
	bool client = rb->opts.host != NULL;

	switch (plan->test) {
	case RB_LAT:
		return client ? rb_lat_client(rb, plan) : rb_lat_server(rb, plan);
	case RB_BW:
	case RB_RATE:
		return client ? rb_bw_client(rb, plan) : rb_bw_server(rb, plan);
	case RB_BIBW:
		return rb_bibw(rb, plan);
	default:
		return ft_fail("unknown test %d", (int) plan->test);
	}
}

/* Makes room for n samples (outside any timed part). */
static int rb_reserve_samples(struct rb *rb, size_t n)
{
	uint64_t *s;

	if (n <= rb->samples_len)
		return 0;
	s = realloc(rb->samples, n * sizeof(*s));
	if (!s)
		return -FI_ENOMEM;
	rb->samples = s;
	rb->samples_len = n;
	return 0;
}

/* Runs every test and size, in the client's order, on both sides. */
int rb_run(struct rb *rb)
{
	const struct rb_params *p = rb->params;
	bool client = rb->opts.host != NULL;
	int ret = 0;

	for (uint32_t i = 0; !ret && i < p->ntests; i++) {
		enum rb_test t = (enum rb_test) p->tests[i];
		uint64_t sizes[RB_SIZES_MAX];
		size_t n = rb_sizes(p, t, sizes);

		if (client)
			rb_print_header(rb, t);
		for (size_t j = 0; !ret && j < n; j++) {
			struct rb_plan plan;

			rb_plan(rb, t, sizes[j], &plan);
			snprintf(rb->what_buf, sizeof(rb->what_buf), "%s size %zu",
				 rb_tests[t].name, plan.size);
			rb->what = rb->what_buf;
			if (plan.skip) {
				if (client)
					rb_print_skip(rb, &plan);
				continue;
			}
			ret = rb_reserve_samples(rb, t == RB_LAT ? plan.iters : plan.reps);
			if (!ret)
				ret = rb_run_plan(rb, &plan);
			if (ret)
				fprintf(stderr, RB_NAME ": %s failed (window %u, %u "
					"windows or iterations, %u reps)\n", rb->what,
					plan.window, plan.iters, plan.reps);
		}
		fflush(stdout);
	}
	rb->what = "finish";
	return ret;
}
