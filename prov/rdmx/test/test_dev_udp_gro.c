/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The udp device reading several datagrams at once (UDP_GRO). A plain
 * socket sends it a UDP_SEGMENT run over loopback, which the kernel hands
 * over as one read; the device must hand up each datagram of it once, in
 * order, whatever room its polls have, and count what it cannot take.
 * The device is opened for a datagram endpoint (no swsrd), so a datagram
 * is a bare header and a payload, and every one it takes completes. It
 * turns merged reads on only once it reads a stream: until then, a run
 * reaches it as datagrams the kernel split.
 */
#include <errno.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_dev_udp.h"
#include "rdmx_udp_gro.h"
#include "rdmx_udp_gso.h"
#include "rdmx_wire_srd.h"

#define PAYLOAD_MAX	1024
#define BUFS		64
/* The room the rdm layer leaves before each buffer for the header. */
#define FRONT		64

static struct rdmx_dev *dev;
static struct sockaddr_in dev_addr;
static int tx;
static uint8_t *bufs;

static void setup(void)
{
	union rdmx_udp_addr src, name;
	struct rdmx_dev_attr attr = { .src_addr = &src, .sq_size = 64, .rq_size = BUFS,
				      .unreliable = true };
	int probe = socket(AF_INET, SOCK_DGRAM, 0), on = 0;
	socklen_t on_len = sizeof(on);

	if (rdmx_udp_gro_enable(probe) ||
	    getsockopt(probe, SOL_UDP, UDP_GRO, &on, &on_len))
		cr_skip("UDP_GRO not offered (or not told) by this kernel: %s", strerror(errno));
	close(probe);
	/* A device address is canonical: the whole union, zero past the address. */
	memset(&src, 0, sizeof(src));
	src.sin = rdmx_test_sin("127.0.0.1", 0);
	rdmx_test_use_loopback();
	cr_assert_eq(rdmx_dev_udp_ops.open(&attr, &dev), 0);
	dev->ops->getname(dev, &name);
	memcpy(&dev_addr, &name.sin, sizeof(dev_addr));
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert_geq(tx, 0);
	bufs = calloc(BUFS, FRONT + dev->caps.mtu);
	cr_assert_not_null(bufs);
}

static void teardown(void)
{
	dev->ops->close(dev);
	close(tx);
	free(bufs);
}

TestSuite(dev_udp_gro, .init = setup, .fini = teardown);

/* Posts cnt buffers of len bytes; buffer i's wr_id is i. */
static void post(size_t cnt, size_t len)
{
	for (size_t i = 0; i < cnt; i++)
		cr_assert_eq(dev->ops->post_recv(dev, bufs + i * (FRONT + dev->caps.mtu) + FRONT,
						 len, i), 0);
}

static const uint8_t *buf_of(uint64_t wr_id)
{
	return bufs + wr_id * (FRONT + dev->caps.mtu) + FRONT;
}

/*
 * Sends datagrams of the lens' payloads, datagram k's bytes all k + 1,
 * as one UDP_SEGMENT run (or alone when they cannot be one).
 */
static void send_run(const size_t *lens, size_t n)
{
	static uint8_t payload[RDMX_UDP_BATCH][PAYLOAD_MAX];
	static struct rdmx_wire_srd hdr[RDMX_UDP_BATCH];
	static struct rdmx_udp_gso gso;
	struct rdmx_srd_hdr unrel = { .type = RDMX_SRD_UNREL };
	struct iovec iov[RDMX_UDP_BATCH][2];
	struct mmsghdr batch[RDMX_UDP_BATCH];

	for (size_t k = 0; k < n; k++) {
		rdmx_wire_srd_encode(&hdr[k], &unrel);
		memset(payload[k], (int) (k + 1), lens[k]);
		iov[k][0] = (struct iovec) { &hdr[k], sizeof(hdr[k]) };
		iov[k][1] = (struct iovec) { payload[k], lens[k] };
		batch[k] = (struct mmsghdr) { .msg_hdr = { .msg_name = &dev_addr,
			.msg_namelen = sizeof(dev_addr), .msg_iov = iov[k], .msg_iovlen = 2 } };
	}
	rdmx_udp_gso_pack(&gso, batch, n);
	for (size_t k = 0; k < gso.cnt; k++)
		if (sendmsg(tx, &gso.msgs[k].msg_hdr, 0) < 0)
			cr_skip("UDP_SEGMENT refused on loopback here: %s", strerror(errno));
}

/*
 * Polls with room for max (<= 8) completions at a time until want came or
 * many polls found nothing; returns how many came, their lengths in len
 * and their first byte in first (room for want + 7 each).
 */
static size_t poll_all(int max, size_t want, size_t *len, uint8_t *first)
{
	struct rdmx_dev_cqe cqe[8];
	size_t got = 0;

	for (int idle = 0; got < want && idle < 100000; idle++) {
		int n = dev->ops->poll_cq(dev, cqe, max);

		cr_assert_leq(n, max, "a poll of room %d returned %d", max, n);
		for (int k = 0; k < n; k++, got++) {
			cr_assert_eq(cqe[k].op, RDMX_DEV_OP_RECV);
			cr_assert_eq(cqe[k].status, RDMX_DEV_OK);
			len[got] = cqe[k].len;
			first[got] = buf_of(cqe[k].wr_id)[0];
			for (size_t b = 1; b < cqe[k].len; b++)
				cr_assert_eq(buf_of(cqe[k].wr_id)[b], first[got],
					     "datagram %zu, byte %zu", got, b);
		}
		if (n)
			idle = 0;
	}
	return got;
}

/* Whether the device's socket merges datagrams. */
static bool gro_on(void)
{
	int on = 0;
	socklen_t len = sizeof(on);

	cr_assert_eq(getsockopt(dev->ops->wait_fd(dev), SOL_UDP, UDP_GRO, &on, &len), 0,
		     "getsockopt(UDP_GRO): %s", strerror(errno));
	return on;
}

/* Sends n datagrams of 100 bytes and reads them; returns how many came. */
static size_t send_and_read(size_t n)
{
	size_t lens[RDMX_UDP_BATCH], len[RDMX_UDP_BATCH + 8];
	uint8_t first[RDMX_UDP_BATCH + 8];

	for (size_t k = 0; k < n; k++)
		lens[k] = 100;
	post(n, dev->caps.mtu);
	send_run(lens, n);
	return poll_all(8, n, len, first);
}

/* A stream turns merged reads on: what the tests below read merged. */
static void read_a_stream(void)
{
	cr_assert_eq(send_and_read(RDMX_UDP_BATCH), RDMX_UDP_BATCH);
	cr_assert(gro_on(), "a stream of %d datagrams did not turn UDP_GRO on",
		  RDMX_UDP_BATCH);
	dev->stats.rx_gro = 0;
}

/*
 * A ping-pong's lone datagrams are read one by one with no control
 * message to parse: merged reads go on only once a read finds several
 * datagrams queued.
 */
Test(dev_udp_gro, merged_reads_wait_for_a_stream)
{
	cr_assert_not(gro_on(), "UDP_GRO on before any datagram came");
	for (int i = 0; i < 20; i++)
		cr_assert_eq(send_and_read(1), 1);
	cr_assert_not(gro_on(), "UDP_GRO on after lone datagrams");
	read_a_stream();
}

Test(dev_udp_gro, a_run_is_handed_up_in_order_a_polls_room_at_a_time)
{
	size_t lens[RDMX_UDP_BATCH], len[BUFS];
	uint8_t first[BUFS];

	read_a_stream();
	for (size_t k = 0; k < RDMX_UDP_BATCH; k++)
		lens[k] = k == RDMX_UDP_BATCH - 1 ? 300 : 1000;
	post(BUFS, dev->caps.mtu);
	send_run(lens, RDMX_UDP_BATCH);
	cr_assert_eq(poll_all(3, RDMX_UDP_BATCH, len, first), RDMX_UDP_BATCH);
	for (size_t k = 0; k < RDMX_UDP_BATCH; k++) {
		cr_assert_eq(first[k], k + 1, "datagram %zu came as number %u", k + 1, first[k]);
		cr_assert_eq(len[k], lens[k]);
	}
	cr_assert_eq(dev->stats.rx_gro, RDMX_UDP_BATCH, "%lu datagrams merged",
		     (unsigned long) dev->stats.rx_gro);
	cr_assert_eq(poll_all(3, 1, len, first), 0, "a datagram handed up twice");
}

Test(dev_udp_gro, with_no_buffer_each_datagram_of_a_run_is_dropped_and_counted)
{
	size_t lens[10], len[BUFS];
	uint8_t first[BUFS];

	read_a_stream();
	for (size_t k = 0; k < 10; k++)
		lens[k] = 200;
	send_run(lens, 10);
	cr_assert_eq(poll_all(4, 1, len, first), 0);
	cr_assert_eq(dev->stats.rx_dropped, 10, "%lu dropped",
		     (unsigned long) dev->stats.rx_dropped);
	/* What comes after, with buffers, is handed up as usual. */
	post(2, dev->caps.mtu);
	send_run(lens, 2);
	cr_assert_eq(poll_all(4, 2, len, first), 2);
}

Test(dev_udp_gro, a_datagram_longer_than_its_buffer_is_cut_though_the_tail_held_it)
{
	size_t lens[1] = { 600 }, len[BUFS];
	uint8_t first[BUFS];

	read_a_stream();
	/* 600 bytes into a 500-byte buffer: 100 land in the tail. */
	post(1, 500);
	send_run(lens, 1);
	cr_assert_eq(poll_all(1, 1, len, first), 0, "a cut datagram handed up");
	cr_assert_eq(dev->stats.rx_malformed, 1);
}
