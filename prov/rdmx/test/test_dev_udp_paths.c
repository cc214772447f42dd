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

#include "rdmx_test_udp.h"
#include "rdmx_dgram.h"
#include "rdmx_wire_srd.h"

#define SENDS		200

static struct rdmx_test_udp_pair up;

static void setup(void)
{
	rdmx_test_udp_pair_open(&up, 2);
}

static void teardown(void)
{
	rdmx_test_udp_pair_close(&up);
}

TestSuite(dev_udp_paths, .init = setup, .fini = teardown);

/* B's tag for A, which every packet of A's carries. */
static uint64_t b_tag(void)
{
	return rdmx_container_of(up.b_to_a, struct rdmx_dgram_ah, ah)->srd.local_tag;
}

/* Sends B one DATA packet carrying tag from a socket of its own at ip. */
static void forge(const char *ip, uint64_t tag)
{
	struct sockaddr_in from = rdmx_test_sin(ip, 0);
	union rdmx_udp_addr to;
	struct {
		struct rdmx_wire_srd	hdr;
		uint8_t			payload[RDMX_TEST_UDP_LEN];
	} pkt;
	struct rdmx_srd_hdr hdr = {
		.type = RDMX_SRD_DATA, .epoch = 0x100, .psn = 0,
		.dst_tag = tag, .src_tag = 0x5eed,
	};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *) &from, sizeof(from)), 0);
	up.b->ops->getname(up.b, &to);
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

	up.a->ops->getname(up.a, &na);
	up.b->ops->getname(up.b, &nb);
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

	up.b->ops->getname(up.b, &old);
	old.sin.sin_port = htons(a_path_port());
	cr_assert_eq(up.b->ops->ah_create(up.b, &old, &stale), 0);
	rdmx_test_udp_send_all(&up, SENDS);
	cr_assert_gt(up.b->stats.rx_other_path, 0, "nothing came by the second path");
	up.b->ops->ah_destroy(up.b, stale);
}

Test(dev_udp_paths, packets_from_the_second_port_are_the_peers)
{
	rdmx_test_udp_send_all(&up, SENDS);
	cr_log_info("paths: %lu of %d packets came by A's second port\n",
		    (unsigned long) up.b->stats.rx_other_path, SENDS);
	cr_assert_gt(up.b->stats.rx_other_path, 0, "nothing came by the second path");
	cr_assert_lt(up.b->stats.rx_other_path, SENDS);
	cr_assert_eq(up.b->stats.rx_dropped + up.b->stats.rx_malformed, 0);
}

Test(dev_udp_paths, a_datagram_without_the_tag_from_another_port_changes_nothing)
{
	uint64_t other;

	rdmx_test_udp_send_all(&up, SENDS);
	other = up.b->stats.rx_other_path;
	forge("127.0.0.1", b_tag() ^ 1);
	forge("127.0.0.1", 0);
	rdmx_test_udp_poll_until(&up, SENDS, SENDS + 1);
	cr_assert_eq(up.received, SENDS, "a forged packet was handed up");
	cr_assert_eq(up.b->stats.rx_other_path, other);
	cr_assert_geq(up.b->stats.rx_unauth, 2);
}

Test(dev_udp_paths, the_tag_from_another_host_is_not_the_peers)
{
	uint64_t other;

	rdmx_test_udp_send_all(&up, SENDS);
	other = up.b->stats.rx_other_path;
	forge("127.0.0.2", b_tag());
	rdmx_test_udp_poll_until(&up, SENDS, SENDS + 1);
	cr_assert_eq(up.b->stats.rx_other_path, other, "another host taken for A's");
}
