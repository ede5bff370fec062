#!/bin/sh
# compare_outputs.sh WISP_BINARY OUTDIR: record the outputs a behaviour-preserving
# refactor must keep byte-identical (issue 16).  Run it once with a baseline
# binary and once with the changed one, then `diff -r BASE_OUT NEW_OUT`.
# Covers: collbench tables and JSON (--op all, sizes 8,64K,1M,64M,1G) on every
# preset and example network, analytical and flow; the supernode libraries on
# cloudmatrix384 (tables, --compare, --library-params).  Networks with more
# than 32 ranks run on ranks 0-31 (--ranks 32): a 768-rank collbench of every
# op takes minutes per table on two shared cores; simulate --json on the ASTRA-sim 8npus_1MB sets and the DLRM
# Kineto traces on dgx-h100; calibrate on DLRM (dgx1-v100); the demo's
# simulate and utility JSON.  Needs ../shared/data (WISP_SHARED_DATA or
# /work/shared/data); extracts the DLRM traces to /tmp/dlrm when missing
# (DLRM=DIR/dlrm_kineto: take them from elsewhere).
# Cost: a few minutes on two cores.
# `compare_outputs.sh --diff BASE_OUT NEW_OUT` compares two such records,
# ignoring the run-time speed line ("wisp: N events in X s ...") and wall
# times, which differ between any two runs; exit 0 when identical.
set -u
if [ "${1:-}" = "--diff" ]; then
  diff -r -I 'events in [0-9.]* s (' -I 'rows in [0-9.]* s' "$2" "$3"
  exit $?
fi
wisp=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
data=${WISP_SHARED_DATA:-/work/shared/data}
mkdir -p "$out"
cd "$out" || exit 1
out=.  # every path written below is relative, so the records do not name their folder
run() { # NAME ARGS...: stdout and exit code into NAME.txt, stderr into NAME.err
  name=$1; shift
  "$wisp" "$@" >"$out/$name.txt" 2>"$out/$name.err"
  echo "rc=$?" >>"$out/$name.txt"
}
cb() { # NAME ARGS...: collbench on at most 32 ranks
  name=$1; shift
  if "$wisp" collbench --ranks 33 --op barrier --sizes 8 "$@" >/dev/null 2>&1; then
    run "$name" collbench --ranks 32 "$@"
  else
    run "$name" collbench "$@"
  fi
}
sizes=8,64K,1M,64M,1G
for f in "$src"/presets/*.yaml "$src"/examples/networks/*.y*ml; do
  b=$(basename "$f"); b=${b%.*}
  case $f in */presets/*) b=preset-$b;; esac
  cb "cb-$b" --network "$f" --op all --sizes $sizes --json "$out/cb-$b.json"
  cb "cb-$b-flow" --network "$f" --op all --sizes $sizes --network-model flow \
    --json "$out/cb-$b-flow.json"
done
for lib in stratacl hccl hccl-zerocopy; do
  f=$src/presets/cloudmatrix384.yaml
  cb "cb-cm384-$lib" --network "$f" --op all --sizes $sizes --library $lib \
    --json "$out/cb-cm384-$lib.json"
  cb "cb-cm384-$lib-compare" --network "$f" --library $lib --compare
  run "cb-cm384-$lib-params" collbench --network "$f" --library $lib --library-params
done
for d in "$data"/astrasim/*/8npus_1MB; do
  c=$(basename "$(dirname "$d")")
  run "sim-astra-$c" simulate "$d" --network dgx-h100 --json "$out/sim-astra-$c.json"
done
dlrm=${DLRM:-/tmp/dlrm/dlrm_kineto}
if [ ! -d "$dlrm" ]; then
  mkdir -p "$(dirname "$dlrm")" && tar -xzf "$data/param/dlrm_kineto.tar.gz" -C "$(dirname "$dlrm")"
fi
run sim-dlrm simulate "$dlrm" --network dgx-h100 --json "$out/sim-dlrm.json"
run calib-dlrm calibrate "$dlrm" --cluster "$src/examples/networks/dgx1-v100.yaml" \
  --json "$out/calib-dlrm.json" -o "$out/calib-dlrm.yaml"
WISP_DEMO_DIR=demo sh "$src/examples/run-demo.sh" "$wisp" >"$out/demo.txt" 2>&1
echo "rc=$?" >>"$out/demo.txt"
rm -f "$out"/demo/workload/*.et
# The demo's utility.json and baseline.json hold the results; the SVG and the
# timeline are rendered from them and compared too.
