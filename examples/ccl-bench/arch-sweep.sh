#!/bin/sh
# arch-sweep.sh WISP_BINARY: CCL-Bench's cluster-architecture sweep
# (baseline / balanced / aggressive; examples/ccl-bench-sweep.yaml) as one
# HTML page: step time per point against the base, and the baseline's
# simulate report (critical path, what bounds the step).
#
# Traces: GENERATED.  CCL-Bench runs this sweep on its WL7 traces, which
# are not public; this script uses wisp's bundled example workload
# (examples/make_example.c: a 16-rank TP4 x PP2 x DP2 training step),
# written fresh into the output directory.  The page lists, per point, the
# step time and the share of the communication hidden under compute.
set -eu
wisp=${1:-build/wisp}
here=$(cd "$(dirname "$0")/.." && pwd)
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_CCL_DIR:-$bindir/ccl-bench/arch-sweep}
mkdir -p "$out/workload"
"$bindir/examples/make_example" "$out/workload" llm >/dev/null
"$wisp" simulate "$out/workload/llm" --network "$here/cluster-2node.yaml" --json "$out/baseline.json" >/dev/null
"$wisp" sweep "$here/ccl-bench-sweep.yaml" --workload "$out/workload/llm" -o "$out/sweep" >/dev/null
"$wisp" report "$out/baseline.json" "$out/sweep/ccl-bench-cluster.jsonl" -o "$out/report.html" >/dev/null
echo "ccl-bench arch sweep (generated workload): open $out/report.html"
