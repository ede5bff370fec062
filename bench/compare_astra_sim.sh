#!/bin/bash
# compare_astra_sim.sh: replay the same `wisp convert --for astra-sim` files
# in ASTRA-sim (analytical, congestion-unaware backend) and in wisp, and
# print both step times.
#
# Usage: bench/compare_astra_sim.sh ASTRA_SIM_BIN TRACE_DIR [WISP]
#   ASTRA_SIM_BIN  your own build of AstraSim_Analytical_Congestion_Unaware
#                  (astra-sim/astra-sim, build/astra_analytical/build.sh)
#   TRACE_DIR      per-rank Kineto traces (anything `wisp convert` reads)
#   WISP           the wisp binary (default: ./wisp, else wisp on PATH)
# Environment:
#   TOPOLOGY=Switch  ASTRA-sim topology of the single network dimension
#   BW=400           its bandwidth in ASTRA-sim's "GB/s" (read as GiB/s by both)
#   LAT_NS=936.25    its latency per hop in ns (HGX-H100-validated.yml's values)
#   ENDPOINT_DELAY_NS=10  ASTRA-sim's endpoint-delay (CCL-Bench's value; 0 trips
#                    an assertion of the analytical backend's event queue on
#                    ASTRA-sim's own all_reduce example)
#   SPLITS=1         preferred-dataset-splits (ASTRA-sim inflates small
#                    collectives to splits x NPUs bytes; 1 keeps sizes as written)
#   CONVERT_ARGS     extra `wisp convert` options (e.g. "--step 12")
#   WORKDIR          scratch directory (default: a new mktemp -d, removed at exit
#                    unless KEEP=1)
#
# Both tools read the same network.yml (wisp reads ASTRA-sim's format as
# ASTRA-sim does: doc/topology.md §2) and the same .et files.  ASTRA-sim's
# system.json uses ring algorithms and one chunk per collective, the closest
# to wisp's defaults; the collective cost models still differ (wisp's NCCL
# model against ASTRA-sim's ring: on ASTRA-sim's 8-NPU 1 MB all_reduce
# example with the default network, 32.0 us against wisp's 15.5 us), so the
# two agree closely only when the step is not dominated by communication.
# ASTRA-sim's step is the latest "sys[i] finished, W cycles" (1 cycle = 1 ns);
# its CCL-Bench-style mean over ranks is printed too.  wisp's is `simulate`'s
# step_time_ns (the latest rank finish).  The comm_group.json is passed when
# convert wrote one.
set -euo pipefail

if [ $# -lt 2 ] || [ ! -x "$1" ]; then
  echo "usage: $0 ASTRA_SIM_BIN TRACE_DIR [WISP]  (ASTRA_SIM_BIN must be executable)" >&2
  exit 2
fi
ASTRA=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TRACE=$2
WISP=${3:-}
if [ -z "$WISP" ]; then
  if [ -x ./wisp ]; then WISP=$(pwd)/wisp; else WISP=$(command -v wisp || true); fi
fi
if [ -z "$WISP" ] || [ ! -x "$WISP" ]; then
  echo "$0: no wisp binary (give it as the third argument)" >&2
  exit 2
fi
TOPOLOGY=${TOPOLOGY:-Switch}
BW=${BW:-400}
LAT_NS=${LAT_NS:-936.25}
SPLITS=${SPLITS:-1}
ENDPOINT_DELAY_NS=${ENDPOINT_DELAY_NS:-10}
if [ -n "${WORKDIR:-}" ]; then
  mkdir -p "$WORKDIR"
else
  WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/wisp-astra-XXXXXX")
  [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORKDIR"' EXIT
fi
WORKDIR=$(cd "$WORKDIR" && pwd)

# shellcheck disable=SC2086
"$WISP" convert "$TRACE" -o "$WORKDIR/et" --for astra-sim ${CONVERT_ARGS:-} 2>"$WORKDIR/convert.err" |
  tee "$WORKDIR/convert.out"
NPUS=$(find "$WORKDIR/et" -name 'trace.*.et' | wc -l)
[ "$NPUS" -ge 2 ] || { echo "$0: ASTRA-sim needs at least 2 ranks (got $NPUS)" >&2; exit 1; }

cat > "$WORKDIR/network.yml" <<EOF
topology: [ $TOPOLOGY ]
npus_count: [ $NPUS ]
bandwidth: [ $BW ]
latency: [ $LAT_NS ]
EOF
cat > "$WORKDIR/system.json" <<EOF
{
  "scheduling-policy": "LIFO",
  "endpoint-delay": $ENDPOINT_DELAY_NS,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": $SPLITS,
  "all-reduce-implementation": ["ring"],
  "all-gather-implementation": ["ring"],
  "reduce-scatter-implementation": ["ring"],
  "all-to-all-implementation": ["ring"],
  "collective-optimization": "baseline",
  "local-mem-bw": 2000,
  "boost-mode": 0,
  "roofline-enabled": 0
}
EOF
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > "$WORKDIR/remote_memory.json"
CG=()
[ -f "$WORKDIR/et/comm_group.json" ] && CG=(--comm-group-configuration="$WORKDIR/et/comm_group.json")

# ASTRA-sim writes its log folder into the current directory.
(cd "$WORKDIR" && "$ASTRA" --workload-configuration="$WORKDIR/et/trace" \
  --system-configuration="$WORKDIR/system.json" --remote-memory-configuration="$WORKDIR/remote_memory.json" \
  --network-configuration="$WORKDIR/network.yml" "${CG[@]}" > "$WORKDIR/astra.out" 2>&1) ||
  { echo "$0: ASTRA-sim failed; its output:" >&2; tail -20 "$WORKDIR/astra.out" >&2; exit 1; }
FIN=$(grep -o 'sys\[[0-9]*\] finished, [0-9]* cycles' "$WORKDIR/astra.out" | awk '{print $3}')
NFIN=$(echo "$FIN" | grep -c . || true)
[ "$NFIN" = "$NPUS" ] || { echo "$0: ASTRA-sim finished $NFIN of $NPUS ranks; see $WORKDIR/astra.out" >&2; exit 1; }
A_MAX=$(echo "$FIN" | sort -n | tail -1)
A_MEAN=$(echo "$FIN" | awk '{s += $1} END {printf "%.0f", s / NR}')

"$WISP" simulate "$WORKDIR/et" --network "$WORKDIR/network.yml" --json "$WORKDIR/wisp.json" > "$WORKDIR/wisp.out" 2>&1 ||
  { echo "$0: wisp simulate failed; its output:" >&2; tail -20 "$WORKDIR/wisp.out" >&2; exit 1; }
W=$(grep -o '"step_time_ns": *"*[0-9.]*' "$WORKDIR/wisp.json" | head -1 | grep -o '[0-9.]*$')

printf '\nnetwork: %s, %d NPUs, %s "GB/s", %s ns per hop; files: %s\n' "$TOPOLOGY" "$NPUS" "$BW" "$LAT_NS" "$WORKDIR/et"
printf '%-34s %16s\n' "replay of the same files" "step_ms"
printf '%-34s %16.3f\n' "ASTRA-sim (latest rank finish)" "$(echo "$A_MAX / 1000000" | bc -l)"
printf '%-34s %16.3f\n' "ASTRA-sim (mean over ranks)" "$(echo "$A_MEAN / 1000000" | bc -l)"
printf '%-34s %16.3f\n' "wisp simulate (latest rank finish)" "$(echo "$W / 1000000" | bc -l)"
printf 'ASTRA-sim vs wisp: %+.2f %%\n' "$(echo "100 * ($A_MAX - $W) / $W" | bc -l)"
