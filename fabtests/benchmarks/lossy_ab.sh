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
# provider in .libs/). Prints every run's seconds, then the medians and
# B / A. Needs root, ip and nft. Exit 1 when a run fails.
set -eu

[ $# -ge 2 ] || { sed -n '3,16p' "$0" >&2; exit 2; }
AB_A=$(cd "$1" && pwd)
AB_B=$(cd "$2" && pwd)
AB_REPS=${3:-5}
AB_COUNT=${4:-20000}
AB_LOSS=${5:-5}
RDMX_BUILDDIR=$AB_A
export RDMX_BUILDDIR

. "$(dirname "$0")/../scripts/testlib.sh"

t_netns_require nft
t_env_defaults
t_init
t_lossy_link ab 10.213.11 "$AB_LOSS"

# ab_run build name: one stream with build's provider, its output under
# name; prints its seconds.
ab_run() {
	local env="env FI_PROVIDER_PATH=$1/.libs FI_PROVIDER=rdmx FI_RDMX_LONG_READ=0"
	local t0 t1

	t_start_server "$2-r" "ip netns exec $ns_r $env" \
		"$1/fabtests/functional/rdmx_stream" -r -b "$addr_r" -p 0
	t0=$(date +%s%N)
	t_spawn_with "$2-s" "ip netns exec $ns_s $env" \
		"$1/fabtests/functional/rdmx_stream" \
		-p "$T_SERVER_PORT" -n "$AB_COUNT" --sizes mixed "$addr_r"
	t_reap "$T_LAST_PID" "$2 sender"
	t1=$(date +%s%N)
	t_reap "$T_SERVER_PID" "$2 receiver"
	echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e9 }'
}

# median: of the numbers on stdin.
median() {
	sort -n | awk '{ v[NR] = $1 }
		END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m }'
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
echo "$mb $AB_COUNT" | awk '{ printf "| B | %.3f | %.0f |\n", $1, $2 / $1 }'
echo "$ma $mb" | awk '{ printf "B / A time: %.2f\n", $2 / $1 }'
