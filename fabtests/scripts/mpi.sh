#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi.sh: Open MPI over rdmx (issue 7). Runs each MPI test program of
# fabtests/mpi at 2 and at 4 ranks on this host (oversubscribed), then
# mpi_p2p and mpi_match once more at 4 ranks with FI_RDMX_LONG_READ=0,
# so that MPI's long messages also travel as credit and data packets.
# The programs check every byte and status themselves (mpi_p2p: sizes 0
# to 16 MiB, blocking, synchronous and nonblocking; mpi_match: wildcards,
# probes, cancel, self; mpi_threads: MPI_THREAD_MULTIPLE; mpi_coll:
# collectives), and NetPIPE's NPopenmpi in integrity mode at 2 ranks as
# a third party's check. RDMX_MPI_QUICK=1 leaves out the long-read-off
# runs and NetPIPE (multihome.sh runs the programs so in its namespace
# host). Open MPI must use pml cm and mtl ofi with rdmx alone
# (mtl_ofi_provider_include): Debian's openmpi-mca-params.conf turns the
# ofi mtl off, so the flags are explicit, and FI_PROVIDER is unset so
# that Open MPI itself picks among every provider libfabric offers. A
# run passes when mpirun exits 0 within RDMX_TEST_TIMEOUT seconds, rank
# 0 printed the program's PASS line, every rank reported pml cm selected
# (pml_base_verbose) and rdmx as its mtl ofi provider (mtl_ofi_verbose),
# and no process of the run is left. pml cm carries every message
# through the mtl, so no btl but self needs to start (--mca btl self).
#
# mpi_osc (MPI one-sided) runs at 2 and 4 ranks over osc rdma, which
# needs a btl that does RMA and atomics: btl ofi with rdmx alone
# (btl_ofi_provider_include), which every rank must report started
# (btl_base_verbose); then once more at 4 ranks with its all-ops
# argument and osc_rdma_acc_use_amo=0 (Open MPI 4.1's btl ofi aborts on
# max, min and the bitwise ops as network atomics; mpi_osc.c says more).
#
# Every process of a run carries RDMX_MPI_RUN=<scratch folder> in its
# environment, which is how the leftovers of a run that hung or failed
# are found and killed on exit. Open MPI's session folder goes to the
# scratch folder too (TMPDIR). RDMX_WRAP is not applied: it would wrap
# mpirun.
#
# In a sanitizer build (RDMX_SAN_PRELOAD set) the programs are built with
# the sanitizers like every other test program, so they load the
# sanitized provider without a preload (NPopenmpi gets one); Open MPI's
# own leaks at exit are not ours (ASAN_OPTIONS=detect_leaks=0).
#
# Needs mpicc, mpirun and NPopenmpi (Debian: openmpi-bin libopenmpi-dev
# netpipe-openmpi); fails,
# not skips, without them. Capped at 600 s.
# Exit status: 0 pass, 1 fail.
set -eu

MPI_PROGS="mpi_p2p mpi_match mpi_threads mpi_coll mpi_osc"
MPI_RANKS="2 4"
MPI_INSTALL="install openmpi-bin libopenmpi-dev (contrib/rdmx does)"

. "$(dirname "$0")/testlib.sh"

t_cap_runtime 600 "$@"
t_env_defaults
unset FI_PROVIDER RDMX_WRAP
command -v mpirun >/dev/null ||
	{ echo "FAIL: mpirun not found: $MPI_INSTALL" >&2; exit 1; }
mpirun --version 2>&1 | grep -q 'Open MPI' ||
	{ echo "FAIL: mpirun is not Open MPI's: $MPI_INSTALL" >&2; exit 1; }
NETPIPE=$(command -v NPopenmpi || :)
[ -n "$NETPIPE" ] ||
	{ echo "FAIL: NPopenmpi not found: install netpipe-openmpi (contrib/rdmx does)" >&2; exit 1; }
for prog in $MPI_PROGS; do
	[ -x "$RDMX_BUILDDIR/fabtests/mpi/$prog" ] ||
		{ echo "FAIL: fabtests/mpi/$prog not built (configure found no Open MPI mpicc):" \
			"$MPI_INSTALL, then re-run configure" >&2; exit 1; }
done
t_init

# Open MPI refuses to run as root unless told it may.
if [ "$(id -u)" -eq 0 ]; then
	OMPI_ALLOW_RUN_AS_ROOT=1
	OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
MPI_SAN=""
[ -z "${RDMX_SAN_PRELOAD:-}" ] || MPI_SAN="-x ASAN_OPTIONS=detect_leaks=0"
MPI_MARK="RDMX_MPI_RUN=$T_DIR"

# The pids of the live processes of this script's runs (their environment
# holds MPI_MARK).
mpi_strays() {
	t_marked_pids "$MPI_MARK"
}
t_on_exit 't_kill_marked "$MPI_MARK"'

# mpi_count name pattern: how many lines of run name's stderr match.
mpi_count() {
	grep -c -- "$2" "$T_DIR/$1.err" || :
}

# The btl (and osc) flags of a run: btl self alone for the point-to-point
# programs; osc rdma over btl ofi over rdmx for mpi_osc.
MPI_MCA_P2P="--mca btl self"
MPI_MCA_OSC="--mca osc rdma --mca btl ofi,self --mca btl_ofi_provider_include rdmx
	--mca btl_base_verbose 10"

# mpi_run name ranks cmd... : one mpirun of cmd at ranks ranks, with the
# flags in MPI_MCA and the variables in MPI_X ("-x VAR=value" words)
# exported to every rank; checks exit, pml, provider and btl selection
# and leftovers as the header says. Output stays in $T_DIR/name.out and
# name.err.
mpi_run() {
	local name=$1 ranks=$2
	shift 2
	MPI_START=$(date +%s%N)
	t_spawn_with "$name" "env $MPI_MARK TMPDIR=$T_DIR" mpirun --oversubscribe -np "$ranks" \
		--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include rdmx \
		$MPI_MCA --mca mtl_ofi_verbose 1 --mca pml_base_verbose 10 \
		-x FI_PROVIDER_PATH $MPI_SAN $MPI_X "$@"
	t_collect "$T_LAST_PID"
	case $T_RC in
	0)	;;
	124)	t_fail "$name: mpirun did not end within $RDMX_TEST_TIMEOUT s" ;;
	*)	t_fail "$name: mpirun exited with status $T_RC" ;;
	esac
	[ "$(mpi_count "$name" 'select: component cm selected$')" -eq "$ranks" ] ||
		t_fail "$name: not every rank selected pml cm"
	[ "$(mpi_count "$name" 'mtl:ofi:prov: ')" -eq "$ranks" ] &&
		[ "$(mpi_count "$name" 'mtl:ofi:prov: rdmx$')" -eq "$ranks" ] ||
		t_fail "$name: not every rank's mtl ofi named rdmx as its provider"
	[ "$MPI_MCA" = "$MPI_MCA_P2P" ] ||
		[ "$(mpi_count "$name" 'select: init of component ofi returned success$')" -eq "$ranks" ] ||
		t_fail "$name: not every rank started btl ofi (over rdmx alone)"
	[ -z "$(mpi_strays)" ] || t_fail "$name: processes left after mpirun: $(mpi_strays)"
}

# mpi_pass name: reports a run that passed; only a failing run's output
# is worth a dump, so a passing run's goes.
mpi_pass() {
	echo "-- $1: pass, $((($(date +%s%N) - MPI_START) / 1000000)) ms"
	rm -f "$T_DIR/$1.out" "$T_DIR/$1.err"
}

# mpi_case prog ranks [VAR=value...]: one run of a fabtests/mpi program,
# with the variables given exported to every rank, and MPI_ARG (if set)
# as the program's argument.
mpi_case() {
	local prog=$1 ranks=$2 name var
	shift 2
	name="$prog-$ranks${1:+-$(echo "$*" | tr ' =' '-_')}${MPI_ARG:+-$MPI_ARG}"
	MPI_X=""
	for var in "$@"; do
		MPI_X="$MPI_X -x $var"
	done
	MPI_MCA=$MPI_MCA_P2P
	[ "$prog" != mpi_osc ] || MPI_MCA="$MPI_MCA_OSC${MPI_OSC_MCA:+ $MPI_OSC_MCA}"
	echo "== $prog, $ranks ranks${1:+, $*}${MPI_ARG:+, $MPI_ARG}${MPI_OSC_MCA:+, $MPI_OSC_MCA}"
	mpi_run "$name" "$ranks" "$RDMX_BUILDDIR/fabtests/mpi/$prog" ${MPI_ARG:-}
	t_out_has "$name" "^$prog: PASS ($ranks ranks)" || t_fail "$name: rank 0 printed no PASS"
	cat "$T_DIR/$name.out"
	mpi_pass "$name"
}

# NetPIPE's integrity mode (NPopenmpi -i, Debian netpipe-openmpi): a
# third party's check of every byte of messages from 1 B to 6 MiB (its last
# step below -u 8 MiB), each
# size and its neighbours (+-3 B). It reports on stderr, a line per size,
# and writes a line per size measured to its -o file. NPopenmpi is not
# built with the sanitizers: in a sanitizer build it must preload their
# runtimes to load the provider.
mpi_netpipe() {
	local name=netpipe-2 out="$T_DIR/netpipe.txt" passed sizes
	echo "== NPopenmpi -i, 2 ranks"
	MPI_X=""
	[ -z "${RDMX_SAN_PRELOAD:-}" ] ||
		MPI_X="-x LD_PRELOAD=$(echo $RDMX_SAN_PRELOAD | tr ' ' ':')"
	mpi_run "$name" 2 "$NETPIPE" -i -u 8388608 -o "$out"
	passed=$(grep -c 'Integrity check passed' "$T_DIR/$name.err" || :)
	sizes=$(wc -l <"$out")
	! grep -i 'integrity check failed' "$T_DIR/$name.err" ||
		t_fail "$name: an integrity check failed"
	[ "$sizes" -ge 40 ] && [ "$passed" -eq "$sizes" ] ||
		t_fail "$name: $passed of $sizes sizes passed, want every one of 40 or more"
	echo "$passed sizes up to $(tail -n 1 "$out" | awk '{print $1}') B passed their integrity check"
	mpi_pass "$name"
}

for prog in $MPI_PROGS; do
	for ranks in $MPI_RANKS; do
		mpi_case "$prog" "$ranks"
	done
done
if [ "${RDMX_MPI_QUICK:-0}" != 1 ]; then
	mpi_case mpi_p2p 4 FI_RDMX_LONG_READ=0
	mpi_case mpi_match 4 FI_RDMX_LONG_READ=0
	MPI_ARG=all-ops MPI_OSC_MCA="--mca osc_rdma_acc_use_amo 0" mpi_case mpi_osc 4
	mpi_netpipe
fi
echo "PASS: mpi.sh"
