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
# The script checks the sender's time_to_error_ms: from posting the first
# send to R0 that went unanswered to that send's error completion, at
# least FI_RDMX_UNREACH_MS and at most FI_RDMX_UNREACH_MS + 2000 ms. The
# margin covers the retransmission timer, whose checks come at most
# rto_max (250 ms) apart, plus scheduling delays of a loaded host or a
# sanitizer build.
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

echo "== receivers R0 and R1"
t_start_server r0 "" "$ST" -r -b 127.0.0.1 -p 0
r0=$T_SERVER_PID
r0_port=$T_SERVER_PORT
# The program's own pid (the one above is timeout's, which cannot pass
# SIGKILL on).
r0_proc=$(sed -n 's/.* listening on .* pid \([0-9][0-9]*\).*/\1/p' "$T_DIR/r0.out")
[ -n "$r0_proc" ] || t_fail "R0 printed no pid"
t_start_server r1 "" "$ST" -r -b 127.0.0.1 -p 0
r1=$T_SERVER_PID

echo "== sender: $KILL_COUNT messages to each, FI_RDMX_UNREACH_MS=$KILL_UNREACH_MS"
t_spawn_with sender "env FI_RDMX_UNREACH_MS=$KILL_UNREACH_MS" "$ST" \
	-p "$r0_port,$T_SERVER_PORT" -n "$KILL_COUNT" --dead 0 127.0.0.1
sender=$T_LAST_PID
t_wait_ready "$sender" sender t_out_has r0 ': received [0-9]* of '
kill -KILL "$r0_proc"
echo "== R0 killed after: $(grep ': received ' "$T_DIR/r0.out" | tail -n 1)"

t_reap "$sender" sender
t_reap "$r1" R1
t_collect "$r0"
[ "$T_RC" -eq 137 ] || t_fail "R0 exited with status $T_RC, not by SIGKILL (137)"
t_out_has sender '^rdmx_stream: PASS sender' || t_fail "the sender printed no PASS"
t_out_has r1 '^rdmx_stream: PASS receiver' || t_fail "R1 printed no PASS"
cat "$T_DIR/sender.out"

ms=$(t_field sender time_to_error_ms)
[ -n "$ms" ] || t_fail "the sender printed no time_to_error_ms"
[ "$ms" -ge "$KILL_UNREACH_MS" ] ||
	t_fail "R0's sends failed after $ms ms, before FI_RDMX_UNREACH_MS=$KILL_UNREACH_MS"
[ "$ms" -le $((KILL_UNREACH_MS + KILL_MARGIN_MS)) ] ||
	t_fail "R0's sends failed after $ms ms, later than $KILL_UNREACH_MS + $KILL_MARGIN_MS ms"
echo "PASS: kill.sh (time_to_error_ms=$ms, limit $KILL_UNREACH_MS..$((KILL_UNREACH_MS + KILL_MARGIN_MS)))"
