#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# fi_pingpong.sh: libfabric's own fi_pingpong (libfabric-bin) over rdmx on
# loopback, RDM endpoints, every size, with data integrity checks: once
# with untagged messages and once with -m tagged. Both processes' exit
# codes are checked.
#
# fi_pingpong exchanges addresses over a TCP control connection; the
# server's control port is chosen among ports nothing uses, and the client
# starts only once the server listens on it (a bounded poll of
# /proc/net/tcp: a probe connection would take the server's only accept).
#
# Exit status: 0 pass, 1 fail, 77 skip (fi_pingpong not installed).
set -eu

. "$(dirname "$0")/testlib.sh"

FI_PINGPONG=$(command -v fi_pingpong || :)
# fi_pingpong is not built with the sanitizers (t_foreign_prefix).
FP_ENV=$(t_foreign_prefix)
if [ -z "$FI_PINGPONG" ]; then
	echo "SKIP: fi_pingpong not installed (Debian: libfabric-bin)"
	exit 77
fi
# Attempts at a free control port, in case another process takes it first.
PORT_TRIES=5

t_env_defaults
t_init

# Whether a socket listens on TCP port $1 (state 0A is LISTEN).
port_listening() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 }
				  END { exit !found }'
}

# Waits until the server listens on $2, or it exits (then returns 1).
server_ready() {
	local pid=$1 port=$2 n=0
	until port_listening "$port"; do
		kill -0 "$pid" 2>/dev/null || return 1
		n=$((n + 1))
		[ "$n" -le "$T_READY_TENTHS" ] || t_fail "fi_pingpong server not listening after 30 s"
		sleep 0.1
	done
}

# fp_case name args...: one fi_pingpong server + client run.
fp_case() {
	local name=$1 try=0 port server
	shift
	echo "== $name"
	while :; do
		try=$((try + 1))
		port=$(t_free_port)
		t_spawn "$name-server" $FP_ENV "$FI_PINGPONG" -p rdmx -e rdm -c -S all -B "$port" "$@"
		server=$T_LAST_PID
		server_ready "$server" "$port" && break
		# It exited first: retry only a race lost for the port.
		t_collect "$server"
		if [ "$try" -ge "$PORT_TRIES" ] ||
		   ! grep -qi 'bind' "$T_DIR/$name-server.err"; then
			t_fail "$name server exited with status $T_RC before listening"
		fi
		echo "control port $port was taken; retrying"
	done
	t_spawn "$name" $FP_ENV "$FI_PINGPONG" -p rdmx -e rdm -c -S all -P "$port" "$@" 127.0.0.1
	t_reap "$T_LAST_PID" "$name client"
	t_reap "$server" "$name server"
	cat "$T_DIR/$name.out"
}

fp_case msg
fp_case tagged -m tagged
echo "PASS: fi_pingpong.sh"
