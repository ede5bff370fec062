#!/bin/bash
# slurm-sweep.sh: run one wisp sweep as a Slurm job array, one shard per
# array task, then merge the shards in a dependent job.
#
#   sbatch --array=1-8 doc/slurm-sweep.sh SPEC.yaml WORKLOAD OUTDIR
#
# Each task runs shard K of N (K = SLURM_ARRAY_TASK_ID, N = the array size)
# with one worker per allocated CPU and writes OUTDIR/NAME.shard-K-of-N.*
# plus its finished rows under OUTDIR/NAME.points/ (OUTDIR must be on a
# shared file system).  A task that is killed or requeued resumes where it
# stopped (--resume keeps every committed row).  The last line submits the
# merge once all tasks succeeded (run only by task 1); the merged
# OUTDIR/NAME.csv and .jsonl are byte-identical to an unsharded run.
#
#SBATCH --job-name=wisp-sweep
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --requeue
set -euo pipefail

SPEC=${1:?usage: sbatch --array=1-N slurm-sweep.sh SPEC.yaml WORKLOAD OUTDIR}
WORKLOAD=${2:?workload prefix or directory}
OUTDIR=${3:?output directory on a shared file system}
WISP=${WISP:-wisp}

K=${SLURM_ARRAY_TASK_ID:?run this script with sbatch --array=1-N}
N=${SLURM_ARRAY_TASK_COUNT:?sbatch --array sets SLURM_ARRAY_TASK_COUNT}
NAME=$("$WISP" sweep --list "$SPEC" | head -1 | cut -d: -f1)

"$WISP" sweep "$SPEC" --workload "$WORKLOAD" -o "$OUTDIR" \
  --shard "$K/$N" -j "${SLURM_CPUS_PER_TASK:-1}" --resume --no-progress

if [ "$K" = 1 ]; then
  SHARDS=()
  for i in $(seq 1 "$N"); do SHARDS+=("$OUTDIR/$NAME.shard-$i-of-$N"); done
  sbatch --dependency=afterok:"$SLURM_ARRAY_JOB_ID" --job-name=wisp-sweep-merge \
    --wrap "$WISP sweep-merge -o $OUTDIR/$NAME ${SHARDS[*]}"
fi
