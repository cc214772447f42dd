#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# attack.sh: an off-path attacker on the LAN against a verified stream
# (issue 17, part 5). Two network namespaces of its own joined by a veth
# pair (10.213.13.0/30); an rdmx_stream receiver in one, its sender in the
# other, no FI_RDMX_* variable set. rdmx_forge (a raw socket) forges
# datagrams from a live peer's own address and port:
#
# 1. While a stream runs, one attack at a time: every rdm packet inside a
#    swsrd DATA (handshake RESET, PROBE, the answers, CLOSE, EAGER, VOID,
#    MEDIUM, RTS, long DATA, DACK), SKIP and CHALLENGE from the sender's
#    address at the receiver; ACK of every psn, RNR, RNR TOO_BIG, CTS,
#    DACK, handshake answers and CHALLENGE from the receiver's at the
#    sender; then near-valid (one byte changed) and random datagrams. Each
#    carries a dst_tag guessed (zero, random, sequential) or stale (seen
#    in an earlier run, recorded by rdmx_forge --observe). Every stream
#    must pass, each message exact and no error completion. Printed per
#    attack: datagrams sent, the victim's rx_unauth, challenges,
#    rx_malformed and rx_dropped above those of the same stream without
#    attack, the other side's rx_unauth (the challenges reach it), and
#    the stream's result.
# 2. ATTACK_ANON anonymous senders (real source ports, each proves it
#    receives at its address with the cookie of its CHALLENGE and sends a
#    RESET); then a genuine newcomer must connect and complete its stream
#    at most ATTACK_NEWCOMER_MS later than a newcomer alone does.
# 3. ATTACK_FLOOD hostile datagrams from two forgers at once while a
#    stream runs: valid (with hostile values: a message id far ahead, a
#    medium message of a MiB never completed), near-valid and random in
#    turn; half spoofed from the sender's address, half from the
#    attacker's own address inside an rdm session it opened (so they
#    reach the rdm layer). The receiver's RSS growth (VmHWM at the end
#    less VmRSS before) must stay below the per-endpoint budget
#    (FI_RDMX_RX_BUDGET, default 64 MiB), its VmData growth below the
#    budget and a quarter (not in a sanitizer build: ASan's quarantine);
#    with FI_LOG_LEVEL=warn its stderr must stay below ATTACK_LOG_MAX
#    lines, else the lines that flood are named (function():line). The
#    flood comes at ATTACK_FLOOD_RATE per forger (see there).
# 4. ATTACK_HOLD valid packets, each beginning a medium message of up to
#    a MiB that is never completed, from the attacker's own session while
#    a stream runs: the same bounds.
#
# 5. A forged ICMP "fragmentation needed" naming ATTACK_PMTU, sent to the
#    sender as from a router on its way to the receiver and quoting a
#    datagram of its running stream, and another quoting one of a plain
#    socket beside it (a canary, port ATTACK_CANARY_PORT) so that the
#    sender's kernel records that path MTU for the receiver (`ip route
#    get` shows it; else the check proves nothing and fails). The stream
#    keeps sending in runs (its tx_gso at least half the baseline's,
#    which an endpoint that gave up segmenting does not reach), and a new
#    stream started after it cuts its messages at the interface MTU, not
#    at the forged one (its tx_gso below one and a half times the
#    baseline's; 524-byte packets give about three times).
#
# Every check runs; the test fails at the end if any did. Needs root and
# ip; skips (77) without them or without network namespaces. Capped at
# ATTACK_CAP_S seconds; namespaces and processes go on every exit path.
# Exit status: 0 pass, 1 fail, 77 skip.
set -eu

ATTACK_NET=10.213.13
ATTACK_CAP_S=600
ATTACK_STREAM_N=10000		# messages of each stream under attack
# An attack must end while its stream still runs, so each stream takes
# its length from a pace (rdmx_stream --rate), not from the machine: left
# alone, 10000 messages take 0.1 s here and 60000 take 0.5 s, less than
# an attack of 15000 datagrams (0.3 s) or the start of the flood (0.5 s
# after its stream's). At 5000 a second a stream of 10000 takes 2 s,
# six times its attack; an attack that slows it only lengthens it.
ATTACK_STREAM_RATE=5000
ATTACK_COUNT=15000		# datagrams of each attack
ATTACK_RATE=50000		# datagrams per second
ATTACK_ANON=10000
ATTACK_PORT_BASE=20000		# the anonymous ports: below the ephemeral range
# A newcomer after the anonymous senders may take this much longer than
# one alone: a retry of its handshake (FI_RDMX_HS_RETRY_MS, 100) and
# room for a loaded machine, far below the 5 s (FI_RDMX_UNREACH_MS) the
# senders' silence takes to be noticed.
ATTACK_NEWCOMER_MS=1000
ATTACK_NEWCOMER_CAP_S=15
ATTACK_FLOOD=1000000
# Per forger: 100,000 datagrams a second in all, what one core of this
# 2-core machine reads beside the stream. Beyond what the receiver can
# read, the kernel drops the stream's packets with the flood's, as for
# any UDP service: that measures the machine, not the protocol.
ATTACK_FLOOD_RATE=50000
# 20 s, twice the flood (and ten times the medium messages held).
ATTACK_FLOOD_STREAM_N=60000
ATTACK_FLOOD_STREAM_RATE=3000
ATTACK_HOLD=100000		# medium packets of messages never completed
ATTACK_LOG_MAX=100
ATTACK_PMTU=552			# the kernel's floor for a learned path MTU
ATTACK_CANARY_PORT=19999	# below the ephemeral range and ATTACK_PORT_BASE
ATTACK_SEED=20261125
# No wait of a stream for a completion lasts 30 s, under any attack.
ATTACK_WAIT_S=30
: "${FI_RDMX_RX_BUDGET:=67108864}"
ATTACK_BUDGET_KB=$((FI_RDMX_RX_BUDGET / 1024))
ATTACK_DATA_KB=$((ATTACK_BUDGET_KB * 5 / 4))
# Past this the flood is stopped: the verdict is in, the host is shared.
ATTACK_RSS_STOP_KB=$((4 * ATTACK_BUDGET_KB + 262144))
: "${RDMX_TEST_TIMEOUT:=90}"

. "$(dirname "$0")/testlib.sh"

t_netns_require
t_cap_runtime "$ATTACK_CAP_S" "$@"

t_env_defaults
t_init
t_require_prog "$ST"
FORGE="$RDMX_BUILDDIR/fabtests/functional/rdmx_forge"
t_require_prog "$FORGE"

t_link atk "$ATTACK_NET"
FAILURES=""
TAGS="$T_DIR/stale.tags"

# a_fail what: records a failed check; the run goes on.
a_fail() {
	echo "FAILED: $*"
	FAILURES="$FAILURES
  - $*"
}

# a_child pid: the program `timeout` (pid) runs.
a_child() {
	local n=0 c=""
	while [ -z "$c" ] && [ "$n" -lt 50 ]; do
		c=$(pgrep -P "$1" | head -n 1 || :)
		[ -n "$c" ] || sleep 0.02
		n=$((n + 1))
	done
	echo "$c"
}

# a_wait_port: waits (bounded) for the sender's socket in ns_s; sets SPORT.
a_wait_port() {
	local n=0
	SPORT=""
	while [ -z "$SPORT" ] && [ "$n" -lt 250 ]; do
		SPORT=$(t_udp_port "$ns_s")
		[ -n "$SPORT" ] || sleep 0.02
		n=$((n + 1))
	done
	[ -n "$SPORT" ] || t_fail "the sender's UDP socket never appeared in $ns_s"
}

# a_stream_start name count rate [receiver env]: a receiver and a sender
# of count messages, rate a second; sets RPID, SPID (the timeouts' pids),
# RPORT, SPORT.
a_stream_start() {
	t_start_server "$1-r" "ip netns exec $ns_r ${4:-}" \
		"$ST" -r -b "$addr_r" -p 0 -t "$ATTACK_WAIT_S"
	RPID=$T_SERVER_PID
	RPORT=$T_SERVER_PORT
	t_spawn_with "$1-s" "ip netns exec $ns_s" \
		"$ST" -p "$RPORT" -n "$2" --rate "$3" --sizes mixed -t "$ATTACK_WAIT_S" \
		"$addr_r"
	SPID=$T_LAST_PID
	a_wait_port
}

# a_stream_end name [sender_status]: waits for both (the sender unless
# its status is given); sets RESULT to PASS or what failed.
a_stream_end() {
	local r s
	if [ -n "${2:-}" ]; then
		s=$2
	else
		t_collect "$SPID"
		s=$T_RC
	fi
	t_collect "$RPID"
	r=$T_RC
	RESULT=PASS
	if [ "$s" -eq 124 ]; then
		RESULT="FAIL(sender not done within its time bound, killed)"
	elif [ "$s" -ne 0 ] || ! t_out_has "$1-s" '^rdmx_stream: PASS sender'; then
		RESULT="FAIL(sender exit $s: $(grep -h 'rdmx_stream: ' "$T_DIR/$1-s.err" | head -n 1))"
	elif [ "$r" -ne 0 ] || ! t_out_has "$1-r" '^rdmx_stream: PASS receiver'; then
		RESULT="FAIL(receiver exit $r: $(grep -h 'rdmx_stream: ' "$T_DIR/$1-r.err" | head -n 1))"
	elif [ "$(t_field "$1-s" tx_errors)" != 0 ] || [ "$(t_field "$1-r" tx_errors)" != 0 ]; then
		RESULT="FAIL(tx_errors)"
	fi
}

# a_delta name key base: name's counter key less the baseline's.
a_delta() {
	local v b
	v=$(t_field "$1" "$2")
	b=$(t_field "$3" "$2")
	[ -n "$v" ] || { echo "?"; return; }
	echo $((v - ${b:-0}))
}

# a_forge name ns args...: runs rdmx_forge in ns (output in name.out);
# sets SENT.
a_forge() {
	local name=$1 ns=$2
	shift 2
	ip netns exec "$ns" timeout 60 "$FORGE" --seed "$ATTACK_SEED" "$@" \
		>"$T_DIR/$name.out" 2>"$T_DIR/$name.err" ||
		a_fail "$name: rdmx_forge failed: $(cat "$T_DIR/$name.err")"
	SENT=$(t_field "$name" sent)
}

# a_log_top name: the five most frequent provider warnings in name.err,
# by function():line, numbers in the message shown as N.
a_log_top() {
	sed -n 's/.*:rdmx:[a-z_]*:\([a-z_0-9]*():[0-9]*\)<[a-z]*> \(.*\)/\1|\2/p' \
		"$T_DIR/$1.err" |
		awk -F'|' '{ m = $2; gsub(/[0-9]+/, "N", m); print $1 " " m }' |
		sort | uniq -c | sort -rn | head -n 5 | sed 's/^/     /'
}

T0=$(date +%s)
# a_phase title: prints a phase's title after the seconds run so far.
a_phase() {
	echo "== [$(($(date +%s) - T0)) s] $*"
}

echo "== receiver in $ns_r ($addr_r), sender in $ns_s ($addr_s)"
a_phase "baseline: a stream of $ATTACK_STREAM_N messages, no attack; its tags recorded"
a_stream_start base "$ATTACK_STREAM_N" "$ATTACK_STREAM_RATE"
ip netns exec "$ns_r" timeout 30 "$FORGE" --observe "$TAGS" --secs 3 "$addr_r" "$RPORT" \
	>"$T_DIR/observe.out" 2>"$T_DIR/observe.err" || t_fail "rdmx_forge --observe failed"
a_stream_end base
[ "$RESULT" = PASS ] || t_fail "the stream fails without any attack: $RESULT"
cat "$T_DIR/observe.out"
for side in r s; do
	echo "   baseline $side: rx_unauth=$(t_field base-$side rx_unauth)" \
		"challenges=$(t_field base-$side challenges)" \
		"rx_malformed=$(t_field base-$side rx_malformed)" \
		"rx_dropped=$(t_field base-$side rx_dropped)"
done

# a_attack name dir forge-args...: a stream, and while it runs the attack
# from the sender's address and port at the receiver (dir r) or from the
# receiver's at the sender (dir s); prints its row.
a_attack() {
	local name=$1 dir=$2 victim peer during
	shift 2
	a_stream_start "$name" "$ATTACK_STREAM_N" "$ATTACK_STREAM_RATE"
	if [ "$dir" = r ]; then
		victim=$name-r peer=$name-s
		a_forge "$name-forge" "$ns_s" --from "$addr_s:$SPORT" "$@" \
			-n "$ATTACK_COUNT" --rate "$ATTACK_RATE" \
			--tags zero,random,seq,stale --tag-file "$TAGS" "$addr_r" "$RPORT"
	else
		victim=$name-s peer=$name-r
		a_forge "$name-forge" "$ns_r" --from "$addr_r:$RPORT" "$@" \
			-n "$ATTACK_COUNT" --rate "$ATTACK_RATE" \
			--tags zero,random,seq,stale --tag-file "$TAGS" "$addr_s" "$SPORT"
	fi
	during=yes
	kill -0 "$SPID" 2>/dev/null || during=no
	a_stream_end "$name"
	printf '%-15s %-3s %7s %9s %6s %6s %6s %9s %7s  %s\n' "$name" \
		"$([ "$dir" = r ] && echo s2r || echo r2s)" "${SENT:-?}" \
		"$(a_delta "$victim" rx_unauth "base-${victim##*-}")" \
		"$(a_delta "$victim" challenges "base-${victim##*-}")" \
		"$(a_delta "$victim" rx_malformed "base-${victim##*-}")" \
		"$(a_delta "$victim" rx_dropped "base-${victim##*-}")" \
		"$(a_delta "$peer" rx_unauth "base-${peer##*-}")" "$during" "$RESULT"
	[ "$RESULT" = PASS ] || a_fail "attack $name ($dir): the stream: $RESULT"
	[ "$during" = yes ] || a_fail "attack $name: the stream ended before the attack did"
}

a_phase "attacks: $ATTACK_COUNT datagrams each at $ATTACK_RATE/s during a stream," \
	"dst_tag zero/random/seq/stale in turn; counters above the baseline's"
echo "   (which vary by one or two: the handshake's own first packets draw challenges)"
printf '%-15s %-3s %7s %9s %6s %6s %6s %9s %7s  %s\n' attack dir sent \
	rx_unauth chal malf drop peer_unau during stream
a_attack hs-reset r --kind hs-reset
a_attack hs-probe r --kind hs-probe
a_attack hs-answers r --kind hs-ack,hs-probe-ack,hs-ping,hs-pong
a_attack hs-close r --kind hs-close
a_attack eager r --kind eager
a_attack eager-void r --kind void
a_attack medium r --kind medium
a_attack rts r --kind rts
a_attack long-data r --kind data
a_attack dack r --kind dack
a_attack skip r --kind skip
a_attack challenge r --kind challenge
a_attack near-valid r --kind all --content near
a_attack random r --kind all --content random
a_attack ack-every-psn s --kind ack
a_attack rnr s --kind rnr
a_attack rnr-too-big s --kind rnr-big
a_attack cts s --kind cts
a_attack dack-to-tx s --kind dack
a_attack hs-to-tx s --kind hs
a_attack challenge-tx s --kind challenge
a_attack near-to-tx s --kind all --content near

a_phase "a forged ICMP fragmentation needed (MTU $ATTACK_PMTU) at the sender during a stream, then a new stream"
base_gso=$(t_field base-s tx_gso)
a_stream_start pmtu "$ATTACK_STREAM_N" "$ATTACK_STREAM_RATE"
a_forge pmtu-forge "$ns_r" --from "$addr_s:$SPORT" --icmp-too-big "$ATTACK_PMTU" \
	"$addr_r" "$RPORT"
# The canary's datagrams (random bytes, 4 s of them) reach the receiver as garbage.
ip netns exec "$ns_s" timeout 30 "$FORGE" --bind "$addr_s:$ATTACK_CANARY_PORT" \
	--content random -n 200 --rate 50 "$addr_r" "$RPORT" >"$T_DIR/canary.out" 2>&1 &
canary=$!
n=0
hex=$(printf '%04X' "$ATTACK_CANARY_PORT")
until ip netns exec "$ns_s" grep -q ":$hex " /proc/net/udp || [ "$n" -ge 100 ]; do
	sleep 0.02
	n=$((n + 1))
done
a_forge pmtu-canary "$ns_r" --from "$addr_s:$ATTACK_CANARY_PORT" \
	--icmp-too-big "$ATTACK_PMTU" "$addr_r" "$RPORT"
learned=$(ip -n "$ns_s" route get "$addr_r" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')
kill "$canary" 2>/dev/null || :
wait "$canary" 2>/dev/null || :
a_stream_end pmtu
a_stream_start pmtu-next "$ATTACK_STREAM_N" "$ATTACK_STREAM_RATE"
a_stream_end pmtu-next
next_result=$RESULT
ip -n "$ns_s" route flush cache
echo "   the sender's kernel learned path MTU ${learned:-none}; tx_gso: baseline $base_gso," \
	"during $(t_field pmtu-s tx_gso), the next stream $(t_field pmtu-next-s tx_gso)"
echo "   streams: $RESULT, then $next_result"
[ "$learned" = "$ATTACK_PMTU" ] ||
	a_fail "the sender's kernel did not take the forged ICMP (path MTU ${learned:-none}): nothing was checked"
[ "$RESULT" = PASS ] || a_fail "the stream during the forged ICMP: $RESULT"
[ "$next_result" = PASS ] || a_fail "the stream after the forged ICMP: $next_result"
[ "$(($(t_field pmtu-s tx_gso) * 2))" -ge "$base_gso" ] ||
	a_fail "the stream stopped segmenting after the forged ICMP (tx_gso $(t_field pmtu-s tx_gso), baseline $base_gso)"
[ "$(($(t_field pmtu-next-s tx_gso) * 2))" -lt "$((base_gso * 3))" ] ||
	a_fail "the stream after the forged ICMP sent small packets (tx_gso $(t_field pmtu-next-s tx_gso), baseline $base_gso)"

# a_newcomer name [anon]: a receiver, with anon anonymous senders first
# (none if not given), then a newcomer's stream of 1000 messages killed
# past ATTACK_NEWCOMER_CAP_S; sets RESULT and ms, the newcomer's time.
a_newcomer() {
	local s_rc t0
	t_start_server "$1-r" "ip netns exec $ns_r env FI_LOG_LEVEL=warn" \
		"$ST" -r -b "$addr_r" -p 0 -t "$ATTACK_WAIT_S"
	RPID=$T_SERVER_PID
	RPORT=$T_SERVER_PORT
	if [ -n "${2:-}" ]; then
		a_forge "$1-forge" "$ns_s" --anon-ports "$2" --port-base "$ATTACK_PORT_BASE" \
			--bind "$addr_s" "$addr_r" "$RPORT"
		sed -n 's/^rdmx_forge: /   /p' "$T_DIR/$1-forge.out"
	fi
	t0=$(date +%s%N)
	t_spawn_with "$1-s" "ip netns exec $ns_s timeout $ATTACK_NEWCOMER_CAP_S" \
		"$ST" -p "$RPORT" -n 1000 --sizes mixed -t "$ATTACK_NEWCOMER_CAP_S" "$addr_r"
	SPID=$T_LAST_PID
	t_collect "$SPID"
	s_rc=$T_RC
	ms=$((($(date +%s%N) - t0) / 1000000))
	# A receiver whose sender failed would wait for it in vain.
	[ "$s_rc" -eq 0 ] || kill "$RPID" 2>/dev/null || :
	a_stream_end "$1" "$s_rc"
}

a_phase "$ATTACK_ANON anonymous source ports, then a newcomer"
a_newcomer alone
alone_ms=$ms
echo "   a newcomer with no anonymous sender before it: $RESULT in $alone_ms ms"
[ "$RESULT" = PASS ] || a_fail "a newcomer alone: $RESULT"
a_newcomer anon "$ATTACK_ANON"
echo "   newcomer: $RESULT in $ms ms, $((ms - alone_ms)) ms more than alone" \
	"(bound $ATTACK_NEWCOMER_MS ms more); receiver: rx_unauth=$(t_field anon-r rx_unauth)" \
	"challenges=$(t_field anon-r challenges) rx_dropped=$(t_field anon-r rx_dropped)" \
	"(none when it was stopped)"
if [ "$RESULT" != PASS ] || [ $((ms - alone_ms)) -gt "$ATTACK_NEWCOMER_MS" ]; then
	echo "   the receiver's warnings (FI_LOG_LEVEL=warn), most frequent first:"
	a_log_top anon-r
	a_fail "a newcomer after $ATTACK_ANON anonymous senders: $RESULT after $ms ms" \
		"($alone_ms ms alone)"
fi

# a_mem_start name stream_n: a stream whose receiver logs warnings, and
# its memory now (rss0, data0; hwm, data_max follow the forgers).
a_mem_start() {
	a_stream_start "$1" "$2" "$ATTACK_FLOOD_STREAM_RATE" "env FI_LOG_LEVEL=warn"
	RCHILD=$(a_child "$RPID")
	sleep 0.5
	rss0=$(t_proc_kb "$RCHILD" VmRSS)
	hwm=$(t_proc_kb "$RCHILD" VmHWM)
	data0=$(t_proc_kb "$RCHILD" VmData)
	data_max=$data0
	stopped=""
}

# a_flood name ns args...: starts a forger in the background (a_watch
# waits for it).
FLOOD_PIDS=""
a_flood() {
	local name=$1 ns=$2
	shift 2
	ip netns exec "$ns" timeout 120 "$FORGE" --seed "$ATTACK_SEED" "$@" \
		>"$T_DIR/$name.out" 2>"$T_DIR/$name.err" &
	T_PIDS="$T_PIDS $!"
	FLOOD_PIDS="$FLOOD_PIDS $!:$name"
}

# a_watch: reads the receiver's VmHWM and VmData while the forgers run
# (stopping them past ATTACK_RSS_STOP_KB), then reaps them.
a_watch() {
	local p v running=1
	while [ -n "$running" ]; do
		running=""
		for p in $FLOOD_PIDS; do
			! kill -0 "${p%%:*}" 2>/dev/null || running=1
		done
		v=$(t_proc_kb "$RCHILD" VmData)
		[ -z "$v" ] || [ "$v" -le "$data_max" ] || data_max=$v
		v=$(t_proc_kb "$RCHILD" VmHWM)
		[ -z "$v" ] || hwm=$v
		if [ -n "$v" ] && [ "$v" -gt "$ATTACK_RSS_STOP_KB" ] && [ -z "$stopped" ]; then
			stopped="the forgers stopped at VmHWM=$v kB"
			for p in $FLOOD_PIDS; do
				kill "${p%%:*}" 2>/dev/null || :
			done
		fi
		[ -z "$running" ] || sleep 0.2
	done
	for p in $FLOOD_PIDS; do
		t_collect "${p%%:*}"
		[ "$T_RC" -eq 0 ] || [ -n "$stopped" ] ||
			a_fail "${p#*:}: rdmx_forge failed: $(cat "$T_DIR/${p#*:}.err")"
		sed -n 's/^rdmx_forge: /   /p' "$T_DIR/${p#*:}.out"
	done
	FLOOD_PIDS=""
}

# a_mem_end name what: the stream's result, the receiver's growth against
# the budget and its log lines against ATTACK_LOG_MAX for count datagrams.
a_mem_end() {
	local name=$1 what=$2 count=$3 during=yes v
	kill -0 "$SPID" 2>/dev/null || during=no
	v=$(t_proc_kb "$RCHILD" VmHWM)
	[ -z "$v" ] || hwm=$v
	a_stream_end "$name"
	growth=$((hwm - rss0))
	data_growth=$((data_max - data0))
	echo "   stream: $RESULT (still running when the attack ended: $during)"
	echo "   receiver: VmRSS before $rss0 kB, VmHWM after $hwm kB: growth $growth kB" \
		"(budget $ATTACK_BUDGET_KB kB)${stopped:+; $stopped}"
	echo "   receiver: VmData before $data0 kB, at most $data_max kB: growth" \
		"$data_growth kB (allocated, touched or not)"
	echo "   receiver: rx_unauth=$(t_field "$name-r" rx_unauth)" \
		"challenges=$(t_field "$name-r" challenges)" \
		"rx_malformed=$(t_field "$name-r" rx_malformed)" \
		"rx_dropped=$(t_field "$name-r" rx_dropped)" \
		"rx_unexpected=$(t_field "$name-r" rx_unexpected)"
	peak=$(t_field "$name-r" budget_peak)
	echo "   receiver budget: at most ${peak:-?} of $FI_RDMX_RX_BUDGET bytes in use," \
		"$(t_field "$name-r" budget_refused) refusals," \
		"anon_peers=$(t_field "$name-r" anon_peers)"
	[ "$RESULT" = PASS ] || a_fail "the stream under $what: $RESULT"
	if [ -z "$peak" ]; then
		a_fail "the receiver under $what printed no budget_peak counter"
	elif [ "$peak" -gt "$FI_RDMX_RX_BUDGET" ]; then
		a_fail "the receiver's budget reached $peak bytes under $what, limit $FI_RDMX_RX_BUDGET"
	fi
	[ "$during" = yes ] || a_fail "the stream under $what ended before the attack did"
	[ "$growth" -lt "$ATTACK_BUDGET_KB" ] ||
		a_fail "the receiver grew $growth kB (RSS) under $what, budget $ATTACK_BUDGET_KB kB${stopped:+ ($stopped)}"
	# RSS misses what was allocated and not yet written (a reassembly
	# buffer of which the attacker sent one segment); one who sends every
	# segment turns it into RSS. The budget bounds what the endpoint
	# holds either way; a quarter more leaves the allocator its overhead.
	# Under ASan VmData is ASan's allocator: it keeps what the endpoint
	# freed in a quarantine of 256 MiB (to catch a use after free), so
	# the bound holds in the normal build only.
	if [ -n "${RDMX_SAN_PRELOAD:-}" ]; then
		echo "   receiver: VmData not bounded in a sanitizer build (ASan's quarantine)"
	elif [ "$data_growth" -ge "$ATTACK_DATA_KB" ]; then
		a_fail "the receiver allocated $data_growth kB more (VmData) under $what, at most $ATTACK_DATA_KB kB (the budget and a quarter)"
	fi
	lines=$(grep -c ':rdmx:' "$T_DIR/$name-r.err" || :)
	echo "   receiver log (FI_LOG_LEVEL=warn): $lines lines for $count datagrams"
	if [ "$lines" -ge "$ATTACK_LOG_MAX" ]; then
		a_log_top "$name-r"
		a_fail "the receiver logged $lines lines under $what (at most $ATTACK_LOG_MAX)"
	fi
}

a_phase "$ATTACK_FLOOD hostile datagrams (valid, near-valid, random) during a stream"
half=$((ATTACK_FLOOD / 2))
a_mem_start flood "$ATTACK_FLOOD_STREAM_N"
a_flood flood-spoofed "$ns_s" --from "$addr_s:$SPORT" --kind all --content mix \
	--tags zero,random,seq,stale --tag-file "$TAGS" -n "$half" \
	--rate "$ATTACK_FLOOD_RATE" "$addr_r" "$RPORT"
# Handshake messages of its own would end the attacker's session (a
# near-valid RESET names no common version): messages only.
a_flood flood-session "$ns_s" --auth --bind "$addr_s" \
	--kind eager,void,medium,rts,cts,data,dack --content mix \
	-n "$half" --rate "$ATTACK_FLOOD_RATE" "$addr_r" "$RPORT"
a_watch
a_mem_end flood "the flood" "$ATTACK_FLOOD"
flood_growth=$growth
flood_lines=$lines

a_phase "$ATTACK_HOLD medium messages begun and never completed, from a session, during a stream"
a_mem_start hold "$ATTACK_FLOOD_STREAM_N"
a_flood hold-session "$ns_s" --auth --bind "$addr_s" --kind medium --content valid \
	-n "$ATTACK_HOLD" --rate "$ATTACK_FLOOD_RATE" "$addr_r" "$RPORT"
a_watch
a_mem_end hold "medium messages held" "$ATTACK_HOLD"

a_phase "done"
if [ -n "$FAILURES" ]; then
	echo "FAIL: attack.sh:$FAILURES"
	exit 1
fi
echo "PASS: attack.sh (every stream exact with no error completion; newcomer in $ms ms, $alone_ms alone;" \
	"flood: RSS growth $flood_growth kB, $flood_lines log lines)"
