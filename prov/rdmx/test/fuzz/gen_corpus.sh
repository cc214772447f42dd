#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Writes the seed corpus of the receive-path fuzz harness (corpus/ next
# to this script) with fuzz_seeds, which builds every packet with the
# encoders of rdmx_wire.h: run it after a change of the wire format.
#
#   gen_corpus.sh [--check] [BUILDDIR]
#
# BUILDDIR is a configured build tree (default: $RDMX_BUILDDIR, else
# build/ at the top); fuzz_seeds is built there. With --check nothing is
# written: it fails when the corpus in the tree is not what fuzz_seeds
# writes now.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
check=no
if [ "${1:-}" = --check ]; then
	check=yes
	shift
fi
builddir=${1:-${RDMX_BUILDDIR:-$top/build}}

make -s -C "$builddir" prov/rdmx/test/fuzz/fuzz_seeds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$builddir/prov/rdmx/test/fuzz/fuzz_seeds" "$tmp" >/dev/null
if [ $check = yes ]; then
	if ! diff -r -q "$here/corpus" "$tmp" >/dev/null; then
		echo "gen_corpus.sh: the corpus in $here/corpus is stale: run gen_corpus.sh" >&2
		diff -r -q "$here/corpus" "$tmp" >&2 || true
		exit 1
	fi
	echo "gen_corpus.sh: corpus up to date ($(ls "$tmp" | wc -l) seeds)"
	exit 0
fi
rm -f "$here"/corpus/*
cp "$tmp"/* "$here/corpus/"
echo "gen_corpus.sh: $(ls "$here/corpus" | wc -l) seeds in $here/corpus"
