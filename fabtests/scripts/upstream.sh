#!/bin/sh
# upstream.sh: libfabric's own conformance suite, fabtests 1.17.0 (the
# release that matches Debian 12's libfabric), over the rdmx just built.
#
# The suite is built against the system libfabric into the build tree,
# once per source checksum: $RDMX_BUILDDIR/upstream/fabtests-<sha256
# prefix>/ holds its programs, and a later run reuses them. Its source is
# FABTESTS_SRC when set (an unpacked fabtests tree), else the unmodified
# release tarball fabtests-1.17.0.tar.gz in ../shared/upstream next to
# the source tree (or next to the main checkout, for a git worktree).
# Without either the test is skipped.
#
# Then runfabtests.sh runs its quick set (unit, functional and short
# tests) on loopback, both processes of each test on this host:
#   runfabtests.sh -v -T 60 -t quick -p <bin> -s 127.0.0.1 -c 127.0.0.1 rdmx
# The 1.17 runfabtests.sh has no -U option of its own (its usage text
# names one, its option parser drops it): the quick set lists each test
# that offers delivery complete twice, without and with -U, so one run
# covers both, and the counts are printed for each half.
#
# Living with other runs on one host: runfabtests.sh's cleanup kills
# every process of the host whose name starts with fi_. Here it runs in
# a session of its own, and the ps it finds first on PATH lists only that
# session, so it kills nothing it did not start; the programs it starts
# are wrappers that run the real ones under the name up-fi_*, out of
# reach of anyone else's runfabtests.sh. Whatever is left of the session
# when this script ends is killed. The programs take a port nobody uses
# (-B/-P through runfabtests.sh's -L/-C) instead of fabtests' fixed 9228.
#
# In a sanitizer build the wrappers preload the sanitizer runtimes
# (t_foreign_prefix), so that the programs load the sanitized provider.
#
# UPSTREAM_PROV (default rdmx) names another provider to run the same
# suite over for comparison, by hand: UPSTREAM_PROV='tcp;ofi_rxm'
# FI_TCP_IFACE=lo (FI_PROVIDER is then unset).
#
# Needs bash, python3 (runfabtests.sh asks it for errno values), ps
# (procps), autoconf, automake, libtool and libfabric-dev: contrib/rdmx
# installs them. Capped at UPSTREAM_TIMEOUT seconds (default 1800).
# Exit status: 0 pass, 1 fail, 77 skip (no fabtests source).
set -eu

. "$(dirname "$0")/testlib.sh"

t_cap_runtime "${UPSTREAM_TIMEOUT:-1800}" "$@"

# Its own session, so that its processes can be told from everyone else's
# (see above). Under t_cap_runtime's timeout this shell leads no process
# group, so setsid(1) makes it the session leader without forking.
if [ "$(ps -o sid= -p $$ | tr -d ' ')" != "$$" ]; then
	exec setsid -w sh "$0" "$@"
fi

top=$(cd "$(dirname "$0")/../.." && pwd)
: "${RDMX_BUILDDIR:=$PWD}"
: "${FI_PROVIDER_PATH:=$RDMX_BUILDDIR/.libs}"
export RDMX_BUILDDIR FI_PROVIDER_PATH
REAL_PS=$(command -v ps)
PROV=${UPSTREAM_PROV:-rdmx}
# The tests rdmx passes (fi_rdmx(7), CONFORMANCE): fewer is a failure.
# Raise it with the man page when rdmx passes more.
MIN_PASS=39
[ "$PROV" = rdmx ] || MIN_PASS=0

# up_find_tarball: prints the path of fabtests-1.17.0.tar.gz in the
# shared/upstream folder next to the source tree or next to the main
# checkout of its git repository; prints nothing when there is none.
up_find_tarball() {
	local common
	up_tarball_in "$top/../shared/upstream" && return 0
	common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) ||
		return 0
	up_tarball_in "$(dirname "$common")/../shared/upstream" || :
}

# up_tarball_in dir: prints dir's fabtests-1.17.0.tar.gz; 1 if it has none.
up_tarball_in() {
	[ -f "$1/fabtests-1.17.0.tar.gz" ] || return 1
	echo "$1/fabtests-1.17.0.tar.gz"
}

# up_checksum: the sha256 of the fabtests source (of the tarball, or of
# every file of FABTESTS_SRC with its name).
up_checksum() {
	if [ -n "${FABTESTS_SRC:-}" ]; then
		(cd "$FABTESTS_SRC" && find . -type f ! -path './.git/*' | LC_ALL=C sort |
			xargs -d '\n' sha256sum | sha256sum)
	else
		sha256sum < "$TARBALL"
	fi | cut -c1-64
}

# up_wait cmd...: runs cmd in the background and waits for it, so that a
# signal (the runtime cap's SIGTERM) interrupts the wait and the cleanup
# runs at once; a shell defers its traps until a foreground child ends.
up_wait() {
	"$@" &
	wait $!
}

# up_build dir: unpacks (or copies) the source into dir/src, builds it and
# installs it into dir/prefix. dir/done, written last, marks a complete
# build; a folder without it is the remains of an interrupted one.
up_build() {
	local dir=$1
	rm -rf "$dir"
	mkdir -p "$dir/src"
	if [ -n "${FABTESTS_SRC:-}" ]; then
		cp -a "$FABTESTS_SRC/." "$dir/src/"
	else
		tar -xzf "$TARBALL" -C "$dir/src" --strip-components=1
	fi
	echo "fabtests: building in $dir (log: $dir/build.log)"
	if ! up_wait sh -c 'cd "$1/src" &&
			{ [ -x configure ] || ./autogen.sh; } &&
			./configure --prefix="$1/prefix" --with-libfabric=/usr &&
			make -j2 && make install' sh "$dir" > "$dir/build.log" 2>&1; then
		tail -n 40 "$dir/build.log"
		t_fail "fabtests did not build"
	fi
	touch "$dir/done"
}

# up_kill_session: ends every other process of this script's session
# (what runfabtests.sh left behind): SIGTERM first, SIGKILL after 2 s.
up_kill_session() {
	local pid left n=0 sig=TERM
	while [ "$n" -lt 40 ]; do
		# ps, a direct child, has exited when the list is read.
		"$REAL_PS" -o pid= -s $$ > "$T_DIR/session" || :
		left=""
		while read -r pid; do
			[ "$pid" != $$ ] && kill -0 "$pid" 2>/dev/null || continue
			left="$left $pid"
		done < "$T_DIR/session"
		[ -n "$left" ] || return 0
		[ "$n" -lt 20 ] || sig=KILL
		kill -s "$sig" $left 2>/dev/null || :
		n=$((n + 1))
		sleep 0.1
	done
}

# up_make_shims dir: a ps on PATH that shows runfabtests.sh's
# "ps -eo comm,pid" only this session, and one wrapper per fabtests
# program (dir/bin/fi_*, what runfabtests.sh starts) that runs it under
# another name (dir/run/up-fi_*), so that the cleanup of a runfabtests.sh
# someone else runs on this host does not kill it; in a sanitizer build
# the wrapper also preloads the sanitizer runtimes.
up_make_shims() {
	local dir=$1 prog name prefix
	mkdir -p "$dir/path" "$dir/bin" "$dir/run"
	cat > "$dir/path/ps" <<EOF
#!/bin/sh
# Generated by upstream.sh: "-e" (every process) means this session here.
for a; do
	shift
	case \$a in
	-e) set -- "\$@" -s $$ ;;
	-e*) set -- "\$@" -s $$ "-\${a#-e}" ;;
	*) set -- "\$@" "\$a" ;;
	esac
done
exec "$REAL_PS" "\$@"
EOF
	chmod +x "$dir/path/ps"
	prefix=$(t_foreign_prefix)
	for prog in "$UP_PREFIX"/bin/fi_*; do
		name=${prog##*/}
		ln -s "$prog" "$dir/run/up-$name"
		printf '#!/bin/sh\nexec %s %s "$@"\n' "$prefix" "$dir/run/up-$name" > "$dir/bin/$name"
		chmod +x "$dir/bin/$name"
	done
}

# up_runfabtests port: the quick suite over $PROV, from the scratch
# folder (runfabtests.sh writes its scratch files in the current one).
up_runfabtests() {
	cd "$T_DIR" &&
	PATH="$T_DIR/path:$UP_PREFIX/bin:$PATH" exec bash "$UP_PREFIX/bin/runfabtests.sh" \
		-v -T 60 -t quick -p "$T_DIR/bin" -L "-B $1" -C "-P $1" \
		-s 127.0.0.1 -c 127.0.0.1 "$PROV"
}

# up_count log which: "P pass, F fail, N not run" over the tests of the
# runfabtests.sh -v log run with -U (which "-U") or without (which "!").
up_count() {
	awk -v want="$2" '
		/^- name:/ { sub(/^- name: */, ""); name = $0 }
		/^  result:/ {
			u = (name ~ / -U( |$)/)
			if ((want == "-U") != u) next
			if ($2 ~ /^Pass/) p++
			else if ($2 ~ /^Fail/) f++
			else n++
		}
		END { printf "%d pass, %d fail, %d not run\n", p, f, n }' "$1"
}

t_init
t_on_exit up_kill_session

if [ -n "${FABTESTS_SRC:-}" ]; then
	[ -f "$FABTESTS_SRC/scripts/runfabtests.sh" ] ||
		t_fail "FABTESTS_SRC=$FABTESTS_SRC is not a fabtests source tree"
	TARBALL=""
else
	TARBALL=$(up_find_tarball)
	if [ -z "$TARBALL" ]; then
		echo "SKIP: no fabtests source: neither $top/../shared/upstream/fabtests-1.17.0.tar.gz nor FABTESTS_SRC"
		exit 77
	fi
fi
for tool in bash python3 getopt timeout; do
	command -v "$tool" >/dev/null ||
		t_fail "$tool not found: contrib/rdmx installs what the suite needs"
done
[ -f "$FI_PROVIDER_PATH/librdmx-fi.so" ] || t_fail "no librdmx-fi.so in $FI_PROVIDER_PATH"

UP_DIR="$RDMX_BUILDDIR/upstream/fabtests-$(up_checksum | cut -c1-12)"
UP_PREFIX="$UP_DIR/prefix"
start=$(date +%s)
if [ -f "$UP_DIR/done" ]; then
	echo "fabtests: reusing the build in $UP_DIR"
else
	up_build "$UP_DIR"
fi
built=$(date +%s)
echo "fabtests: ready in $((built - start)) s (source ${FABTESTS_SRC:-$TARBALL})"

up_make_shims "$T_DIR"
LOG="$RDMX_BUILDDIR/upstream/runfabtests-$(echo "$PROV" | tr -c 'a-z0-9_\n' _).log"
# fabtests' own port (9228) is taken whenever someone else runs them here.
port=$(t_free_port)
echo "fabtests: runfabtests.sh -v -T 60 -t quick -s 127.0.0.1 -c 127.0.0.1 $PROV, port $port"
t_on_exit '[ -n "${done_at:-}" ] || { echo "upstream.sh: stopped; the log so far:"; cat "$LOG"; }'
rc=0
if [ "$PROV" = rdmx ]; then FI_PROVIDER=rdmx; export FI_PROVIDER; else unset FI_PROVIDER; fi
up_wait up_runfabtests "$port" > "$LOG" 2>&1 || rc=$?
done_at=$(date +%s)
cat "$LOG"
up_kill_session

echo "== fabtests 1.17.0 quick over $PROV, $((done_at - built)) s (log: $LOG)"
echo "without -U: $(up_count "$LOG" "!")"
echo "with -U:    $(up_count "$LOG" "-U")"
fails=$(awk '/^- name:/ { sub(/^- name: */, ""); name = $0 }
	/^  result: *Fail/ { print "  " name }' "$LOG")
grep -q '^# Total Pass' "$LOG" || t_fail "runfabtests.sh ended (status $rc) before its summary"
[ -z "$fails" ] || t_fail "upstream tests failed:
$fails"
[ "$rc" -eq 0 ] || t_fail "runfabtests.sh exited with status $rc"
# A test rdmx stops running (a provider that fails to load makes every
# test "not run") must not pass silently.
passed=$(grep -c '^  result: *Pass' "$LOG" || :)
[ "$passed" -ge "$MIN_PASS" ] ||
	t_fail "only $passed tests passed, $MIN_PASS expected (fi_rdmx(7), CONFORMANCE)"
echo "PASS: upstream.sh"
