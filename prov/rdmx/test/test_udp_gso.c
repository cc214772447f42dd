/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_udp_gso: packing the udp device's send batch into UDP_SEGMENT
 * runs. A wrong run sends a peer datagrams cut at the wrong places, or
 * to the wrong peer, so every rule of a run is checked, and the last
 * test hands a packed batch to the kernel over loopback and reads back
 * exactly the datagrams that were queued.
 */
#include <errno.h>
#include <unistd.h>
#include <netinet/udp.h>

#include "rdmx_test.h"
#include "rdmx_udp_gso.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif

/* A batch as the udp device queues it: a header and a payload each. */
static struct mmsghdr batch[RDMX_UDP_TX_BATCH];
static struct iovec iov[RDMX_UDP_TX_BATCH][2];
static struct sockaddr_in to[RDMX_UDP_TX_BATCH];
static union rdmx_udp_ctl ctl[RDMX_UDP_TX_BATCH];
static uint8_t hdr[RDMX_UDP_TX_BATCH][16];
static uint8_t data[RDMX_UDP_TX_BATCH][65536];
static struct rdmx_udp_gso gso;

/* Queues datagram i: 16 header bytes and len - 16 payload bytes to port. */
static void queue(size_t i, size_t len, uint16_t port)
{
	memset(hdr[i], (int) i, sizeof(hdr[i]));
	memset(data[i], (int) (0x80 | i), len - sizeof(hdr[i]));
	iov[i][0] = (struct iovec) { hdr[i], sizeof(hdr[i]) };
	iov[i][1] = (struct iovec) { data[i], len - sizeof(hdr[i]) };
	to[i] = rdmx_test_sin("127.0.0.1", port);
	memset(&batch[i], 0, sizeof(batch[i]));
	batch[i].msg_hdr.msg_name = &to[i];
	batch[i].msg_hdr.msg_namelen = sizeof(to[i]);
	batch[i].msg_hdr.msg_iov = iov[i];
	batch[i].msg_hdr.msg_iovlen = 2;
}

/* Gives datagram i a source address control message (wildcard devices). */
static void from(size_t i, const char *ip)
{
	struct msghdr *m = &batch[i].msg_hdr;
	struct cmsghdr *c;
	struct in_pktinfo pi = { 0 };

	inet_pton(AF_INET, ip, &pi.ipi_spec_dst);
	memset(&ctl[i], 0, sizeof(ctl[i]));
	m->msg_control = ctl[i].buf;
	m->msg_controllen = CMSG_SPACE(sizeof(pi));
	c = CMSG_FIRSTHDR(m);
	c->cmsg_level = IPPROTO_IP;
	c->cmsg_type = IP_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
}

/* The UDP_SEGMENT size of packed entry k, or 0 when it has none. */
static unsigned seg_size(size_t k)
{
	struct msghdr *m = &gso.msgs[k].msg_hdr;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT) {
			uint16_t size;

			memcpy(&size, CMSG_DATA(c), sizeof(size));
			return size;
		}
	}
	return 0;
}

/*
 * Checks packed entry k: datagrams [first, first + segs) of the batch (as
 * packing left it), segment size, and its bytes, the headers and payloads
 * one after the other: in one piece for datagrams up to
 * RDMX_UDP_GSO_STAGE_SEG bytes, else the datagrams' own.
 */
static void expect_entry(size_t k, size_t first, size_t segs, unsigned size)
{
	static uint8_t bytes[RDMX_UDP_GSO_BYTES];
	const struct msghdr *m = &gso.msgs[k].msg_hdr;
	size_t len = rdmx_copy_from_iov(bytes, m->msg_iov, m->msg_iovlen);
	const uint8_t *at = bytes;

	cr_assert_eq(gso.first[k], first, "entry %zu starts at %zu, want %zu", k,
		     gso.first[k], first);
	cr_assert_eq(rdmx_udp_gso_segs(&gso, k), segs, "entry %zu holds %zu, want %zu",
		     k, rdmx_udp_gso_segs(&gso, k), segs);
	cr_assert_eq(seg_size(k), size, "entry %zu: segment size %u, want %u", k,
		     seg_size(k), size);
	if (size <= RDMX_UDP_GSO_STAGE_SEG) {
		cr_assert_eq(m->msg_iovlen, 1, "entry %zu: a small run goes as one piece", k);
	} else {
		cr_assert_eq(m->msg_iovlen, 2 * segs);
		cr_assert_eq(m->msg_iov[0].iov_base, batch[first].msg_hdr.msg_iov[0].iov_base);
		cr_assert_eq(m->msg_iov[1].iov_base, batch[first].msg_hdr.msg_iov[1].iov_base);
	}
	for (size_t i = first; i < first + segs; i++) {
		const struct iovec *d = batch[i].msg_hdr.msg_iov;

		cr_assert_eq(memcmp(at, d[0].iov_base, d[0].iov_len), 0, "datagram %zu's header", i);
		cr_assert_eq(memcmp(at + d[0].iov_len, d[1].iov_base, d[1].iov_len), 0,
			     "datagram %zu's payload", i);
		at += d[0].iov_len + d[1].iov_len;
	}
	cr_assert_eq((size_t) (at - bytes), len, "entry %zu: bytes past its datagrams", k);
}

Test(udp_gso, equal_datagrams_to_one_peer_leave_as_one_run)
{
	for (size_t i = 0; i < 10; i++)
		queue(i, 1472, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, 10), 1);
	expect_entry(0, 0, 10, 1472);
	cr_assert_eq(gso.msgs[0].msg_hdr.msg_name, &to[0]);
	cr_assert_eq(gso.msgs[0].msg_hdr.msg_controllen, CMSG_SPACE(sizeof(uint16_t)));
}

/* Queues datagrams of the n lengths to port; returns n. */
static size_t queue_lens(const size_t *lens, size_t n, uint16_t port)
{
	for (size_t i = 0; i < n; i++)
		queue(i, lens[i], port);
	return n;
}

/* Whether packing put datagram queued as `queued` at position at. */
static bool moved_to(size_t queued, size_t at)
{
	return batch[at].msg_hdr.msg_iov == iov[queued];
}

Test(udp_gso, a_shorter_datagram_ends_its_run)
{
	static const size_t lens[] = { 1472, 1472, 700, 200, 200 };

	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, queue_lens(lens, 5, 5000)), 2);
	expect_entry(0, 0, 3, 1472);
	expect_entry(1, 3, 2, 200);
	cr_assert_eq(gso.trails, 0, "nothing moved");
}

/*
 * A shorter datagram (a medium message's last packet) followed by longer
 * ones of its run's size (the next message's) leaves at the end of the
 * run, so that they do not start another: every run costs the kernel
 * about as much as a whole one.
 */
Test(udp_gso, a_shorter_datagram_leaves_at_the_end_of_its_run)
{
	static const size_t lens[] = { 1472, 1472, 700, 1472, 1472 };

	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, queue_lens(lens, 5, 5000)), 1);
	expect_entry(0, 0, 5, 1472);
	cr_assert(moved_to(2, 4));
	cr_assert(moved_to(3, 2));
	cr_assert(moved_to(4, 3));
	cr_assert_eq(gso.trails, 1, "the move is told (swsrd's fast retransmit waits)");
	cr_assert_eq(gso.trail_at[0], 4);
	cr_assert_eq(gso.trail_by[0], 2);
}

/*
 * It moves only as far as its run has room, and only behind datagrams of
 * its run's size and path: the kernel's byte limit leaves 45 datagrams
 * here (44 of 1,472 bytes and it); a datagram to another peer stops it.
 */
Test(udp_gso, a_shorter_datagram_moves_no_further_than_its_run_has_room)
{
	size_t n = 0;

	queue(n++, 1472, 5000);
	queue(n++, 1472, 5000);
	queue(n++, 700, 5000);
	while (n < 53)
		queue(n++, 1472, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, n), 2);
	expect_entry(0, 0, 45, 1472);
	expect_entry(1, 45, 8, 1472);
	cr_assert(moved_to(2, 44));
	cr_assert_eq(gso.trails, 1);
	cr_assert_eq(gso.trail_by[0], 42);

	n = 0;
	queue(n++, 1472, 5000);
	queue(n++, 700, 5000);
	queue(n++, 1472, 5000);
	queue(n++, 1472, 5001);
	queue(n++, 1472, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, n), 3);
	expect_entry(0, 0, 3, 1472);
	cr_assert(moved_to(1, 2));
	cr_assert(moved_to(3, 3), "another peer's datagram stays where it was");
}

Test(udp_gso, a_longer_datagram_starts_a_new_run)
{
	static const size_t lens[] = { 200, 200, 1472, 1472 };

	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, queue_lens(lens, 4, 5000)), 2);
	expect_entry(0, 0, 2, 200);
	expect_entry(1, 2, 2, 1472);
}

Test(udp_gso, another_peer_or_source_address_ends_a_run)
{
	queue(0, 1000, 5000);
	queue(1, 1000, 5001);	/* another port: another peer */
	queue(2, 1000, 5001);
	queue(3, 1000, 5001);
	from(3, "127.0.0.2");	/* same peer, another local address */
	queue(4, 1000, 5001);
	from(4, "127.0.0.2");
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, 5), 3);
	cr_assert_eq(seg_size(0), 0, "a lone datagram must go as it is");
	cr_assert_eq(gso.msgs[0].msg_hdr.msg_iov, iov[0]);
	expect_entry(1, 1, 2, 1000);
	expect_entry(2, 3, 2, 1000);
	/* The source address travels with the run, before UDP_SEGMENT. */
	cr_assert_eq(gso.msgs[2].msg_hdr.msg_controllen,
		     batch[3].msg_hdr.msg_controllen + CMSG_SPACE(sizeof(uint16_t)));
	cr_assert_eq(memcmp(gso.msgs[2].msg_hdr.msg_control, ctl[3].buf,
			    batch[3].msg_hdr.msg_controllen), 0);
}

Test(udp_gso, runs_stay_within_the_kernels_byte_limit)
{
	/* 16 datagrams of 4000 bytes fit in 65,487; the 17th does not. */
	for (size_t i = 0; i < 20; i++)
		queue(i, 4000, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, 20), 2);
	expect_entry(0, 0, 16, 4000);
	expect_entry(1, 16, 4, 4000);
}

Test(udp_gso, datagrams_too_large_to_pair_go_alone)
{
	queue(0, 40000, 5000);
	queue(1, 40000, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, 2), 2);
	cr_assert_eq(seg_size(0), 0);
	cr_assert_eq(seg_size(1), 0);
	cr_assert_eq(gso.first[1], 1);
	cr_assert_eq(gso.first[2], 2);
}

Test(udp_gso, a_full_batch_of_the_largest_staged_datagrams_fits)
{
	for (size_t i = 0; i < RDMX_UDP_TX_BATCH; i++)
		queue(i, RDMX_UDP_GSO_STAGE_SEG, 5000);
	rdmx_udp_gso_pack(&gso, batch, RDMX_UDP_TX_BATCH);
	for (size_t k = 0; k < gso.cnt; k++)
		expect_entry(k, gso.first[k], rdmx_udp_gso_segs(&gso, k),
			     RDMX_UDP_GSO_STAGE_SEG);
	cr_assert_eq(gso.first[gso.cnt], RDMX_UDP_TX_BATCH);
	cr_assert_eq(gso.staged, sizeof(gso.stage));
}

Test(udp_gso, a_full_batch_of_datagrams_of_a_1500_byte_mtu_is_whole_runs)
{
	size_t len = 1500 - 20 - 8;
	size_t run = RDMX_UDP_GSO_BYTES / len;

	for (size_t i = 0; i < RDMX_UDP_TX_BATCH; i++)
		queue(i, len, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, RDMX_UDP_TX_BATCH),
		     RDMX_UDP_TX_BATCH / run);
	for (size_t k = 0; k < gso.cnt; k++)
		expect_entry(k, k * run, run, len);
}

Test(udp_gso, large_datagrams_go_from_where_they_are)
{
	for (size_t i = 0; i < 8; i++)
		queue(i, 9000, 5000);
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, 8), 2);
	expect_entry(0, 0, 7, 9000);
	cr_assert_eq(seg_size(1), 0, "a lone datagram must go as it is");
	cr_assert_eq(gso.msgs[1].msg_hdr.msg_iov, iov[7]);
	cr_assert_eq(gso.staged, 0);
}

Test(udp_gso, the_kernel_delivers_the_queued_datagrams)
{
	static const size_t lens[] = { 1472, 1472, 1472, 900, 300, 300, 1472 };
	size_t n = sizeof(lens) / sizeof(lens[0]), sent = 0;
	uint16_t port, unused;
	int rx = rdmx_test_udp_socket(&port), tx = rdmx_test_udp_socket(&unused);
	uint8_t buf[2048];

	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, queue_lens(lens, n, port)), 3);
	for (size_t k = 0; k < gso.cnt; k++) {
		ssize_t ret = sendmsg(tx, &gso.msgs[k].msg_hdr, 0);

		if (ret < 0 && (errno == EIO || errno == EINVAL))
			cr_skip("UDP_SEGMENT refused on loopback here: %s", strerror(errno));
		cr_assert_gt(ret, 0, "sendmsg: %s", strerror(errno));
		sent += (size_t) ret;
	}
	for (size_t i = 0; i < n; i++) {
		ssize_t len = recv(rx, buf, sizeof(buf), MSG_DONTWAIT);

		cr_assert_eq(len, (ssize_t) lens[i], "datagram %zu: %zd bytes, want %zu",
			     i, len, lens[i]);
		cr_assert_eq(memcmp(buf, hdr[i], sizeof(hdr[i])), 0, "datagram %zu's header", i);
		cr_assert_eq(memcmp(buf + sizeof(hdr[i]), data[i], lens[i] - sizeof(hdr[i])), 0,
			     "datagram %zu's payload", i);
	}
	cr_assert_lt(recv(rx, buf, sizeof(buf), MSG_DONTWAIT), 0, "a datagram too many");
	close(rx);
	close(tx);
}
