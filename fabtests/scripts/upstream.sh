#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# upstream.sh: libfabric's own conformance suite, fabtests 1.17.0 (the
# release that matches Debian 12's libfabric), over the rdmx just built.
#
# The suite is built against the system libfabric into the build tree,
# once per source checksum, from FABTESTS_SRC or the release tarball in
# ../shared/upstream (upstream_lib.sh); without either the test is
# skipped.
#
# Then runfabtests.sh runs its quick set (unit, functional and short
# tests) on loopback, both processes of each test on this host:
#   runfabtests.sh -v -T 60 -t quick -p <bin> -s 127.0.0.1 -c 127.0.0.1 rdmx
# The 1.17 runfabtests.sh has no -U option of its own (its usage text
# names one, its option parser drops it): the quick set lists each test
# that offers delivery complete twice, without and with -U, so one run
# covers both, and the counts are printed for each half.
#
# After it come the completion methods that sleep instead of busy
# polling, which the quick set never tries: fi_rdm_pingpong,
# fi_rdm_tagged_pingpong and fi_rdm_tagged_bw (-I 50) with -c sread
# (fi_cq_sread) and with -c fd (fi_trywait, then poll(2) on the CQ's
# FI_GETWAIT descriptor), with the addresses given by -s; and
# fi_rdm_pingpong with both methods and the addresses given in the two
# other ways users give them. The forms (CS_FORMS, the first is the
# one every program runs with):
#   node:  -s 127.0.0.1 on both sides (fi_getinfo's node, and its
#          service from -B on the server, -P on the client);
#   ports: -B/-P alone (the server takes the source address fi_getinfo
#          offers first, the client names 127.0.0.1 and the port);
#   oob:   -E, fabtests 1.17's out-of-band exchange over a TCP socket
#          (each side binds a -B port of its own: on one host they
#          cannot share fabtests' default one).
# With them runs fi_msg_sockets, which the quick set leaves out (see
# upstream_lib.sh), in the form
#   sockets: -s 127.0.0.1 on both sides, -B on the server, -P and a -B
#          port of its own on the client (whose socket binds fabtests'
#          fixed 9229 without one).
# Server and client run one pair at a time, started like the quick set's
# (below), each process capped at 60 s; their records go to a log of
# their own in runfabtests.sh -v's form, and their counts are printed.
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
# Last, provider keys: with FI_RDMX_MR_PROV_KEY=1 rdmx picks random keys
# wherever the application allows FI_MR_PROV_KEY (fabtests do), and the
# RMA programs that exchange keys run so, by -s: fi_rma_bw -e rdm -o read,
# write and writedata (-I 50) and fi_rdm_rma_event. fi_multi_mr is not
# among them: it writes with key i + 1 whatever fi_mr_key returned, so it
# can pass only with requested keys (the default).
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
. "$(dirname "$0")/upstream_lib.sh"

t_cap_runtime "${UPSTREAM_TIMEOUT:-1800}" "$@"

# Its own session, so that its processes can be told from everyone else's
# (see above). Under t_cap_runtime's timeout this shell leads no process
# group, so setsid(1) makes it the session leader without forking.
if [ "$(ps -o sid= -p $$ | tr -d ' ')" != "$$" ]; then
	exec setsid -w sh "$0" "$@"
fi

: "${RDMX_BUILDDIR:=$PWD}"
: "${FI_PROVIDER_PATH:=$RDMX_BUILDDIR/.libs}"
export RDMX_BUILDDIR FI_PROVIDER_PATH
REAL_PS=$(command -v ps)
PROV=${UPSTREAM_PROV:-rdmx}
# The tests rdmx passes (fi_rdmx(7), CONFORMANCE): fewer is a failure.
# Raise it with the man page when rdmx passes more.
MIN_PASS=74
[ "$PROV" = rdmx ] || MIN_PASS=0
# Each program's bound, the quick set's (-T) and the completion methods'.
RDMX_TEST_TIMEOUT=60
# The completion-method runs (see above).
CS_PROGS="fi_rdm_pingpong fi_rdm_tagged_pingpong fi_rdm_tagged_bw"
CS_METHODS="sread fd"
CS_ITERS=50
CS_FORMS="node ports oob"
# The program that runs with every form.
CS_FORMS_PROG=fi_rdm_pingpong
# Over rdmx each of them passes (3 programs by 2 methods, and the
# program of every form by 2 methods by 2 more forms), and fi_msg_sockets.
CS_MIN_PASS=11
[ "$PROV" = rdmx ] || CS_MIN_PASS=0
# The provider-key runs (see above): over rdmx all 4 pass.
PK_MIN_PASS=4
# What a fabtests program exits with when the provider lacks what it
# needs (Linux's ENODATA and ENOSYS): runfabtests.sh counts it not run.
CS_ENODATA=61 CS_ENOSYS=38

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
# folder (runfabtests.sh writes its scratch files in the current one),
# without UP_EXCLUDE's tests (see upstream_lib.sh).
up_runfabtests() {
	cd "$T_DIR" &&
	PATH="$T_DIR/path:$UP_PREFIX/bin:$PATH" exec bash "$UP_PREFIX/bin/runfabtests.sh" \
		-v -T "$RDMX_TEST_TIMEOUT" -t quick -p "$T_DIR/bin" -L "-B $1" -C "-P $1" \
		-e "$UP_EXCLUDE" -s 127.0.0.1 -c 127.0.0.1 "$PROV"
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

# up_check log what min: fails the test, naming every failed one, if a
# test of the runfabtests.sh -v log failed, or if fewer than min passed;
# what says which tests they are.
up_check() {
	local fails passed
	fails=$(awk '/^- name:/ { sub(/^- name: */, ""); name = $0 }
		/^  result: *Fail/ { print "  " name }' "$1")
	[ -z "$fails" ] || t_fail "$2 failed:
$fails"
	# A test rdmx stops running (a provider that fails to load makes
	# every test "not run") must not pass silently.
	passed=$(grep -c '^  result: *Pass' "$1" || :)
	[ "$passed" -ge "$3" ] ||
		t_fail "only $passed $2 passed, $3 expected (fi_rdmx(7), CONFORMANCE)"
}

# up_cs_addrs form port: the address options of a completion-method run
# in form (node, ports or oob: see above) with the service (or
# out-of-band) port port: CS_HOW names the form, CS_SARGS and CS_CARGS
# are the server's and the client's options (the client's without the
# server's address).
up_cs_addrs() {
	case $1 in
	node)	CS_HOW="-s 127.0.0.1 on both sides"
		CS_SARGS="-s 127.0.0.1 -B $2" CS_CARGS="-s 127.0.0.1 -P $2" ;;
	ports)	CS_HOW="-B/-P"
		CS_SARGS="-B $2" CS_CARGS="-P $2" ;;
	oob)	CS_HOW="-E"
		CS_SARGS="-E=$2 -B $(t_free_port)" CS_CARGS="-E=$2 -B $(t_free_port)" ;;
	sockets) CS_HOW="-s 127.0.0.1 on both sides, the client's -B its own"
		CS_SARGS="-s 127.0.0.1 -B $2" CS_CARGS="-s 127.0.0.1 -P $2 -B $(t_free_port)" ;;
	esac
}

# up_cs_result srv cli: the result of a run whose server exited with
# status srv and whose client with cli ("none" when it was not started):
# Pass, Notrun (both found no provider as runfabtests.sh counts it, or
# the server did before the client was started) or Fail.
up_cs_result() {
	if [ "$1" -eq 0 ] && [ "$2" = 0 ]; then
		echo Pass
	elif [ "$1" -eq "$CS_ENODATA" ] || [ "$1" -eq "$CS_ENOSYS" ] &&
			{ [ "$2" = "$1" ] || [ "$2" = none ]; }; then
		echo Notrun
	else
		echo Fail
	fi
}

# up_cs_pair prog port sargs cargs: runs fabtests program prog as a server
# with the words sargs, once it uses port (a socket bound), and then as
# its client with cargs; prints the result (up_cs_result). Their output
# is in $T_DIR/cs-{server,client}.*.
up_cs_pair() {
	local spid crc=none
	rm -f "$T_DIR"/cs-*
	t_spawn cs-server "$T_DIR/bin/$1" $3
	spid=$T_LAST_PID
	if t_try_wait_ready "$spid" "the server" t_port_in_use "$2"; then
		t_spawn cs-client "$T_DIR/bin/$1" $4
		t_collect "$T_LAST_PID"
		crc=$T_RC
	else
		echo "client not started: $T_ERROR" > "$T_DIR/cs-client.err"
	fi
	# A client that failed leaves its server waiting for it.
	[ "$crc" = 0 ] || kill "$spid" 2>/dev/null || :
	t_collect "$spid"
	up_cs_result "$T_RC" "$crc"
}

# up_cs_output side cmd: cmd and the output of side (server or client)
# of the last up_cs_pair, as runfabtests.sh -v prints them.
up_cs_output() {
	printf -- '  %s_cmd: %s\n  %s_stdout: |\n' "$1" "$2" "$1"
	cat "$T_DIR/cs-$1.out" "$T_DIR/cs-$1.err" 2>/dev/null | sed -e 's/^/    /'
}

# up_cs_case prog options form: one run of fabtests program prog over
# $PROV with the words options, server and client on this host, the
# addresses given in form (see up_cs_addrs); prints its record as
# runfabtests.sh -v does, with the commands and their output unless it
# passed.
up_cs_case() {
	local prog=$1 opts="-p $PROV $2" port start res
	port=$(t_free_port)
	up_cs_addrs "$3" "$port"
	start=$(date +%s)
	res=$(up_cs_pair "$prog" "$port" "$opts $CS_SARGS" "$opts $CS_CARGS 127.0.0.1")
	printf -- '- name:   %s %s-p "%s", %s\n' "$prog" "${2:+$2 }" "$PROV" "$CS_HOW"
	printf -- '  result: %s\n  time:   %s\n' "$res" $(($(date +%s) - start))
	[ "$res" != Pass ] || return 0
	up_cs_output server "$prog $opts $CS_SARGS"
	up_cs_output client "$prog $opts $CS_CARGS 127.0.0.1"
}

# up_cs_all: every completion-method run, one after the other, then
# fi_msg_sockets.
up_cs_all() {
	local prog method form
	for prog in $CS_PROGS; do
		for method in $CS_METHODS; do
			for form in $CS_FORMS; do
				[ "$form" = "${CS_FORMS%% *}" ] ||
					[ "$prog" = "$CS_FORMS_PROG" ] || continue
				up_cs_case "$prog" "-I $CS_ITERS -c $method" "$form"
			done
		done
	done
	up_cs_case fi_msg_sockets "" sockets
}

# up_pk_all: the provider-key runs (see above), one after the other.
up_pk_all() {
	local op
	FI_RDMX_MR_PROV_KEY=1
	export FI_RDMX_MR_PROV_KEY
	for op in read write writedata; do
		up_cs_case fi_rma_bw "-e rdm -o $op -I $CS_ITERS" node
	done
	up_cs_case fi_rdm_rma_event "" node
}

t_init
t_on_exit up_kill_session

start=$(date +%s)
up_prepare || { echo "SKIP: $UP_WHY"; exit 77; }
for tool in bash python3 getopt timeout fi_info; do
	command -v "$tool" >/dev/null ||
		t_fail "$tool not found: contrib/rdmx installs what the suite needs"
done
[ -f "$FI_PROVIDER_PATH/librdmx-fi.so" ] || t_fail "no librdmx-fi.so in $FI_PROVIDER_PATH"
built=$(date +%s)
echo "fabtests: ready in $((built - start)) s (source $UP_SOURCE)"

up_make_shims "$T_DIR"
# With FI_RDMX_SHM=0 (contrib/rdmx runs the suite so too) its own log.
lane="" lane_log=""
if [ "$PROV" = rdmx ] && [ "${FI_RDMX_SHM:-1}" = 0 ]; then
	lane=" (FI_RDMX_SHM=0)" lane_log=-shm0
fi
tag=$(echo "$PROV" | tr -c 'a-z0-9_\n' _)$lane_log
mkdir -p "$RDMX_BUILDDIR/upstream"
LOG="$RDMX_BUILDDIR/upstream/runfabtests-$tag.log"
CS_LOG="$RDMX_BUILDDIR/upstream/methods-$tag.log"
PK_LOG="$RDMX_BUILDDIR/upstream/prov-keys-$tag.log"
# fabtests' own port (9228) is taken whenever someone else runs them here.
port=$(t_free_port)
echo "fabtests: runfabtests.sh -v -T $RDMX_TEST_TIMEOUT -t quick -s 127.0.0.1 -c 127.0.0.1 $PROV, port $port"
t_on_exit '[ -z "${running:-}" ] || { echo "upstream.sh: stopped; the log so far:"; cat "$running"; }'
rc=0
if [ "$PROV" = rdmx ]; then FI_PROVIDER=rdmx; export FI_PROVIDER; else unset FI_PROVIDER; fi
running=$LOG
up_wait up_runfabtests "$port" > "$LOG" 2>&1 || rc=$?
done_at=$(date +%s) running=""
cat "$LOG"
up_kill_session

echo "== fabtests 1.17.0 quick over $PROV$lane, $((done_at - built)) s (log: $LOG)"
echo "without -U: $(up_count "$LOG" "!")"
echo "with -U:    $(up_count "$LOG" "-U")"

echo "fabtests: $CS_PROGS with -c sread and -c fd, addresses by -s, -B/-P and -E; fi_msg_sockets"
running=$CS_LOG
up_wait up_cs_all > "$CS_LOG" 2>&1 || :
cs_done_at=$(date +%s) running=""
cat "$CS_LOG"
up_kill_session
rm -f "$T_DIR"/cs-*
echo "== -c sread and -c fd over $PROV$lane, $((cs_done_at - done_at)) s (log: $CS_LOG)"
up_count "$CS_LOG" "!"

if [ "$PROV" = rdmx ]; then
	echo "fabtests: fi_rma_bw and fi_rdm_rma_event with FI_RDMX_MR_PROV_KEY=1"
	# fi_info is not ours: in a sanitizer build it needs their runtimes preloaded.
	FI_RDMX_MR_PROV_KEY=1 $(t_foreign_prefix) fi_info -p rdmx -c FI_RMA -v |
		grep -q 'mr_mode:.*FI_MR_PROV_KEY' ||
		t_fail "FI_RDMX_MR_PROV_KEY=1: fi_info shows no FI_MR_PROV_KEY"
	running=$PK_LOG
	up_wait up_pk_all > "$PK_LOG" 2>&1 || :
	pk_done_at=$(date +%s) running=""
	cat "$PK_LOG"
	up_kill_session
	rm -f "$T_DIR"/cs-*
	echo "== provider keys over $PROV$lane, $((pk_done_at - cs_done_at)) s (log: $PK_LOG)"
	up_count "$PK_LOG" "!"
fi

grep -q '^# Total Pass' "$LOG" || t_fail "runfabtests.sh ended (status $rc) before its summary"
up_check "$LOG" "upstream tests" "$MIN_PASS"
[ "$rc" -eq 0 ] || t_fail "runfabtests.sh exited with status $rc"
up_check "$CS_LOG" "completion-method runs" "$CS_MIN_PASS"
[ "$PROV" != rdmx ] || up_check "$PK_LOG" "provider-key runs" "$PK_MIN_PASS"
echo "PASS: upstream.sh"
