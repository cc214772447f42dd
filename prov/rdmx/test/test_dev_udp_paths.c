/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The udp device's paths (FI_RDMX_PATHS): A sends from two sockets, and B
 * must take every packet as A's, found by the session tag when it comes
 * from A's second port; a datagram from another port or another host
 * that does not carry the tag must change nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rdmx_test.h"
#include "rdmx_dev_udp.h"
#include "rdmx_dgram.h"
#include "rdmx_wire_srd.h"

#define BUFS		256
#define SENDS		200
#define LEN		100
#define FRONT		64

static struct rdmx_dev *a, *b;
static struct rdmx_ah *a_to_b, *b_to_a;
static uint8_t *bufs, payload[LEN];
static size_t sent_ok, received;

static struct rdmx_dev *open_dev(size_t paths)
{
	union rdmx_udp_addr src;
	struct rdmx_dev_attr attr = { .src_addr = &src, .sq_size = BUFS, .rq_size = BUFS };
	struct rdmx_dev *dev;

	memset(&src, 0, sizeof(src));
	src.sin = rdmx_test_sin("127.0.0.1", 0);
	g_rdmx_params.paths = paths;
	cr_assert_eq(rdmx_dev_udp_ops.open(&attr, &dev), 0);
	g_rdmx_params.paths = 1;
	return dev;
}

static struct rdmx_ah *ah_to(struct rdmx_dev *from, struct rdmx_dev *to)
{
	union rdmx_udp_addr addr;
	struct rdmx_ah *ah;

	to->ops->getname(to, &addr);
	cr_assert_eq(from->ops->ah_create(from, &addr, &ah), 0);
	from->ops->ah_peer(from, ah, RDMX_DEV_PEER_WIDE | RDMX_DEV_PEER_PATHS);
	return ah;
}

static void setup(void)
{
	rdmx_test_use_loopback();
	a = open_dev(2);
	b = open_dev(1);
	a_to_b = ah_to(a, b);
	b_to_a = ah_to(b, a);
	bufs = calloc(BUFS, FRONT + b->caps.mtu);
	cr_assert_not_null(bufs);
	for (size_t i = 0; i < BUFS; i++)
		cr_assert_eq(b->ops->post_recv(b, bufs + i * (FRONT + b->caps.mtu) + FRONT,
					       b->caps.mtu, i), 0);
	sent_ok = received = 0;
}

static void teardown(void)
{
	a->ops->close(a);
	b->ops->close(b);
	free(bufs);
}

TestSuite(dev_udp_paths, .init = setup, .fini = teardown);

/* Polls both devices until A's sends and B's receives reach the counts. */
static void poll_until(size_t want_sent, size_t want_received)
{
	struct rdmx_dev_cqe cqe[16];

	for (int idle = 0; (sent_ok < want_sent || received < want_received) &&
	     idle < 200000; idle++) {
		int n = a->ops->poll_cq(a, cqe, 16);

		for (int k = 0; k < n; k++) {
			cr_assert_eq(cqe[k].op, RDMX_DEV_OP_SEND);
			cr_assert_eq(cqe[k].status, RDMX_DEV_OK);
			sent_ok++;
		}
		n = b->ops->poll_cq(b, cqe, 16);
		for (int k = 0; k < n; k++) {
			cr_assert_eq(cqe[k].op, RDMX_DEV_OP_RECV);
			cr_assert_eq(cqe[k].src_ah, b_to_a, "a packet of A's not taken as A's");
			cr_assert_eq(cqe[k].len, LEN);
			received++;
		}
	}
}

/* Sends cnt packets from A to B, a few at a time. */
static void send_all(size_t cnt)
{
	struct iovec iov = { payload, LEN };

	for (size_t i = 0; i < cnt; i++) {
		cr_assert_eq(a->ops->post_send(a, a_to_b, &iov, 1, i, 0), 0);
		if (i % 8 == 7)
			poll_until(sent_ok, 0);
	}
	poll_until(cnt, cnt);
	cr_assert_eq(sent_ok, cnt);
	cr_assert_eq(received, cnt);
}

/* B's tag for A, which every packet of A's carries. */
static uint64_t b_tag(void)
{
	return rdmx_container_of(b_to_a, struct rdmx_dgram_ah, ah)->srd.local_tag;
}

/* Sends B one DATA packet carrying tag from a socket of its own at ip. */
static void forge(const char *ip, uint64_t tag)
{
	struct sockaddr_in from = rdmx_test_sin(ip, 0);
	union rdmx_udp_addr to;
	struct {
		struct rdmx_wire_srd	hdr;
		uint8_t			payload[LEN];
	} pkt;
	struct rdmx_srd_hdr hdr = {
		.type = RDMX_SRD_DATA, .epoch = 0x100, .psn = 0,
		.dst_tag = tag, .src_tag = 0x5eed,
	};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *) &from, sizeof(from)), 0);
	b->ops->getname(b, &to);
	memset(&pkt, 0, sizeof(pkt));
	rdmx_wire_srd_encode(&pkt.hdr, &hdr);
	cr_assert_eq(sendto(fd, &pkt, sizeof(pkt), 0, &to.sa, sizeof(to.sin)),
		     (ssize_t) sizeof(pkt));
	close(fd);
}

/*
 * The port of a UDP socket of this process at 127.0.0.1 that is neither
 * A's nor B's: A's second path (/proc/net/udp, by the sockets' inodes).
 */
static uint16_t a_path_port(void)
{
	union rdmx_udp_addr na, nb;
	char line[512], link[64], target[64];
	uint16_t found = 0;
	FILE *f;

	a->ops->getname(a, &na);
	b->ops->getname(b, &nb);
	f = fopen("/proc/net/udp", "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned addr, port;
		unsigned long inode;
		char want[64];

		if (sscanf(line, " %*d: %8X:%4X %*s %*s %*s %*s %*s %*s %*s %lu",
			   &addr, &port, &inode) != 3 || addr != htonl(INADDR_LOOPBACK) ||
		    port == ntohs(na.sin.sin_port) || port == ntohs(nb.sin.sin_port))
			continue;
		snprintf(want, sizeof(want), "socket:[%lu]", inode);
		for (int fd = 0; fd < 1024 && !found; fd++) {
			ssize_t n;

			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			n = readlink(link, target, sizeof(target) - 1);
			if (n > 0 && (target[n] = 0, !strcmp(target, want)))
				found = (uint16_t) port;
		}
	}
	fclose(f);
	cr_assert_neq(found, 0, "A's second port not found");
	return found;
}

/*
 * B kept a handle for the address A's second port has now (an earlier
 * owner of that port): A's packets from it are still A's, by their tag.
 */
Test(dev_udp_paths, a_handle_left_at_the_second_port_does_not_hide_it)
{
	union rdmx_udp_addr old;
	struct rdmx_ah *stale;

	b->ops->getname(b, &old);
	old.sin.sin_port = htons(a_path_port());
	cr_assert_eq(b->ops->ah_create(b, &old, &stale), 0);
	send_all(SENDS);
	cr_assert_gt(b->stats.rx_other_path, 0, "nothing came by the second path");
	b->ops->ah_destroy(b, stale);
}

Test(dev_udp_paths, packets_from_the_second_port_are_the_peers)
{
	send_all(SENDS);
	cr_log_info("paths: %lu of %d packets came by A's second port\n",
		    (unsigned long) b->stats.rx_other_path, SENDS);
	cr_assert_gt(b->stats.rx_other_path, 0, "nothing came by the second path");
	cr_assert_lt(b->stats.rx_other_path, SENDS);
	cr_assert_eq(b->stats.rx_dropped + b->stats.rx_malformed, 0);
}

Test(dev_udp_paths, a_datagram_without_the_tag_from_another_port_changes_nothing)
{
	uint64_t other;

	send_all(SENDS);
	other = b->stats.rx_other_path;
	forge("127.0.0.1", b_tag() ^ 1);
	forge("127.0.0.1", 0);
	poll_until(SENDS, SENDS + 1);
	cr_assert_eq(received, SENDS, "a forged packet was handed up");
	cr_assert_eq(b->stats.rx_other_path, other);
	cr_assert_geq(b->stats.rx_unauth, 2);
}

Test(dev_udp_paths, the_tag_from_another_host_is_not_the_peers)
{
	uint64_t other;

	send_all(SENDS);
	other = b->stats.rx_other_path;
	forge("127.0.0.2", b_tag());
	poll_until(SENDS, SENDS + 1);
	cr_assert_eq(b->stats.rx_other_path, other, "another host taken for A's");
}
