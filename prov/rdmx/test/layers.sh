#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# layers.sh: no function of prov/rdmx/src is called from a folder below
# its own (api, rdm, lane, dev, util: src/README.md). A lower layer
# reaches a higher one only through the ops it was given (rdmx_comp.h,
# rdmx_addrs.h, rdmx_dev.h's admit). Within rdm/ the files call each
# other one way only, progress at the top (src/README.md, the order of
# rdm files): no cycle among them, and no call allowed past that rule.
# A genuine up-call goes through ops (struct rdmx_rxm_ops, the
# handshake's rdmx_hs_ops). contrib/check_layers reads the objects of
# the build make check runs in. Exit status: 0 pass, 1 fail.
set -eu
check=$(dirname "$0")/../../../contrib/check_layers
build=${RDMX_BUILDDIR:?run by make check}
status=0
"$check" "$build" || status=1
"$check" --rdm-cycles "$build" || status=1
exit $status
