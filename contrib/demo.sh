#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The rdmx demo: a tagged ping-pong between two processes over rdmx on
# loopback, printing latency and bandwidth per message size. Run through
# `contrib/rdmx demo`, which builds rdmx and sets FI_PROVIDER_PATH.
set -eu

. "$(dirname "$0")/../fabtests/scripts/testlib.sh"

t_env_defaults
t_init
echo "rdmx demo: tagged ping-pong over rdmx on loopback (2 processes)"
pp_case demo 127.0.0.1 -m tagged -n 2000
