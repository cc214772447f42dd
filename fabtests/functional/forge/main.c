/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx_forge: forges rdmx datagrams at a udp endpoint, as an attacker on
 * its network would (scripts/attack.sh). Unlike the other programs here
 * it includes the provider's wire header and links its codec
 * (prov/rdmx/src/rdm/rdmx_wire.c and dev/rdmx_wire_srd.c), so its packets
 * follow every format change.
 *
 *   rdmx_forge [options] host port
 *
 * Spoofing (--from addr:port): a raw socket (IP_HDRINCL) sends each
 * datagram with that source, e.g. a live peer's own address and port.
 * Without --from a plain UDP socket bound to --bind sends them.
 *
 * What each datagram is (--kind, a comma-separated list taken in turn):
 *   hs-reset hs-ack hs-probe hs-probe-ack hs-ping hs-pong hs-close
 *   eager void medium rts cts data dack   an rdm packet in a swsrd DATA
 *   skip                                  a swsrd SKIP
 *   ack rnr rnr-big challenge             swsrd control packets; ack and
 *                                         rnr sweep every psn in turn
 *   groups: hs, rdm, all
 * whose dst_tag (the receiver's session tag) is, in turn over --tags:
 *   zero, random, seq (1, 2, 3...), stale (the tags listed in --tag-file,
 *   seen in an earlier run: an off-path attacker cannot see current ones)
 * and whose content (--content) is valid, near (a valid datagram with one
 * header byte changed), random (random bytes and length, half of them
 * starting with the swsrd magic) or mix (valid, near and random in turn).
 * -n count, --rate packets per second (0: as fast as the socket takes
 * them), --seed for the generator: the same options send the same bytes.
 *
 * --auth: an attacker at its own address (plain socket) that answers the
 * CHALLENGE with the cookie it carried, then opens an rdm session
 * (RESET, answering probes and pings, acknowledging what it receives,
 * resending from the hole when its window stalls; its first packet and
 * its RESET go again while unanswered, as a real peer's do), and sends its -n
 * datagrams inside that session: valid, near or random rdm packets
 * behind valid swsrd headers, so they reach the rdm layer. Its messages
 * are untagged (a tagged one would match the victim's wildcard receives,
 * which any peer may legitimately do).
 *
 * --anon-ports N: from N distinct real source ports (--port-base, then
 * upwards), each sends a RESET with dst_tag 0, takes the cookie its
 * CHALLENGE carries and sends the RESET again with it: N senders that
 * proved they receive at their address, i.e. N anonymous peers.
 *
 * --observe file --secs S: records for S seconds the dst_tag and src_tag
 * values of the swsrd datagrams arriving at port (host ignored) into
 * file, one hex value a line, for a later --tags stale.
 *
 * --icmp-too-big MTU (with --from addr:port): one ICMP "fragmentation
 * needed" naming MTU, sent to addr as a router on the way to host would
 * send it, quoting a datagram from addr:port to host:port. Nothing in it
 * is secret: whether addr's kernel lowers its path MTU to host, and what
 * its endpoint then does, is the attack.
 *
 * Prints what it sent on one line: "rdmx_forge: sent=N bytes=B ...".
 * Exit status: 0, 1 on a failure (socket, file), 2 on bad options.
 */
#include <unistd.h>

#include "forge.h"

const char *const ft_prog = FG_NAME;

static int fg_run(struct fg *fg)
{
	bool stale = false;

	if (fg->observe)
		return fg_observe(fg);
	if (fg->icmp_mtu)
		return fg_icmp_too_big(fg);
	if (fg->anon_ports)
		return fg_anon(fg);
	for (size_t m = 0; m < fg->ntags; m++)
		stale |= fg->tags[m] == FG_TAG_STALE;
	if (stale && (!fg->tag_file || fg_read_tags(fg)))
		return fg->tag_file ? -1 : ft_fail("--tags stale needs --tag-file");
	if (fg->spoof ? fg_open_raw(fg) : (fg->fd = fg_open_udp(&fg->bind, false)) < 0)
		return -1;
	if (fg->auth && fg_session_open(fg))
		return -1;
	if (fg_flood(fg))
		return -1;
	fg_report(fg);
	return 0;
}

int main(int argc, char **argv)
{
	static struct fg fg = {
		.count = 1000, .seed = 1, .port_base = 20000, .fd = -1,
		.bind = { .sin_family = AF_INET },
	};
	int ret;

	if (fg_parse(&fg, argc, argv)) {
		fg_usage();
		return 2;
	}
	/* xorshift must not start at 0; mix the seed so nearby seeds differ. */
	fg.rng = ft_mix(fg.seed) | 1;
	fg.seq_tag = 0;
	ret = fg_run(&fg);
	if (fg.fd >= 0)
		close(fg.fd);
	fflush(stdout);
	return ret ? 1 : 0;
}
