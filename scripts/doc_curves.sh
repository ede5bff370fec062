#!/bin/sh
# doc_curves.sh [OUTDIR]: regenerates the real-vs-simulated bus-bandwidth
# curves of doc/collectives.md ("Curves on committed tables") from the
# committed nccl-tests tables (data/nccl-tests/) on their spec-only configs
# (data/nccl-tests/configs/), each written by `wisp collbench --compare-csv
# FILE --compare-table N --svg OUT`; ranks and -g come from the logs.
# OUTDIR defaults to doc/.  doc/check_curves.sh (make check) writes them to
# a scratch directory and compares them byte for byte with doc/, so a change
# that moves a curve fails the check until `scripts/doc_curves.sh` is rerun
# (the doc cannot drift from the binary).  Environment: WISP_BIN (default
# build/wisp), G_TEST_SRCDIR (default this script's parent).  Cost: four
# compare runs (one of 80 ranks), a few seconds of CPU.
set -eu
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
wisp=${WISP_BIN:-$src/build/wisp}
out=${1:-$src/doc}
data=$src/data/nccl-tests
# The curves, one per line: SVG name, config, table file, table number.
curves() {
  cat <<'LIST'
ncclt-a100-1node-allreduce.svg a100-1node.yaml superbench-a100/superbench-a100-1node-8gpu.csv 1
ncclt-a100-2node-efa-allreduce.svg aws-p4d-2node.yaml aws-efa-eks-a100/aws-p4d-a100-efa-2node-8gpu.csv 1
ncclt-b200-2node-allgather.svg gcp-a4-b200-2node.yaml dranet-b200/dranet-b200-a4-2node-8gpu.csv 1
ncclt-h100-10node-allreduce.svg h100-10node.yaml xxrjun-h100/xxrjun-h100-c01-10node-8gpu.csv 1
LIST
}
curves | while read -r svg cfg csv table; do
  "$wisp" collbench --network "$data/configs/$cfg" --compare-csv "$data/$csv" --compare-table "$table" \
    --svg "$out/$svg" >/dev/null
done
