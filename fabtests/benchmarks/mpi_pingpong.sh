#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# mpi_pingpong.sh: Open MPI's point-to-point latency and bandwidth over
# rdmx against Open MPI's own transports, in one run on one host, 2
# ranks over loopback: fabtests/mpi/mpi_pingpong (IMB-MPI1 PingPong's
# semantics; the data of each size's last iteration checked) under each
# stack in turn:
#   rdmx     pml cm, mtl ofi, rdmx alone (mtl_ofi_provider_include), the
#            provider of --builddir, its default settings (shm lane on)
#   vader    pml ob1, btl self,vader (shared memory)
#   tcp      pml ob1, btl self,tcp on lo
#   rxm      pml cm, mtl ofi, libfabric's tcp;ofi_rxm on lo (FI_TCP_IFACE)
#   rdmxudp  rdmx with FI_RDMX_SHM=0 (-x): its udp lane, shm lane off
# and prints two markdown tables, latency (t[usec], half a round trip)
# and bandwidth (MB/s, 10^6 bytes/s): a row a size, a column a stack
# (the median of its --reps runs), then rdmx/vader, rdmx's value divided
# by vader's (latency: > 1 is rdmx slower; MB/s: > 1 is rdmx faster).
# Repetitions are interleaved (run 1 of every stack, then run 2...), so
# that drift hits every stack alike. Nothing else should run meanwhile:
# two busy-polling ranks fill the 2 cores of the test machines.
#
# Run it from the build directory (or give --builddir / RDMX_BUILDDIR):
#   sh ../fabtests/benchmarks/mpi_pingpong.sh             # 3 runs a stack
#   sh ../fabtests/benchmarks/mpi_pingpong.sh --quick --reps 1   # smoke
#   sh ../fabtests/benchmarks/mpi_pingpong.sh --stacks rdmx,vader,tcp,rxm \
#       --rdmx-env FI_RDMX_SHM=0
#
# No FI_RDMX_* variable reaches rdmx unless --rdmx-env sets it (those of
# the caller's environment are unset). Every mpirun runs under timeout;
# a run that fails or times out is reported with its error, its stack's
# cells say "fail" where no run of it succeeded, and the others go on.
# Every process of a run carries RDMX_MPI_RUN=<scratch folder> in its
# environment: whatever a run leaves is killed on exit.
#
# Needs mpirun (Open MPI: openmpi-bin) and fabtests/mpi/mpi_pingpong,
# which make check builds when configure found Open MPI's mpicc.
# Exit status: 0 when every run succeeded, 1 when some failed (the
# tables still print), 2 on bad usage.
set -eu

. "$(dirname "$0")/../scripts/testlib.sh"

usage() {
	cat <<EOF
usage: $0 [options]
  --stacks LIST       comma-separated: rdmx,vader,tcp,rxm,rdmxudp
                      (default rdmx,vader,tcp)
  --rdmx-env FI_RDMX_NAME=VALUE
                      one more rdmx column, the variable passed with -x;
                      may repeat (all go to that column); FI_RDMX_SHM=0
                      alone is the stack rdmxudp ("rdmx udp")
  --reps N            runs of each stack, interleaved; medians (default 3)
  --sizes LIST        message sizes in bytes, comma-separated (default
                      mpi_pingpong's: 0,1,8,64,512,4096,65536,1048576,4194304)
  --quick             few repetitions (-n 200 -m 50 -l 10): a smoke run
  --pp-args ARGS      more mpi_pingpong options, e.g. "-n 20000 -w 1000"
  --timeout S         wall-clock limit of each mpirun (default 300; --quick 60)
  --builddir DIR      where fabtests/mpi/mpi_pingpong and .libs are
                      (default \$RDMX_BUILDDIR, else the current directory)
EOF
}

# need_arg option argc: fails unless a value follows the option.
need_arg() {
	[ "$2" -ge 2 ] || { echo "$0: $1 wants a value" >&2; usage >&2; exit 2; }
}

STACKS=rdmx,vader,tcp
RDMX_ENV=""
REPS=3
SIZES=""
QUICK=0
PP_ARGS=""
TIMEOUT=""
BUILDDIR=${RDMX_BUILDDIR:-$PWD}
while [ $# -gt 0 ]; do
	case $1 in
	--stacks) need_arg "$1" $#; STACKS=$2; shift ;;
	--rdmx-env)
		need_arg "$1" $#
		case $2 in
		FI_RDMX_[A-Z0-9_]*=*) RDMX_ENV="${RDMX_ENV:+$RDMX_ENV }$2" ;;
		*) echo "$0: --rdmx-env wants FI_RDMX_<NAME>=<value>, not '$2'" >&2; exit 2 ;;
		esac
		shift ;;
	--reps) need_arg "$1" $#; REPS=$2; shift ;;
	--sizes) need_arg "$1" $#; SIZES=$2; shift ;;
	--quick) QUICK=1 ;;
	--pp-args) need_arg "$1" $#; PP_ARGS=$2; shift ;;
	--timeout) need_arg "$1" $#; TIMEOUT=$2; shift ;;
	--builddir) need_arg "$1" $#; BUILDDIR=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
[ -n "$TIMEOUT" ] || { [ "$QUICK" -eq 1 ] && TIMEOUT=60 || TIMEOUT=300; }
for n in "$REPS" "$TIMEOUT"; do
	case $n in
	''|*[!0-9]*|0) echo "$0: --reps and --timeout want positive numbers" >&2; exit 2 ;;
	esac
done
case $SIZES in
*[!0-9,]*) echo "$0: --sizes wants numbers separated by commas" >&2; exit 2 ;;
esac
[ "$QUICK" -eq 0 ] || PP_ARGS="-n 200 -m 50 -l 10${PP_ARGS:+ $PP_ARGS}"
[ -z "$SIZES" ] || PP_ARGS="-s $SIZES${PP_ARGS:+ $PP_ARGS}"

# The stacks, in the order given, each once; --rdmx-env adds one.
KEYS=""
add_key() {
	case " $KEYS " in *" $1 "*) ;; *) KEYS="${KEYS:+$KEYS }$1" ;; esac
}
for s in $(echo "$STACKS" | tr ',' ' '); do
	case $s in
	rdmx|vader|tcp|rxm|rdmxudp) add_key "$s" ;;
	*) echo "$0: unknown stack $s (rdmx, vader, tcp, rxm, rdmxudp)" >&2; exit 2 ;;
	esac
done
case $RDMX_ENV in
'') ;;
FI_RDMX_SHM=0) add_key rdmxudp ;;
*) add_key rdmxenv ;;
esac
[ -n "$KEYS" ] || { echo "$0: no stack to run" >&2; exit 2; }

BUILDDIR=$(cd "$BUILDDIR" && pwd) || exit 2
PROG=$BUILDDIR/fabtests/mpi/mpi_pingpong
[ -x "$PROG" ] || { echo "$0: $PROG not built: run make check TESTS= in the build" \
	"directory (configure must find Open MPI's mpicc), or give --builddir" >&2; exit 2; }
command -v mpirun >/dev/null && mpirun --version 2>&1 | grep -q 'Open MPI' ||
	{ echo "$0: needs Open MPI's mpirun (Debian: openmpi-bin)" >&2; exit 2; }
OMPI_VERSION=$(mpirun --version 2>&1 | sed -n 's/.*(Open MPI) *//p' | head -n 1)

# The caller's FI_RDMX_* (and provider choice) do not reach the runs:
# on one host every rank inherits mpirun's environment.
for v in $(env | sed -n 's/^\(FI_RDMX_[A-Za-z0-9_]*\)=.*/\1/p'); do
	echo "note: $v unset for the runs" >&2
	unset "$v"
done
unset FI_PROVIDER FI_PROVIDER_PATH RDMX_WRAP
RDMX_TEST_TIMEOUT=$TIMEOUT
t_init
MPI_MARK="RDMX_MPI_RUN=$T_DIR"
t_on_exit 't_kill_marked "$MPI_MARK"'

# label key: a stack's name in the tables.
label() {
	case $1 in
	rdmxudp) echo "rdmx udp" ;;
	rdmxenv) echo "rdmx $RDMX_ENV" ;;
	*) echo "$1" ;;
	esac
}

# xvars VAR=value...: the -x words that pass them to every rank.
xvars() {
	local v
	for v; do
		printf ' -x %s' "$v"
	done
}

# stack_args key: mpirun's options for a stack; rdmx's and rxm's also
# make every rank print its mtl ofi provider (checked after the run).
stack_args() {
	local rdmx="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include rdmx"
	rdmx="$rdmx --mca mtl_ofi_verbose 1 -x FI_PROVIDER_PATH=$BUILDDIR/.libs -x FI_PROVIDER=rdmx"
	case $1 in
	rdmx) echo "$rdmx" ;;
	rdmxudp) echo "$rdmx -x FI_RDMX_SHM=0" ;;
	rdmxenv) echo "$rdmx$(xvars $RDMX_ENV)" ;;
	vader) echo "--mca pml ob1 --mca btl self,vader" ;;
	tcp) echo "--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo" ;;
	rxm) echo "--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp;ofi_rxm" \
		"--mca mtl_ofi_verbose 1 -x FI_TCP_IFACE=lo" ;;
	esac
}

# stack_prov key: the provider mtl ofi must name, or nothing (ob1).
stack_prov() {
	case $1 in
	rdmx*) echo rdmx ;;
	rxm) echo 'tcp;ofi_rxm' ;;
	esac
}

RESULTS=$T_DIR/results
FAILURES=$T_DIR/failures
: >"$RESULTS"
: >"$FAILURES"

# run_one key rep: one mpirun of mpi_pingpong over a stack; its lines go
# to RESULTS as "key size usec mbps", a failure to FAILURES.
run_one() {
	local key=$1 rep=$2 name="$1.$2" prov why="" t0
	t0=$(date +%s%N)
	t_spawn_with "$name" "env $MPI_MARK TMPDIR=$T_DIR" mpirun --allow-run-as-root \
		--oversubscribe --mca oob_tcp_if_include lo -np 2 $(stack_args "$key") \
		"$PROG" $PP_ARGS
	t_collect "$T_LAST_PID"
	prov=$(stack_prov "$key")
	if [ "$T_RC" -eq 124 ]; then
		why="timed out after $TIMEOUT s"
	elif [ "$T_RC" -ne 0 ]; then
		why="mpirun exited with status $T_RC"
	elif ! t_out_has "$name" '^mpi_pingpong: PASS (2 ranks)$'; then
		why="rank 0 printed no PASS line"
	elif [ -n "$prov" ] && [ "$(grep -c "mtl:ofi:prov: $prov\$" "$T_DIR/$name.err")" -ne 2 ]; then
		why="not both ranks' mtl ofi named $prov as its provider"
	fi
	t_kill_marked "$MPI_MARK"
	if [ -n "$why" ]; then
		why="$why: $(grep -v 'mtl:ofi:\|fi_getinfo' "$T_DIR/$name.err" | tail -n 4 | tr '\n' ' ')"
		echo "$(label "$key") run $rep: $why" >>"$FAILURES"
		echo "   $(label "$key") run $rep: FAILED: $why" >&2
		return 0
	fi
	awk -v k="$key" 'NF == 4 && $1 ~ /^[0-9]+$/ { print k, $1, $3, $4 }' \
		"$T_DIR/$name.out" >>"$RESULTS"
	echo "   $(label "$key") run $rep: $((($(date +%s%N) - t0) / 1000000)) ms" >&2
}

LOAD0=$(cut -d ' ' -f 1-3 /proc/loadavg)
for rep in $(seq "$REPS"); do
	for key in $KEYS; do
		run_one "$key" "$rep"
	done
done

# medians col: "key size median" of column col (3: usec, 4: MB/s) of
# RESULTS, over the runs of each stack and size.
medians() {
	awk -v c="$1" '{ print $1, $2, $c }' "$RESULTS" | sort -k1,1 -k2,2n -k3,3g | awk '
		{ k = $1 " " $2; v[k, ++n[k]] = $3; if (n[k] == 1) order[++nk] = k }
		END {
			for (i = 1; i <= nk; i++) {
				k = order[i]; m = n[k]
				print k, (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
			}
		}'
}

# Whether the tables end with rdmx/vader: both stacks chosen.
RATIO=0
case " $KEYS " in *" rdmx "*) case " $KEYS " in *" vader "*) RATIO=1 ;; esac ;; esac

# table col unit fmt: the markdown table of column col: a row a size
# measured, a column a stack, then rdmx/vader.
table() {
	local head="| size" rule="|---:" key
	for key in $KEYS; do
		head="$head | $(label "$key") $2"
		rule="$rule|---:"
	done
	[ "$RATIO" -eq 0 ] || { head="$head | rdmx/vader"; rule="$rule|---:"; }
	echo "$head |"
	echo "$rule|"
	medians "$1" | awk -v keys="$KEYS" -v fmt="$3" -v ratio="$RATIO" '
		{ m[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++ns] = $2 } }
		END {
			nk = split(keys, key, " ")
			for (i = 1; i <= ns; i++) {
				s = sizes[i]
				row = "| " s
				for (j = 1; j <= nk; j++)
					row = row " | " (((key[j], s) in m) ? sprintf(fmt, m[key[j], s]) : "fail")
				if (ratio) {
					r = "-"
					if (("rdmx", s) in m && ("vader", s) in m && m["vader", s] > 0)
						r = sprintf("%.2f", m["rdmx", s] / m["vader", s])
					row = row " | " r
				}
				print row " |"
			}
		}' | sort -t '|' -k2,2n
}

echo "## MPI ping-pong: Open MPI $OMPI_VERSION, 2 ranks on one host (loopback)"
echo
echo "fabtests/mpi/mpi_pingpong (IMB-MPI1 PingPong semantics), medians of" \
	"$REPS run(s) a stack${PP_ARGS:+, mpi_pingpong $PP_ARGS}; $(nproc) cores," \
	"load average $LOAD0 at the start, $(cut -d ' ' -f 1-3 /proc/loadavg) at the end."
echo
for key in $KEYS; do
	case $key in
	rdmx) echo "- rdmx: pml cm, mtl ofi, the provider of $BUILDDIR/.libs with its" \
		"default settings (shm lane on), no FI_RDMX_* variable set" ;;
	rdmxudp) echo "- rdmx udp: the same with FI_RDMX_SHM=0 (its udp lane)" ;;
	rdmxenv) echo "- $(label rdmxenv): the same with $RDMX_ENV" ;;
	vader) echo "- vader: pml ob1, btl self,vader" ;;
	tcp) echo "- tcp: pml ob1, btl self,tcp (lo)" ;;
	rxm) echo "- rxm: pml cm, mtl ofi, libfabric's tcp;ofi_rxm (lo)" ;;
	esac
done
[ "$RATIO" -eq 0 ] || echo "- rdmx/vader: rdmx's median divided by vader's (latency:" \
	"> 1 is rdmx slower; MB/s: > 1 is rdmx faster)"
echo
echo "Latency, t[usec] (half a round trip):"
echo
table 3 us "%.2f"
echo
echo "Bandwidth, MB/s (10^6 bytes/s):"
echo
table 4 MB/s "%.1f"
if [ -s "$FAILURES" ]; then
	echo
	echo "Failed runs:"
	sed 's/^/- /' "$FAILURES"
	exit 1
fi
exit 0
