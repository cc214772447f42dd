#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# libfabric2.sh: rdmx inside libfabric 2.6.0, the series current
# distributions ship. Builds libfabric 2.6.0 (the providers compared with:
# tcp, udp, rxm, rxd, shm) and its fabtests from the unmodified upstream
# tarball into a private prefix in the build tree, cached per tarball
# checksum; loads the rdmx just built into it; checks that the 2.6
# fi_info lists rdmx; runs the 2.6 fabtests quick suite over rdmx on
# loopback with no FI_RDMX_* variable, and prints its counts.
#
# The tarball is looked for and the build kept as upstream_lib.sh does.
#
# Exit status: 0 pass (no test failed), 1 fail, 77 skip (no tarball).
set -eu

LF_VERSION=2.6.0
# Whole-suite bound; runfabtests.sh bounds each test at 60 s itself.
SUITE_TIMEOUT=1500

. "$(dirname "$0")/testlib.sh"
. "$(dirname "$0")/upstream_lib.sh"
# The build takes about a minute, the suite a few: cap the whole script.
t_cap_runtime 2700 "$@"

here=$(cd "$(dirname "$0")" && pwd)

TARBALL=$(up_find_tarball "libfabric-$LF_VERSION.tar.gz")
if [ -z "$TARBALL" ]; then
	echo "SKIP: no shared folder with upstream/libfabric-$LF_VERSION.tar.gz" \
		"beside $UP_TOP (nor beside its main checkout)"
	exit 77
fi

: "${RDMX_BUILDDIR:=$PWD}"
[ -f "$RDMX_BUILDDIR/.libs/librdmx-fi.so" ] ||
	{ echo "$0: $RDMX_BUILDDIR/.libs/librdmx-fi.so not built (set RDMX_BUILDDIR)" >&2; exit 1; }
# The 2.6 programs are not built with the sanitizers (t_foreign_prefix).
SAN_ENV=$(t_foreign_prefix)

SUM=$(sha256sum "$TARBALL" | cut -c1-16)
CACHE=$(up_cache)
P2=$CACHE/libfabric-$LF_VERSION-$SUM

t_init
start=$(date +%s)

# Builds libfabric and its fabtests into $P2 from a fresh copy of the
# tarball (up_cached).
build_prefix() {
	local src=$CACHE/src-$SUM log=$CACHE/build-$SUM.log
	rm -rf "$src"
	mkdir -p "$src"
	echo "building libfabric $LF_VERSION and its fabtests into $P2 (log: $log)"
	# Chained with &&: set -e does not apply inside an `if` or `||`.
	if ! (tar -xzf "$TARBALL" -C "$src" &&
	      cd "$src/libfabric-$LF_VERSION" &&
	      ./autogen.sh &&
	      ./configure --prefix="$P2" --enable-only --enable-tcp \
			--enable-udp --enable-rxm --enable-rxd --enable-shm \
			--disable-static &&
	      make -j2 install &&
	      cd fabtests &&
	      ./autogen.sh &&
	      ./configure --prefix="$P2" --with-libfabric="$P2" &&
	      make -j2 install) >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		t_fail "building libfabric $LF_VERSION failed (log: $log)"
	fi
	rm -rf "$src"
}

up_cached "$P2" build_prefix
built=$(date +%s)

# The environment of the 2.6 run: its library and programs, the rdmx just
# built, and nothing else that steers rdmx or libfabric.
for v in $(env | sed -n 's/^\(FI_[A-Z0-9_]*\)=.*/\1/p'); do
	unset "$v"
done
LD_LIBRARY_PATH=$P2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PATH=$P2/bin:$PATH
FI_PROVIDER_PATH=$RDMX_BUILDDIR/.libs
export LD_LIBRARY_PATH PATH FI_PROVIDER_PATH

fi_info --version | grep -q "^libfabric: $LF_VERSION\$" ||
	t_fail "$P2/bin/fi_info does not report libfabric $LF_VERSION"
t_spawn fi_info $SAN_ENV fi_info -p rdmx
t_reap "$T_LAST_PID" "fi_info -p rdmx (libfabric $LF_VERSION)"
t_out_has fi_info '^provider: rdmx$' ||
	t_fail "the libfabric $LF_VERSION fi_info does not list rdmx"
echo "libfabric $LF_VERSION lists rdmx: $(grep -c '^provider: rdmx$' "$T_DIR/fi_info.out") entries"

# The suite runs in a network namespace of its own when one can be made
# (root): fabtests use fixed ports (9228, 9229 for fi_msg_sockets's
# client, and 3000 for their socket sync), so another suite on the host
# would otherwise answer ours. Its only interface is loopback. There the
# suite runs whole; in the host's network it leaves out UP_EXCLUDE's
# tests (see upstream_lib.sh). runfabtests.sh reads its data files from
# the folder it runs in. timeout leads its own process group: whatever a
# test leaves running is ended with it below.
NETNS=""
EXCLUDE="-e $UP_EXCLUDE"
if unshare -n true 2>/dev/null; then
	NETNS="unshare -n $here/netns_lo_exec.sh"
	EXCLUDE=""
	echo "suite network: a private network namespace (loopback only)"
else
	echo "suite network: the host's (no private network namespace: not root?), without $UP_EXCLUDE"
fi

# rdmx's own one-process API tests, inside the 2.6 core: the structures
# it allocates and the inline calls compiled with its headers. Like the
# suite, they run in the private namespace, away from other runs' ports.
if [ -n "$NETNS" ]; then
	for t in rdmx_getinfo_test rdmx_api_test; do
		prog=$RDMX_BUILDDIR/fabtests/unit/$t
		[ -x "$prog" ] || t_fail "$prog not built (make check builds it)"
		t_spawn_with "$t" "$NETNS" $SAN_ENV "$prog"
		t_reap "$T_LAST_PID" "$t in libfabric $LF_VERSION"
		echo "$t in libfabric $LF_VERSION: $(tail -n 1 "$T_DIR/$t.out")"
		# Passed: a later failure need not dump its thousand lines.
		rm -f "$T_DIR/$t.out" "$T_DIR/$t.err"
	done
else
	echo "rdmx_getinfo_test, rdmx_api_test in libfabric $LF_VERSION: not run (no private namespace)"
fi

# The sanitizers' runtimes go into the test programs only, through a
# wrapper each: preloaded into runfabtests.sh's bash and ps, they hang.
BIN=$P2/bin
if [ -n "$SAN_ENV" ]; then
	BIN=$T_DIR/bin
	mkdir "$BIN"
	for f in "$P2"/bin/fi_*; do
		printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$SAN_ENV" "$f" >"$BIN/${f##*/}"
		chmod +x "$BIN/${f##*/}"
	done
fi
echo "running the libfabric $LF_VERSION fabtests quick suite over rdmx"
mkdir -p "$RDMX_BUILDDIR/upstream"
RUN_LOG=$RDMX_BUILDDIR/upstream/quick-rdmx.log
(cd "$P2/share/fabtests" &&
	exec $NETNS timeout -k 10 "$SUITE_TIMEOUT" runfabtests.sh -v -T 60 \
		-t quick -p "$BIN" $EXCLUDE -s 127.0.0.1 -c 127.0.0.1 rdmx) \
	>"$RUN_LOG" 2>&1 &
suite=$!
T_PIDS="$T_PIDS $suite"
t_on_exit "kill -- -$suite 2>/dev/null"
t_collect "$suite"
rc=$T_RC
kill -- -"$suite" 2>/dev/null || :
done_at=$(date +%s)

# runfabtests.sh's own totals ("# Total Pass   N").
total() {
	awk -v what="$1" '$1 == "#" && $2 == "Total" && $3 == what { n = $NF }
			  END { print n }' "$RUN_LOG"
}
pass=$(total Pass)
rfail=$(total Fail)
notrun=$(total Notrun/Excluded)
awk -f "$here/fabtests_fails.awk" "$RUN_LOG" >"$T_DIR/fails"
fail=$(grep -c '^FAIL ' "$T_DIR/fails" || :)
nomatch=$(grep -c '^NOMATCH ' "$T_DIR/fails" || :)
sed -n 's/^FAIL /FAILED: /p' "$T_DIR/fails"
sed -n 's/^NOMATCH /NOT RUN (no fi_getinfo match; fabtests count it failed): /p' "$T_DIR/fails"
echo "seconds: build $((built - start)), suite $((done_at - built))"
[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || t_fail "the suite ran past $SUITE_TIMEOUT s"
[ -n "$pass" ] && [ -n "$rfail" ] && [ -n "$notrun" ] ||
	{ tail -n 30 "$RUN_LOG" >&2; t_fail "the suite printed no totals"; }
[ $((fail + nomatch)) -eq "$rfail" ] ||
	t_fail "fabtests_fails.awk found $((fail + nomatch)) failed tests, runfabtests.sh $rfail"
echo "libfabric $LF_VERSION quick suite over rdmx: pass $pass fail $fail" \
	"notrun $((notrun + nomatch)) (runfabtests.sh: pass $pass fail $rfail" \
	"notrun $notrun; log: $RUN_LOG)"
[ "$fail" -eq 0 ] || t_fail "$fail tests of the $LF_VERSION quick suite failed"
# With no real failure left, runfabtests.sh's status is that of the
# not-run tests it counted as failed.
echo "PASS: libfabric2.sh"
