#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# narrow_path.sh: two IPv6 hosts whose interfaces carry 9000-byte
# packets, joined by a router whose link to the second carries 1500
# (three network namespaces of its own, testlib.sh's t_routed: a at
# fd13:15::1, the router, b at fd13:16::1). rdmx ignores the path MTU the router's ICMPv6 "packet too
# big" reports, since anyone could forge one (attack.sh, part 5), and an
# IPv6 router never fragments (over IPv4 it does: gso.sh), so a user on
# such a path must tell rdmx. The test checks both sides of that:
# 1. With no FI_RDMX_* variable a stream of messages up to 64 KiB from a
#    to b fails, not hangs: its sends complete in error within
#    NP_FAIL_S seconds, and the error's text names FI_RDMX_MTU.
# 2. With FI_RDMX_MTU=1404 (1500 less 96 bytes of IPv6, UDP and swsrd
#    headers) the same stream passes, every message exact.
#
# Needs root and ip; skips (77) without them or without network
# namespaces. Capped at NP_CAP_S seconds; namespaces and processes go on
# every exit path. Exit status: 0 pass, 1 fail, 77 skip.
set -eu

NP_CAP_S=180
NP_FAIL_S=60
NP_COUNT=200
NP_MTU_OK=1404

. "$(dirname "$0")/testlib.sh"

t_netns_require
t_cap_runtime "$NP_CAP_S" "$@"

t_env_defaults
t_init
t_require_prog "$ST"

t_routed np fd13:15::1 fd13:15::2 fd13:16::2 fd13:16::1 64 9000 1500 9000

# np_stream name [env]: a stream from a to b; sets S_RC (the sender's
# status) and SECS (how long it took).
np_stream() {
	local t0
	t_start_server "$1-r" "ip netns exec $ns_r env ${2:-}" \
		"$ST" -r -b fd13:16::1 -p 0 -t "$NP_FAIL_S"
	t0=$(date +%s)
	t_spawn_with "$1-s" "ip netns exec $ns_s env ${2:-}" \
		"$ST" -p "$T_SERVER_PORT" -n "$NP_COUNT" --sizes mixed -t "$NP_FAIL_S" fd13:16::1
	t_collect "$T_LAST_PID"
	S_RC=$T_RC
	SECS=$(($(date +%s) - t0))
	# A receiver whose sender failed would wait for it in vain.
	[ "$S_RC" -eq 0 ] || kill "$T_SERVER_PID" 2>/dev/null || :
	t_collect "$T_SERVER_PID"
}

np_stream narrow
echo "== no FI_RDMX_MTU: sender status $S_RC after $SECS s"
[ "$S_RC" -ne 0 ] || t_fail "a stream through the narrow path passed: was the router's link narrow?"
[ "$S_RC" -ne 124 ] && [ "$SECS" -lt "$NP_FAIL_S" ] ||
	t_fail "the stream hung instead of failing ($SECS s)"
grep -h 'error completion' "$T_DIR/narrow-s.out" "$T_DIR/narrow-s.err" | head -n 1
grep -q 'peer unreachable.*FI_RDMX_MTU' "$T_DIR/narrow-s.out" "$T_DIR/narrow-s.err" ||
	t_fail "the sender's error does not name FI_RDMX_MTU"

np_stream fitted "FI_RDMX_MTU=$NP_MTU_OK"
echo "== FI_RDMX_MTU=$NP_MTU_OK: sender status $S_RC after $SECS s"
[ "$S_RC" -eq 0 ] && t_out_has fitted-s '^rdmx_stream: PASS sender' &&
	t_out_has fitted-r '^rdmx_stream: PASS receiver' ||
	t_fail "the stream with FI_RDMX_MTU=$NP_MTU_OK failed"
echo "PASS: narrow_path.sh"
