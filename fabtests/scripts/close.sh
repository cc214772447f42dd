#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# close.sh: an endpoint closed in order is seen by its peer at once
# (issue 16, item 6). A server (rdmx_close -r) takes a client's small
# messages and its GO, prints its clock (closing_ns) and calls fi_close
# on its endpoint; the client had 8 long sends the server never received
# outstanding. The client must see them all fail with FI_ECONNRESET, GO
# complete, and the rdmx_peer_ops callback report CLOSED; the script
# checks that the first of these (seen_ns, the same CLOCK_MONOTONIC on
# one host) came within CLOSE_SEEN_MS of closing_ns, far below what a
# silent peer costs (keepalive, FI_RDMX_UNREACH_MS: seconds). A send the
# client posts afterwards must fail with FI_ECONNRESET too, as fast. A
# second server then binds the same port; the client removes the address
# from its AV, inserts it again and must reach the new server: a new
# session. Under RDMX_WRAP (valgrind) the bound is CLOSE_SEEN_WRAP_MS.
# Capped at 120 s. Exit status: 0 pass, 1 fail.
set -eu

CLOSE_SEEN_MS=100
CLOSE_SEEN_WRAP_MS=2000

. "$(dirname "$0")/testlib.sh"

t_cap_runtime 120 "$@"
t_env_defaults
t_init
RC=$RDMX_BUILDDIR/fabtests/functional/rdmx_close
t_require_prog "$RC"
bound=$CLOSE_SEEN_MS
[ -z "${RDMX_WRAP:-}" ] || bound=$CLOSE_SEEN_WRAP_MS

t_start_server s1 "" "$RC" -r -b 127.0.0.1 -p 0
s1=$T_SERVER_PID
port=$T_SERVER_PORT
t_spawn client "$RC" -p "$port" --within-ms "$bound" --again 127.0.0.1
client=$T_LAST_PID
t_reap "$s1" "the first server"
t_wait_ready "$client" client t_out_has client 'waits for SIGUSR1: a new server'
t_start_server s2 "" "$RC" -r -b 127.0.0.1 -p "$port"
client_proc=$(sed -n 's/.*: pid \([0-9][0-9]*\) waits.*/\1/p' "$T_DIR/client.out")
[ -n "$client_proc" ] || t_fail "the client printed no pid"
kill -USR1 "$client_proc"
t_reap "$T_SERVER_PID" "the second server"
t_reap "$client" client
t_out_has client '^rdmx_close: PASS client' || t_fail "the client printed no PASS"
t_out_has s1 '^rdmx_close: PASS server' || t_fail "the first server printed no PASS"
cat "$T_DIR/s1.out" "$T_DIR/client.out"

closing=$(t_field s1 closing_ns)
seen=$(t_field client seen_ns)
[ -n "$closing" ] && [ -n "$seen" ] || t_fail "closing_ns or seen_ns missing"
[ "$seen" -ge "$closing" ] || t_fail "seen_ns $seen before closing_ns $closing"
ms=$(( (seen - closing) / 1000000 ))
us=$(( (seen - closing) / 1000 ))
[ "$ms" -lt "$bound" ] || t_fail "the close was seen after $ms ms, limit $bound ms"
echo "PASS: close.sh (close seen after ${us} us, limit $bound ms;" \
	"close_us=$(t_field s1 close_us); new_send_ms=$(t_field client new_send_ms))"
