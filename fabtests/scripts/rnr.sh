#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# rnr.sh: receiver-not-ready flow control, end to end on loopback.
#
# The receiver has 8 packet buffers and no memory for unexpected messages
# (FI_RDMX_RX_BUFS=8 FI_RDMX_UNEXP_MAX=0) and posts no receive for 1.5 s
# after the handshake (--hold-ms 1500, still progressing): its first 8
# messages stay unexpected in its packet buffers, then its device refuses
# every packet (RNR). The sender streams 2000 small messages: it must see
# the refusals (rdmx_stream --expect-rnr: rnr_received > 0 and
# rnr_backoffs or rnr_completions > 0) and -FI_EAGAIN (--expect-eagain),
# and, once the receiver posts its receives, every message must arrive
# exactly once with the right length and bytes (rdmx_stream checks; the
# sender also checks the receiver's DONE). This script also checks the
# receiver's side of the counters: rnr_sent > 0 and rx_unexpected >= 8.
#
# It runs twice. With sends completing on delivery, refused sends stay
# outstanding, so the sender's window is made larger than the provider's
# send queue (--window $RNR_COUNT): the sender keeps posting into the
# refusals and must be told -FI_EAGAIN (with a window of 64 it would sit
# waiting for completions and might never post while the peer is blocked).
# With --completion inject (FI_INJECT_COMPLETE), small sends complete when
# posted, so the default window suffices, and the refused ones must still
# arrive.
#
# RNR is the NIC lane's (swsrd refuses a packet it has no buffer for;
# by the shm lane a packet not taken waits in the receiver's ring and the
# sender is told -FI_EAGAIN), so both processes keep to udp
# (FI_RDMX_SHM=0), as on two hosts.
#
# Exit status: 0 pass, 1 fail.
set -eu

RNR_BUFS=8
RNR_HOLD_MS=1500
RNR_COUNT=2000

. "$(dirname "$0")/testlib.sh"

t_env_defaults
t_init
t_require_prog "$ST"

# rnr_case completion sender-args...: one receiver + sender run.
rnr_case() {
	local mode=$1 rnr_sent unexpected
	shift
	echo "== --completion $mode: receiver with $RNR_BUFS packet buffers, no" \
		"unexpected memory, holding its receives $RNR_HOLD_MS ms"
	t_start_server "$mode-receiver" \
		"env FI_RDMX_SHM=0 FI_RDMX_RX_BUFS=$RNR_BUFS FI_RDMX_UNEXP_MAX=0" \
		"$ST" -r -b 127.0.0.1 -p 0 --hold-ms "$RNR_HOLD_MS"
	t_spawn_with "$mode-sender" "env FI_RDMX_SHM=0" "$ST" -p "$T_SERVER_PORT" -n "$RNR_COUNT" \
		--sizes small --completion "$mode" --expect-rnr --expect-eagain "$@" \
		127.0.0.1
	t_reap "$T_LAST_PID" "$mode sender"
	t_reap "$T_SERVER_PID" "$mode receiver"
	t_out_has "$mode-sender" '^rdmx_stream: PASS sender' ||
		t_fail "the $mode sender printed no PASS"
	t_out_has "$mode-receiver" '^rdmx_stream: PASS receiver' ||
		t_fail "the $mode receiver printed no PASS"
	cat "$T_DIR/$mode-sender.out"

	rnr_sent=$(t_counter "$mode-receiver" rnr_sent)
	unexpected=$(t_counter "$mode-receiver" rx_unexpected)
	[ "$rnr_sent" -gt 0 ] || t_fail "the $mode receiver refused no packet (rnr_sent=0)"
	[ "$unexpected" -ge "$RNR_BUFS" ] || t_fail "the $mode receiver held" \
		"$unexpected unexpected messages, expected >= $RNR_BUFS"
	echo "-- $mode: sender rnr_received=$(t_counter "$mode-sender" rnr_received)" \
		"rnr_completions=$(t_counter "$mode-sender" rnr_completions)" \
		"rnr_backoffs=$(t_counter "$mode-sender" rnr_backoffs)" \
		"eagain=$(t_counter "$mode-sender" eagain);" \
		"receiver rnr_sent=$rnr_sent rx_unexpected=$unexpected"
}

rnr_case delivery --window "$RNR_COUNT"
rnr_case inject
echo "PASS: rnr.sh"
