#!/bin/sh
# ep-moe.sh WISP_BINARY: CCL-Bench's step-time breakdown (compute,
# overlapped and exposed communication, idle; traffic per collective type)
# for two parallel configurations of one MoE job, EP=4 and EP=8, as one
# HTML page.  CCL-Bench's claim: EP=8 overlaps more and has a longer step.
#
# Traces: GENERATED.  CCL-Bench's MoE traces are not public.  These are
# ground-truth Kineto traces written by regress/gt_par_gen --moe (p32b's
# twin: 8 GPUs of data parallelism, 16 experts, top-2, dispatch/combine
# all_to_all in each EP group; regress/gt_parallel.h), with their own GPU
# and network model, not wisp's.  wisp calibrates the network on the EP=4
# trace (wisp calibrate), then replays both traces on it.
#
# Output: $WISP_CCL_DIR (default BUILD/ccl-bench/ep-moe)/report.html and
# the JSON it was drawn from.  Exits 77 (skipped) when gt_par_gen cannot
# write MoE traces (a build without p32b's --moe).
set -eu
wisp=${1:-build/wisp}
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_CCL_DIR:-$bindir/ccl-bench/ep-moe}
gen=${WISP_GT_PAR_GEN:-$bindir/regress/gt_par_gen}
mkdir -p "$out"
for ep in 4 8; do
  if ! "$gen" --moe --ep $ep "$out/ep$ep" >"$out/ep$ep.truth" 2>&1; then
    echo "ep-moe: SKIP: $gen cannot write MoE traces (needs --moe; build it with make regress/gt_par_gen)"
    exit 77
  fi
done
"$wisp" calibrate "$out/ep4" --cluster dgx-h100 -o "$out/cal.yaml" --json "$out/calibrate.json" >/dev/null 2>&1
for ep in 4 8; do
  "$wisp" simulate "$out/ep$ep" --network "$out/cal.yaml" --json "$out/ep$ep.json" >/dev/null 2>&1
done
"$wisp" report "$out/ep4.json" "$out/ep8.json" "$out/calibrate.json" -o "$out/report.html" >/dev/null
echo "ccl-bench EP4 vs EP8 (generated MoE traces): $(cat "$out/ep4.truth"); $(cat "$out/ep8.truth")"
echo "ccl-bench EP4 vs EP8: open $out/report.html"
