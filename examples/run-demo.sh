#!/bin/sh
# run-demo.sh WISP_BINARY: the main job of the quick start.  Generates the
# bundled example workload (16 ranks, TP4 x PP2 x DP2; see
# examples/make_example.c) and runs a what-if study on it: which network
# resource, doubled, shortens the training step most?
set -eu
wisp=${1:-build/wisp}
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_DEMO_DIR:-$bindir/demo}
mkdir -p "$out/workload"
"$bindir/examples/make_example" "$out/workload" llm
echo "== example workload: $out/workload/llm.{0..15}.et + comm_group.json"
echo "== baseline replay on examples/cluster-2node.yaml (2 nodes x 8 GPUs)"
"$wisp" simulate "$out/workload/llm" --network "$here/cluster-2node.yaml" --json "$out/baseline.json" \
  --timeline "$out/timeline.json" --max-rows 16
echo
echo "== what-if: utility of doubling each resource"
"$wisp" utility "$out/workload/llm" --cluster "$here/cluster-2node.yaml" --json "$out/utility.json" \
  --svg "$out/utility.svg"
echo
echo "== one page to read and forward: the baseline and the study"
"$wisp" report "$out/baseline.json" "$out/utility.json" -o "$out/report.html" >/dev/null
echo
echo "wisp demo: results in $out: baseline.json (report), timeline.json (open in ui.perfetto.dev),"
echo "           utility.json and utility.svg (the study)"
echo "wisp demo: open $out/report.html"
