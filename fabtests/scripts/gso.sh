#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# gso.sh: the udp device's segmentation offload (UDP_SEGMENT) between
# hosts, and what happens when a path's MTU shrinks past its first hop.
#
# Three network namespaces of its own, a sender, a router and a receiver:
# the sender's link to the router has MTU 1500, the router's link to the
# receiver MTU 1280 (addresses in 10.213.9.0/24, inside them only). The
# sender knows only the first hop's MTU, so it cuts messages into
# datagrams for 1500. It takes no path MTU from ICMP (anyone can forge
# one: attack.sh, part 5), and over IPv4 its datagrams leave without
# "do not fragment", so the router fragments them to fit the narrower
# link: every one of 3000 messages of mixed sizes up to 64 KiB must
# arrive exactly once, in order, with its bytes, the router must have
# made fragments (its FragCreates counter, else the path was not
# narrower and nothing was checked), and the sender must have kept
# segmenting (tx_gso above 0, no warning that the path refused it).
#
# Needs root and ip (iproute2); skips (77) without them. The namespaces
# are deleted on every exit path; the run is capped at 300 s.
#
# Exit status: 0 pass, 1 fail, 77 skip.
set -eu

GSO_NET=10.213.9
GSO_COUNT=3000
GSO_CAP_S=300

. "$(dirname "$0")/testlib.sh"

t_netns_require
t_cap_runtime "$GSO_CAP_S" "$@"

t_env_defaults
t_init
t_require_prog "$ST"

t_routed gso "$GSO_NET.1" "$GSO_NET.2" "$GSO_NET.5" "$GSO_NET.6" 30 1500 1280 1280

echo "== receiver in $ns_r ($GSO_NET.6, MTU 1280), sender in $ns_s ($GSO_NET.1, MTU 1500) via $ns_g"
t_start_server receiver "ip netns exec $ns_r" "$ST" -r -b "$GSO_NET.6" -p 0 --ordered
t_spawn_with sender "ip netns exec $ns_s env FI_LOG_LEVEL=warn" \
	"$ST" -p "$T_SERVER_PORT" -n "$GSO_COUNT" --sizes mixed "$GSO_NET.6"
t_reap "$T_LAST_PID" sender
t_reap "$T_SERVER_PID" receiver
t_out_has sender '^rdmx_stream: PASS sender' || t_fail "the sender printed no PASS"
t_out_has receiver '^rdmx_stream: PASS receiver' || t_fail "the receiver printed no PASS"
cat "$T_DIR/sender.out"

gso=$(t_counter sender tx_gso)
frags=$(ip netns exec "$ns_g" awk '$1 == "Ip:" { if (!n++) { for (i = 2; i <= NF; i++)
	if ($i == "FragCreates") c = i } else print $c }' /proc/net/snmp)
[ "${frags:-0}" -gt 0 ] || t_fail "the router made no fragment: the path was not narrower"
[ "$gso" -gt 0 ] || t_fail "tx_gso=0: no segmentation run was sent"
! grep -q 'segmentation offload refused' "$T_DIR/sender.err" ||
	t_fail "the sender stopped segmenting: $(grep -m1 'segmentation offload' "$T_DIR/sender.err")"
echo "PASS: gso.sh (tx_gso=$gso; the router made $frags fragments;" \
	"$(sed -n 's/^rdmx_stream: PASS sender: //p' "$T_DIR/sender.out"))"
