/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge: the sockets: a raw one that spoofs --from (its IP and UDP
 * headers and checksum) or a plain one, sending and receiving; and the
 * raw ICMP one of --icmp-too-big.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "forge.h"

static uint16_t fg_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t) ~sum;
}

static uint32_t fg_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t) (p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t) (p[len - 1] << 8);
	return sum;
}

/* The UDP checksum over the IPv4 pseudo-header, header and payload. */
static uint16_t fg_udp_csum(const struct iphdr *ip, const uint8_t *udp, size_t len)
{
	uint8_t pseudo[12];
	uint16_t ulen = htons((uint16_t) len), csum;

	memcpy(pseudo, &ip->saddr, 4);
	memcpy(pseudo + 4, &ip->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	memcpy(pseudo + 10, &ulen, 2);
	csum = fg_csum_fold(fg_csum_add(fg_csum_add(0, pseudo, sizeof(pseudo)), udp, len));
	return htons(csum ? csum : 0xffff);
}

/* The IP and UDP headers of a datagram of ulen UDP bytes from --from to host. */
static void fg_ip_udp(const struct fg *fg, struct iphdr *ip, struct udphdr *udp, size_t ulen)
{
	*ip = (struct iphdr) {
		.version = 4, .ihl = 5, .ttl = 64, .protocol = IPPROTO_UDP,
		.tot_len = htons((uint16_t) (sizeof(*ip) + ulen)),
		.saddr = fg->from.sin_addr.s_addr, .daddr = fg->to.sin_addr.s_addr,
	};
	*udp = (struct udphdr) {
		.source = fg->from.sin_port, .dest = fg->to.sin_port,
		.len = htons((uint16_t) ulen),
	};
}

/* Sends len bytes at dgram, from --from through the raw socket. */
static ssize_t fg_send_raw(struct fg *fg, const uint8_t *dgram, size_t len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) + FG_DGRAM_MAX];
	struct iphdr *ip = (struct iphdr *) pkt;
	struct udphdr *udp = (struct udphdr *) (pkt + sizeof(*ip));
	size_t ulen = sizeof(*udp) + len;

	fg_ip_udp(fg, ip, udp, ulen);
	memcpy(udp + 1, dgram, len);
	udp->check = fg_udp_csum(ip, (const uint8_t *) udp, ulen);
	return sendto(fg->fd, pkt, sizeof(*ip) + ulen, 0,
		      (const struct sockaddr *) &fg->to, sizeof(fg->to));
}

/* Sends one datagram, waiting out a full socket buffer; 0 or -1. */
int fg_send(struct fg *fg, const uint8_t *dgram, size_t len)
{
	for (;;) {
		ssize_t ret = fg->spoof ? fg_send_raw(fg, dgram, len) :
			      sendto(fg->fd, dgram, len, 0,
				     (const struct sockaddr *) &fg->to, sizeof(fg->to));

		if (ret >= 0)
			break;
		/* Refused: an ICMP error of an earlier datagram; keep going. */
		if (errno == ECONNREFUSED)
			continue;
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
			ft_fail("sendto: %s", strerror(errno));
			return -1;
		}
		fg->retries++;
		nanosleep(&(struct timespec) { 0, 20000 }, NULL);
	}
	fg->sent++;
	fg->bytes += len;
	return 0;
}

int fg_icmp_too_big(struct fg *fg)
{
	struct {
		struct icmphdr	icmp;
		struct iphdr	ip;
		struct udphdr	udp;
	} pkt;
	struct sockaddr_in victim = { .sin_family = AF_INET, .sin_addr = fg->from.sin_addr };
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	ssize_t ret;

	if (fd < 0)
		return ft_fail("raw ICMP socket: %s (needs root)", strerror(errno)), -1;
	memset(&pkt, 0, sizeof(pkt));
	pkt.icmp.type = ICMP_DEST_UNREACH;
	pkt.icmp.code = ICMP_FRAG_NEEDED;
	pkt.icmp.un.frag.mtu = htons((uint16_t) fg->icmp_mtu);
	/* The datagram it quotes: larger than the MTU it names, "don't fragment". */
	fg_ip_udp(fg, &pkt.ip, &pkt.udp, FG_QUOTED_LEN - sizeof(pkt.ip));
	pkt.ip.frag_off = htons(IP_DF);
	pkt.ip.check = htons(fg_csum_fold(fg_csum_add(0, &pkt.ip, sizeof(pkt.ip))));
	pkt.icmp.checksum = htons(fg_csum_fold(fg_csum_add(0, &pkt, sizeof(pkt))));
	ret = sendto(fd, &pkt, sizeof(pkt), 0, (const struct sockaddr *) &victim, sizeof(victim));
	close(fd);
	if (ret < 0)
		return ft_fail("sendto: %s", strerror(errno)), -1;
	printf(FG_NAME ": icmp_too_big mtu=%" PRIu64 " sent=1\n", fg->icmp_mtu);
	return 0;
}

int fg_open_raw(struct fg *fg)
{
	int one = 1;

	fg->fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fg->fd < 0 || setsockopt(fg->fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)))
		return ft_fail("raw socket: %s (needs root)", strerror(errno)), -1;
	return 0;
}

/* A plain UDP socket bound to addr; the descriptor or -1. */
int fg_open_udp(const struct sockaddr_in *addr, bool quiet)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && !bind(fd, (const struct sockaddr *) addr, sizeof(*addr)))
		return fd;
	if (!quiet)
		ft_fail("udp socket: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Waits up to ms for a datagram on fd; its length, 0 on timeout, -1. */
ssize_t fg_recv(int fd, uint8_t *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t ret;

	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	ret = recv(fd, buf, len, MSG_DONTWAIT);
	return ret < 0 && (errno == EAGAIN || errno == ECONNREFUSED) ? 0 : ret;
}
