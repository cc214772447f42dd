#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# pingpong.sh: runs rdmx_pingpong server and client over rdmx on loopback,
# in tagged and msg modes on 127.0.0.1, and once on ::1 when the loopback
# interface has IPv6. Every payload byte and completion is checked by the
# program itself; this script checks both exit codes.
#
# Exit status: 0 pass, 1 fail (automake's test protocol).
set -eu

. "$(dirname "$0")/testlib.sh"

# Iterations per size; a run under valgrind asks for few.
PP_ITERS=${RDMX_PP_ITERS:-1000}

pp_main() {
	t_env_defaults
	t_init
	pp_case tagged-ipv4 127.0.0.1 -m tagged -n "$PP_ITERS"
	pp_case msg-ipv4 127.0.0.1 -m msg -n "$PP_ITERS"
	if pp_have_ipv6_loopback; then
		pp_case tagged-ipv6 ::1 -m tagged -n "$((PP_ITERS / 5 + 1))"
	else
		echo "== tagged-ipv6: skipped, loopback has no ::1"
	fi
	echo "PASS: pingpong.sh"
}

pp_main "$@"
