/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * post_send_segs on the udp device: one post that swsrd carries as many
 * packets, each the header with its offset raised and its slice of the
 * payload, and one completion for them all: when every packet is done,
 * with what failed (RNR only if nothing worse, and where the first
 * failed packet starts), only if the whole post fits the send queue,
 * and every send given back after; the same under drops, duplicates,
 * reordering, refusals and resets.
 */
#include <endian.h>

#include "rdmx_clock.h"
#include "rdmx_dgram.h"
#include "rdmx_test_udp.h"

#define HDR		24
#define OFF_AT		16
#define SEG		90
#define BASE		1000

static struct rdmx_test_udp_pair up;
static uint8_t hdr[HDR];
static uint8_t payload[RDMX_DEV_SEGS_MAX * SEG];

/* The header template (its offset BASE) and the payload posts take from. */
static void fill(void)
{
	uint64_t base = htole64(BASE);

	for (size_t i = 0; i < sizeof(hdr); i++)
		hdr[i] = (uint8_t) (0xa0 + i);
	memcpy(hdr + OFF_AT, &base, sizeof(base));
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t) (i * 7 + i / 251);
}

static void setup(void)
{
	rdmx_test_udp_pair_open(&up, 1);
	fill();
}

static void teardown(void)
{
	rdmx_test_udp_pair_close(&up);
}

/* A's sends in use at its device: none once every post completed. */
static size_t a_sends_in_use(void)
{
	return rdmx_container_of(up.a, struct rdmx_dgram, dev)->send_pool.in_use;
}

TestSuite(dev_udp_segs, .init = setup, .fini = teardown);

/* Posts len payload bytes (in two pieces) as segments of SEG bytes. */
static int post_segs(size_t len, uint64_t wr_id, unsigned flags)
{
	struct iovec iov[3] = {
		{ hdr, HDR }, { payload, len / 3 }, { payload + len / 3, len - len / 3 },
	};

	return up.a->ops->post_send_segs(up.a, up.a_to_b, iov, 3, SEG, OFF_AT, wr_id, flags);
}

/* The bytes of what B received (cqe): in its buffer, or the device's. */
static const uint8_t *b_packet(const struct rdmx_dev_cqe *cqe)
{
	return cqe->data ? cqe->data : rdmx_test_udp_buf(&up, cqe->wr_id);
}

/*
 * Checks pkt, a packet of pkt_len bytes, as a segment of a len-byte
 * post: its header the template's but for its offset (and its first from
 * bytes), its payload that offset's slice. Returns the offset.
 */
static size_t check_seg(const uint8_t *pkt, size_t pkt_len, size_t len, size_t from)
{
	uint64_t at;
	size_t off, seg;

	cr_assert_geq(pkt_len, HDR);
	memcpy(&at, pkt + OFF_AT, sizeof(at));
	off = le64toh(at) - BASE;
	cr_assert_eq(off % SEG, 0, "offset %zu is not a segment's", off);
	cr_assert_lt(off, len);
	seg = RDMX_MIN((size_t) SEG, len - off);
	cr_assert_eq(pkt_len, HDR + seg, "segment at %zu: %zu bytes", off, pkt_len);
	cr_assert_eq(memcmp(pkt + from, hdr + from, OFF_AT - from), 0);
	cr_assert_eq(memcmp(pkt + OFF_AT + 8, hdr + OFF_AT + 8, HDR - OFF_AT - 8), 0);
	cr_assert_eq(memcmp(pkt + HDR, payload + off, seg), 0, "segment at %zu", off);
	return off;
}

/*
 * Polls B once: each packet must be a segment of a len-byte post
 * (check_seg); seen[] counts each segment.
 */
static void poll_segs(size_t len, unsigned *seen)
{
	struct rdmx_dev_cqe cqe[16];
	int n = up.b->ops->poll_cq(up.b, cqe, 16);

	for (int k = 0; k < n; k++) {
		cr_assert_eq(cqe[k].op, RDMX_DEV_OP_RECV);
		seen[check_seg(b_packet(&cqe[k]), cqe[k].len, len, 0) / SEG]++;
		up.received++;
	}
}

/* Polls A once into done[] (at most max completions in all). */
static size_t poll_a(struct rdmx_dev_cqe *done, size_t have, size_t max)
{
	struct rdmx_dev_cqe cqe[16];
	int n = up.a->ops->poll_cq(up.a, cqe, 16);

	for (int k = 0; k < n; k++) {
		cr_assert_lt(have, max, "more completions than posts");
		done[have++] = cqe[k];
	}
	return have;
}

Test(dev_udp_segs, a_post_arrives_as_its_segments_and_completes_once)
{
	size_t len = (RDMX_DEV_SEGS_MAX - 1) * SEG + 37;
	unsigned seen[RDMX_DEV_SEGS_MAX] = { 0 };
	struct rdmx_dev_cqe done[2];
	size_t got = 0;

	cr_assert_eq(post_segs(len, 77, RDMX_DEV_SEND_AWAITED), 0);
	cr_assert_eq(up.a->stats.tx_segs, RDMX_DEV_SEGS_MAX);
	/* Nothing acknowledged yet (B not polled): no completion. */
	for (int polls = 0; polls < 1000; polls++)
		got = poll_a(done, got, 1);
	cr_assert_eq(got, 0, "a post completed before its packets were received");
	for (int polls = 0; (up.received < RDMX_DEV_SEGS_MAX || !got) && polls < 200000; polls++) {
		got = poll_a(done, got, 1);
		poll_segs(len, seen);
	}
	for (int polls = 0; polls < 1000; polls++)
		got = poll_a(done, got, 1);
	for (size_t i = 0; i < RDMX_DEV_SEGS_MAX; i++)
		cr_assert_eq(seen[i], 1, "segment %zu arrived %u times", i, seen[i]);
	cr_assert_eq(got, 1);
	cr_assert_eq(done[0].op, RDMX_DEV_OP_SEND);
	cr_assert_eq(done[0].wr_id, 77);
	cr_assert_eq(done[0].status, RDMX_DEV_OK);
	cr_assert_eq(a_sends_in_use(), 0);
}

/*
 * B has buffers for the first 5 packets only and never posts more: the
 * rest are refused until swsrd gives them up, and the post completes
 * once, RNR, its len where the first refused packet starts.
 */
Test(dev_udp_segs, a_post_refused_part_way_says_where)
{
	struct rdmx_dgram *b = rdmx_container_of(up.b, struct rdmx_dgram, dev);
	struct rdmx_dgram_buf buf;
	unsigned seen[RDMX_DEV_SEGS_MAX] = { 0 };
	struct rdmx_dev_cqe done[2];
	size_t got = 0;
	uint64_t deadline = rdmx_clock_ns() + 10000000000ULL;

	while (b->rq_cnt > 5)
		cr_assert(rdmx_dgram_buf_take(b, &buf));
	cr_assert_eq(post_segs(12 * SEG, 9, 0), 0);
	while (!got && rdmx_clock_ns() < deadline) {
		got = poll_a(done, got, 1);
		poll_segs(12 * SEG, seen);
	}
	cr_assert_eq(got, 1);
	cr_assert_eq(done[0].wr_id, 9);
	cr_assert_eq(done[0].status, RDMX_DEV_RNR);
	cr_assert_eq(done[0].len, 5 * SEG, "the first refused packet at %u, not %u",
		     done[0].len, 5 * SEG);
	cr_assert_eq(up.received, 5);
	cr_assert_geq(up.b->stats.rnr_sent, 7);
	cr_assert_eq(a_sends_in_use(), 0);
}

Test(dev_udp_segs, a_post_the_send_queue_cannot_hold_whole_is_refused)
{
	size_t singles = RDMX_TEST_UDP_BUFS - RDMX_DEV_SEGS_MAX + 1;

	rdmx_test_udp_post(&up, singles);
	cr_assert_eq(post_segs(RDMX_DEV_SEGS_MAX * SEG, 1, 0), -FI_EAGAIN);
	cr_assert_eq(up.a->stats.tx_segs, 0);
	rdmx_test_udp_poll_until(&up, singles, singles);
	cr_assert_eq(up.sent_ok, singles);
	cr_assert_eq(up.received, singles);
	cr_assert_eq(post_segs(RDMX_DEV_SEGS_MAX * SEG, 1, 0), 0);
}

/*
 * A post of pkts packets (held by RDMX_DEV_SEND_MORE) and a reset of its
 * peer, before the packets left or, after a poll of A, with them (those
 * the window takes) in flight: the post completes once, flushed.
 */
static void reset_completes_once_flushed(uint64_t wr_id, size_t pkts, bool in_flight)
{
	struct rdmx_swsrd_peer *peer =
		&rdmx_container_of(up.a_to_b, struct rdmx_dgram_ah, ah)->srd;
	struct rdmx_dev_cqe done[2];
	size_t got = 0;

	cr_assert_eq(post_segs(pkts * SEG, wr_id, RDMX_DEV_SEND_MORE), 0);
	if (in_flight) {
		got = poll_a(done, got, 1);
		cr_assert_eq(peer->snd_nxt - peer->snd_una,
			     RDMX_MIN(pkts, rdmx_srd_cc_window(&peer->cc)));
	}
	up.a->ops->ah_reset(up.a, up.a_to_b);
	for (int polls = 0; polls < 1000; polls++)
		got = poll_a(done, got, 1);
	cr_assert_eq(got, 1);
	cr_assert_eq(done[0].wr_id, wr_id);
	cr_assert_eq(done[0].status, RDMX_DEV_FLUSHED);
	cr_assert_eq(a_sends_in_use(), 0);
}

Test(dev_udp_segs, a_post_to_a_reset_peer_completes_once_flushed)
{
	reset_completes_once_flushed(5, 10, false);
}

Test(dev_udp_segs, a_post_in_flight_at_a_reset_completes_once_flushed)
{
	reset_completes_once_flushed(6, 10, true);
}

/* More packets than a new peer's window: some in flight, the rest waiting. */
Test(dev_udp_segs, a_post_part_in_flight_at_a_reset_completes_once_flushed)
{
	struct rdmx_swsrd_peer *peer =
		&rdmx_container_of(up.a_to_b, struct rdmx_dgram_ah, ah)->srd;

	cr_assert_lt(rdmx_srd_cc_window(&peer->cc), RDMX_DEV_SEGS_MAX);
	reset_completes_once_flushed(7, RDMX_DEV_SEGS_MAX, true);
}

Test(dev_udp_segs, what_cannot_be_cut_as_asked_is_refused)
{
	struct iovec iov[2] = { { hdr, HDR }, { payload, 10 * SEG } };
	struct iovec none[1] = { { hdr, HDR } };
	static uint8_t big[RDMX_DEV_SEG_HDR_MAX + 8];
	struct iovec big_hdr[2] = { { big, sizeof(big) }, { payload, SEG } };
	struct rdmx_dev *a = up.a;
	size_t mtu = a->caps.mtu;

	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, iov, 2, 0, OFF_AT, 1, 0), -FI_EINVAL,
		     "segments of no bytes");
	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, iov, 2, SEG, 12, 1, 0), -FI_EINVAL,
		     "an offset not 8-byte aligned");
	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, iov, 2, SEG, HDR, 1, 0), -FI_EINVAL,
		     "an offset past the header");
	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, big_hdr, 2, SEG, 0, 1, 0), -FI_EINVAL,
		     "a header longer than RDMX_DEV_SEG_HDR_MAX");
	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, iov, 2, 9, OFF_AT, 1, 0), -FI_EINVAL,
		     "more than RDMX_DEV_SEGS_MAX segments");
	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, iov, 2, mtu - HDR + 1, OFF_AT, 1, 0),
		     -FI_EINVAL, "a packet longer than the MTU");
	cr_assert_eq(a->ops->post_send_segs(a, up.a_to_b, none, 1, SEG, OFF_AT, 1, 0), -FI_EINVAL,
		     "no payload");
	cr_assert_eq(a->stats.tx_segs, 0);
}

/*
 * A post's last packet, shorter, queued before a post of whole segments
 * to the same peer, leaves at the end of their run (rdmx_udp_gso.h), and
 * the device tells swsrd so: its slot waits for three acked packets past
 * the three that went before it.
 */
Test(dev_udp_segs, a_shorter_last_packet_moved_behind_the_next_post_is_told)
{
	struct rdmx_swsrd_peer *peer =
		&rdmx_container_of(up.a_to_b, struct rdmx_dgram_ah, ah)->srd;
	const struct rdmx_swsrd_slot *moved = NULL;

	cr_assert_eq(post_segs(2 * SEG + 37, 1, RDMX_DEV_SEND_MORE), 0);
	cr_assert_eq(post_segs(3 * SEG, 2, 0), 0);
	for (uint32_t psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		const struct rdmx_swsrd_slot *slot = &peer->slots[psn & (peer->slot_cnt - 1)];

		/* The first post's third packet, of 37 bytes. */
		if (slot->in_use && slot->send && slot->send->wr_id == 1 && slot->pkt == 2)
			moved = slot;
		else
			cr_assert_eq(slot->trail, 0, "psn %u was not moved", psn);
	}
	cr_assert_not_null(moved, "the short packet left");
	cr_assert_eq(moved->trail, 3, "trail %u", moved->trail);
}

/*
 * Under faults: posts of 1 to 32 segments (the last shorter, the payload
 * in 1 to 4 pieces, a quarter held with RDMX_DEV_SEND_MORE) and single
 * posts, over udp dropping 10%, duplicating 5% and reordering 10% of
 * the datagrams each way; in variants B keeps only 8 buffers posted
 * (refusals, posts given up RNR), the peer is reset now and then, A
 * sends by 3 paths. Every post completes exactly once, OK, FLUSHED or
 * RNR, a failed one with len a segment boundary inside it; B receives
 * only whole, correct segments; A never counts more packets out than its
 * send queue holds, and ends with none and every send back in its pool.
 */
#define STRESS_POSTS	3000
#define STRESS_SINGLE	200	/* payload bytes of a single post */

static struct stress {
	unsigned	done[STRESS_POSTS];
	size_t		len[STRESS_POSTS];
	enum rdmx_dev_status how[STRESS_POSTS];
	uint32_t	seen[STRESS_POSTS];	/* segments B received */
	bool		single[STRESS_POSTS];
	unsigned	status[RDMX_DEV_STATUS_MAX];
	bool		hold;			/* B keeps buffers back */
	uint64_t	held[RDMX_TEST_UDP_BUFS];
	size_t		held_cnt;
} st;

static void stress_open(size_t paths)
{
	fill();
	g_rdmx_params.udp_drop = 10;
	g_rdmx_params.udp_dup = 5;
	g_rdmx_params.udp_reorder = 10;
	g_rdmx_params.udp_seed = 12345;
	rdmx_test_udp_pair_open(&up, paths);
	g_rdmx_params.udp_drop = g_rdmx_params.udp_dup = g_rdmx_params.udp_reorder = 0;
	memset(&st, 0, sizeof(st));
}

/* Checks what B received; its buffers go back, or are held. */
static void stress_poll_b(void)
{
	struct rdmx_dev_cqe cqe[16];
	int n = up.b->ops->poll_cq(up.b, cqe, 16);

	for (int k = 0; k < n; k++) {
		const uint8_t *pkt = b_packet(&cqe[k]);

		cr_assert_eq(cqe[k].op, RDMX_DEV_OP_RECV);
		if (cqe[k].len == STRESS_SINGLE) {
			cr_assert_eq(memcmp(pkt, payload + 5, STRESS_SINGLE), 0, "a single post");
		} else {
			uint64_t id;

			memcpy(&id, pkt, sizeof(id));
			cr_assert_lt(id, STRESS_POSTS);
			st.seen[id] |= 1u << (check_seg(pkt, cqe[k].len, st.len[id], sizeof(id)) /
					      SEG);
		}
		if (cqe[k].data)
			continue;
		if (st.hold)
			st.held[st.held_cnt++] = cqe[k].wr_id;
		else
			rdmx_test_udp_repost(&up, cqe[k].wr_id);
	}
}

/* Takes A's completions; returns how many. */
static size_t stress_poll_a(void)
{
	struct rdmx_dev_cqe cqe[16];
	int n = up.a->ops->poll_cq(up.a, cqe, 16);

	for (int k = 0; k < n; k++) {
		uint64_t id = cqe[k].wr_id;

		cr_assert_eq(cqe[k].op, RDMX_DEV_OP_SEND);
		cr_assert_lt(id, STRESS_POSTS);
		cr_assert_eq(st.done[id]++, 0, "post %lu completed twice", (unsigned long) id);
		cr_assert(cqe[k].status == RDMX_DEV_OK || cqe[k].status == RDMX_DEV_FLUSHED ||
			  cqe[k].status == RDMX_DEV_RNR, "post %lu: status %d",
			  (unsigned long) id, cqe[k].status);
		if (cqe[k].status == RDMX_DEV_OK) {
			cr_assert_eq(cqe[k].len, 0);
		} else {
			cr_assert_lt(cqe[k].len, st.len[id]);
			cr_assert_eq(cqe[k].len % SEG, 0, "len %u", cqe[k].len);
		}
		st.status[cqe[k].status]++;
		st.how[id] = cqe[k].status;
	}
	return (size_t) n;
}

/* Posts post number id as rng draws it; 0 or -FI_EAGAIN. */
static int stress_post(uint64_t rng, uint64_t id)
{
	unsigned flags = (rng >> 8) % 4 ? 0 : RDMX_DEV_SEND_MORE;
	uint8_t tmpl[HDR];	/* hdr, its first 8 bytes the post's number */
	struct iovec iov[5] = { { tmpl, HDR } };
	size_t len, pieces, at = 0;

	memcpy(tmpl, hdr, HDR);
	memcpy(tmpl, &id, sizeof(id));

	if ((rng >> 12) % 5 == 0) {
		iov[0] = (struct iovec) { payload + 5, STRESS_SINGLE };
		st.len[id] = STRESS_SINGLE;
		st.single[id] = true;
		return up.a->ops->post_send(up.a, up.a_to_b, iov, 1, id, flags);
	}
	len = 1 + (rng >> 16) % (RDMX_DEV_SEGS_MAX * SEG);
	pieces = 1 + (rng >> 32) % 4;
	for (size_t p = 0; p < pieces; p++) {
		size_t take = p + 1 == pieces ? len - at :
			      RDMX_MIN(len - at, (size_t) (rng >> (40 + 4 * p)) % 70);

		iov[1 + p] = (struct iovec) { payload + at, take };
		at += take;
	}
	st.len[id] = len;
	return up.a->ops->post_send_segs(up.a, up.a_to_b, iov, 1 + pieces, SEG, OFF_AT, id,
					 flags);
}

static void stress(bool resets, bool refusals, size_t paths)
{
	struct rdmx_dgram *a, *b;
	uint64_t rng = 88172645463325252ULL;
	size_t posted = 0, completed = 0;
	struct rdmx_dgram_buf buf;

	stress_open(paths);
	a = rdmx_container_of(up.a, struct rdmx_dgram, dev);
	b = rdmx_container_of(up.b, struct rdmx_dgram, dev);
	st.hold = refusals;
	while (refusals && b->rq_cnt > 8) {
		cr_assert(rdmx_dgram_buf_take(b, &buf));
		st.held[st.held_cnt++] = buf.wr_id;
	}
	for (int iter = 0; completed < STRESS_POSTS && iter < 5000000; iter++) {
		int ret;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		if (posted < STRESS_POSTS && rng % 3) {
			ret = stress_post(rng, posted);
			cr_assert(ret == 0 || ret == -FI_EAGAIN, "post: %d", ret);
			posted += !ret;
		}
		if (resets && (rng >> 20) % 997 == 0)
			up.a->ops->ah_reset(up.a, up.a_to_b);
		completed += stress_poll_a();
		stress_poll_b();
		for (int r = 0; st.hold && (rng >> 24) % 50 == 0 && r < 8 && st.held_cnt; r++)
			rdmx_test_udp_repost(&up, st.held[--st.held_cnt]);
		cr_assert_leq(a->pkts_out, a->send_pool.count);
	}
	st.hold = false;
	while (st.held_cnt)
		rdmx_test_udp_repost(&up, st.held[--st.held_cnt]);
	for (int polls = 0; polls < 1000; polls++) {
		completed += stress_poll_a();
		stress_poll_b();
	}
	cr_assert_eq(completed, STRESS_POSTS, "%zu of %d posts completed", completed,
		     STRESS_POSTS);
	for (size_t id = 0; id < STRESS_POSTS; id++) {
		size_t segs = (st.len[id] + SEG - 1) / SEG;

		if (st.how[id] == RDMX_DEV_OK && !st.single[id])
			cr_assert_eq(st.seen[id], segs == 32 ? UINT32_MAX : (1u << segs) - 1,
				     "post %zu done with segments missing", id);
	}
	cr_assert_eq(a->send_pool.in_use, 0);
	cr_assert_eq(a->pkts_out, 0);
	cr_assert_gt(up.a->stats.retransmits + up.a->stats.fast_retransmits, 0,
		     "the faults made no resend");
	cr_assert(!refusals || st.status[RDMX_DEV_RNR], "no post was refused");
	cr_assert(!resets || st.status[RDMX_DEV_FLUSHED], "no post was flushed");
}

TestSuite(dev_udp_segs_faults, .fini = teardown, .timeout = 60);

Test(dev_udp_segs_faults, posts_complete_once)
{
	stress(false, false, 1);
}

Test(dev_udp_segs_faults, refused_posts_complete_once)
{
	stress(false, true, 1);
}

Test(dev_udp_segs_faults, posts_at_resets_complete_once)
{
	stress(true, false, 1);
}

Test(dev_udp_segs_faults, refused_posts_at_resets_by_three_paths_complete_once)
{
	stress(true, true, 3);
}
