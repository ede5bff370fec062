#!/bin/bash
# compare_astra_speed.sh: wall time and peak memory of ASTRA-sim and wisp on
# the same generated Chakra files (issue 30 item 4), printed as a ratio table.
#
# Usage: bench/compare_astra_speed.sh [--astra-sim BIN] [BUILD_DIR]
#   BUILD_DIR    a built wisp tree (its ./wisp and bench/bench_astra_chain;
#                default: the current directory, as `make bench` runs it)
#   --astra-sim  your own build of AstraSim_Analytical_Congestion_Unaware
#                (astra-sim/astra-sim, build/astra_analytical/build.sh); the
#                ASTRA_SIM environment variable says the same.  Without one
#                the script prints "SKIP ASTRA-sim" and wisp's figures only.
# Environment:
#   CASES="256x100 1024x20"  RANKSxSTEPS workloads (the issue's table:
#                "256x1000 1024x100"; minutes per case on ASTRA-sim)
#   ALGOS="ring halving_doubling direct tree nccl"  wisp --algo values; nccl
#                is wisp's default library, NCCL, on the preset NCCL_PRESET
#                (default dgx-h100: 8-GPU NVSwitch nodes, 450 GB/s and 500 ns,
#                on a 50 GB/s, 1 us scale-out switch; no --algo, so NCCL's
#                tuner picks) against ASTRA-sim's ring, its closest
#                algorithm, on a two-dimension network.yml of the same
#                links (Switch 8 at 450 GB/s, 500 ns; Switch RANKS/8 at
#                50 GB/s, 1000 ns); a one-switch network.yml would give
#                wisp its ideal library, not NCCL (doc/topology.md)
#   COMP_US=100 BYTES=16777216  the step: compute, then an all-reduce of BYTES
#   BW=50 LAT_NS=500  the one switch (ASTRA-sim network.yml; wisp reads the
#                same file as ASTRA-sim does, doc/topology.md)
#   WORKDIR      scratch (default: mktemp -d, removed at exit unless KEEP=1)
# Each workload is written once by bench_astra_chain (bench/bench_astra_chain.c:
# per rank STEPS x (COMP_US compute, then the all-reduce)); each tool then runs
# it alone under /usr/bin/time (wall clock, user CPU and maximum resident set
# size; on a shared machine the CPU ratio is the one to trust).
# ASTRA-sim's system.json: one chunk, LIFO, endpoint-delay 10 ns (as
# bench/compare_astra_sim.sh).  The exit status is 0 unless a run fails.
set -euo pipefail

ASTRA=${ASTRA_SIM:-}
if [ "${1:-}" = "--astra-sim" ]; then
  ASTRA=${2:?--astra-sim needs the binary}
  shift 2
fi
BUILD=$(cd "${1:-.}" && pwd)
WISP=$BUILD/wisp
GEN=$BUILD/bench/bench_astra_chain
for f in "$WISP" "$GEN"; do
  [ -x "$f" ] || { echo "$0: $f is missing (build it: make bench/bench_astra_chain wisp)" >&2; exit 2; }
done
if [ -n "$ASTRA" ] && [ ! -x "$ASTRA" ]; then
  echo "$0: the ASTRA-sim binary $ASTRA is not executable" >&2
  exit 2
fi
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "$0: $TIME (GNU time) is needed for the peak memory" >&2; exit 2; }
CASES=${CASES:-256x100 1024x20}
ALGOS=${ALGOS:-ring halving_doubling direct tree nccl}
COMP_US=${COMP_US:-100}
BYTES=${BYTES:-16777216}
BW=${BW:-50}
LAT_NS=${LAT_NS:-500}
NCCL_PRESET=${NCCL_PRESET:-dgx-h100}
if [ -n "${WORKDIR:-}" ]; then
  mkdir -p "$WORKDIR"
else
  WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/wisp-astra-speed-XXXXXX")
  [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORKDIR"' EXIT
fi
WORKDIR=$(cd "$WORKDIR" && pwd)

astra_algo() { # wisp's name -> ASTRA-sim's system.json name
  case $1 in
    ring|nccl) echo ring ;;
    halving_doubling) echo halvingDoubling ;;
    direct) echo direct ;;
    tree) echo doubleBinaryTree ;;
    *) echo "$0: no ASTRA-sim algorithm for '$1'" >&2; exit 2 ;;
  esac
}

# measure OUT CMD...: runs CMD, leaves "wall_s rss_kib user_s" in OUT.time.
measure() {
  local out=$1; shift
  "$TIME" -f '%e %M %U' -o "$out.time" "$@" >"$out.out" 2>"$out.err" ||
    { echo "$0: failed: $*; see $out.err" >&2; tail -5 "$out.err" >&2; exit 1; }
}

[ -n "$ASTRA" ] || echo "SKIP ASTRA-sim: no binary (give --astra-sim BIN or ASTRA_SIM=BIN); wisp's figures only"
printf '\nchain: per step %s us compute then a %s B all-reduce; one switch, %s GB/s, %s ns\n' "$COMP_US" "$BYTES" \
  "$BW" "$LAT_NS"
printf '%-26s %28s %28s %22s %14s %14s\n' workload "ASTRA-sim wall/CPU/RSS" "wisp wall/CPU/RSS" \
  "wall/CPU/memory ratio" "astra_step_ms" "wisp_step_ms"
for c in $CASES; do
  n=${c%x*}
  steps=${c#*x}
  d=$WORKDIR/$c
  "$GEN" "$d/et" "$n" "$steps" "$COMP_US" "$BYTES"
  cat >"$d/network.yml" <<EOF
topology: [ Switch ]
npus_count: [ $n ]
bandwidth: [ $BW ]
latency: [ $LAT_NS ]
EOF
  # The dgx-h100 preset's links as ASTRA-sim dimensions, for the nccl row.
  cat >"$d/network_nccl.yml" <<EOF
topology: [ Switch, Switch ]
npus_count: [ 8, $((n / 8)) ]
bandwidth: [ 450, 50 ]
latency: [ 500, 1000 ]
EOF
  echo '{"memory-type": "NO_MEMORY_EXPANSION"}' >"$d/remote_memory.json"
  for a in $ALGOS; do
    wisp_net=(--network "$d/network.yml" --algo "$a")
    astra_net=$d/network.yml
    if [ "$a" = nccl ]; then
      wisp_net=(--network "$NCCL_PRESET")
      astra_net=$d/network_nccl.yml
    fi
    measure "$d/wisp_$a" "$WISP" simulate "$d/et/chain" "${wisp_net[@]}"
    read -r w_wall w_kib w_cpu <"$d/wisp_$a.time"
    w_step=$(grep -o 'step time: [0-9.]* ms' "$d/wisp_$a.out" | grep -o '[0-9.]*' | head -1)
    a_cell=SKIP ratio=- a_step=-
    if [ -n "$ASTRA" ]; then
      aa=$(astra_algo "$a")
      cat >"$d/system_$a.json" <<EOF
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 1,
  "all-reduce-implementation": ["$aa"],
  "all-gather-implementation": ["$aa"],
  "reduce-scatter-implementation": ["$aa"],
  "all-to-all-implementation": ["$aa"],
  "collective-optimization": "baseline",
  "local-mem-bw": 2000,
  "boost-mode": 0,
  "roofline-enabled": 0
}
EOF
      # ASTRA-sim writes its log folder into the current directory.
      (cd "$d" && measure "$d/astra_$a" "$ASTRA" --workload-configuration="$d/et/chain" \
        --system-configuration="$d/system_$a.json" --remote-memory-configuration="$d/remote_memory.json" \
        --network-configuration="$astra_net")
      read -r a_wall a_kib a_cpu <"$d/astra_$a.time"
      a_cyc=$(grep -o 'sys\[[0-9]*\] finished, [0-9]* cycles' "$d/astra_$a.out" "$d/astra_$a.err" 2>/dev/null |
        awk '{print $3}' | sort -n | tail -1)
      a_step=$(awk -v c="${a_cyc:-0}" 'BEGIN {printf "%.3f", c / 1e6}')
      a_cell=$(awk -v s="$a_wall" -v c="$a_cpu" -v k="$a_kib" \
        'BEGIN {printf "%.2f s / %.2f s / %.0f MB", s, c, k * 1024 / 1e6}')
      # Ratios of wall, of user CPU (the figure to trust on a shared
      # machine; a run under 0.01 s of CPU counts as 0.01 s) and of peak RSS.
      ratio=$(awk -v a="$a_wall" -v w="$w_wall" -v ac="$a_cpu" -v wc="$w_cpu" -v ak="$a_kib" -v wk="$w_kib" \
        'BEGIN {wc = wc < 0.01 ? 0.01 : wc; printf "%.0fx / %.0fx / %.0fx", (w > 0 ? a / w : 0), ac / wc,
                (wk > 0 ? ak / wk : 0)}')
    fi
    w_cell=$(awk -v s="$w_wall" -v c="$w_cpu" -v k="$w_kib" \
      'BEGIN {printf "%.2f s / %.2f s / %.0f MB", s, c, k * 1024 / 1e6}')
    printf '%-26s %28s %28s %22s %14s %14s\n' "$n x $steps, $a" "$a_cell" "$w_cell" "$ratio" "$a_step" \
      "${w_step:-?}"
  done
done
