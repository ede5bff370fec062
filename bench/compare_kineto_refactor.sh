#!/bin/bash
# compare_kineto_refactor.sh: records what the Kineto frontend produces on
# every Kineto trace at hand, so that a refactoring of frontends/kineto*.c
# can be shown to change nothing (issue 16, "Kineto by stage").
#
# Usage: bench/compare_kineto_refactor.sh WISP OUTDIR
#        bench/compare_kineto_refactor.sh --diff DIR_A DIR_B
# The first form runs, for every case below, `wisp inspect --verbose`,
# `wisp convert` (the .et files and comm_group.json) and `wisp simulate
# --network presets/dgx-h100.yaml --json` and keeps stdout, stderr, the exit
# status and the files in OUTDIR/<case>/.  The only lines dropped are the
# wall-clock ones (inspect's "loaded in ... s", simulate's "N events in
# ... s"): they differ run to run.
# The second form compares two such directories byte for byte (diff -r) and
# exits 1 on any difference.
#
# Inputs: $WISP_SHARED_DATA (default ../shared/data beside the source tree):
# hta/, tracelens/ and the 8-rank DLRM job of param/dlrm_kineto.tar.gz
# (extracted into $KT_SCRATCH, default /tmp/ktstage-cmp), and the traces of
# the ground-truth generator regress/gt_gen for every scenario, written by
# GT_GEN (default: regress/gt_gen beside WISP) into $KT_SCRATCH/gt.
set -uo pipefail
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--diff" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --diff DIR_A DIR_B" >&2; exit 2; }
  if diff -r "$2" "$3"; then
    echo "identical: $(find "$2" -type f | wc -l) files"
    exit 0
  fi
  exit 1
fi
[ $# -eq 2 ] || { echo "usage: $0 WISP OUTDIR | --diff DIR_A DIR_B" >&2; exit 2; }
WISP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
OUT=$2
D=${WISP_SHARED_DATA:-$SRCDIR/../shared/data}
SCR=${KT_SCRATCH:-/tmp/ktstage-cmp}
GT_GEN=${GT_GEN:-$(dirname "$WISP")/regress/gt_gen}
NET=$SRCDIR/presets/dgx-h100.yaml
[ -d "$D/hta" ] || { echo "$0: no shared data at $D" >&2; exit 2; }
mkdir -p "$SCR" "$OUT"
if [ ! -d "$SCR/dlrm_kineto" ]; then
  tar -xzf "$D/param/dlrm_kineto.tar.gz" -C "$SCR" || exit 2
fi
DLRM=$(find "$SCR" -maxdepth 3 -type d -name dlrm_kineto | head -1)
if [ ! -d "$SCR/gt/dp" ]; then
  [ -x "$GT_GEN" ] || { echo "$0: no $GT_GEN (make regress/gt_gen)" >&2; exit 2; }
  for s in tp dp launch straggler pp; do
    mkdir -p "$SCR/gt/$s"
    "$GT_GEN" $s "$SCR/gt/$s" > "$SCR/gt/$s.json" || exit 2
  done
  for s in tp dp; do
    mkdir -p "$SCR/gt/${s}_sync"
    "$GT_GEN" $s "$SCR/gt/${s}_sync" --cuda-sync-events > "$SCR/gt/${s}_sync.json" || exit 2
  done
fi

# run_case NAME OPTIONS... -- INPUTS...: OPTIONS go to all three commands,
# except that I:OPT, C:OPT and S:OPT go to inspect, convert or simulate
# only; --mode and --min-gap-ns are not given to simulate (it has neither),
# and convert gets --host-launch unless --no-host-launch is among them.
run_case() {
  local name=$1; shift
  local io=() co=() so=() ins=() nohost=0
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
      I:*) io+=("${1#I:}");;
      C:*) co+=("${1#C:}");;
      S:*) so+=("${1#S:}");;
      --no-host-launch) nohost=1; io+=("$1"); so+=("$1");;
      --mode=*|--min-gap-ns=*) io+=("$1"); co+=("$1");;
      *) io+=("$1"); co+=("$1"); so+=("$1");;
    esac
    shift
  done
  shift
  ins=("$@")
  [ $nohost = 1 ] || co+=(--host-launch)
  local o=$OUT/$name
  rm -rf "$o"; mkdir -p "$o/et"
  "$WISP" inspect --verbose "${io[@]}" "${ins[@]}" > "$o/inspect.out" 2> "$o/inspect.err"
  echo $? > "$o/inspect.rc"
  sed -i '/^loaded in .* s (/d' "$o/inspect.out"
  "$WISP" convert "${co[@]}" "${ins[@]}" -o "$o/et" > "$o/convert.out" 2> "$o/convert.err"
  echo $? > "$o/convert.rc"
  "$WISP" simulate "${so[@]}" "${ins[@]}" --network "$NET" --json "$o/sim.json" > "$o/sim.out" 2> "$o/sim.err"
  echo $? > "$o/sim.rc"
  sed -i '/^wisp: [0-9]* events in .* s (.* events\/s)$/d' "$o/sim.err"
  # The output directory differs between two recordings: call it OUT.
  sed -i "s|$OUT|OUT|g" "$o"/*.out "$o"/*.err
  [ -f "$o/sim.json" ] && sed -i "s|$OUT|OUT|g" "$o/sim.json"
}

H=$D/hta; T=$D/tracelens
run_case nccl_data -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_rep --replicate-from=0 -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_gap --replicate-from=0 --mode=gap -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_nohost --replicate-from=0 --no-host-launch -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_strict --replicate-from=0 --strict -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_steps --replicate-from=0 --steps=all -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_whole --replicate-from=0 --steps=whole -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case nccl_data_step5 --replicate-from=0 --step=5 -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case sampled --replicate-from=0,1 -- "$H/trace_filter/sampled_rank-0.json.gz" "$H/trace_filter/sampled_rank-1.json.gz"
run_case sampled_gap --replicate-from=0,1 --mode=gap -- "$H/trace_filter/sampled_rank-0.json.gz" "$H/trace_filter/sampled_rank-1.json.gz"
run_case sampled_all I:--replicate-from=0,1 C:--replicate-from=0,1 S:--replicate-missing -- "$H/trace_filter"
run_case simple_add -- "$H/execution_trace/benchmark_simple_add_trace.json.gz"
run_case cpu_only -- "$H/cpu_only"
run_case no_dist -- "$H/distributed_info_unavailable"
run_case no_rank -- "$H/rank_unavailable"
run_case amd -- "$H/amd_trace"
run_case b200 --replicate-from=0 -- "$T/b200/eager_trace.json.gz"
run_case b200_gap --replicate-from=0 --mode=gap -- "$T/b200/eager_trace.json.gz"
run_case mi300 --replicate-from=0 -- "$T/mi300/resnet_act_checkpoint.json.gz"
run_case mi300_nohost --replicate-from=0 --no-host-launch -- "$T/mi300/resnet_act_checkpoint.json.gz"
run_case h100 -- "$T/h100/gaunernst_bert-small-uncased__1016001.json.gz"
run_case h100_gap --mode=gap --min-gap-ns=1000 -- "$T/h100/gaunernst_bert-small-uncased__1016001.json.gz"
run_case dlrm -- "$DLRM"
run_case dlrm_gap --mode=gap -- "$DLRM"
run_case dlrm_nohost --no-host-launch -- "$DLRM"
run_case dlrm_strict --strict -- "$DLRM"
run_case dlrm_part --replicate-from=0,3 -- "$DLRM"/worker0_* "$DLRM"/worker3_* "$DLRM"/worker5_*
for s in tp dp launch straggler pp tp_sync dp_sync; do
  run_case gt_$s -- "$SCR/gt/$s"
  run_case gt_${s}_gap --mode=gap -- "$SCR/gt/$s"
  run_case gt_${s}_steps --steps=all --no-host-launch -- "$SCR/gt/$s"
done
run_case gt_pp_measured S:--starts=measured -- "$SCR/gt/pp"
# Error paths: a rank claimed twice, world sizes that differ, a replica
# source that is not traced, --strict on a partial job.
run_case err_dup -- "$DLRM"/worker0_* "$SCR/gt/dp/rank0.json"
run_case err_world -- "$H/nccl_parser_config/nccl_data.json.gz" "$DLRM"/worker1_*
run_case err_replicate --replicate-from=5 -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case err_strict_partial --strict --replicate-from=0 -- "$DLRM"/worker0_*
run_case err_step --replicate-from=0 --step=99 -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case err_steps --replicate-from=0 --steps=50..60 -- "$H/nccl_parser_config/nccl_data.json.gz"
run_case steps_range --replicate-from=0 --steps=4..5 -- "$H/nccl_parser_config/nccl_data.json.gz"
echo "recorded $(find "$OUT" -type f | wc -l) files in $OUT"
