#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# sizes.sh: messages of every size between two processes, and their order.
#
# 1. Sizes: for each size a receiver and a sender (rdmx_stream, every
#    byte checked) run with FI_RDMX_MTU=1500, so eager ends at 1468
#    bytes and medium at FI_RDMX_MEDIUM_MAX (64 KiB): 0 B, 1 B, the eager edge
#    (1467, 1468, 1469), the packet edge (1499, 1500, 1501), 64 KiB,
#    1 MiB, 64 MiB and 1 GiB, each sent to posted receives (expected) and
#    to a receiver that posts nothing for 300 ms (unexpected: the bytes, or
#    for long messages the RTS alone, wait for the receive), as tagged
#    messages and as untagged ones (fi_senddata, fi_recv). Both processes
#    are on one host, so they meet by shared memory; the tagged runs have
#    every long message read by the receiver (long-read, which over shared
#    memory needs FI_RDMX_SHM_READ_MIN), the untagged ones turn it off
#    (FI_RDMX_LONG_READ=0) so that the credit path (CTS, DATA through the
#    ring, the default over shared memory) moves every size too.
# 2. Order: 100000 messages of mixed sizes from 0 B to 1 MiB (eager,
#    medium and long at the loopback MTU) to one receiver whose n-th
#    posted wildcard receive must take the n-th message sent
#    (rdmx_stream --ordered; completions may come in any order).
# The same order check runs under 5% loss in netns_loss.sh.
#
# Needs about 2.5 GB of memory (a 1 GiB message on each side). Capped at
# 600 s. Exit status: 0 pass, 1 fail.
set -eu

SIZES_SMALL="0 1 1467 1468 1469 1499 1500 1501 65536 1048576 67108864"
SIZES_GIB=1073741824
SIZES_HOLD_MS=300
SIZES_ORDER_COUNT=100000

. "$(dirname "$0")/testlib.sh"

t_cap_runtime 600 "$@"
t_env_defaults
t_init
t_require_prog "$ST"

# sizes_run name receiver-args -- sender-args: one receiver and one sender.
sizes_run() {
	local name=$1 env=$2 rargs=$3 sargs=$4

	t_start_server "$name-receiver" "env $env" "$ST" -r -b 127.0.0.1 -p 0 $rargs
	t_spawn_with "$name-sender" "env $env" "$ST" -p "$T_SERVER_PORT" $sargs 127.0.0.1
	t_reap "$T_LAST_PID" "$name sender"
	t_reap "$T_SERVER_PID" "$name receiver"
	t_out_has "$name-sender" '^rdmx_stream: PASS sender' ||
		t_fail "$name: the sender printed no PASS"
	t_out_has "$name-receiver" '^rdmx_stream: PASS receiver' ||
		t_fail "$name: the receiver printed no PASS"
	sed -n 's/^rdmx_stream: PASS sender: /-- '"$name"': /p' "$T_DIR/$name-sender.out"
}

for size in $SIZES_SMALL $SIZES_GIB; do
	# Four messages of each size, two in flight; a single one of a GiB.
	window=2 count=4
	[ "$size" -lt "$SIZES_GIB" ] || window=1 count=1
	for hold in 0 $SIZES_HOLD_MS; do
		kind=expected
		[ "$hold" -eq 0 ] || kind=unexpected
		for api in tagged untagged; do
			flag="" read=1 mix="--sizes max --max-size $size"
			[ "$api" = tagged ] || flag=--untagged read=0
			# A 0-byte message: every message of the zero mix, buffers of 1.
			[ "$size" -gt 0 ] || mix="--sizes zero --max-size 1"
			sizes_run "$size-$kind-$api" \
				"FI_RDMX_MTU=1500 FI_RDMX_LONG_READ=$read FI_RDMX_SHM_READ_MIN=1" \
				"--max-size $((size > 0 ? size : 1)) --window $window --hold-ms $hold --ordered $flag" \
				"-n $count $mix --window $window $flag"
		done
	done
done

sizes_run order "FI_RDMX_MTU=0" "--max-size 1048576 --ordered" \
	"-n $SIZES_ORDER_COUNT --sizes mixed --max-size 1048576"
echo "PASS: sizes.sh"
