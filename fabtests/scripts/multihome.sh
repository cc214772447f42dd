#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# multihome.sh: rdmx as a user meets it on a real host, with no FI_RDMX_*
# variable set. Two network namespaces of its own are two hosts, a and b,
# each with loopback and two NICs: two veth pairs join them, each link
# with an IPv4 and an IPv6 address per end, in ranges that exist only
# inside the namespaces.
#
# On host a it checks what fi_getinfo offers (one entry per NIC, IPv4
# only unless IPv6 is asked for, no loopback), then runs rdmx_pingpong
# with the server naming no address (bound to every address, as the
# upstream fabtests' server is) and the client sending to each of a's
# addresses: 127.0.0.1 and both NICs from a itself, both NICs and IPv6
# from b; and a server bound to one NIC with a client on the other link
# bound to the other NIC, so two entries on different links meet. Then
# the same with libfabric's own fi_rdm_tagged_pingpong (fabtests 1.17.0,
# built as upstream.sh builds it; left out where its source is absent):
# the server naming no address (-B port) with clients to 127.0.0.1 on
# the machine itself, to a NIC from host a and from host b; the
# out-of-band exchange (-E), where the client learns the server's name;
# both sides naming their source (-s); and delivery complete (-U).
# Then it runs the MPI tests (mpi.sh: every program at 2 and 4 ranks)
# inside host a, where Open MPI spreads the ranks over both NICs' entries;
# mpi.sh's further runs (long-read off, NetPIPE) are left to the run on
# the machine itself (RDMX_MPI_QUICK=1).
#
# Needs root and ip (iproute2) with netns support; skips (77) otherwise.
# Both namespaces are deleted on every exit path; capped at 900 s (mpi.sh
# inside has its own cap).
# Exit status: 0 pass, 1 fail, 77 skip.
set -eu

MH_CAP_S=900
MH_ITERS=200

. "$(dirname "$0")/testlib.sh"
. "$(dirname "$0")/upstream_lib.sh"

t_netns_require
t_cap_runtime "$MH_CAP_S" "$@"

t_env_defaults
t_init

ns_a=rdmx-mh-a-$$
ns_b=rdmx-mh-b-$$
t_netns_add "$ns_a" "$ns_b"

# mh_link n: link n (1 or 2) between a and b: NICs a<n> and b<n>, with
# 10.214.<n>.1 and fd14:<n>::1 on a's end, .2 and ::2 on b's.
mh_link() {
	local n=$1
	t_veth "$ns_a" "a$n" "$ns_b" "b$n"
	ip -n "$ns_a" addr add "10.214.$n.1/24" dev "a$n"
	ip -n "$ns_b" addr add "10.214.$n.2/24" dev "b$n"
	ip -n "$ns_a" addr add "fd14:$n::1/64" dev "a$n" nodad
	ip -n "$ns_b" addr add "fd14:$n::2/64" dev "b$n" nodad
}

mh_link 1
mh_link 2
A="ip netns exec $ns_a"
B="ip netns exec $ns_b"

# fi_info is libfabric's (t_foreign_prefix).
FI_INFO="$(t_foreign_prefix) fi_info"

# mh_domains fi_info-args...: the domain names fi_info lists on host a.
mh_domains() {
	$A $FI_INFO -p rdmx "$@" 2>/dev/null | sed -n 's/^ *domain: *//p' | sort | tr '\n' ' '
}

# mh_formats fi_info-args...: the address formats fi_info lists on host a.
mh_formats() {
	$A $FI_INFO -p rdmx -v "$@" 2>/dev/null |
		sed -n 's/^ *addr_format: *//p' | sort -u | tr '\n' ' '
}

echo "== entries host a offers"
got=$(mh_domains)
[ "$got" = "a1 a2 " ] || t_fail "fi_info -p rdmx on a lists domains '$got', not 'a1 a2 '"
got=$(mh_formats)
[ "$got" = "FI_SOCKADDR_IN " ] || t_fail "entries of formats '$got', not IPv4 only"
got=$(mh_formats -a FI_SOCKADDR_IN6)
[ "$got" = "FI_SOCKADDR_IN6 " ] || t_fail "asked for IPv6, got formats '$got'"
got=$(mh_domains -n 10.214.2.2 -P 7)
[ "$got" = "a2 " ] || t_fail "for node 10.214.2.2 the entries are '$got', not the one routing there"
got=$(mh_domains -n 127.0.0.1 -P 7)
[ "$got" = "lo " ] || t_fail "for node 127.0.0.1 the entries are '$got', not loopback's"
echo "a1 and a2, IPv4 unless IPv6 is asked for; a node gets the entry routing to it"

# mh_case name server-prefix server-args client-prefix host client-args:
# one rdmx_pingpong server and client, both must pass.
mh_case() {
	local name=$1 sp=$2 sargs=$3 cp=$4 host=$5 cargs=$6
	echo "== $name"
	t_start_server "$name-server" "$sp" "$PP" -p 0 -n "$MH_ITERS" $sargs
	t_spawn_with "$name" "$cp" "$PP" -p "$T_SERVER_PORT" -n "$MH_ITERS" $cargs "$host"
	t_reap "$T_LAST_PID" "$name client"
	t_reap "$T_SERVER_PID" "$name server"
	t_out_has "$name" '^rdmx_pingpong: PASS' || t_fail "$name client printed no PASS"
	grep '^rdmx_pingpong: PASS' "$T_DIR/$name.out"
}

mh_case same-host-loopback "$A" "" "$A" 127.0.0.1 ""
mh_case same-host-nic1 "$A" "" "$A" 10.214.1.1 ""
mh_case same-host-nic2 "$A" "" "$A" 10.214.2.1 ""
mh_case other-host-nic1 "$A" "" "$B" 10.214.1.1 ""
mh_case other-host-nic2 "$A" "-m msg" "$B" 10.214.2.1 "-m msg"
mh_case other-host-ipv6 "$A" "-b ::" "$B" fd14:2::1 ""
mh_case crossed-links "$A" "-b 10.214.1.1" "$B" 10.214.1.1 "-b 10.214.2.2"

# mh_up_case name server-prefix "server-args" client-prefix "client-args":
# libfabric's own fi_rdm_tagged_pingpong, server and client over rdmx
# (FI_PROVIDER picks it), both must exit 0. With -E the client connects
# to the server's out-of-band port, so it starts once that listens.
mh_up_case() {
	local name=$1 sp=$2 sargs=$3 cp=$4 cargs=$5 oob
	echo "== $name (upstream)"
	t_spawn_with "$name-server" "$sp" $UPP $sargs
	T_SERVER_PID=$T_LAST_PID
	oob=$(echo "$sargs" | sed -n 's/.*-E=\([0-9]*\).*/\1/p')
	[ -z "$oob" ] || t_wait_ready "$T_SERVER_PID" "$name server" \
		up_listening "$sp" "$oob"
	t_spawn_with "$name" "$cp" $UPP $cargs
	t_reap "$T_LAST_PID" "$name client"
	t_reap "$T_SERVER_PID" "$name server"
	tail -n 1 "$T_DIR/$name.out"
}

if up_prepare; then
	ln -s "$UP_PREFIX/bin/fi_rdm_tagged_pingpong" "$T_DIR/up-rdm_tagged_pingpong"
	UPP="$(t_foreign_prefix) $T_DIR/up-rdm_tagged_pingpong -p rdmx -I 20"
	p=$(t_free_port)
	q=$(t_free_port)
	mh_up_case machine-no-address "" "-B $p" "" "-P $p 127.0.0.1"
	mh_up_case same-host-no-address "$A" "-B $p" "$A" "-P $p 10.214.2.1"
	mh_up_case other-host-no-address "$A" "-B $p" "$B" "-P $p 10.214.1.1"
	mh_up_case other-host-oob "$A" "-B $p -E=$q" "$B" "-P $p -E=$q 10.214.2.1"
	mh_up_case other-host-source "$A" "-s 10.214.1.1 -B $p" "$B" \
		"-s 10.214.1.2 -P $p 10.214.1.1"
	mh_up_case other-host-delivery "$A" "-U -B $p" "$B" "-U -P $p 10.214.2.1"
else
	echo "== upstream fi_rdm_tagged_pingpong: not run, $UP_WHY"
fi

echo "== the MPI tests inside host a"
$A env RDMX_MPI_QUICK=1 sh "$(dirname "$0")/mpi.sh" || t_fail "mpi.sh failed inside host a"
echo "PASS: multihome.sh"
