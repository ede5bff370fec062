#!/bin/sh
# nccl-plots.sh WISP_BINARY [DATA_DIR]: regenerates the real-vs-simulated
# plots of doc/collectives.md section 12 (doc/nccl-h100-*.svg) from the
# public H100 nccl-tests tables in DATA_DIR (default ../shared/data/nccl-tests
# next to the source tree) with `wisp collbench --compare-csv --svg`.
# The runs match the tables' headers: one node of 8 H100 (presets/dgx-h100),
# one host thread for the 8 GPUs (nccl-tests -g 8), NCCL_ALGO=RING for the
# ring table.  Each prints real beside simulated and the median errors.
set -eu
wisp=${1:?usage: nccl-plots.sh WISP_BINARY [DATA_DIR]}
here=$(cd "$(dirname "$0")" && pwd)
data=${2:-$here/../../shared/data/nccl-tests}
run() { # csv svg extra-args...
  csv=$1 svg=$2
  shift 2
  "$wisp" collbench --network "$here/../presets/dgx-h100.yaml" --ranks 8 --library-set gpus_per_thread=8 \
    --compare-csv "$data/$csv" --svg "$here/$svg" "$@"
}
run together-h100-1node-nvls-allreduce.csv nccl-h100-allreduce-nvls.svg
run together-h100-1node-ring-allreduce.csv nccl-h100-allreduce-ring.svg --algo ring
run together-h100-1node-nvls-allgather.csv nccl-h100-allgather-nvls.svg
run together-h100-1node-nvls-reducescatter.csv nccl-h100-reducescatter-nvls.svg
# Three more systems (issue 27), each on its spec-only config from
# data/nccl-tests/configs/ (sources in each file); ranks and -g come from
# the logs.
run2() { # config csv table svg
  "$wisp" collbench --network "$here/../data/nccl-tests/configs/$1" --compare-csv "$2" --compare-table "$3" \
    --svg "$here/$4"
}
run2 hgx-b200.yaml "$data/mit-b200-1node-allcollectives.csv" 2 nccl-b200-allreduce.svg
run2 aws-p5-2node.yaml "$data/aws-p5-h100-2node-efa-allreduce-nccl2.22.3.csv" 1 nccl-p5-2node-allreduce.svg
run2 h100-10node.yaml "$here/../data/nccl-tests/xxrjun-h100/xxrjun-h100-c01-10node-8gpu.csv" 1 nccl-h100-10node-allreduce.svg
run2 h100-10node.yaml "$here/../data/nccl-tests/xxrjun-h100/xxrjun-h100-c01-10node-8gpu.csv" 2 nccl-h100-10node-allgather.svg
