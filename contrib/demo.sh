#!/bin/sh
# The rdmx demo: a tagged ping-pong between two processes over rdmx on
# loopback, printing latency and bandwidth per message size. Run through
# `contrib/rdmx demo`, which builds rdmx and sets FI_PROVIDER_PATH.
set -eu

prog=$RDMX_BUILDDIR/fabtests/rdmx_pingpong
port=$((20000 + $$ % 20000))
out=$(mktemp)
trap 'kill $server 2>/dev/null; rm -f "$out"' EXIT

echo "rdmx demo: tagged ping-pong over $(fi_info -p rdmx -l 2>/dev/null | head -n 1 | tr -d ':') (FI_RDMX_IFACE=$FI_RDMX_IFACE)"
timeout 60 "$prog" -m tagged -p "$port" -n 2000 -S all > "$out" 2>&1 &
server=$!
i=0
until grep -q listening "$out"; do
	i=$((i + 1))
	[ $i -le 100 ] || { cat "$out"; echo "server did not start" >&2; exit 1; }
	kill -0 $server 2>/dev/null || { cat "$out"; exit 1; }
	sleep 0.1
done
timeout 60 "$prog" -m tagged -p "$port" -n 2000 -S all 127.0.0.1
wait $server
