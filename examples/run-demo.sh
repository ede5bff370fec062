#!/bin/sh
# run-demo.sh WISP_BINARY: the main job of the quick start.  Generates the
# bundled example workload (16 ranks, TP4 x PP2 x DP2) and runs a what-if
# study on it: which network resource, doubled, shortens the step most?
set -eu
wisp=${1:-build/wisp}
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_DEMO_DIR:-$bindir/demo}
mkdir -p "$out/workload"
"$bindir/examples/make_example" "$out/workload" llm
echo "wisp demo: example workload written to $out/workload (llm.0.et ... llm.15.et, comm_group.json)"
"$wisp" simulate "$out/workload/llm" --network "$here/cluster-2node.yaml" --json "$out/baseline.json" --max-rows 16
echo "wisp demo: report written to $out/baseline.json"
