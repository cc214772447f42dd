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
static struct mmsghdr batch[RDMX_UDP_BATCH];
static struct iovec iov[RDMX_UDP_BATCH][2];
static struct sockaddr_in to[RDMX_UDP_BATCH];
static union rdmx_udp_ctl ctl[RDMX_UDP_BATCH];
static uint8_t hdr[RDMX_UDP_BATCH][16];
static uint8_t data[RDMX_UDP_BATCH][65536];
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

/* Checks packed entry k: datagrams [first, first + segs), segment size. */
static void expect_entry(size_t k, size_t first, size_t segs, unsigned size)
{
	cr_assert_eq(gso.first[k], first, "entry %zu starts at %zu, want %zu", k,
		     gso.first[k], first);
	cr_assert_eq(rdmx_udp_gso_segs(&gso, k), segs, "entry %zu holds %zu, want %zu",
		     k, rdmx_udp_gso_segs(&gso, k), segs);
	cr_assert_eq(seg_size(k), size, "entry %zu: segment size %u, want %u", k,
		     seg_size(k), size);
	cr_assert_eq(gso.msgs[k].msg_hdr.msg_iovlen, 2 * segs);
	for (size_t i = 0; i < segs; i++) {
		cr_assert_eq(gso.msgs[k].msg_hdr.msg_iov[2 * i].iov_base, hdr[first + i]);
		cr_assert_eq(gso.msgs[k].msg_hdr.msg_iov[2 * i + 1].iov_base,
			     data[first + i]);
	}
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

Test(udp_gso, a_shorter_datagram_ends_its_run)
{
	static const size_t lens[] = { 1472, 1472, 700, 1472, 1472 };

	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, queue_lens(lens, 5, 5000)), 2);
	expect_entry(0, 0, 3, 1472);
	expect_entry(1, 3, 2, 1472);
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
