/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_forge --anon-ports: many anonymous peers, one a source port. */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forge.h"

/* One anonymous peer from port; adds to *challenged and *echoed. */
static void fg_anon_one(struct fg *fg, uint16_t port, uint64_t *challenged,
			uint64_t *echoed)
{
	struct sockaddr_in addr = fg->bind;
	uint64_t tag = fg_nonzero(fg), cookie;
	uint8_t buf[256];
	const size_t srd = sizeof(struct rdmx_wire_srd);
	struct rdmx_srd_hdr h = {
		.type = RDMX_SRD_DATA, .epoch = fg_epoch(fg), .src_tag = tag,
	};
	int fd;

	addr.sin_port = htons(port);
	fd = fg_open_udp(&addr, true);
	if (fd < 0)
		return;
	if (!fg_hello(fg, fd, tag) && (cookie = fg_cookie(fd, tag))) {
		(*challenged)++;
		h.dst_tag = cookie;
		rdmx_wire_srd_encode((struct rdmx_wire_srd *) buf, &h);
		if (sendto(fd, buf, srd + fg_build_hs(fg, FG_HS_RESET, buf + srd), 0,
			   (const struct sockaddr *) &fg->to, sizeof(fg->to)) > 0)
			(*echoed)++;
	}
	fg->sent += 2;
	close(fd);
}

int fg_anon(struct fg *fg)
{
	uint64_t challenged = 0, echoed = 0, skipped = 0, port = fg->port_base;
	uint64_t before;

	for (uint64_t i = 0; i < fg->anon_ports; port++) {
		if (port > 65535)
			return ft_fail("--anon-ports: ran out of ports at %" PRIu64, i), -1;
		before = fg->sent;
		fg_anon_one(fg, (uint16_t) port, &challenged, &echoed);
		if (fg->sent == before)
			skipped++;	/* the port is taken */
		else
			i++;
	}
	printf(FG_NAME ": anon_ports=%" PRIu64 " challenged=%" PRIu64 " echoed=%"
	       PRIu64 " sent=%" PRIu64 " ports_taken=%" PRIu64 "\n", fg->anon_ports,
	       challenged, echoed, fg->sent, skipped);
	return 0;
}
