/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_udp_gro: reading several datagrams at once. The device cuts a
 * merged read at the size the kernel's control message names, and copies
 * each datagram from the posted buffer and the tail after it; a wrong
 * size or a wrong copy hands the rdm layer packets with foreign bytes.
 * The last test sends a UDP_SEGMENT run over loopback to a socket with
 * UDP_GRO on and checks the kernel hands it over as the device expects.
 */
#include <errno.h>
#include <unistd.h>
#include <netinet/udp.h>

#include "rdmx_test.h"
#include "rdmx_udp_gro.h"
#include "rdmx_udp_gso.h"

#ifndef UDP_GRO
#define UDP_GRO		104
#endif

/* A message header whose control holds a pktinfo (when ip) and a size. */
static struct msghdr with_ctl(union rdmx_udp_rx_ctl *ctl, const char *ip, int size)
{
	struct msghdr m = { .msg_control = ctl->buf, .msg_controllen = sizeof(ctl->buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	size_t used = 0;

	memset(ctl, 0, sizeof(*ctl));
	if (ip) {
		struct in_pktinfo pi = { 0 };

		inet_pton(AF_INET, ip, &pi.ipi_spec_dst);
		c->cmsg_level = IPPROTO_IP;
		c->cmsg_type = IP_PKTINFO;
		c->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		used += CMSG_SPACE(sizeof(pi));
		c = (struct cmsghdr *) (ctl->buf + used);
	}
	if (size) {
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_GRO;
		c->cmsg_len = CMSG_LEN(sizeof(size));
		memcpy(CMSG_DATA(c), &size, sizeof(size));
		used += CMSG_SPACE(sizeof(size));
	}
	m.msg_controllen = used;
	if (!used)
		m.msg_control = NULL;
	return m;
}

Test(udp_gro, the_size_is_read_from_the_control_message)
{
	union rdmx_udp_rx_ctl ctl;
	struct msghdr m;

	m = with_ctl(&ctl, NULL, 0);
	cr_assert_eq(rdmx_udp_gro_size(&m), 0, "no control message: one datagram");
	m = with_ctl(&ctl, NULL, 1400);
	cr_assert_eq(rdmx_udp_gro_size(&m), 1400);
	m = with_ctl(&ctl, "10.1.2.3", 0);
	cr_assert_eq(rdmx_udp_gro_size(&m), 0, "a pktinfo alone: one datagram");
	m = with_ctl(&ctl, "10.1.2.3", 512);
	cr_assert_eq(rdmx_udp_gro_size(&m), 512, "the size after a wildcard's pktinfo");
	m = with_ctl(&ctl, NULL, -5);
	cr_assert_eq(rdmx_udp_gro_size(&m), 0, "a size that is no size");
}

/* What the device copies a datagram out of a read with: rdmx_copy_from_iov_at. */
Test(udp_gro, copies_span_the_buffer_and_the_tail)
{
	uint8_t buf[100], tail[20], out[40];
	struct iovec iov[2] = { { buf, sizeof(buf) }, { tail, sizeof(tail) } };

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t) i;
	for (size_t i = 0; i < sizeof(tail); i++)
		tail[i] = (uint8_t) (100 + i);
	rdmx_copy_from_iov_at(out, iov, 2, 10, 30);
	for (size_t i = 0; i < 30; i++)
		cr_assert_eq(out[i], 10 + i, "byte %zu inside the buffer", i);
	rdmx_copy_from_iov_at(out, iov, 2, 90, 25);
	for (size_t i = 0; i < 25; i++)
		cr_assert_eq(out[i], 90 + i, "byte %zu across buffer and tail", i);
	rdmx_copy_from_iov_at(out, iov, 2, 105, 15);
	for (size_t i = 0; i < 15; i++)
		cr_assert_eq(out[i], 105 + i, "byte %zu in the tail", i);
}

Test(udp_gro, a_segmented_run_arrives_as_one_read)
{
	static uint8_t data[5][1000], in[RDMX_UDP_GRO_MAX];
	static struct rdmx_udp_gso gso;
	struct mmsghdr batch[5];
	struct iovec iov[5];
	struct sockaddr_in to;
	union rdmx_udp_rx_ctl ctl;
	struct iovec rd = { in, sizeof(in) };
	struct msghdr m = { .msg_iov = &rd, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	uint16_t port, unused;
	int rx = rdmx_test_udp_socket(&port), tx = rdmx_test_udp_socket(&unused);
	ssize_t len;

	if (rdmx_udp_gro_enable(rx))
		cr_skip("UDP_GRO not offered by this kernel: %s", strerror(errno));
	to = rdmx_test_sin("127.0.0.1", port);
	for (size_t i = 0; i < 5; i++) {
		memset(data[i], (int) (i + 1), sizeof(data[i]));
		iov[i] = (struct iovec) { data[i], i == 4 ? 600 : sizeof(data[i]) };
		batch[i] = (struct mmsghdr) { .msg_hdr = { .msg_name = &to,
			.msg_namelen = sizeof(to), .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	cr_assert_eq(rdmx_udp_gso_pack(&gso, batch, 5), 1);
	if (sendmsg(tx, &gso.msgs[0].msg_hdr, 0) < 0)
		cr_skip("UDP_SEGMENT refused on loopback here: %s", strerror(errno));
	len = recvmsg(rx, &m, MSG_DONTWAIT);
	cr_assert_eq(len, 4600, "one read of the whole run: %zd bytes", len);
	cr_assert_eq(rdmx_udp_gro_size(&m), 1000, "the datagram size: %zu",
		     rdmx_udp_gro_size(&m));
	for (size_t i = 0; i < 4600; i++)
		cr_assert_eq(in[i], i / 1000 + 1, "byte %zu", i);
	close(rx);
	close(tx);
}
