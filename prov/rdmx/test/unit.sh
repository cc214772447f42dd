#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# unit.sh: every rdmx_unit test, its suites dealt to RDMX_UNIT_SHARDS
# (default 8) rdmx_unit processes that run at once.
#
# Why: Criterion runs each test in a process of its own and starts them
# one at a time, and a process that loads Debian 12's libfabric spends
# about 0.2 s, mostly asleep, in the constructors of libpsm2 and
# libinfinipath (libfabric links both; they time the CPU's clock). One
# rdmx_unit of 354 tests took 85 s here, 281 s in the sanitizer build,
# nearly all of it those starts; the shards overlap them.
#
# Each shard prints its own report; the script fails if one does, or if
# the shards did not run as many tests as rdmx_unit --list names.
# Exit status: 0 pass, 1 fail.
set -eu
unit=${RDMX_BUILDDIR:?run by make check}/prov/rdmx/test/rdmx_unit
shards=${RDMX_UNIT_SHARDS:-8}
dir=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-unit.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# "suite count" lines, the largest suites first, dealt round-robin.
"$unit" --list | sed -n 's/^\([A-Za-z0-9_]*\): \([0-9]*\) tests*$/\2 \1/p' |
	sort -rn > "$dir/suites"
want=$(awk '{ n += $1 } END { print n + 0 }' "$dir/suites")
awk -v n="$shards" -v dir="$dir" '{
	k = (NR - 1) % n
	s = (k in list) ? list[k] "|" $2 : $2
	list[k] = s
} END { for (k in list) print list[k] > (dir "/shard" k) }' "$dir/suites"

pids=""
for f in "$dir"/shard*; do
	"$unit" -j1 --filter "@($(cat "$f"))/*" > "$f.out" 2>&1 &
	pids="$pids $!"
done
status=0
for pid in $pids; do
	wait "$pid" || status=1
done
cat "$dir"/shard*.out
ran=$(sed -n 's/.*Synthesis: Tested: \([0-9]*\).*/\1/p' "$dir"/shard*.out |
	awk '{ n += $1 } END { print n + 0 }')
echo "unit.sh: $ran tests in $shards shards, $want listed"
[ "$ran" -eq "$want" ] || { echo "unit.sh: FAIL: $want tests listed, $ran ran"; status=1; }
exit $status
