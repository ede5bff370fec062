#!/bin/sh
# run-scale.sh WISP_BINARY: a traced job on a cluster far larger than the
# trace.  Generates the bundled example workload (16 ranks, TP4 x PP2 x
# DP2; examples/make_example.c), shows the parallel layout wisp infers from
# its groups, then scales data parallelism 2 -> 128 (1,024 ranks sharing
# the 16 traced graphs) on examples/cluster-1024.yaml (128 nodes x 8 GPUs,
# two tiers) and asks which network resource, doubled, shortens the step.
set -eu
wisp=${1:-build/wisp}
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_DEMO_DIR:-$bindir/demo}
mkdir -p "$out/workload"
"$bindir/examples/make_example" "$out/workload" llm
echo "== the traced job's layout (wisp inspect)"
"$wisp" inspect "$out/workload/llm" | sed -n '/^layout:/,/^collectives/p' | grep -v '^collectives'
echo
echo "== what-if at 1,024 GPUs: --scale dp=128 on examples/cluster-1024.yaml"
"$wisp" utility "$out/workload/llm" --scale dp=128 --cluster "$here/cluster-1024.yaml" \
  --json "$out/utility-1024.json" --svg "$out/utility-1024.svg"
echo
echo "wisp scale demo: results in $out: utility-1024.json and utility-1024.svg"
