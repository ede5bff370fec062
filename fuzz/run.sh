#!/bin/sh
# fuzz/run.sh: build the Kineto libFuzzer harness with clang (ASan + UBSan)
# outside automake and run it for a bounded time.
#   fuzz/run.sh [BUILD_DIR] [SECONDS]
# BUILD_DIR is a configured build tree (for config.h); default ./build.
# SECONDS defaults to $FUZZ_SECONDS or 60.  Exit status is libFuzzer's
# (non-zero when it found a crash; the reproducer is left in the work dir).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
secs=${2:-${FUZZ_SECONDS:-60}}
build=$(cd "$build" && pwd)
work=${FUZZ_WORK:-$build/fuzz-kineto}
mkdir -p "$work/corpus"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
clang $cflags -I"$src" -I"$build" $(pkg-config --cflags glib-2.0 zlib) \
  "$src/fuzz/fuzz_kineto.c" "$src/frontends/fe_json.c" "$src/frontends/kineto_parse.c" \
  "$src/frontends/kineto_extract.c" "$src/frontends/kineto_graph.c" "$src/frontends/kineto.c" \
  "$src/common/wisp_util.c" \
  "$src/chakra/et_graph.c" \
  $(pkg-config --libs glib-2.0 zlib) -lm -o "$work/fuzz_kineto"
# Seeds: small traces covering kernels, launches, syncs, CPU collectives, steps.
cat > "$work/corpus/seed1.json" <<'J'
{"distributedInfo": {"rank": 0, "world_size": 2, "pg_config": [{"pg_name": "0", "ranks": [0, 1]}]},
 "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 5, "tid": 5, "ts": 0, "dur": 400},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 1, "dur": 1, "args": {"correlation": 1, "External id": 9}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 5, "tid": 5, "ts": 2, "dur": 1, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 5, "tid": 5, "ts": 3, "dur": 1, "args": {"correlation": 3}},
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 5, "ts": 3.5, "dur": 3, "args": {"External id": 10, "Input Dims": [[16, 4]], "Input type": ["float"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 4, "dur": 1, "args": {"correlation": 4, "External id": 10}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5, "dur": 100, "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(x)", "pid": 0, "tid": 20, "ts": 110, "dur": 50.5, "args": {"stream": 20, "correlation": 4, "Collective name": "allreduce", "In msg nelems": 64, "Out msg nelems": 64, "Group size": 2, "dtype": "Float", "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "In split size": "[]"}},
 {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 20, "ts": 4, "dur": 0, "args": {"stream": 20, "wait_on_stream": 7, "wait_on_cuda_event_record_corr_id": 2}},
 {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 5, "tid": 5, "ts": 6, "s": "t", "args": {"Bytes": -512}},
 {"ph": "s", "id": 1, "pid": 5, "tid": 5, "ts": 1, "cat": "ac2g", "name": "ac2g"}
 ]}
J
printf '%s' '[{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv","ts":1,"dur":2,"args":{"Collective name":"all_to_allv","In msg nelems":8,"dtype":"Long","Process Group Ranks":"[0, 1, ..., 1]","In split size":"[4, 4]"}}]' > "$work/corpus/seed2.json"
cd "$work"
exec ./fuzz_kineto -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 corpus
