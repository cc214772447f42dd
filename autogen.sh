#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Generates configure and the Makefile templates from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf -fi
