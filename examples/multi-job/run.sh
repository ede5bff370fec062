#!/bin/sh
# run.sh WISP_BINARY: two 8-node data-parallel jobs (32 ranks each, see
# examples/make_dp.c) on the 2:1 oversubscribed fat tree of
# examples/networks/nodes4-fat-tree-200g.yaml (16 nodes of 4 GPUs, 4 leaves
# of 4 nodes, 2 spines; cluster rank = 4 x node + GPU).
#
#  contiguous:  job A on nodes 0-7  (leaves 0, 1), job B on nodes 8-15 (leaves 2, 3):
#               the jobs share no link, so neither slows the other;
#  interleaved: job A on the even nodes, job B on the odd ones: both jobs
#               span every leaf and share its oversubscribed uplinks.
#
# Each placement is replayed with each job alone and both together, on
# both network models (flow: max-min sharing; analytical: FIFO links).
set -eu
wisp=${1:-build/wisp}
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_DEMO_DIR:-$bindir/demo}/multi-job
mkdir -p "$out"
"$bindir/examples/make_dp" "$out" dp 32
net="$here/../networks/nodes4-fat-tree-200g.yaml"
even=0-3,8-11,16-19,24-27,32-35,40-43,48-51,56-59
odd=4-7,12-15,20-23,28-31,36-39,44-47,52-55,60-63
for model in flow analytical; do
  echo "== contiguous placement, $model model"
  "$wisp" simulate --job "A=$out/dp@0-31" --job "B=$out/dp@32-63" --network "$net" --network-model $model \
    --max-rows 0 --json "$out/contiguous-$model.json" | sed -n '/jobs on one fabric/,$p'
  echo "== interleaved placement, $model model"
  "$wisp" simulate --job "A=$out/dp@$even" --job "B=$out/dp@$odd" --network "$net" --network-model $model \
    --max-rows 0 --json "$out/interleaved-$model.json" | sed -n '/jobs on one fabric/,$p'
done
echo "wisp multi-job example: reports in $out/{contiguous,interleaved}-{flow,analytical}.json"
