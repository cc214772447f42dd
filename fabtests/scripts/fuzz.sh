#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Fuzzes the receive path for a bounded time (docs/testing.md): builds
# the libFuzzer harness prov/rdmx/test/fuzz/fuzz_rx in a build tree of
# its own (clang, ASan, UBSan), checks that the seed corpus is what the
# current wire encoders write, then runs the fuzzer on one core from the
# corpus and the regression inputs.
#
#   FUZZ_SECONDS   how long the fuzzer runs (120)
#   FUZZ_BUILDDIR  its build tree (build-fuzz at the top of the tree)
#   FUZZ_CC        the compiler (clang-14)
#   FUZZ_ARGS      more libFuzzer options
#
# Exits 77 (skipped) without clang and libFuzzer. Any crash, leak, UB
# report or timeout fails it; the input that caused it is kept in
# $FUZZ_BUILDDIR/fuzz-artifacts, to be replayed with fuzz_replay and
# added to prov/rdmx/test/fuzz/regressions once the bug is fixed.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
fuzzdir=$top/prov/rdmx/test/fuzz
seconds=${FUZZ_SECONDS:-120}
builddir=${FUZZ_BUILDDIR:-$top/build-fuzz}
cc=${FUZZ_CC:-clang-14}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: $cc not found (Debian: clang-14 libfuzzer-14-dev)"
	exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void) d; (void) n; return 0; }' \
	> "$probe/probe.c"
if ! "$cc" -fsanitize=fuzzer "$probe/probe.c" -o "$probe/probe" 2>/dev/null; then
	echo "SKIP: $cc cannot link libFuzzer programs (Debian: libfuzzer-14-dev)"
	exit 77
fi

echo "fuzz.sh: building the harness in $builddir"
[ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
mkdir -p "$builddir"
(cd "$builddir" &&
	{ [ -f Makefile ] || "$top/configure" -q CC="$cc" --enable-fuzz; } &&
	make -s -j"${FUZZ_JOBS:-2}" prov/rdmx/test/fuzz/fuzz_rx)
sh "$fuzzdir/gen_corpus.sh" --check "$builddir"

# New inputs go to the build tree; the tree's corpus stays the seeds.
work=$builddir/fuzz-corpus
artifacts=$builddir/fuzz-artifacts
log=$builddir/fuzz.log
mkdir -p "$work" "$artifacts"
echo "fuzz.sh: fuzzing for $seconds s (log: $log)"
status=0
# shellcheck disable=SC2086
"$builddir/prov/rdmx/test/fuzz/fuzz_rx" -max_total_time="$seconds" \
	-timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} \
	"$work" "$fuzzdir/corpus" "$fuzzdir/regressions" > "$log" 2>&1 || status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([^ ]*\).*/\1 edges, \2 features, corpus \3/p')
echo "fuzz.sh: ${runs:-?} executions, ${rate:-?}/s; ${cov:-coverage unknown}"
if [ "$status" -ne 0 ]; then
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written|artifact_prefix' "$log" | head -n 20 || true
	tail -n 40 "$log"
	echo "fuzz.sh: FAILED (libFuzzer exit $status); inputs in $artifacts:"
	ls -l "$artifacts"
	exit 1
fi
echo "fuzz.sh: no crash, leak or timeout"
