#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# comp_nic.sh: the completion levels of unit/rdmx_comp_test over the NIC
# lane. make check runs the program as it is, where its two endpoints,
# one host, meet by shared memory; FI_RDMX_SHM=0 here makes them meet by
# udp, whose sends complete only once the peer acknowledged them.
#
# Exit status: the program's (0 pass, 1 fail).
set -eu

. "$(dirname "$0")/testlib.sh"

t_env_defaults
CT="$RDMX_BUILDDIR/fabtests/unit/rdmx_comp_test"
t_require_prog "$CT"
FI_RDMX_SHM=0 exec "$CT"
