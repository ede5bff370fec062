#!/bin/bash
# compare_replay.sh: record the outputs of the replay on every bundled input,
# so a refactoring can be checked byte for byte against a baseline build.
#
# Usage: bench/compare_replay.sh BUILD_DIR OUT_DIR
#   BUILD_DIR  a configured, built wisp tree (its ./wisp and examples/make_example)
#   OUT_DIR    where the outputs go (one file per case); compare two runs with
#              `diff -r OUT_A OUT_B`
# Environment: WISP_SHARED_DATA (default ../shared/data beside the source tree),
#   DLRM (the 8-rank DLRM Kineto traces; default /tmp/dlrm/dlrm_kineto,
#   extracted from $WISP_SHARED_DATA/param/dlrm_kineto.tar.gz when absent).
#   WORK (default /tmp/compare_replay.work): the generated demo workload and
#   library config, at a fixed path so that the paths the reports print are
#   the same for every build compared.
# Only the speed line ("wisp: N events in X s") varies between runs; it is
# filtered out of the captured stderr.  Cases whose input is absent are
# skipped with a line on stdout.
set -u
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
data=${WISP_SHARED_DATA:-$src/../shared/data}
wisp=$build/wisp
dlrm=${DLRM:-/tmp/dlrm/dlrm_kineto}
work=${WORK:-/tmp/compare_replay.work}

run() {   # run NAME ARGS...: stdout+stderr (speed line removed) and exit code
  local name=$1; shift
  ( cd "$out" && "$wisp" "$@" >"$out/$name.out" 2>"$out/$name.err.raw"; echo "rc=$?" >"$out/$name.rc" )
  grep -v '^wisp: [0-9]* events in' "$out/$name.err.raw" >"$out/$name.err"
  rm -f "$out/$name.err.raw"
}

# Bundled demo workload (examples/run-demo.sh).
mkdir -p "$work/workload" && "$build/examples/make_example" "$work/workload" llm >/dev/null
wl=$work/workload/llm
cl=$src/examples/cluster-2node.yaml
run demo_sim simulate "$wl" --network "$cl" --json demo_sim.json --timeline demo_tl.json --max-rows 16
run demo_cp simulate "$wl" --network "$cl" --critical-path --max-rows -1
run demo_flow simulate "$wl" --network "$cl" --network-model flow --json demo_flow.json --critical-path
run demo_util utility "$wl" --cluster "$cl" --json demo_util.json
for cfg in "$src"/examples/networks/*.y*ml; do
  b=$(basename "$cfg"); b=${b%.*}
  run "demo_net_$b" simulate "$wl" --network "$cfg" --json "demo_net_$b.json" --critical-path
done

# DLRM Kineto traces (8 ranks).
if [ ! -d "$dlrm" ] && [ -f "$data/param/dlrm_kineto.tar.gz" ]; then
  mkdir -p "$(dirname "$dlrm")" && tar -xzf "$data/param/dlrm_kineto.tar.gz" -C "$(dirname "$dlrm")"
fi
if [ -d "$dlrm" ]; then
  p=$src/presets/dgx-h100.yaml
  run dlrm_sim simulate "$dlrm" --network "$p" --json dlrm_sim.json --timeline dlrm_tl.json --critical-path
  run dlrm_flow simulate "$dlrm" --network "$p" --network-model flow --json dlrm_flow.json --critical-path
  run dlrm_util utility "$dlrm" --network "$p" --json dlrm_util.json
else
  echo "skip: DLRM traces absent ($dlrm)"
fi

# ASTRA-sim example ET sets.
for d in "$data"/astrasim/*/8npus_1MB; do
  [ -d "$d" ] || { echo "skip: ASTRA-sim sets absent"; break; }
  op=$(basename "$(dirname "$d")")
  p=$src/presets/dgx-h100.yaml
  run "astra_$op" simulate "$d/$op" --network "$p" --json "astra_$op.json" --timeline "astra_${op}_tl.json" --critical-path
  run "astra_${op}_flow" simulate "$d/$op" --network "$p" --network-model flow --json "astra_${op}_flow.json"
  run "astra_${op}_util" utility "$d/$op" --network "$p" --json "astra_${op}_util.json"
done

# A communication library model (stratacl on CloudMatrix384) on all_gather.
ag=$data/astrasim/all_gather/8npus_1MB/all_gather
if [ -f "$ag.0.et" ]; then
  lib=$work/cm384_stratacl.yaml
  cat "$src/examples/networks/cloudmatrix384.yaml" >"$lib"
  printf 'library: {name: stratacl}\n' >>"$lib"
  run lib_sim simulate "$ag" --network "$lib" --json lib_sim.json --timeline lib_tl.json --critical-path
  run lib_flow simulate "$ag" --network "$lib" --network-model flow --json lib_flow.json
  run lib_util utility "$ag" --network "$lib" --json lib_util.json
fi
echo "compare_replay: $(ls "$out" | wc -l) files in $out"
