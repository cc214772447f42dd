#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# smoke.sh: the benchmark suite under `make check`, for correctness, not
# speed. It runs fabtests/benchmarks/run --quick over rdmx, tcp;ofi_rxm and
# udp_floor on loopback, with tiny iteration counts and every payload
# byte checked (-c), for every benchmark (lat, bw, bibw, rate) at 1, 8,
# 4096, 65536 and 1048576 bytes (on loopback: eager, medium and long
# messages). It passes when run exits 0 (every program it started exited
# 0: every completion, length, tag and payload checked out, no wait timed
# out), rdmx printed a RESULT line with a number for each test and
# size, and --plot drew each benchmark with a line for rdmx. A crafted
# kept run checks that a ratio is the median of each repetition's own,
# over every run and over those whose CPUs were near or far (--cpus).
# tcp;ofi_rxm runs as a check of the programs themselves; its absence is
# reported, not fatal. Then, where upstream.sh (earlier in make check)
# built fabtests 1.17.0, libfabric's own fi_rdm_tagged_pingpong,
# fi_rdm_tagged_bw and fi_rma_bw -o write and -o read through the driver
# (uplat, upbw, upwrite, upread) over rdmx at 8, 65536 and 1048576
# bytes, payloads checked (-v). Correctness only: it neither waits for a
# quiet machine nor reruns disturbed runs. Takes about a minute (the
# upstream programs set up gigabytes of buffers each); capped at 240.
#
# Exit status: 0 pass, 1 fail (automake's test protocol).
set -eu

SMOKE_SIZES=1,8,4096,65536,1048576
SMOKE_NUMERIC="1 8 4096 65536 1048576"
SMOKE_LARGEST=1048576

. "$(dirname "$0")/../scripts/testlib.sh"
. "$(dirname "$0")/../scripts/upstream_lib.sh"
t_cap_runtime 240 "$@"
t_env_defaults
t_init
t_require_prog "$RDMX_BUILDDIR/fabtests/benchmarks/rdmx_bench"
t_require_prog "$RDMX_BUILDDIR/fabtests/benchmarks/udp_floor"

raw=$T_DIR/raw
start=$(date +%s)
sh "$(dirname "$0")/run" --quick --verify --providers rdmx,tcp,floor \
	--sizes "$SMOKE_SIZES" --timeout 10 --builddir "$RDMX_BUILDDIR" \
	--quiet-wait 0 --noise 0 --tries 1 --plot "$T_DIR/plots" \
	--raw "$raw" >"$T_DIR/run.out" 2>"$T_DIR/run.err" ||
	t_fail "run --quick exited non-zero"
cat "$T_DIR/run.out"
# A picture per benchmark, with a line for rdmx.
for test in lat bw bibw rate; do
	grep -q '>rdmx<' "$T_DIR/plots/$test.svg" 2>/dev/null ||
		t_fail "run --plot drew no $test.svg with rdmx in it"
done

# smoke_line test size key: the RESULT line of one point, or nothing.
smoke_line() {
	grep "^RESULT test=$1 size=$2 .* key=$3\$" "$raw" | head -n 1
}

# smoke_rdmx test sizes: fails unless rdmx has a number for test at each size.
smoke_rdmx() {
	local test=$1 metric size line
	case $test in
	lat) metric=median_us ;;
	uplat) metric=mean_us ;;
	rate) metric=mps ;;
	*) metric=mbps ;;
	esac
	for size in $2; do
		line=$(smoke_line "$test" "$size" rdmx)
		[ -n "$line" ] || t_fail "rdmx printed no RESULT line for $test size $size"
		echo "$line" | grep -q " $metric=[0-9][0-9.]* " ||
			t_fail "rdmx $test size $size: no number for $metric: $line"
	done
}

for test in lat bw bibw rate; do
	smoke_rdmx "$test" "$SMOKE_NUMERIC"
	if ! grep -q '^tcp;ofi_rxm: unavailable' "$T_DIR/run.out"; then
		[ -n "$(smoke_line "$test" "$SMOKE_LARGEST" tcp)" ] ||
			t_fail "tcp;ofi_rxm printed no RESULT line for $test size $SMOKE_LARGEST"
	fi
done
[ -n "$(smoke_line lat 8 floor)" ] || t_fail "udp_floor printed no RESULT line"
grep -q '^tcp;ofi_rxm: unavailable' "$T_DIR/run.out" &&
	echo "note: tcp;ofi_rxm is not available here; rdmx and udp_floor ran"

# Every run is tagged with its CPUs' distance before and after it,
# where the probe can read one (two CPUs).
! "$RDMX_BUILDDIR/fabtests/benchmarks/cpu_rtt" >/dev/null 2>&1 ||
	grep -q ' cpu_rtt=[0-9][0-9]*/[0-9][0-9]* rep=' "$raw" ||
	t_fail "run tagged no RESULT line with two cpu_rtt readings"

# The ratio columns pair each repetition's runs. A kept run (--from-raw)
# of a machine with two speeds: rdmx ran fast in repetitions 2 and 3,
# tcp;ofi_rxm only in 2. The ratio of the medians would be 2.00 (bw)
# and 2.40 (lat); the repetitions' own ratios are 1.25, 1.25, 2.00 and
# 1.20, 1.20, 2.40, whose medians the tables must show. By the CPUs'
# distance: repetitions 1 and 2 near, 3 far; in a second kept run, 4
# moved during the run and 5 has no reading, and neither counts as near
# or far: --cpus near keeps 1 and 2 (ratios 1.25 and 1.20 of medians
# 1,500 and 1,200 MB/s, 7.5 and 9 us), --cpus far 3.
kept=$T_DIR/kept.raw
kept_cpus=$T_DIR/kept_cpus.raw
for r in "1 1000 800 10 12 60/70" "2 2000 1600 5 6 65/62" "3 2000 1000 5 12 320/331" \
		"4 8000 500 1 40 60/331" "5 8000 500 1 40 na/na"; do
	set -- $r
	echo "RESULT test=bw size=1048576 mbps=$2 cpu_rtt=$6 rep=$1 key=rdmx"
	echo "RESULT test=bw size=1048576 mbps=$3 cpu_rtt=$6 rep=$1 key=tcp"
	echo "RESULT test=lat size=8 median_us=$4 cpu_rtt=$6 rep=$1 key=rdmx"
	echo "RESULT test=lat size=8 median_us=$5 cpu_rtt=$6 rep=$1 key=tcp"
done >"$T_DIR/kept.lines"
{
	echo "# mode: two network namespaces (crafted); reps 3"
	grep -v ' rep=[45] ' "$T_DIR/kept.lines"
} >"$kept"
{
	echo "# mode: two network namespaces (crafted); reps 5"
	cat "$T_DIR/kept.lines"
} >"$kept_cpus"
# smoke_kept file cpus bw_line lat_line: the kept run's tables for --cpus.
smoke_kept() {
	sh "$(dirname "$0")/run" --from-raw "$1" --cpus "$2" --builddir "$RDMX_BUILDDIR" \
		>"$T_DIR/kept.out" 2>&1 || t_fail "run --from-raw --cpus $2 exited non-zero"
	grep -Eq "$3" "$T_DIR/kept.out" ||
		t_fail "--cpus $2: bw is not the median of the repetitions' ratios: $(cat "$T_DIR/kept.out")"
	grep -Eq "$4" "$T_DIR/kept.out" ||
		t_fail "--cpus $2: lat is not the median of the repetitions' ratios: $(cat "$T_DIR/kept.out")"
}
smoke_kept "$kept" all '^ +1048576 +2000\.0 +1000\.0 \| +1\.25$' '^ +8 +5\.00 +12\.00 \| +1\.20$'
smoke_kept "$kept_cpus" near '^ +1048576 +1500\.0 +1200\.0 \| +1\.25$' '^ +8 +7\.50 +9\.00 \| +1\.20$'
grep -q ': 8 runs near, 4 far, 4 moved during the run, 4 without a reading; the tables above: the runs near alone$' \
	"$T_DIR/kept.out" || t_fail "no count of the runs by CPUs: $(cat "$T_DIR/kept.out")"
smoke_kept "$kept_cpus" far '^ +1048576 +2000\.0 +1000\.0 \| +2\.00$' '^ +8 +5\.00 +12\.00 \| +2\.40$'

# Only a build that is there: building it would not fit in the cap.
if [ -n "$(up_find_tarball fabtests-1.17.0.tar.gz)" ] &&
		ls "$(up_cache)"/fabtests-*/done >/dev/null 2>&1; then
	sh "$(dirname "$0")/run" --quick --verify --tests uplat,upbw,upwrite,upread --providers rdmx \
		--sizes 8,65536,1048576 --timeout 10 --builddir "$RDMX_BUILDDIR" \
		--quiet-wait 0 --noise 0 --tries 1 \
		--raw "$raw.up" >"$T_DIR/run-up.out" 2>"$T_DIR/run-up.err" ||
		t_fail "run --quick --tests uplat,upbw,upwrite,upread exited non-zero"
	cat "$T_DIR/run-up.out"
	cat "$raw.up" >>"$raw"
	for test in uplat upbw upwrite upread; do
		smoke_rdmx "$test" "8 65536 1048576"
	done
else
	echo "note: no fabtests 1.17.0 built (upstream.sh builds it): up* tests not run"
fi
echo "PASS: smoke.sh ($(grep -c '^RESULT ' "$raw") RESULT lines," \
	"$(($(date +%s) - start)) s)"
