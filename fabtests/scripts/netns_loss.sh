#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# netns_loss.sh: a stream over a real lossy link. Two network namespaces
# of its own, joined by a veth pair (MTU 1500) with addresses in
# 10.213.7.0/30 that exist only inside them; in each namespace an nftables
# rule drops 5% of the UDP packets it receives at random, so data and acks
# are both lost. The receiver runs in one namespace, bound to its veth
# address, the sender in the other streams 100000 messages of mixed
# sizes up to 64 KiB, so the larger ones travel as medium (up to 16 KiB
# here) or long messages cut into about 1.4 KB segments, reassembled
# whatever order loss recovery leaves them in: every message must arrive
# exactly once with the right length and bytes, the n-th receive posted
# taking the n-th message sent (rdmx_stream --ordered),
# and the sender's counters must show the losses were repaired
# (retransmits + fast_retransmits > 0), that datagrams left in UDP
# segmentation offload runs (tx_gso > 0) and that the receiver read them
# several at a time (rx_gro > 0); the nft counters must show the rule
# really dropped packets in both directions.
#
# Needs root, ip (iproute2) with netns support, and nft (nftables); skips
# (77) when any is missing. Nothing outside the two namespaces is touched;
# they are deleted on every exit path. The whole run is capped at 600 s.
#
# Exit status: 0 pass, 1 fail, 77 skip.
set -eu

LOSS_PERCENT=5
LOSS_COUNT=100000
LOSS_NET=10.213.7
LOSS_CAP_S=600
# Messages above 16 KiB take the long protocol with credit (RTS, CTS,
# DATA): a peer in another network namespace does not receive at an
# address of the receiver's, so it is not on its host for long-read, and
# the DATA crosses the link, as between hosts.
LOSS_PROTO_ENV="FI_RDMX_MEDIUM_MAX=16384"

. "$(dirname "$0")/testlib.sh"

t_netns_require nft
t_cap_runtime "$LOSS_CAP_S" "$@"

t_env_defaults
t_init
t_require_prog "$ST"

t_lossy_link loss "$LOSS_NET" "$LOSS_PERCENT"

echo "== receiver in $ns_r on $veth_r ($addr_r), sender in $ns_s on $veth_s ($addr_s)"
t_start_server receiver "ip netns exec $ns_r env $LOSS_PROTO_ENV" \
	"$ST" -r -b "$addr_r" -p 0 --ordered
echo "== sender: $LOSS_COUNT messages, sizes mixed, $LOSS_PERCENT% of UDP packets dropped each way"
t_spawn_with sender "ip netns exec $ns_s env $LOSS_PROTO_ENV" \
	"$ST" -p "$T_SERVER_PORT" -n "$LOSS_COUNT" --sizes mixed "$addr_r"
t_reap "$T_LAST_PID" sender
t_reap "$T_SERVER_PID" receiver
t_out_has sender '^rdmx_stream: PASS sender' || t_fail "the sender printed no PASS"
t_out_has receiver '^rdmx_stream: PASS receiver' || t_fail "the receiver printed no PASS"
cat "$T_DIR/sender.out"

max=$(t_field sender max_msg_size)
rexmit=$(t_field sender retransmits)
fast=$(t_field sender fast_retransmits)
dup=$(t_field receiver duplicates)
[ -n "$max" ] && [ -n "$rexmit" ] && [ -n "$fast" ] && [ -n "$dup" ] ||
	t_fail "missing max_msg_size or counters in the programs' output"
[ $((rexmit + fast)) -gt 0 ] ||
	t_fail "retransmits=$rexmit fast_retransmits=$fast: no loss was repaired"
gso=$(t_counter sender tx_gso)
[ "$gso" -gt 0 ] || t_fail "tx_gso=0: the sender sent no segmentation offload run"
gro=$(t_counter receiver rx_gro)
[ "$gro" -gt 0 ] || t_fail "rx_gro=0: the receiver read no datagrams merged"
t_lossy_link_dropped
echo "PASS: netns_loss.sh (max_msg_size=$max; sender retransmits=$rexmit" \
	"fast_retransmits=$fast; receiver duplicates=$dup; nft dropped" \
	"$drop_r packets to the receiver, $drop_s to the sender; tx_gso=$gso rx_gro=$gro;" \
	"$(sed -n 's/^rdmx_stream: PASS sender: //p' "$T_DIR/sender.out"))"
