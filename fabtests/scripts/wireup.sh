#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# wireup.sh: sends posted before their receiver exists (issue 4). A sender
# (rdmx_wireup --no-eagain) posts 1000 tagged sends to a port nothing
# listens on: rdmx must accept every one at once (they wait on the peer's
# pending queue while the handshake's RESETs go unanswered, no
# -FI_EAGAIN). The receiver starts WIREUP_LATE_S seconds later on that
# port; every message must then arrive once, in the order sent, with its
# length and bytes (every hundredth is a 200,000-byte long message), and
# the sender must see all 1000 send completions (FI_DELIVERY_COMPLETE).
# Then the pending queue's bound with a small FI_RDMX_PENDING_MAX:
# rdmx_api_test "pending queue" (64 sends taken, -FI_EAGAIN past them,
# other peers unaffected, FI_ECANCELED for each at close).
# The delay is the scenario itself, not a wait for something to be
# ready. Capped at 120 s. Exit status: 0 pass, 1 fail.
set -eu

WIREUP_COUNT=1000
WIREUP_LATE_S=2

. "$(dirname "$0")/testlib.sh"

t_cap_runtime 120 "$@"
t_env_defaults
t_init
WU=$RDMX_BUILDDIR/fabtests/functional/rdmx_wireup
t_require_prog "$WU"

# A UDP port nothing uses now (the receiver binds it later).
port=""
for try in 1 2 3 4 5 6 7 8; do
	p=$((20000 + ($$ * 7 + try * 7919) % 30000))
	if ! ss -Hlun "sport = :$p" 2>/dev/null | grep -q .; then
		port=$p
		break
	fi
done
[ -n "$port" ] || t_fail "no free UDP port found"

t_spawn_with sender "env" "$WU" -p "$port" -n "$WIREUP_COUNT" --no-eagain -t 60 127.0.0.1
sender=$T_LAST_PID
t_wait_ready "$sender" sender t_out_has sender '^rdmx_wireup: round 1: posted'
t_out_has sender '^rdmx_wireup: round 1: posted 1000 sends, 0 -FI_EAGAIN' ||
	t_fail "the sender did not post every send at once"
sleep "$WIREUP_LATE_S"
t_spawn_with receiver "env" "$WU" -r -b 127.0.0.1 -p "$port" -n "$WIREUP_COUNT" -t 60
receiver=$T_LAST_PID
t_reap "$receiver" receiver
t_reap "$sender" sender
t_out_has receiver '^rdmx_wireup: PASS receiver: 1000 messages in order' ||
	t_fail "the receiver printed no PASS"
t_out_has sender '^rdmx_wireup: PASS sender: 1000 sends delivered' ||
	t_fail "the sender printed no PASS"
t_spawn_with bound "env FI_RDMX_PENDING_MAX=64" \
	"$RDMX_BUILDDIR/fabtests/unit/rdmx_api_test" "pending queue"
t_reap "$T_LAST_PID" bound
t_out_has bound '^PASS sends to another peer still go out: payload' ||
	t_fail "the bound of the pending queue was not checked"
echo "PASS: wireup.sh (receiver started ${WIREUP_LATE_S} s after 1000 sends were posted)"
