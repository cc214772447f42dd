#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# vys.sh [test|demo|bench]: a vys_producer and its consumers (vys.h) over
# rdmx on this host. `contrib/rdmx vys` builds rdmx and runs the demo.
#
# test (the default; make check runs it): a producer writes 4,000
#   spectra of 64 KiB into a ring of 16 slots, 2,000 a second, so that a
#   slot is written again 8 ms after it was signalled. Three consumers
#   join: a prompt one, a slow one that reads every other spectrum half a
#   second after its signal (too late unless the producer stalled that
#   long), and a victim, killed (SIGKILL) as soon as it joined. Passes
#   when the victim died of the kill, the producer told it gone and
#   still published all 4,000 and ended, both live consumers ended well
#   (a consumer fails on a read that fails and on a spectrum that passed
#   its digest but is not the one written), the prompt one accepted
#   spectra the producer wrote over later (more than the ring's last 16),
#   and the slow one found late ones by their digests.
# demo: the same producer for 3 s with a prompt consumer, one that
#   fetches every 4th spectrum, and the slow one; prints what each saw.
# bench: read bandwidth of 1, 2 and 4 consumers that fetch every
#   spectrum of 64 KiB from a producer writing as fast as it can into a
#   ring of 1,024 slots (64 MiB), with the shm lane (same host: the
#   default) and without it (FI_RDMX_SHM=0: udp over loopback).
#   read_MBps counts every read, ok_MBps the spectra whose digest
#   matched: the rest were overwritten before their read.
#
# Exit status: 0 pass, 1 fail.
set -eu

. "$(dirname "$0")/../../fabtests/scripts/testlib.sh"

mode=${1:-test}
case $mode in
test|demo|bench) ;;
*)	echo "usage: $0 [test|demo|bench]" >&2; exit 2 ;;
esac
[ "$mode" != test ] || t_cap_runtime 300 "$@"
t_env_defaults
VP="$RDMX_BUILDDIR/contrib/vys/vys_producer"
VC="$RDMX_BUILDDIR/contrib/vys/vys_consumer"
t_require_prog "$VP"
t_require_prog "$VC"
t_init

# vys_start consumers producer-options...: starts the producer, waiting
# for consumers, and sets T_SERVER_PORT.
vys_start() {
	local n=$1
	shift
	t_start_server producer "" "$VP" -p 0 -t 60 --consumers "$n" "$@"
}

# vys_consumer name options...: starts a consumer of the producer; its
# pid (that of the timeout running it) goes to pid_<name>.
vys_consumer() {
	local name=$1
	shift
	t_spawn "$name" "$VC" -p "$T_SERVER_PORT" -t 60 "$@" 127.0.0.1
	eval "pid_$name=$T_LAST_PID"
}

# vys_joined name: waits until consumer name joined; sets JOINED_ID and
# JOINED_PID (the consumer's own process) from its line.
vys_joined() {
	local pid
	eval "pid=\$pid_$1"
	t_wait_ready "$pid" "consumer $1" t_out_has "$1" " joined as consumer "
	JOINED_ID=$(sed -n 's/.* joined as consumer \([0-9]*\), pid .*/\1/p' "$T_DIR/$1.out")
	JOINED_PID=$(sed -n 's/.* joined as consumer .*, pid \([0-9]*\)$/\1/p' "$T_DIR/$1.out")
}

vys_test() {
	vys_start 3 --slots 16 --rate 2000 --count 4000
	vys_consumer prompt
	vys_consumer slow --every 2 --delay-us 500000
	vys_consumer victim
	vys_joined victim
	kill -KILL "$JOINED_PID" || t_fail "could not kill the victim consumer ($JOINED_PID)"
	t_collect "$pid_victim"
	[ "$T_RC" -eq 137 ] || t_fail "the victim consumer ended with $T_RC, not the kill's 137"
	t_reap "$pid_prompt" "the prompt consumer"
	t_reap "$pid_slow" "the slow consumer"
	t_reap "$T_SERVER_PID" "the producer"
	t_out_has producer "consumer $JOINED_ID gone" ||
		t_fail "the producer never told consumer $JOINED_ID (the victim) gone"
	[ "$(t_counter producer published)" -eq 4000 ] ||
		t_fail "the producer published $(t_counter producer published) of 4000"
	[ "$(t_counter prompt ok)" -gt 16 ] ||
		t_fail "the prompt consumer accepted $(t_counter prompt ok) spectra, no more than the ring holds"
	[ "$(t_counter slow late)" -gt 0 ] || t_fail "the slow consumer found nothing late"
	for c in prompt slow; do
		echo "$c: fetched $(t_counter $c fetched), accepted $(t_counter $c ok)," \
			"late $(t_counter $c late)"
	done
	sed -n '/ gone: \| published=/s/^vys_producer: /producer: /p' "$T_DIR/producer.out"
	echo "PASS: vys.sh"
}

vys_demo() {
	echo "vys demo: 1 producer, 6,000 spectra of 64 KiB in 3 s, a ring of 16 slots"
	vys_start 3 --slots 16 --rate 2000 --count 6000
	vys_consumer prompt
	vys_consumer every4 --every 4
	vys_consumer slow --delay-us 50000
	for c in prompt every4 slow; do
		eval "t_reap \$pid_$c $c"
		printf '%-7s ' "$c:"
		sed -n '/ signals=/s/^vys_consumer: //p' "$T_DIR/$c.out"
	done
	t_reap "$T_SERVER_PID" "the producer"
	sed -n 's/^vys_producer: \(published\)/producer: \1/p' "$T_DIR/producer.out"
}

# vys_sum key files...: the sum of the key=X values in the files.
vys_sum() {
	local key=$1
	shift
	sed -n "s/.* $key=\([0-9.]*\).*/\1/p" "$@" | awk '{ s += $1 } END { printf "%.0f", s }'
}

# vys_bench_run lane consumers: one row of the bench's table.
vys_bench_run() {
	local lane=$1 n=$2 i outs=""
	vys_start "$n" --slots 1024 --rate 0 --count 20000
	for i in $(seq "$n"); do
		vys_consumer "c$i" --no-check
		outs="$outs $T_DIR/c$i.out"
	done
	for i in $(seq "$n"); do
		eval "t_reap \$pid_c$i c$i"
	done
	t_reap "$T_SERVER_PID" "the producer"
	printf '| %s | %d | %s | %s |\n' "$lane" "$n" "$(vys_sum read_MBps $outs)" \
		"$(vys_sum ok_MBps $outs)"
}

vys_bench() {
	echo "vys bench: 20,000 spectra of 64 KiB written as fast as the producer can"
	echo
	echo "| lane | consumers | read MB/s (all consumers) | accepted MB/s |"
	echo "|---|---|---|---|"
	for n in 1 2 4; do
		vys_bench_run "shm (same host)" "$n"
	done
	FI_RDMX_SHM=0
	export FI_RDMX_SHM
	for n in 1 2 4; do
		vys_bench_run "udp loopback" "$n"
	done
}

"vys_$mode"
