#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# garbage.sh: hostile datagrams must be dropped and counted, and the
# endpoint must keep working. Starts an rdmx_pingpong server with
# FI_LOG_LEVEL=info, fires rdmx_udp_garbage at its UDP port before any
# client exists, then runs a normal ping-pong (which must pass), and
# finally requires the server's "ep stats: rx_malformed=N" line, printed
# when it closes its endpoint, to show N > 0.
#
# Exit status: 0 pass, 1 fail.
set -eu

GARBAGE_COUNT=5000
GARBAGE_SEED=20240601

. "$(dirname "$0")/testlib.sh"

t_env_defaults
t_init
GARBAGE="$RDMX_BUILDDIR/fabtests/functional/rdmx_udp_garbage"
[ -x "$GARBAGE" ] || t_fail "$GARBAGE not built"

# msg mode: any stray message that got through would match the server's
# next receive and fail the payload checks.
export FI_LOG_LEVEL=info
pp_start_server server -b 127.0.0.1 -m msg -n 200
unset FI_LOG_LEVEL

echo "== $GARBAGE_COUNT garbage datagrams to 127.0.0.1:$PP_PORT (seed $GARBAGE_SEED)"
"$GARBAGE" 127.0.0.1 "$PP_PORT" "$GARBAGE_COUNT" "$GARBAGE_SEED" ||
	t_fail "rdmx_udp_garbage failed"

echo "== ping-pong after the garbage"
pp_client_and_reap client 127.0.0.1 -m msg -n 200

stats=$(grep 'ep stats: rx_malformed=' "$T_DIR/server.err" || :)
[ -n "$stats" ] || t_fail "the server logged no 'ep stats' line"
echo "server: ${stats#*rdmx:}"
malformed=$(echo "$stats" | sed -n 's/.*rx_malformed=\([0-9][0-9]*\).*/\1/p')
[ -n "$malformed" ] || t_fail "cannot read rx_malformed from: $stats"
[ "$malformed" -gt 0 ] || t_fail "rx_malformed=$malformed: no garbage was counted"
[ "$malformed" -le "$GARBAGE_COUNT" ] ||
	t_fail "rx_malformed=$malformed exceeds the $GARBAGE_COUNT datagrams sent"
echo "PASS: garbage.sh (rx_malformed=$malformed of $GARBAGE_COUNT sent)"
