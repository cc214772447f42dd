#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# netns_lo_exec.sh cmd...: brings up loopback in the network namespace it
# runs in (a fresh one from `unshare -n` has it down), then runs cmd.
set -eu
ip link set lo up
exec "$@"
