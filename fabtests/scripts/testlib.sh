#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# testlib.sh: helpers the test scripts (and contrib/demo.sh) source:
# scratch folder and cleanup, processes under timeout, bounded readiness
# waits, reading counters from their output, and starting an
# rdmx_pingpong server and client.
#
# RDMX_WRAP, when set, prefixes every program started (e.g. valgrind).
# The shell must know `local` (dash, bash and busybox sh do).

# Wall-clock cap of each process; the program's own waits time out sooner.
: "${RDMX_TEST_TIMEOUT:=120}"
# Bound on waiting for a server to become ready, in tenths of a second.
T_READY_TENTHS=300

# Defaults for a run by hand from the build directory; `make check` sets
# these through AM_TESTS_ENVIRONMENT.
t_env_defaults() {
	: "${RDMX_BUILDDIR:=$PWD}"
	: "${FI_PROVIDER_PATH:=$RDMX_BUILDDIR/.libs}"
	: "${FI_PROVIDER:=rdmx}"
	export RDMX_BUILDDIR FI_PROVIDER_PATH FI_PROVIDER
	PP="$RDMX_BUILDDIR/fabtests/functional/rdmx_pingpong"
	ST="$RDMX_BUILDDIR/fabtests/functional/rdmx_stream"
	t_require_prog "$PP"
}

# The words to put in front of a program that was not built here (fi_info,
# fi_pingpong, upstream fabtests, NPopenmpi) so that it can load the
# provider: in a sanitizer build, the sanitizers' runtimes preloaded (what
# leaks inside such a program is not ours); else nothing.
t_foreign_prefix() {
	[ -n "${RDMX_SAN_PRELOAD:-}" ] || return 0
	echo "env LD_PRELOAD=$(echo $RDMX_SAN_PRELOAD | tr ' ' ':') ASAN_OPTIONS=detect_leaks=0"
}

# t_netns_require [nft]: skips (77) the calling test unless it runs as
# root with ip (iproute2) and, if asked, nft (nftables).
t_netns_require() {
	local why=""
	[ "$(id -u)" -eq 0 ] || why="needs root"
	command -v ip >/dev/null 2>&1 || why="ip not installed (Debian: iproute2)"
	[ "${1:-}" != nft ] || command -v nft >/dev/null 2>&1 ||
		why="nft not installed (Debian: nftables)"
	[ -n "$why" ] || return 0
	echo "SKIP: ${0##*/}: $why"
	exit 77
}

# t_netns_add name...: network namespaces of the test's own, loopback up,
# deleted on exit. When not even the first can be made the test skips.
t_netns_add() {
	local ns first=1
	for ns; do
		if ! ip netns add "$ns" 2>/dev/null; then
			[ -z "$first" ] || { echo "SKIP: ${0##*/}: cannot create a network namespace"; exit 77; }
			t_fail "cannot create network namespace $ns"
		fi
		first=""
		t_on_exit "ip netns delete $ns"
		ip -n "$ns" link set lo up
	done
}

# t_veth ns1 if1 ns2 if2: a veth pair, if1 in ns1 and if2 in ns2, both up.
# It is made inside ns1 and its peer end moved straight into ns2: the
# host never sees either end.
t_veth() {
	ip -n "$1" link add "$2" type veth peer name "$4" netns "$3" ||
		t_fail "cannot create the veth pair $2-$4"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}

# t_loss ns percent [protocols]: nftables drops percent% of the packets
# of protocols (an nft set, default udp) that ns receives, at random
# (there is no netem here). A packet is what the input hook sees: over a
# veth, a whole segmented send (UDP_SEGMENT or TSO, up to 64 KiB).
t_loss() {
	ip netns exec "$1" nft -f - <<NFT || t_fail "nft could not load the drop rule in $1"
table inet rdmx_loss {
	chain input {
		type filter hook input priority 0; policy accept;
		meta l4proto ${3:-udp} numgen random mod 100 < $2 counter drop
	}
}
NFT
}

# t_path_loss ns percent: nftables in ns drops percent% of the UDP
# packets it receives from ports it never sent to (in the last 10 s), at
# random: the second and later source ports of an rdmx sender with
# FI_RDMX_PATHS, whose packets are answered at its first port only.
t_path_loss() {
	ip netns exec "$1" nft -f - <<NFT || t_fail "nft could not load the path rule in $1"
table inet rdmx_path_loss {
	set answered {
		type inet_service
		flags dynamic,timeout
		timeout 10s
	}
	chain output {
		type filter hook output priority 0; policy accept;
		meta l4proto udp update @answered { udp dport }
	}
	chain input {
		type filter hook input priority 0; policy accept;
		udp sport != @answered numgen random mod 100 < $2 counter drop
	}
}
NFT
}

# t_lossy_link tag net percent: a sender's and a receiver's namespace of
# the test's own (ns_s, ns_r) joined by a veth pair (veth_s, veth_r) with
# addresses net.1 and net.2 (addr_s, addr_r), each dropping percent% of
# the UDP packets it receives; sets those six variables.
t_lossy_link() {
	t_link "$1" "$2"
	t_loss "$ns_s" "$3"
	t_loss "$ns_r" "$3"
}

# t_lossy_link_dropped: sets drop_s and drop_r to the packets each side of
# t_lossy_link's link dropped; fails the test unless both dropped some (a
# test of loss in which nothing was lost proves nothing).
t_lossy_link_dropped() {
	drop_r=$(t_loss_dropped "$ns_r")
	drop_s=$(t_loss_dropped "$ns_s")
	[ -n "$drop_r" ] && [ "$drop_r" -gt 0 ] ||
		t_fail "the rule in $ns_r dropped no packet (${drop_r:-no counter})"
	[ -n "$drop_s" ] && [ "$drop_s" -gt 0 ] ||
		t_fail "the rule in $ns_s dropped no packet (${drop_s:-no counter})"
}

# t_loss_dropped ns: the packets t_loss's rule dropped so far in ns.
t_loss_dropped() {
	ip netns exec "$1" nft list table inet rdmx_loss |
		sed -n 's/.*counter packets \([0-9][0-9]*\) .*/\1/p'
}

T_PIDS=""
T_ON_EXIT=""

# t_marked_pids mark: the pids of the live processes whose environment
# holds the line mark (VAR=value): how a script finds what the processes
# it started through a launcher (mpirun) left.
t_marked_pids() {
	local f pid
	for f in /proc/[0-9]*/environ; do
		{ tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF "$1" || continue
		pid=${f#/proc/}
		echo "${pid%/environ}"
	done
}

# t_kill_marked mark: kills (KILL) every process t_marked_pids finds.
t_kill_marked() {
	local pid
	for pid in $(t_marked_pids "$1"); do
		kill -KILL "$pid" 2>/dev/null || :
	done
}

# t_require_prog path: fails unless the program was built.
t_require_prog() {
	[ -x "$1" ] || { echo "$0: $1 not built (set RDMX_BUILDDIR)" >&2; exit 1; }
}

# t_on_exit cmd: runs cmd (a string for eval; its failure is ignored) at
# cleanup, after every process started was stopped, in the reverse order
# of registration.
t_on_exit() {
	T_ON_EXIT="{ $1; } || :
$T_ON_EXIT"
}

t_cleanup() {
	local pid
	for pid in $T_PIDS; do
		kill "$pid" 2>/dev/null || :
	done
	for pid in $T_PIDS; do
		wait "$pid" 2>/dev/null || :
	done
	eval "$T_ON_EXIT"
	rm -rf "$T_DIR"
}

# t_cap_runtime seconds args...: re-runs the calling script, once, under
# timeout, so that it ends (its EXIT trap and cleanup included) within
# that many seconds whatever happens. Call it before t_init with "$@".
t_cap_runtime() {
	local secs=$1
	shift
	[ -z "${T_CAPPED:-}" ] || return 0
	T_CAPPED=1
	export T_CAPPED
	exec timeout -k 30 "$secs" sh "$0" "$@"
}

# Creates the scratch folder and makes sure no process outlives the script.
t_init() {
	T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rdmx-test.XXXXXX")
	trap t_cleanup EXIT
	trap 'exit 1' INT TERM HUP PIPE
}

# Prints the captured output of every process started so far.
t_dump() {
	local f
	for f in "$T_DIR"/*.out "$T_DIR"/*.err; do
		[ -s "$f" ] || continue
		echo "----- ${f##*/}"
		cat "$f"
	done
}

t_fail() {
	echo "FAIL: $*" >&2
	t_dump >&2
	exit 1
}

# t_spawn_with name prefix cmd...: starts cmd under timeout in the
# background, output in $T_DIR/name.out and name.err; its pid goes to
# T_LAST_PID. prefix (words, may be "") goes in front of the timeout, so
# RDMX_WRAP still wraps cmd itself: "env FI_RDMX_RX_BUFS=8",
# "ip netns exec ns1".
t_spawn_with() {
	local name="$1" prefix="$2"
	shift 2
	$prefix timeout "$RDMX_TEST_TIMEOUT" ${RDMX_WRAP:-} "$@" \
		>"$T_DIR/$name.out" 2>"$T_DIR/$name.err" &
	T_LAST_PID=$!
	T_PIDS="$T_PIDS $T_LAST_PID"
}

# t_spawn name cmd...: t_spawn_with without a prefix.
t_spawn() {
	local name=$1
	shift
	t_spawn_with "$name" "" "$@"
}

# t_try_wait_ready pid what check...: polls `check` (bounded) until it
# succeeds; returns 1 with the reason in T_ERROR if the process exits
# first or is not ready in time.
t_try_wait_ready() {
	local pid=$1 what=$2 n=0
	shift 2
	until "$@"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			T_ERROR="$what exited before it was ready"
			return 1
		fi
		n=$((n + 1))
		if [ "$n" -gt "$T_READY_TENTHS" ]; then
			T_ERROR="$what not ready after 30 s"
			return 1
		fi
		sleep 0.1
	done
}

# t_wait_ready pid what check...: t_try_wait_ready, failing the test.
t_wait_ready() {
	t_try_wait_ready "$@" || t_fail "$T_ERROR"
}

# t_collect pid: waits for a spawned process; its exit status goes to T_RC.
t_collect() {
	T_RC=0
	wait "$1" || T_RC=$?
	T_PIDS=$(echo "$T_PIDS" | sed "s/ $1\b//")
}

# t_reap pid what: waits for a spawned process; fails unless it exited 0.
t_reap() {
	t_collect "$1"
	[ "$T_RC" -eq 0 ] || t_fail "$2 exited with status $T_RC"
}

# t_out_has name pattern: whether process name printed a line matching
# the grep pattern so far.
t_out_has() {
	grep -q -- "$2" "$T_DIR/$1.out" 2>/dev/null
}

# t_field name key: the number N of the last "key=N" process name printed
# (counters, measured times); empty when it printed none.
t_field() {
	sed -n "s/.*[ (]$2=\([0-9][0-9]*\).*/\1/p" "$T_DIR/$1.out" | tail -n 1
}

# t_counter name key: a counter from process name's "counters:" line;
# fails the test when it is missing.
t_counter() {
	local v
	v=$(t_field "$1" "$2")
	[ -n "$v" ] || t_fail "$1 printed no $2 counter"
	echo "$v"
}

# t_start_server name prefix cmd...: starts a server that prints
# "listening on <addr> port <n> ..." (rdmx_pingpong, rdmx_stream -r) with
# t_spawn_with, waits for that line, and sets T_SERVER_PID and
# T_SERVER_PORT. Give the server -p 0: the kernel picks a free port.
t_start_server() {
	t_try_start_server "$@" || t_fail "$T_ERROR"
}

# t_try_start_server name prefix cmd...: t_start_server that returns 1,
# with the reason in T_ERROR, instead of failing the test (the server
# may still run: T_SERVER_PID is set either way).
t_try_start_server() {
	local name="$1" prefix="$2"
	shift 2
	t_spawn_with "$name" "$prefix" "$@"
	T_SERVER_PID=$T_LAST_PID
	T_SERVER_PORT=""
	t_try_wait_ready "$T_SERVER_PID" "$name" t_out_has "$name" ' listening on ' ||
		return 1
	T_SERVER_PORT=$(sed -n 's/.* listening on .* port \([0-9][0-9]*\) .*/\1/p' \
		"$T_DIR/$name.out")
	if [ -z "$T_SERVER_PORT" ] || [ "$T_SERVER_PORT" -eq 0 ]; then
		T_ERROR="$name printed no port"
		return 1
	fi
}

# pp_start_server name args...: starts an rdmx_pingpong server on a port
# the kernel picks (-p 0, so runs never collide), waits for its
# "listening" line, and sets PP_SERVER_PID and PP_PORT.
pp_start_server() {
	local name=$1
	shift
	t_start_server "$name" "" "$PP" -p 0 "$@"
	PP_SERVER_PID=$T_SERVER_PID
	PP_PORT=$T_SERVER_PORT
}

# pp_client_and_reap name host args...: runs the client to the server last
# started, then checks that both exited 0 and that both printed PASS.
pp_client_and_reap() {
	local name=$1 host=$2
	shift 2
	t_spawn "$name" "$PP" -p "$PP_PORT" "$@" "$host"
	t_reap "$T_LAST_PID" "$name client"
	t_reap "$PP_SERVER_PID" "$name server"
	grep -q '^rdmx_pingpong: PASS' "$T_DIR/$name.out" ||
		t_fail "$name client printed no PASS"
	cat "$T_DIR/$name.out"
}

# pp_case name host args...: one complete server + client run.
pp_case() {
	local name=$1 host=$2
	shift 2
	echo "== $name"
	pp_start_server "$name-server" -b "$host" "$@"
	pp_client_and_reap "$name" "$host" "$@"
}

# t_port_in_use port: whether any TCP or UDP socket of this host uses
# local port port.
t_port_in_use() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk -v p=":$hex" 'substr($2, length($2) - 4) == p { found = 1 }
				  END { exit !found }'
}

# t_free_port: a port in 20000..59999 that no socket of this host uses
# right now, for programs that cannot take port 0.
t_free_port() {
	local port
	while :; do
		port=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000))
		t_port_in_use "$port" || break
	done
	echo "$port"
}

pp_have_ipv6_loopback() {
	[ -r /proc/net/if_inet6 ] &&
		grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6
}


# t_link tag net: t_lossy_link without the loss: a sender's and a
# receiver's namespace (ns_s, ns_r) joined by a veth pair (veth_s,
# veth_r) with addresses net.1 and net.2 (addr_s, addr_r).
t_link() {
	ns_s=rdmx-$1-s-$$
	ns_r=rdmx-$1-r-$$
	veth_s=rx$1s$$
	veth_r=rx$1r$$
	addr_s=$2.1
	addr_r=$2.2
	t_netns_add "$ns_r" "$ns_s"
	t_veth "$ns_s" "$veth_s" "$ns_r" "$veth_r"
	ip -n "$ns_s" addr add "$addr_s/30" dev "$veth_s"
	ip -n "$ns_r" addr add "$addr_r/30" dev "$veth_r"
}

# t_routed tag addr_s addr_gs addr_gr addr_r plen mtu_s mtu_gr mtu_r: a
# sender's and a receiver's namespace (ns_s, ns_r) joined through a
# router's (ns_g), so that a path can be narrower than both ends: the
# sender's link to the router carries mtu_s at both ends, the router's
# link to the receiver mtu_gr at the router's end and mtu_r at the
# receiver's. The addresses (IPv4 or IPv6, prefix length plen) are the
# sender's, the router's on either link, and the receiver's; both ends
# route everything through the router, which forwards.
t_routed() {
	local tag=$1 six="" fwd=/proc/sys/net/ipv4/ip_forward
	case $2 in *:*) six=nodad fwd=/proc/sys/net/ipv6/conf/all/forwarding ;; esac
	ns_s=rdmx-$tag-s-$$
	ns_g=rdmx-$tag-g-$$
	ns_r=rdmx-$tag-r-$$
	t_netns_add "$ns_s" "$ns_g" "$ns_r"
	t_veth "$ns_s" rx${tag}s$$ "$ns_g" rx${tag}gs$$
	t_veth "$ns_g" rx${tag}gr$$ "$ns_r" rx${tag}r$$
	ip -n "$ns_s" addr add "$2/$6" dev rx${tag}s$$ $six
	ip -n "$ns_g" addr add "$3/$6" dev rx${tag}gs$$ $six
	ip -n "$ns_g" addr add "$4/$6" dev rx${tag}gr$$ $six
	ip -n "$ns_r" addr add "$5/$6" dev rx${tag}r$$ $six
	ip -n "$ns_s" link set rx${tag}s$$ mtu "$7"
	ip -n "$ns_g" link set rx${tag}gs$$ mtu "$7"
	ip -n "$ns_g" link set rx${tag}gr$$ mtu "$8"
	ip -n "$ns_r" link set rx${tag}r$$ mtu "$9"
	ip -n "$ns_s" route add default via "$3"
	ip -n "$ns_r" route add default via "$4"
	ip netns exec "$ns_g" sh -c "echo 1 >$fwd" ||
		t_fail "cannot turn forwarding on in the router's namespace"
}

# t_udp_port ns: the local port of the one UDP socket in ns; empty while
# there is none.
t_udp_port() {
	ip netns exec "$1" cat /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk '$2 ~ /:[0-9A-F][0-9A-F][0-9A-F][0-9A-F]$/ && $1 != "sl" {
			split($2, a, ":"); print a[2]; exit }' |
		{ read -r hex && printf '%d\n' "0x$hex"; } || :
}

# t_proc_kb pid key: the key (VmRSS, VmHWM) of /proc/pid/status in kB;
# empty once the process is gone.
t_proc_kb() {
	sed -n "s/^$2:[^0-9]*\([0-9][0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null || :
}
