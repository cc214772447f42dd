#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# devices.sh: device selection on a host without RDMA hardware (this
# one). libfabric's own fi_info loads rdmx and must show that
#  - FI_RDMX_DEVICE=auto (the default) looks for efa and verbs devices,
#    logs that it found none, and runs over udp;
#  - FI_RDMX_DEVICE=efa and =verbs make rdmx's getinfo fail with
#    -FI_ENODEV (-19) and a warning naming the device, and fi_info exits
#    with an error instead of listing anything;
#  - an unknown FI_RDMX_DEVICE is refused the same way.
#
# Exit status: 0 pass, 1 fail.
set -eu

. "$(dirname "$0")/testlib.sh"

t_env_defaults
t_init
command -v fi_info >/dev/null || t_fail "fi_info not found (Debian: libfabric-bin)"
FI_ENV=$(t_foreign_prefix)

# run name device: fi_info -p rdmx with FI_RDMX_DEVICE=device (unset
# when empty), output in $T_DIR/name.out, status in $rc.
run() {
	rc=0
	if [ -n "$2" ]; then
		FI_RDMX_DEVICE=$2 FI_LOG_LEVEL=info timeout 60 $FI_ENV fi_info -p rdmx \
			> "$T_DIR/$1.out" 2>&1 || rc=$?
	else
		(unset FI_RDMX_DEVICE; FI_LOG_LEVEL=info timeout 60 $FI_ENV \
			fi_info -p rdmx) > "$T_DIR/$1.out" 2>&1 || rc=$?
	fi
}

# has name text: fails unless name's output holds text.
has() {
	grep -qF -- "$2" "$T_DIR/$1.out" || t_fail "$1: no '$2' in the output"
}

echo "== FI_RDMX_DEVICE unset (auto)"
run auto ""
[ "$rc" -eq 0 ] || t_fail "auto: fi_info exited $rc"
has auto "FI_RDMX_DEVICE=auto: no usable efa device"
has auto "FI_RDMX_DEVICE=auto: no usable verbs device"
has auto "FI_RDMX_DEVICE=auto: using udp"
has auto "fabric: udp"

for dev in efa verbs; do
	echo "== FI_RDMX_DEVICE=$dev"
	run "$dev" "$dev"
	[ "$rc" -ne 0 ] || t_fail "$dev: fi_info succeeded without a $dev device"
	[ "$rc" -lt 124 ] || t_fail "$dev: fi_info crashed or hung (exit $rc)"
	has "$dev" "FI_RDMX_DEVICE=$dev: no usable $dev device"
	has "$dev" "provider rdmx returned -19"
	if grep -q "fabric: $dev" "$T_DIR/$dev.out"; then
		t_fail "$dev: a $dev fabric was listed"
	fi
done

echo "== FI_RDMX_DEVICE=bogus"
run bogus bogus
[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] || t_fail "bogus: fi_info exited $rc"
has bogus "FI_RDMX_DEVICE=bogus: unknown device"
echo "PASS: devices.sh"
