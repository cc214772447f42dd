#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# kill.sh: a receiver dies mid-stream; the sender must notice within the
# unreachable timeout and still complete everything else.
#
# Two receivers, R0 and R1, on loopback; one sender streams 200000 messages
# to each (round-robin, sizes mixed up to max_msg_size, sends completing on
# delivery) with FI_RDMX_UNREACH_MS=1000 and --dead 0. Once R0 has printed
# its first progress line (a tenth of its messages arrived, so the sender
# is streaming), the script SIGKILLs R0. The sender must then get
# FI_EHOSTUNREACH error completions for its sends to R0 and no other error,
# stop sending to R0, and finish R1's stream with R1's DONE; R1 must have
# received every message exactly once (rdmx_stream checks all of that).
#
# It runs twice, once per lane. By the NIC (FI_RDMX_SHM=0) only silence
# tells that R0 is gone: the sender's time_to_error_ms, from posting the
# first send to R0 that went unanswered to that send's error completion,
# must be at least FI_RDMX_UNREACH_MS and at most FI_RDMX_UNREACH_MS +
# 2000 ms. The margin covers the retransmission timer, whose checks come
# at most rto_max (250 ms) apart, plus scheduling delays of a loaded host
# or a sanitizer build. By shared memory (the default on one host) the
# kernel tells that R0's process exited: the sends fail before
# FI_RDMX_UNREACH_MS, which only the shm lane can do. There R0 is first
# stopped (SIGSTOP) and the sender keeps 16 sends in flight per receiver:
# its sends to R0 all reach R0's queue (64 slots, a message takes 2 at
# most) and wait for R0's answer, so no send of the sender's is left to
# fail and the kernel's word of R0's exit must end them. (The ping the
# sender sends a peer that owes it answers fails too if the device saw
# the exit first; if it went into R0's queue just before, only the next
# ping, FI_RDMX_PING_TIMEOUT (5 s) later, would tell.)
#
# Exit status: 0 pass, 1 fail.
set -eu

KILL_COUNT=200000
KILL_UNREACH_MS=1000
KILL_MARGIN_MS=2000

. "$(dirname "$0")/testlib.sh"

t_env_defaults
t_init
t_require_prog "$ST"

# kill_run LANE SHM LO HI [SIGNAL SENDER_OPT...]: the whole scenario with
# FI_RDMX_SHM=SHM (LANE names its outputs); R0's sends must fail LO to HI
# ms after posting. SIGNAL, if given, goes to R0 before its SIGKILL, and
# the sender gets SENDER_OPTs.
kill_run() {
	local lane=$1 env="FI_RDMX_SHM=$2" lo=$3 hi=$4 first="${5:-}" r0 r0_port r0_proc r1 sender ms
	shift 4
	[ $# -eq 0 ] || shift

	echo "== $lane: receivers R0 and R1"
	t_start_server "r0_$lane" "env $env" "$ST" -r -b 127.0.0.1 -p 0
	r0=$T_SERVER_PID
	r0_port=$T_SERVER_PORT
	# The program's own pid (the one above is timeout's, which cannot pass
	# SIGKILL on).
	r0_proc=$(sed -n 's/.* listening on .* pid \([0-9][0-9]*\).*/\1/p' "$T_DIR/r0_$lane.out")
	[ -n "$r0_proc" ] || t_fail "$lane: R0 printed no pid"
	t_start_server "r1_$lane" "env $env" "$ST" -r -b 127.0.0.1 -p 0
	r1=$T_SERVER_PID

	echo "== $lane: sender: $KILL_COUNT messages to each, FI_RDMX_UNREACH_MS=$KILL_UNREACH_MS"
	t_spawn_with "sender_$lane" "env $env FI_RDMX_UNREACH_MS=$KILL_UNREACH_MS" "$ST" \
		-p "$r0_port,$T_SERVER_PORT" -n "$KILL_COUNT" --dead 0 "$@" 127.0.0.1
	sender=$T_LAST_PID
	t_wait_ready "$sender" "sender_$lane" t_out_has "r0_$lane" ': received [0-9]* of '
	[ -z "$first" ] || kill "-$first" "$r0_proc"
	kill -KILL "$r0_proc"
	echo "== $lane: R0 killed after: $(grep ': received ' "$T_DIR/r0_$lane.out" | tail -n 1)"

	t_reap "$sender" "sender_$lane"
	t_reap "$r1" "R1 ($lane)"
	t_collect "$r0"
	[ "$T_RC" -eq 137 ] || t_fail "$lane: R0 exited with status $T_RC, not by SIGKILL (137)"
	t_out_has "sender_$lane" '^rdmx_stream: PASS sender' || t_fail "$lane: the sender printed no PASS"
	t_out_has "r1_$lane" '^rdmx_stream: PASS receiver' || t_fail "$lane: R1 printed no PASS"
	cat "$T_DIR/sender_$lane.out"

	ms=$(t_field "sender_$lane" time_to_error_ms)
	[ -n "$ms" ] || t_fail "$lane: the sender printed no time_to_error_ms"
	[ "$ms" -ge "$lo" ] || t_fail "$lane: R0's sends failed after $ms ms, before $lo ms"
	[ "$ms" -le "$hi" ] || t_fail "$lane: R0's sends failed after $ms ms, later than $hi ms"
	echo "PASS: kill.sh $lane (time_to_error_ms=$ms, limit $lo..$hi)"
}

kill_run nic 0 "$KILL_UNREACH_MS" $((KILL_UNREACH_MS + KILL_MARGIN_MS))
# Sooner than the NIC could know: the shm lane carried R0's stream.
kill_run shm 1 0 $((KILL_UNREACH_MS - 1)) STOP --window 16
