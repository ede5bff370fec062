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
