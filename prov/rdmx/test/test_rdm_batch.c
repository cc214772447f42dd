/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx unit tests: sends posted in a row go to the device in batches
 * (rdmx_send_more, FI_RDMX_TX_BATCH): a lone send and a short burst
 * leave at once, a long run waits for each batch's last send or the next
 * progress pass, and nothing is lost or reordered on the way.
 */
#include "rdmx_test_pair.h"
#include "fake_ibv.h"
#include "rdmx_ep.h"
#include "rdmx_tx.h"

#define RUN	100

static struct fake_ibv_dev_cfg cfg;

static void batch_setup(void)
{
	fake_ibv_cfg(&cfg, FAKE_IBV_IB, "mlx5_0", 1);
	fake_ibv_install(&cfg, 1);
}

TestSuite(rdm_batch, .init = batch_setup);

/* The first 32 sends in a row go at once; then each 32nd sends its batch. */
Test(rdm_batch, a_long_run_waits_for_each_batch_s_last_send)
{
	struct rdmx_ep ep;

	memset(&ep, 0, sizeof(ep));
	cr_assert_eq(g_rdmx_params.tx_batch, 32);
	for (size_t i = 1; i <= RUN; i++)
		cr_assert_eq(rdmx_send_more(&ep, 0), i > 32 && i % 32, "send %zu of a run", i);
	cr_assert(rdmx_send_more(&ep, FI_MORE), "FI_MORE always waits");
	cr_assert(rdmx_send_holding(&ep), "held by FI_MORE");
	g_rdmx_params.tx_batch = 0;
	for (size_t i = 1; i <= RUN; i++)
		cr_assert_not(rdmx_send_more(&ep, 0), "FI_RDMX_TX_BATCH=0 held send %zu", i);
	cr_assert(rdmx_send_more(&ep, FI_MORE));
}

#define TAG	7

/*
 * A connected pair over swsrd (the fake verbs device) with n receives of
 * in posted at endpoint 1; returns endpoint 0's rdmx_ep.
 */
static struct rdmx_ep *batch_open(struct rdmx_test_pair *tp, uint8_t (*in)[8], size_t n)
{
	rdmx_test_pair_open(tp, "verbs");
	rdmx_test_pair_transfer(tp, 8, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(fi_trecv(tp->ep[1], in[i], sizeof(in[i]), NULL, tp->peer[1], TAG,
				      0, in[i]), 0);
	return rdmx_ep(tp->ep[0]);
}

/*
 * The n messages of out arrive in order as in; then the sends complete,
 * but for the first `read`, which endpoint 0 already took.
 */
static void batch_arrive(struct rdmx_test_pair *tp, uint8_t (*in)[8], uint8_t (*out)[8],
			 size_t n, size_t read)
{
	struct fi_cq_tagged_entry comp;

	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(rdmx_test_pair_wait(tp, 1, &comp, NULL), 0);
		cr_assert_eq(comp.op_context, in[i], "message %zu out of order", i);
		cr_assert_eq(memcmp(in[i], out[i], sizeof(in[i])), 0);
	}
	for (size_t i = read; i < n; i++)
		cr_assert_eq(rdmx_test_pair_wait(tp, 0, &comp, NULL), 0);
}

/* Posts the n messages of out (each its index + 1) with flags. */
static void batch_post(struct rdmx_test_pair *tp, uint8_t (*out)[8], size_t n, uint64_t flags)
{
	for (size_t i = 0; i < n; i++) {
		struct iovec iov = { out[i], sizeof(out[i]) };
		struct fi_msg_tagged msg = {
			.msg_iov = &iov, .iov_count = 1, .addr = tp->peer[0],
			.tag = TAG, .context = out[i],
		};

		memset(out[i], (int) i + 1, sizeof(out[i]));
		cr_assert_eq(fi_tsendmsg(tp->ep[0], &msg, flags), 0, "send %zu", i);
	}
}

/*
 * A run of sends posted with no call between arrives whole and in order
 * once the application reads its completion queue, and a progress pass
 * starts the count again, so that the next lone send leaves at once.
 */
Test(rdm_batch, a_run_arrives_whole_after_a_progress_pass)
{
	static uint8_t in[RUN][8], out[RUN][8];
	struct rdmx_test_pair tp;
	struct rdmx_ep *ep = batch_open(&tp, in, RUN);

	for (size_t i = 0; i < RUN; i++) {
		memset(out[i], (int) i, sizeof(out[i]));
		cr_assert_eq(fi_tsend(tp.ep[0], out[i], sizeof(out[i]), NULL, tp.peer[0], TAG,
				      out[i]), 0, "send %zu", i);
	}
	cr_assert_eq(ep->tx_run, RUN);
	batch_arrive(&tp, in, out, RUN, 0);
	cr_assert_eq(ep->tx_run, 0, "a progress pass starts the count again");
	cr_assert_not(rdmx_send_more(ep, 0), "a lone send after it leaves at once");
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * Posts n sends with FI_INJECT_COMPLETE and flags, which the endpoint
 * holds: a read that finds their completions ready still progresses, and
 * lets them go.
 */
static void read_lets_held_go(size_t n, uint64_t flags)
{
	static uint8_t in[40][8], out[40][8];
	struct rdmx_test_pair tp;
	struct fi_cq_tagged_entry comp;
	struct rdmx_ep *ep = batch_open(&tp, in, n);

	batch_post(&tp, out, n, FI_COMPLETION | FI_INJECT_COMPLETE | flags);
	cr_assert(rdmx_send_holding(ep));
	cr_assert_eq(fi_cq_read(tp.cq[0], &comp, 1), 1);
	cr_assert_not(rdmx_send_holding(ep), "a read with entries ready did not progress");
	batch_arrive(&tp, in, out, n, 1);
	rdmx_test_pair_close(&tp);
	cr_assert_eq(fake_ibv_live(), 0);
}

/*
 * Completions written at posting (FI_INJECT_COMPLETE) keep the queue from
 * ever being empty: a read that finds them still lets the held sends go,
 * so an application that reads each completion as it comes and then
 * stops does not strand the last batch.
 */
Test(rdm_batch, a_read_with_entries_ready_lets_held_sends_go)
{
	read_lets_held_go(40, 0);
}

/* The same for two sends held with FI_MORE. */
Test(rdm_batch, a_send_with_fi_more_lets_a_read_with_entries_ready_progress)
{
	read_lets_held_go(2, FI_MORE);
}

#define QPN	0x4242
#define MEDIUM	(2 * 4096)
#define BATCH	4

/*
 * A held send of several packets (a medium message) is held whole: none
 * of its segments reaches the device before the batch's last send, which
 * sends the batch, and every message arrives whole and in order. (Batches
 * of 4, so that the window, 16 packets at first, holds them all.)
 */
Test(rdm_batch, a_held_send_s_segments_wait_for_the_batch_s_last)
{
	static uint8_t in[2 * BATCH][MEDIUM], out[2 * BATCH][MEDIUM];
	struct rdmx_test_pair tp;
	struct fi_cq_tagged_entry comp;
	size_t held;

	g_rdmx_params.tx_batch = BATCH;
	fake_ibv_next_qpn(QPN);
	rdmx_test_pair_open(&tp, "verbs");
	rdmx_test_pair_transfer(&tp, 8, 0);
	for (size_t i = 0; i < 2 * BATCH; i++) {
		cr_assert_eq(fi_trecv(tp.ep[1], in[i], sizeof(in[i]), NULL, tp.peer[1], TAG, 0,
				      in[i]), 0);
		memset(out[i], (int) i + 1, sizeof(out[i]));
	}
	fake_ibv_hold(QPN);
	for (size_t i = 0; i < BATCH; i++)
		cr_assert_eq(fi_tsend(tp.ep[0], out[i], 8, NULL, tp.peer[0], TAG, out[i]), 0);
	held = fake_ibv_held();
	cr_assert_eq(held, BATCH, "the first sends went at once");
	for (size_t i = BATCH; i < 2 * BATCH - 1; i++) {
		cr_assert_eq(fi_tsend(tp.ep[0], out[i], MEDIUM, NULL, tp.peer[0], TAG, out[i]),
			     0);
		cr_assert_eq(fake_ibv_held(), held, "held send %zu left before its batch", i);
	}
	cr_assert_eq(fi_tsend(tp.ep[0], out[2 * BATCH - 1], MEDIUM, NULL, tp.peer[0], TAG,
			      out[2 * BATCH - 1]), 0);
	cr_assert_geq(fake_ibv_held(), held + BATCH * 3, "the batch's last send sent it");
	fake_ibv_release(0);
	for (size_t i = 0; i < 2 * BATCH; i++) {
		size_t len = i < BATCH ? 8 : MEDIUM;

		cr_assert_eq(rdmx_test_pair_wait(&tp, 1, &comp, NULL), 0);
		cr_assert_eq(comp.op_context, in[i], "message %zu out of order", i);
		cr_assert_eq(comp.len, len);
		cr_assert_eq(memcmp(in[i], out[i], len), 0);
	}
	for (size_t i = 0; i < 2 * BATCH; i++)
		cr_assert_eq(rdmx_test_pair_wait(&tp, 0, &comp, NULL), 0);
	rdmx_test_pair_close(&tp);
	g_rdmx_params.tx_batch = 32;
	cr_assert_eq(fake_ibv_live(), 0);
}
