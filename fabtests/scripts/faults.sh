#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# faults.sh: the udp device's fault injection knobs drive swsrd on
# loopback. Both processes drop 10%, duplicate 5% and hold back 10% of the
# datagrams they send (FI_RDMX_UDP_DROP/DUP/REORDER, fixed seeds); 20,000
# tagged messages of mixed sizes must still arrive exactly once and intact
# (rdmx_stream checks every byte), the sender must have retransmitted and
# the receiver must have seen and dropped duplicates. The faults are the
# udp device's, so both processes keep to it (FI_RDMX_SHM=0): on one host
# they would otherwise meet by the shm lane, where nothing is lost.
#
# Exit status: 0 pass, 1 fail.
set -eu

FAULTS_COUNT=20000
FAULTS="FI_RDMX_SHM=0 FI_RDMX_UDP_DROP=10 FI_RDMX_UDP_DUP=5 FI_RDMX_UDP_REORDER=10"

. "$(dirname "$0")/testlib.sh"

t_env_defaults
t_init
t_require_prog "$ST"

echo "== $FAULTS_COUNT mixed messages with $FAULTS"
t_start_server receiver "env $FAULTS FI_RDMX_UDP_SEED=7" \
	"$ST" -r -b 127.0.0.1 -p 0
t_spawn_with sender "env $FAULTS FI_RDMX_UDP_SEED=11" \
	"$ST" -p "$T_SERVER_PORT" -n "$FAULTS_COUNT" --sizes mixed 127.0.0.1
t_reap "$T_LAST_PID" sender
t_reap "$T_SERVER_PID" receiver
t_out_has sender '^rdmx_stream: PASS sender' || t_fail "the sender printed no PASS"
t_out_has receiver '^rdmx_stream: PASS receiver' || t_fail "the receiver printed no PASS"
cat "$T_DIR/sender.out"

resent=$(( $(t_counter sender retransmits) + $(t_counter sender fast_retransmits) ))
dups=$(t_counter receiver duplicates)
[ "$resent" -gt 0 ] || t_fail "the sender resent nothing under 10% drop"
[ "$dups" -gt 0 ] || t_fail "the receiver saw no duplicate under 5% duplication"
echo "PASS: faults.sh (resent=$resent, receiver duplicates=$dups)"
