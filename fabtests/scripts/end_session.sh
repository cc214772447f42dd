#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# end_session.sh: both ends of a lossy session exit cleanly (issue 16,
# item 6). Two network namespaces of its own joined by a veth pair, each
# dropping END_LOSS_PERCENT% of the UDP packets it receives (nftables
# numgen random, both directions; as netns_loss.sh). A sender streams
# END_COUNT messages of 0 to END_MAX_SIZE bytes (rdmx_stream --sizes
# mixed) with the provider's default completion level; the receiver
# checks each one and exits right after its DONE send (default level
# too) completes, the sender right after DONE arrived and its last send
# completed (--linger-ms 0). Then END_SHORT sessions of END_SHORT_COUNT
# messages end the same way. The acknowledgements of the last messages, and of
# DONE, are lost as often as any packet: unless fi_close sends the
# acknowledgements it owes and tells the peer it is going, the survivor
# resends into the void and fails a send that was delivered
# (FI_EHOSTUNREACH). Both must exit 0, print PASS and report no failed
# send (tx_errors=0) and no unreachable peer (peers_unreachable=0); the
# nft counters must show loss both ways.
#
# No FI_RDMX_* variable is set: the receiver binds its veth address, the
# sender reaches it from its own. Needs root, ip and nft; skips (77)
# without them. Capped at 600 s.
# Exit status: 0 pass, 1 fail, 77 skip.
set -eu

END_LOSS_PERCENT=5
END_COUNT=20000
END_MAX_SIZE=204800
END_NET=10.213.9
END_CAP_S=600
# Every session end is a chance for the last packets and acks to be
# lost: a few more short sessions make a regression likely to show.
END_SHORT=10
END_SHORT_COUNT=500
# The control sends (HELLO, ACCEPT, DONE) use the provider's default
# completion level, as a program that exits once its last send completed
# relies on; END_CTRL=transmit asks for FI_TRANSMIT_COMPLETE instead.
: "${END_CTRL:=default}"
# A session whose DONE never arrives fails after this long, not 60 s.
END_WAIT_S=20

. "$(dirname "$0")/testlib.sh"

t_netns_require nft
t_cap_runtime "$END_CAP_S" "$@"

t_env_defaults
t_init
t_require_prog "$ST"

t_lossy_link end "$END_NET" "$END_LOSS_PERCENT"

# end_run name count: one session of count messages; both programs must
# exit 0 with PASS and report no failed send and no unreachable peer.
end_run() {
	local name=$1 count=$2 side errs unreach
	t_start_server "$name-receiver" "ip netns exec $ns_r" \
		"$ST" -r -b "$addr_r" -p 0 --max-size "$END_MAX_SIZE" \
		--ctrl-completion "$END_CTRL" -t "$END_WAIT_S"
	t_spawn_with "$name-sender" "ip netns exec $ns_s" \
		"$ST" -p "$T_SERVER_PORT" -n "$count" --sizes mixed \
		--max-size "$END_MAX_SIZE" --completion inject --linger-ms 0 \
		--ctrl-completion "$END_CTRL" -t "$END_WAIT_S" "$addr_r"
	t_reap "$T_LAST_PID" "$name: the sender"
	t_reap "$T_SERVER_PID" "$name: the receiver"
	t_out_has "$name-sender" '^rdmx_stream: PASS sender' ||
		t_fail "$name: the sender printed no PASS"
	t_out_has "$name-receiver" '^rdmx_stream: PASS receiver' ||
		t_fail "$name: the receiver printed no PASS"
	for side in sender receiver; do
		errs=$(t_counter "$name-$side" tx_errors)
		unreach=$(t_counter "$name-$side" peers_unreachable)
		[ "$errs" -eq 0 ] || t_fail "$name: the $side had $errs failed sends"
		[ "$unreach" -eq 0 ] ||
			t_fail "$name: the $side declared $unreach peers unreachable"
	done
}

echo "== receiver in $ns_r ($addr_r), sender in $ns_s ($addr_s)," \
	"$END_LOSS_PERCENT% loss each way, control sends: $END_CTRL completion"
end_run long "$END_COUNT"
cat "$T_DIR/long-sender.out"
echo "== $END_SHORT more sessions of $END_SHORT_COUNT messages: more ends"
i=0
while [ "$i" -lt "$END_SHORT" ]; do
	end_run "short$i" "$END_SHORT_COUNT"
	i=$((i + 1))
done

t_lossy_link_dropped
echo "PASS: end_session.sh ($END_COUNT messages up to $END_MAX_SIZE bytes, then" \
	"$END_SHORT sessions of $END_SHORT_COUNT, each ending cleanly; nft dropped" \
	"$drop_r packets to the receivers, $drop_s to the senders)"
