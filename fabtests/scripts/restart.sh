#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# restart.sh: a receiver dies and another takes its address (issue 4).
# A receiver (rdmx_wireup -r --linger) takes RESTART_COUNT tagged sends
# and keeps answering; the sender (rdmx_wireup --restart) watches it
# through rdmx_peer_ops. The script SIGKILLs the receiver, then tells the
# sender (SIGUSR1), which sleeps meanwhile, without progress, so that it
# cannot learn of the death before it posts (however loaded the host).
# It posts RESTART_COUNT more (fewer if the callback reported
# DISCONNECTED first: over the shm lane a dead peer's full queue holds
# posts back until its exit is seen, and a send posted after
# DISCONNECTED starts a new handshake): every one posted must fail
# with FI_EHOSTUNREACH and the callback report DISCONNECTED once within the
# documented bound, FI_RDMX_PING_INTERVAL + FI_RDMX_PING_RETRIES x
# FI_RDMX_PING_TIMEOUT after the receiver was last heard (here 200 +
# 3 x 100 ms), plus RESTART_MARGIN_MS for a loaded host or a sanitizer
# build; far below FI_RDMX_UNREACH_MS (5000), so it is the keepalive that
# gives the receiver up, not the retransmission timer. A new receiver
# then binds the same port and the sender's next RESTART_COUNT sends must
# reach it in order, after a second CONNECTED; it lingers too, so that the
# sender still finds it CONNECTED at the end. Capped at 120 s.
# Exit status: 0 pass, 1 fail.
set -eu

RESTART_COUNT=200
RESTART_PING="FI_RDMX_PING_INTERVAL=200 FI_RDMX_PING_TIMEOUT=100 FI_RDMX_PING_RETRIES=3"
RESTART_BOUND_MS=500
RESTART_MARGIN_MS=1500

. "$(dirname "$0")/testlib.sh"

t_cap_runtime 120 "$@"
t_env_defaults
t_init
WU=$RDMX_BUILDDIR/fabtests/functional/rdmx_wireup
t_require_prog "$WU"

# restart_pid name: the program's own pid from its output (the spawned
# pid is timeout's, which passes neither SIGKILL nor SIGUSR1 on).
restart_pid() {
	sed -n 's/.* pid \([0-9][0-9]*\).*/\1/p' "$T_DIR/$1.out" | head -n 1
}

t_start_server r1 "env $RESTART_PING" "$WU" -r -b 127.0.0.1 -p 0 -n "$RESTART_COUNT" \
	--linger -t 60
r1=$T_SERVER_PID
port=$T_SERVER_PORT
t_spawn_with sender "env $RESTART_PING" "$WU" -p "$port" -n "$RESTART_COUNT" --restart \
	--within-ms $((RESTART_BOUND_MS + RESTART_MARGIN_MS)) -t 60 127.0.0.1
sender=$T_LAST_PID
t_wait_ready "$sender" sender t_out_has sender 'waits for SIGUSR1: the receiver to be killed'
t_out_has r1 '^rdmx_wireup: PASS receiver' || t_fail "the first receiver printed no PASS"
r1_proc=$(restart_pid r1)
sender_proc=$(restart_pid sender)
[ -n "$r1_proc" ] && [ -n "$sender_proc" ] || t_fail "a program printed no pid"
kill -KILL "$r1_proc"
t_collect "$r1"
[ "$T_RC" -eq 137 ] || t_fail "the first receiver exited with status $T_RC, not by SIGKILL"
kill -USR1 "$sender_proc"

t_wait_ready "$sender" sender t_out_has sender 'waits for SIGUSR1: a new receiver'
t_start_server r2 "env $RESTART_PING" "$WU" -r -b 127.0.0.1 -p "$port" -n "$RESTART_COUNT" \
	--linger -t 60
r2=$T_SERVER_PID
kill -USR1 "$sender_proc"
t_reap "$sender" sender
t_out_has r2 '^rdmx_wireup: PASS receiver' || t_fail "the second receiver printed no PASS"
kill -KILL "$(restart_pid r2)"
t_collect "$r2"
[ "$T_RC" -eq 137 ] || t_fail "the second receiver exited with status $T_RC, not by SIGKILL"
t_out_has sender '^rdmx_wireup: PASS sender' || t_fail "the sender printed no PASS"
cat "$T_DIR/sender.out"
echo "PASS: restart.sh (disconnected_ms=$(t_field sender disconnected_ms)," \
	"failed_ms=$(t_field sender failed_ms), limit $((RESTART_BOUND_MS + RESTART_MARGIN_MS)))"
