#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# lossy_ab.sh: what a change costs on a lossy link. A stream of COUNT
# tagged messages of mixed sizes up to 64 KiB (rdmx_stream --sizes mixed,
# its default window) between two network namespaces joined by a veth
# pair, with LOSS percent of the UDP packets each namespace receives
# dropped (nftables), timed for two builds of rdmx, interleaved A B A B,
# so both see the same machine. Long-read is off (the wire path moves the
# data, as between hosts).
#
#   fabtests/benchmarks/lossy_ab.sh BUILD_A BUILD_B [REPS [COUNT [LOSS]]]
#
# BUILD_x: a build folder (rdmx_stream in fabtests/functional/, the
# provider in .libs/; `make fabtests/functional/rdmx_stream` there builds
# the program). BUILD_B may be the word tcp: libfabric's
# tcp;ofi_rxm through BUILD_A's rdmx_stream, the namespaces then also
# dropping LOSS percent of the TCP packets they receive; a tcp run that
# does not finish within AB_TCP_WAIT seconds (default 60) counts as that
# long and is marked. Prints every run's seconds, then the medians and
# B / A. Needs root, ip and nft. Exit 1 when an rdmx run fails.
set -eu

[ $# -ge 2 ] || { sed -n '3,/^set -eu/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
AB_A=$(cd "$1" && pwd)
if [ "$2" = tcp ]; then AB_B=tcp; else AB_B=$(cd "$2" && pwd); fi
for b in "$AB_A" "$AB_B"; do
	[ "$b" = tcp ] || [ -x "$b/fabtests/functional/rdmx_stream" ] || {
		echo "lossy_ab.sh: $b/fabtests/functional/rdmx_stream not built" \
			"(make -C $b fabtests/functional/rdmx_stream)" >&2
		exit 2
	}
done
AB_REPS=${3:-5}
AB_COUNT=${4:-20000}
AB_LOSS=${5:-5}
AB_TCP_WAIT=${AB_TCP_WAIT:-60}
RDMX_BUILDDIR=$AB_A
export RDMX_BUILDDIR

. "$(dirname "$0")/../scripts/testlib.sh"

t_netns_require nft
t_env_defaults
t_init
t_lossy_link ab 10.213.11 "$AB_LOSS"
if [ "$AB_B" = tcp ]; then
	t_loss "$ns_s" "$AB_LOSS" tcp
	t_loss "$ns_r" "$AB_LOSS" tcp
fi

# ab_run build name: one stream with build's provider (or tcp;ofi_rxm),
# its output under name; prints its seconds, with a trailing + when a tcp
# stream did not finish in AB_TCP_WAIT seconds.
ab_run() {
	local env="env FI_PROVIDER_PATH=$1/.libs FI_PROVIDER=rdmx FI_RDMX_LONG_READ=0"
	local prog="$1/fabtests/functional/rdmx_stream" t0 t1 rs rr

	if [ "$1" = tcp ]; then
		env="timeout $AB_TCP_WAIT env FI_PROVIDER=tcp;ofi_rxm"
		prog="$AB_A/fabtests/functional/rdmx_stream"
	fi
	t_start_server "$2-r" "ip netns exec $ns_r $env" "$prog" -r -b "$addr_r" -p 0
	t0=$(date +%s%N)
	t_spawn_with "$2-s" "ip netns exec $ns_s $env" "$prog" \
		-p "$T_SERVER_PORT" -n "$AB_COUNT" --sizes mixed "$addr_r"
	t_collect "$T_LAST_PID"
	rs=$T_RC
	t1=$(date +%s%N)
	t_collect "$T_SERVER_PID"
	rr=$T_RC
	if [ "$1" = tcp ] && [ $((rs + rr)) -ne 0 ]; then
		echo "$AB_TCP_WAIT+"
		return
	fi
	[ "$rs" -eq 0 ] || t_fail "$2 sender exited with status $rs"
	[ "$rr" -eq 0 ] || t_fail "$2 receiver exited with status $rr"
	echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e9 }'
}

# median: of the numbers on stdin; a trailing + (a run that did not
# finish) carries to the median when it counted there.
median() {
	sort -n | awk '{ v[NR] = $1 + 0; c[NR] = ($1 ~ /[+]$/) ? "+" : "" }
		END { a = (NR % 2) ? (NR + 1) / 2 : NR / 2; b = (NR % 2) ? a : a + 1
		      print (v[a] + v[b]) / 2 c[b] }'
}

echo "== $AB_COUNT messages (mixed sizes), $AB_LOSS% loss each way, $AB_REPS runs each"
: >"$T_DIR/a.s"
: >"$T_DIR/b.s"
for i in $(seq "$AB_REPS"); do
	a=$(ab_run "$AB_A" "a$i")
	b=$(ab_run "$AB_B" "b$i")
	echo "run $i: A $a s  B $b s"
	echo "$a" >>"$T_DIR/a.s"
	echo "$b" >>"$T_DIR/b.s"
done
ma=$(median <"$T_DIR/a.s")
mb=$(median <"$T_DIR/b.s")
echo "| build | median s | messages/s |"
echo "|---|---|---|"
echo "$ma $AB_COUNT" | awk '{ printf "| A | %.3f | %.0f |\n", $1, $2 / $1 }'
echo "$mb $AB_COUNT $AB_B" | awk '{ m = ($1 ~ /[+]$/)
	printf "| B%s | %s%.3f | %s%.0f |\n", $3 == "tcp" ? " (tcp;ofi_rxm)" : "",
	       m ? "at least " : "", $1, m ? "at most " : "", $2 / $1 }'
echo "$ma $mb" | awk '{ printf "B / A time: %s%.2f\n", ($2 ~ /[+]$/) ? "at least " : "", $2 / $1 }'
