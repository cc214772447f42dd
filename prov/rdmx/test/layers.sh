#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# layers.sh: no function of prov/rdmx/src is called from a folder below
# its own (api, rdm, lane, dev, util: src/README.md). A lower layer
# reaches a higher one only through the ops it was given (rdmx_comp.h,
# rdmx_addrs.h, rdmx_dev.h's admit). contrib/check_layers reads the
# objects of the build make check runs in. Exit status: 0 pass, 1 fail.
set -eu
exec "$(dirname "$0")/../../../contrib/check_layers" "${RDMX_BUILDDIR:?run by make check}"
