/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge --observe: the tags seen on the wire, recorded for a later
 * run; --tag-file reads them back for --tags stale.
 */
#include <errno.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forge.h"

/* Adds tag to the stale list unless it is 0 or there. */
static void fg_note_tag(struct fg *fg, uint64_t tag)
{
	if (!tag || fg->nstale == FG_STALE_MAX)
		return;
	for (size_t i = 0; i < fg->nstale; i++)
		if (fg->stale[i] == tag)
			return;
	fg->stale[fg->nstale++] = tag;
}

/* Takes the swsrd header of one IPv4 datagram to our port. */
static void fg_observe_one(struct fg *fg, const uint8_t *pkt, size_t len)
{
	const struct iphdr *ip = (const struct iphdr *) pkt;
	const struct udphdr *udp;
	size_t ihl;
	struct rdmx_srd_hdr h;

	if (len < sizeof(*ip) || ip->protocol != IPPROTO_UDP)
		return;
	ihl = ip->ihl * 4u;
	if (len < ihl + sizeof(*udp))
		return;
	udp = (const struct udphdr *) (pkt + ihl);
	if (udp->dest != fg->to.sin_port ||
	    rdmx_wire_srd_decode(udp + 1, len - ihl - sizeof(*udp), &h))
		return;
	fg_note_tag(fg, h.dst_tag);
	fg_note_tag(fg, h.src_tag);
}

int fg_observe(struct fg *fg)
{
	uint8_t pkt[65536];
	uint64_t end = ft_now_ns() + fg->secs * 1000000000ULL, seen = 0;
	FILE *f;
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
	ssize_t len;

	if (fd < 0)
		return ft_fail("raw socket: %s (needs root)", strerror(errno)), -1;
	while (ft_now_ns() < end) {
		len = fg_recv(fd, pkt, sizeof(pkt), 100);
		if (len > 0) {
			seen++;
			fg_observe_one(fg, pkt, (size_t) len);
		}
	}
	close(fd);
	f = fopen(fg->observe, "w");
	if (!f)
		return ft_fail("%s: %s", fg->observe, strerror(errno)), -1;
	for (size_t i = 0; i < fg->nstale; i++)
		fprintf(f, "%016" PRIx64 "\n", fg->stale[i]);
	fclose(f);
	printf(FG_NAME ": observed %" PRIu64 " udp datagrams, %zu tags to %s\n",
	       seen, fg->nstale, fg->observe);
	return 0;
}

int fg_read_tags(struct fg *fg)
{
	FILE *f = fopen(fg->tag_file, "r");
	uint64_t tag;

	if (!f)
		return ft_fail("%s: %s", fg->tag_file, strerror(errno)), -1;
	while (fscanf(f, "%" SCNx64, &tag) == 1)
		fg_note_tag(fg, tag);
	fclose(f);
	if (!fg->nstale)
		return ft_fail("%s: no tag", fg->tag_file), -1;
	return 0;
}
