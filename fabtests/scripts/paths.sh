#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# paths.sh: a sender's packets spread over two source ports
# (FI_RDMX_PATHS=2) between two network namespaces of the test's own,
# joined by a veth pair (MTU 1500) with addresses in 10.213.9.0/30 that
# exist only inside them. The receiver keeps the default (one port): it
# takes the sender's second port as the same peer by its session tag.
#
# Run 1, both paths healthy: rdmx_stream sends 20000 messages of mixed
# sizes (up to 64 KiB, most of them cut into segments, as the defaults
# have it: only FI_RDMX_PATHS is set, and only for the sender);
# every message must arrive once, in order, with its bytes, and
# nftables counters in the receiver's namespace, keyed by the two source
# ports the sender logs when it opens, must show each port carrying at
# least a quarter of the bytes (bytes, not packets: the kernel merges a
# run of datagrams into one packet before nftables sees it).
# Run 2, a new sender whose second port loses 20% of its packets (an
# nftables rule on that source port): the stream must still arrive whole,
# the sender must have found the port bad (path_probes > 0), and that
# port must carry less than a tenth of the bytes from then on.
# The bandwidth this keeps is measured by the benchmark driver
# (fabtests/benchmarks/RESULTS.md), not here.
#
# Needs root, ip (iproute2) with netns support, and nft (nftables); skips
# (77) when any is missing. Nothing outside the two namespaces is touched;
# they are deleted on every exit path. The whole run is capped at 300 s.
#
# Exit status: 0 pass, 1 fail, 77 skip.
set -eu

PATHS_NET=10.213.9
PATHS_COUNT=20000
PATHS_LOSS=20
PATHS_CAP_S=300

. "$(dirname "$0")/testlib.sh"

t_netns_require nft
t_cap_runtime "$PATHS_CAP_S" "$@"

t_env_defaults
t_init
t_require_prog "$ST"

t_link mp "$PATHS_NET"

# sender_ports n: the two source ports the sender of run n logged once it
# opened its endpoint; fails while it has not.
sender_ports() {
	local p
	p=$(sed -n 's/.*udp: 2 paths, from ports \([0-9]*\) \([0-9]*\)$/\1 \2/p' \
		"$T_DIR/sender$1.err" | head -n 1)
	[ -n "$p" ] && echo "$p"
}

# closing_stat name key: a counter of the "ep stats" line process name
# logged at close (FI_LOG_LEVEL=info); fails the test without one.
closing_stat() {
	local v
	v=$(sed -n "s/.*ep stats: .* $2=\([0-9][0-9]*\).*/\1/p" "$T_DIR/$1.err" | tail -n 1)
	[ -n "$v" ] || t_fail "$1 logged no $2 counter at close"
	echo "$v"
}

# count_ports p0 p1 [loss]: nftables counters of the UDP packets the
# receiver's namespace gets from each port; with loss, that percentage of
# p1's is dropped.
count_ports() {
	local drop=""
	[ -z "${3:-}" ] || drop="udp sport $2 numgen random mod 100 < $3 counter drop"
	ip netns exec "$ns_r" nft delete table inet rdmx_paths 2>/dev/null || :
	ip netns exec "$ns_r" nft -f - <<NFT || t_fail "nft could not load the rules"
table inet rdmx_paths {
	chain input {
		type filter hook input priority 0; policy accept;
		$drop
		udp sport $1 counter
		udp sport $2 counter
	}
}
NFT
}

# counted port: the bytes from port that passed.
counted() {
	ip netns exec "$ns_r" nft list table inet rdmx_paths |
		sed -n "s/.*udp sport $1 counter packets [0-9]* bytes \([0-9]*\).*/\1/p"
}

# run n [loss]: one receiver and one sender; sets p0, p1 (the ports) and
# n0, n1 (what each carried once counted).
run() {
	t_start_server "receiver$1" \
		"ip netns exec $ns_r env FI_LOG_LEVEL=info FI_LOG_PROV=rdmx" \
		"$ST" -r -b "$addr_r" -p 0 --ordered
	t_spawn_with "sender$1" \
		"ip netns exec $ns_s env FI_RDMX_PATHS=2 FI_LOG_LEVEL=info FI_LOG_PROV=rdmx" \
		"$ST" -p "$T_SERVER_PORT" -n "$PATHS_COUNT" --sizes mixed "$addr_r"
	t_wait_ready "$T_LAST_PID" "sender $1" sender_ports "$1" >/dev/null
	set -- "$1" "${2:-}" $(sender_ports "$1")
	p0=$3 p1=$4
	count_ports "$p0" "$p1" "$2"
	t_reap "$T_LAST_PID" "sender $1"
	t_reap "$T_SERVER_PID" "receiver $1"
	t_out_has "sender$1" '^rdmx_stream: PASS sender' || t_fail "sender $1 printed no PASS"
	t_out_has "receiver$1" '^rdmx_stream: PASS receiver' ||
		t_fail "receiver $1 printed no PASS"
	n0=$(counted "$p0")
	n1=$(counted "$p1")
	[ -n "$n0" ] && [ -n "$n1" ] && [ $((n0 + n1)) -gt 0 ] ||
		t_fail "run $1: no bytes counted from ports $p0 and $p1"
	echo "== run $1: port $p0 carried $n0 bytes, port $p1 $n1"
}

echo "== run 1: two healthy paths"
run 1
[ $((4 * n1)) -ge $((n0 + n1)) ] && [ $((4 * n0)) -ge $((n0 + n1)) ] ||
	t_fail "run 1: one port carried less than a quarter ($n0 and $n1)"
other=$(closing_stat receiver1 rx_other_path)
[ "$other" -gt 0 ] || t_fail "run 1: the receiver took nothing by the second port"
run1="$n0 and $n1 bytes, $other packets taken by the second port"

echo "== run 2: the second path loses $PATHS_LOSS%"
run 2 "$PATHS_LOSS"
probes=$(closing_stat sender2 path_probes)
[ "$probes" -gt 0 ] || t_fail "run 2: the sender never found the lossy port bad"
[ $((10 * n1)) -lt $((n0 + n1)) ] ||
	t_fail "run 2: the lossy port still carried $n1 of $((n0 + n1))"
dropped=$(ip netns exec "$ns_r" nft list table inet rdmx_paths |
	sed -n 's/.*counter packets \([0-9]*\) .* drop.*/\1/p')
[ -n "$dropped" ] && [ "$dropped" -gt 0 ] || t_fail "run 2: the rule dropped nothing"
echo "PASS: paths.sh (run 1: $run1; run 2: $n0 and $n1 bytes, $dropped packets dropped," \
	"$probes probe runs;" \
	"$(sed -n 's/^rdmx_stream: PASS sender: //p' "$T_DIR/sender2.out"))"
