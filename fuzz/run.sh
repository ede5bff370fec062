#!/bin/sh
# shellcheck disable=SC2086,SC2046,SC2016 # compiler flags and source lists are split on purpose
# fuzz/run.sh: build wisp's libFuzzer harnesses with clang (libFuzzer + ASan
# + UBSan, outside automake) and run each for a bounded time.
#
#   fuzz/run.sh [BUILD_DIR] [SECONDS_PER_TARGET] [TARGETS...]
#
# BUILD_DIR    a configured build tree: config.h, the protobuf-c sources
#              generated there (made with `make` when missing) and the
#              library source lists of its Makefile; default ./build.
# SECONDS      per target; default $FUZZ_SECONDS or 60.  With
#              FUZZ_CPU_SECONDS=N each target stops after N CPU seconds
#              and SECONDS is only its wall-clock ceiling.
# TARGETS      any of: kineto xplane hlo et topo pyt_et pyt_rf nsys card spec kineto_num nccltests
#              (default: all, in that order).
#
# Each target works in BUILD_DIR/fuzz-TARGET (or $FUZZ_WORK/fuzz-TARGET):
# the binary, a corpus/ that keeps growing across runs (the seeds are
# rewritten every run) and fuzz.log.  Every target runs even when an
# earlier one failed; the exit status is non-zero when any build failed or
# any target found a crash, leak, timeout (10 s per input) or ran out of
# memory (2 GiB), and the reproducer files (crash-*, leak-*, timeout-*,
# oom-*) are listed, those of at most 4 KiB also printed as base64.
# Reproduce one with: BUILD_DIR/fuzz-TARGET/fuzz_TARGET FILE
# Extra libFuzzer options can be passed in $FUZZ_FLAGS (e.g. -jobs=2).
# The kept corpus fuzz/corpus/TARGET/ (when present) is copied into the
# work corpus before each run; with FUZZ_KEEP_CORPUS=1 (make fuzz-long) the
# inputs that add coverage are merged back into it afterwards (-merge=1),
# so it stays small.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
secs=${2:-${FUZZ_SECONDS:-60}}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
targets=${*:-kineto xplane hlo et topo pyt_et pyt_rf nsys card spec kineto_num nccltests}
build=$(cd "$build" && pwd)
base=${FUZZ_WORK:-$build}
CC=${CC_FUZZ:-clang}

for t in $targets; do
  case $t in
    kineto|xplane|hlo|et|topo|pyt_et|pyt_rf|nsys|card|spec|kineto_num|nccltests) ;;
    *) echo "fuzz/run.sh: unknown target '$t' (expected kineto xplane hlo et topo pyt_et pyt_rf nsys card spec kineto_num" \
         "nccltests)" >&2; exit 2 ;;
  esac
done
[ -f "$build/config.h" ] || { echo "fuzz/run.sh: $build has no config.h; run configure there first" >&2; exit 2; }
for gen in chakra/et_def.pb-c.c frontends/xplane.pb-c.c; do
  [ -f "$build/$gen" ] || make -C "$build" "$gen" >/dev/null
done

pkgs="glib-2.0 zlib yaml-0.1 libprotobuf-c libcjson sqlite3"
cflags="-g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 -I$src -I$build $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lm"
# The library sources come from the build tree's Makefile (automake's
# *_SOURCES lists), so files added to a module are picked up; generated
# files (the protobuf-c sources) are taken from the build tree.
am_sources() {
  printf 'fuzz-print-sources:\n\t@echo $(foreach v,$(FUZZ_VARS),$($(v)))\n' > "$base/fuzz-sources.mk"
  list=$(make -s --no-print-directory -C "$build" -f Makefile -f "$base/fuzz-sources.mk" fuzz-print-sources FUZZ_VARS="$*")
  for f in $list; do
    case $f in
      *.c) if [ -f "$build/$f" ]; then echo "$build/$f"; else echo "$src/$f"; fi ;;
    esac
  done
}
mkdir -p "$base"
common=$(am_sources common_libwisp_common_la_SOURCES)
# Every other library (each harness links only the objects it uses).
all_srcs=$(am_sources config_libwisp_config_la_SOURCES simcore_libwisp_sim_la_SOURCES chakra_libwisp_et_la_SOURCES \
  nodist_chakra_libwisp_et_la_SOURCES topologies_libwisp_topo_la_SOURCES net_libwisp_net_la_SOURCES \
  collectives_libwisp_collfacts_la_SOURCES collectives_libraries_libwisp_collib_la_SOURCES \
  collectives_libwisp_coll_la_SOURCES replay_libwisp_replay_la_SOURCES frontends_libwisp_fe_la_SOURCES \
  nodist_frontends_libwisp_fe_la_SOURCES studies_libwisp_study_la_SOURCES calib_libwisp_cal_la_SOURCES)
if [ -z "$common" ] || [ -z "$all_srcs" ]; then
  echo "fuzz/run.sh: cannot read the source lists from $build/Makefile" >&2
  exit 2
fi

# seeds TARGET DIR: writes small valid inputs (and dictionaries) into DIR.
seeds() {
  c=$2/corpus
  case $1 in
    kineto|kineto_num)
      cat > "$c/seed1.json" <<'J'
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
      printf '%s' '[{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv","ts":1,"dur":2,"args":{"Collective name":"all_to_allv","In msg nelems":8,"dtype":"Long","Process Group Ranks":"[0, 1, ..., 1]","In split size":"[4, 4]"}}]' > "$c/seed2.json"
      ;;
    xplane)
      "$base/fuzz-seeds/fuzz_seeds" xplane "$c"
      # XProf trace-viewer JSON (the harness picks the reader by the first byte).
      cat > "$c/trace.json" <<'J'
{"displayTimeUnit": "ns", "traceEvents": [
 {"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/device:TPU:0"}},
 {"ph": "M", "pid": 4, "name": "process_name", "args": {"name": "/device:TPU:1"}},
 {"ph": "M", "pid": 3, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
 {"ph": "X", "pid": 3, "tid": 2, "ts": 10.5, "dur": 2, "name": "fusion.1", "args": {"long_name": "%fusion.1 = f32[8]{0} fusion(f32[8]{0} %a), kind=kLoop", "device_offset_ps": 10500000, "device_duration_ps": 2000000}},
 {"ph": "X", "pid": 3, "tid": 2, "ts": 13, "dur": 4, "name": "all-reduce.2", "args": {"long_name": "%all-reduce.2 = bf16[256]{0} all-reduce(bf16[256]{0} %p), replica_groups={{0,1}}, to_apply=%add", "hlo_category": "all-reduce"}},
 {"ph": "X", "pid": 4, "tid": 2, "ts": 13, "dur": 4, "name": "all-reduce.2", "args": {"long_name": "%all-reduce.2 = bf16[256]{0} all-reduce(bf16[256]{0} %p), replica_groups={{0,1}}, to_apply=%add"}},
 {"ph": "X", "pid": 3, "tid": 1, "ts": 9, "dur": 10, "name": "1", "args": {"step_marker": 1}}
]}
J
      ;;
    hlo)
      n=0
      while IFS= read -r line; do
        n=$((n + 1))
        printf '%s' "$line" > "$c/seed$n.hlo"
      done <<'H'
%fusion.1 = f32[1024]{0} fusion(f32[1024]{0} %a), kind=kLoop, calls=%fused
%all-reduce = f32[5,1024]{1,0:T(8,128)} all-reduce(f32[5,1024]{1,0:T(8,128)} %bitcast), channel_id=1, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=%r
%all-gather.3 = bf16[8,4096]{1,0} all-gather(bf16[1,4096]{1,0} %p), replica_groups={{0,1,2,3,4,5,6,7}}, dimensions={0}
%reduce-scatter.4 = f32[1,1024]{1,0} reduce-scatter(f32[8,1024]{1,0} %q), channel_id=2, replica_groups=[1,8]<=[8], dimensions={0}, to_apply=%add
%ar = (f32[4]{0}, bf16[8]{0}) all-reduce(f32[4]{0} %a, bf16[8]{0} %b), replica_groups={}
%a2a = (s8[16], s8[16]) all-to-all(s8[16] %a, s8[16] %b), replica_groups={{0,1}}
%all-gather-start.1 = (f8e4m3fn[2,128]{1,0}, f8e4m3fn[8,128]{1,0}) all-gather-start(f8e4m3fn[2,128]{1,0} %x), channel_id=7, replica_groups=[2,4]<=[8], dimensions={0}, use_global_device_ids=true
%all-gather-done.1 = f8e4m3fn[8,128]{1,0} all-gather-done((f8e4m3fn[2,128]{1,0}, f8e4m3fn[8,128]{1,0}) %all-gather-start.1)
%all-reduce-start = s4[1000]{0} all-reduce-start(s4[1000]{0} %x), replica_groups={{0,1}}, to_apply=%add
%collective-permute-start.2 = (f32[256]{0}, f32[256]{0}, u32[], u32[]) collective-permute-start(f32[256]{0} %y), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
%send.1 = (pred[3], u32[], token[]) send(pred[3] %v, token[] %t), channel_id=4, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1}}"}
%recv.1 = (c128[2], u32[], token[]) recv(token[] %t), channel_id=4
%ragged = u8[100] ragged-all-to-all(u8[100] %in, u8[100] %out, s64[4] %a, s64[4] %b, s64[4] %c, s64[4] %d), replica_groups={{0,1,2,3}}
%cb = u64[2] collective-broadcast(u64[2] %x), replica_groups={{0,1}}
%reduce-scatter-start.9 = ((f32[8,1024]), f32[1,1024]) async-start(f32[8,1024] %q), calls=%rs
%dyn = f32[<=8,4]{1,0} all-gather(f32[<=2,4]{1,0} %d), replica_groups={{0,1,2,3}}, dimensions={0}
H
      cat > "$2/dict" <<'D'
"all-reduce"
"all-gather"
"reduce-scatter"
"all-to-all"
"ragged-all-to-all"
"collective-permute"
"collective-broadcast"
"async-start"
"-start"
"-done"
"send"
"recv"
"replica_groups="
"source_target_pairs="
"_xla_send_recv_source_target_pairs="
"channel_id="
"use_global_device_ids=true"
"use_global_device_ids=false"
"<=["
"]T("
"{{"
"}}"
"f32"
"bf16"
"s4"
"pred"
"token[]"
"f8e4m3fn"
"c128"
"<="
D
      ;;
    et)
      "$base/fuzz-seeds/fuzz_seeds" et "$c"
      ;;
    nsys)
      # Small exports that follow NVIDIA's documented schema (no public
      # multi-GPU NCCL export exists): two devices, a gemm, an NCCL kernel,
      # a memcpy, a runtime call and an NVTX range.  Needs python3 (sqlite3
      # module); without it the fuzzer starts from an empty corpus.
      if command -v python3 >/dev/null 2>&1; then
        rm -f "$c/seed1.sqlite"
        python3 - "$c/seed1.sqlite" <<'P' || true
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript('''
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'sgemm'), (2, 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)'),
 (3, 'cudaLaunchKernel_v7000'), (4, 'ncclAllReduce');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2');
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3'), (1, 'NVIDIA H100 80GB HBM3');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
 correlationId INTEGER, demangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 7, 1, 1), (2100, 2600, 0, 20, 2, 2),
 (1000, 2000, 1, 7, 1, 1), (2100, 2600, 1, 20, 2, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
 bytes INTEGER, copyKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (2000, 2050, 0, 7, 4096, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (900, 950, 3);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, text TEXT, textId INTEGER);
INSERT INTO NVTX_EVENTS VALUES (890, 960, NULL, 4);
''')
db.commit()
P
      fi
      ;;
    pyt_et)
      # Schema 1.0.1 (flat fields) and 1.1.1 (attrs), with a collective, splits and a wait.
      cat > "$c/seed1.json" <<'J'
{"schema": "1.0.1", "pid": 1, "nodes": [
 {"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "rf_id": 0, "parent": 1, "tid": 1, "inputs": [], "outputs": []},
 {"name": "aten::mm", "id": 3, "rf_id": 1, "parent": 2, "tid": 1, "inputs": [[10, 10, 0, 8, 4, "cuda:0"]], "outputs": [[11, 11, 0, 8, 4, "cuda:0"]]},
 {"name": "record_param_comms", "id": 5, "rf_id": 2, "parent": 2, "tid": 1, "inputs": [[[11, 11, 0, 8, 4, "cuda:0"]], 7, 99, 0, "allreduce", [], []], "outputs": [[[11, 11, 0, 8, 4, "cuda:0"]]]},
 {"name": "record_param_comms", "id": 8, "rf_id": 3, "parent": 2, "tid": 1, "inputs": [[11, 11, 0, 6, 4, "cuda:0"], 8, 99, 0, "all_to_allv", [2, 4], [3, 3]], "outputs": [[12, 12, 0, 6, 4, "cuda:0"]]},
 {"name": "record_param_comms", "id": 9, "rf_id": 4, "parent": 2, "tid": 1, "inputs": [8, 0, 0, "wait", [], []], "outputs": []}
]}
J
      cat > "$c/seed2.json" <<'J'
{"schema": "1.1.1-chakra.0.0.4", "pid": 1, "nodes": [
 {"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1, "inputs": {"values": [], "shapes": [], "types": []}, "outputs": {"values": [], "shapes": [], "types": []}, "attrs": [{"name": "rf_id", "type": "uint64", "value": 0}, {"name": "tid", "type": "uint64", "value": 1}]},
 {"id": 4, "name": "record_param_comms", "ctrl_deps": 2, "inputs": {"values": [[[14, 15, 0, 1, 4, "cuda:0"]], 12, 82149104, 0, "all_gather", [], [], 2], "shapes": [], "types": []}, "outputs": {"values": [[[[19, 20, 0, 1, 4, "cuda:0"], [5, 23, 0, 1, 4, "cuda:0"]]]], "shapes": [], "types": []}, "attrs": [{"name": "rf_id", "type": "uint64", "value": 19}]}
]}
J
      ;;
    pyt_rf)
      # An execution trace and its rank's Kineto trace (the harness splits
      # the input at the "--kineto--" line): rf_id 7 joins through a launch's
      # correlation, rf_id 9 through the External id on the kernel itself,
      # rf_id 11 has no Kineto CPU op.  seed2 is a Kineto half alone.
      cat > "$c/seed1.json" <<'J'
{"schema": "1.0.1", "pid": 1, "nodes": [
 {"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "rf_id": 0, "parent": 1, "tid": 1, "inputs": [], "outputs": []},
 {"name": "record_param_comms", "id": 5, "rf_id": 7, "parent": 2, "tid": 1, "inputs": [[[11, 11, 0, 8, 4, "cuda:0"]], 7, 99, 0, "allreduce", [], []], "outputs": [[[11, 11, 0, 8, 4, "cuda:0"]]]},
 {"name": "record_param_comms", "id": 8, "rf_id": 9, "parent": 2, "tid": 1, "inputs": [[11, 11, 0, 6, 4, "cuda:0"], 8, 99, 0, "all_gather", [], []], "outputs": [[12, 12, 0, 6, 4, "cuda:0"]]},
 {"name": "record_param_comms", "id": 9, "rf_id": 11, "parent": 2, "tid": 1, "inputs": [[11, 11, 0, 6, 4, "cuda:0"], 8, 99, 0, "broadcast", [], []], "outputs": [[12, 12, 0, 6, 4, "cuda:0"]]}
]}
--kineto--
{"distributedInfo": {"rank": 0, "world_size": 2},
 "traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 5, "ts": 10, "dur": 3, "args": {"External id": 100, "Record function id": 7}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 11, "dur": 1, "args": {"correlation": 5, "External id": 100}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 20, "ts": 15.25, "dur": 40, "args": {"correlation": 5, "External id": 100}},
 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 5, "tid": 5, "ts": 60, "dur": 3, "args": {"External id": 101, "Record function id": 9}},
 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "pid": 0, "tid": 20, "ts": 70, "dur": 20, "args": {"External id": 101}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"correlation": 6, "External id": 102}}
 ]}
J
      printf '%s' '{"traceEvents": [{"ph": "X", "cat": "user_annotation", "name": "a", "ts": 1, "args": {"External id": 3, "Record function id": 7}}, {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "ts": 2, "args": {"External id": 3, "correlation": 4}}, {"ph": "X", "cat": "Kernel", "name": "gemm", "ts": 3, "args": {"correlation": 4}}]}' > "$c/seed2.json"
      ;;
    card)
      cp "$src"/examples/cards/*.yaml "$c/"
      printf 'version: 1\nworkload:\n  model:\n    phase: training\n    moe: true\n    hidden_size: 7168\n    moe_top_k: 8\n    precision: bf16\n    model_arch: {num_params: 7e9, num_layers: 32, head_dim: 128, num_heads: 32}\n  data: {batch_size: 1, seq_len: 4096, tokens_per_rank: 4096}\n  hardware:\n    xpu_spec: {type: GPU, model: nvidia_h100, total_count: 64, count_per_node: 8}\nModel-executor:\n  model_plan_parallelization: {dp_shard: 8, tp: 8, pp: 1, ep: 1}\n' > "$c/seed-dense.yaml"
      ;;
    spec)
      cp "$src"/examples/*sweep*.yaml "$c/" 2>/dev/null || true
      printf 'sweep_version: 1\nname: s\ncluster: base.yaml\nset:\n  dims.scale_up.latency: 50ns\ncombine: zip\naxes:\n  - {key: scale_out_bw, range: {from: 10GB/s, to: 100GB/s, step: 10GB/s}}\n  - {key: compute, values: [1, 1e-300, 2]}\n  - {key: slow_rank, values: ["0=1.5", "3=1e308"]}\n' > "$c/seed-axes.yaml"
      ;;
    nccltests)
      # wisp's CSV and a raw nccl-tests log (the column layout of
      # nccl-tests' src/common.cu; the figures are made up but consistent:
      # algbw = size / time, busbw = algbw x 2(n-1)/n for 8 ranks).
      printf '# made-up figures in the CSV layout of ../shared/data/nccl-tests\ntest,table,size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps\nall_reduce_perf,1,1048576,262144,float,sum,-1,40.00,26.21,45.88\nall_reduce_perf,1,2097152,524288,float,sum,-1,60.00,34.95,61.17\nall_gather_perf,2,8388608,262144,float,none,-1,100.0,83.89,73.40\n' > "$c/seed1.csv"
      printf '# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n#  Rank  0 Group  0 Pid 1 on n1 device  0 [0x18] NVIDIA H100\n#  Rank  1 Group  0 Pid 1 on n1 device  1 [0x2a] NVIDIA H100\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n[1,0]<stdout>:     1048576        262144     float     sum      -1    40.00   26.21   26.21      0    40.00   26.21   26.21      0\n           8             2     float     sum      -1    36.22    0.00    0.00      0    35.10    0.00    0.00      0\n# Avg bus bandwidth    : 13.1\n' > "$c/seed2.log"
      ;;
    topo)
      cp "$src"/examples/networks/*.yaml "$src"/examples/networks/*.yml "$c/"
      cat > "$2/dict" <<'D'
"topology:"
"dims:"
"kind:"
"size:"
"shape:"
"bandwidth:"
"latency:"
"bandwidth_ba:"
"latency_ba:"
"graph:"
"nodes:"
"links:"
"switch"
"ring"
"fully_connected"
"torus2d"
"torus3d"
"fat_tree"
"leaves:"
"spines:"
"oversubscription:"
"placement:"
"contiguous"
"npus_count:"
"collectives:"
"library:"
"model:"
"duplex:"
"schema_version:"
"GB/s"
"Gbps"
"ns"
"us"
"- "
": ["
D
      ;;
  esac
}

# The instrumented library, built once for every target: each source of
# common/ and of every library becomes one object in $base/fuzz-obj/
# (compiled with the fuzzer's coverage but not its main, ASan and UBSan),
# collected into libwisp-fuzz.a; each harness is then one compile and a link
# that takes only the objects it needs.  A generated makefile rebuilds an
# object only when its source or a header it includes changed (-MMD), and
# everything when the compiler or its flags did; FUZZ_JOBS (default 1) runs
# that many compiles at once.
objdir=$base/fuzz-obj
lib=$objdir/libwisp-fuzz.a
libcflags=$(echo "$cflags" | sed 's/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,/')
build_library() {
  mkdir -p "$objdir"
  stamp="$CC $libcflags"
  if [ ! -f "$objdir/flags" ] || [ "$(cat "$objdir/flags")" != "$stamp" ]; then
    rm -f "$objdir"/*.o "$objdir"/*.d "$lib"
    printf '%s\n' "$stamp" > "$objdir/flags"
  fi
  mk=$objdir/objects.mk
  objs=""
  {
    printf 'all: %s\n' "$lib"
    for f in $(printf '%s\n' $common $all_srcs | awk '!seen[$0]++'); do
      rel=${f#"$build"/}
      rel=${rel#"$src"/}
      o=$objdir/$(printf '%s' "$rel" | tr '/' '_' | sed 's/\.c$/.o/')
      objs="$objs $o"
      printf '%s: %s %s/flags\n\t%s %s -MMD -MP -c %s -o %s\n' "$o" "$f" "$objdir" "$CC" "$libcflags" "$f" "$o"
    done
    printf '%s:%s\n\trm -f $@ && ar rcs $@ $^\n' "$lib" "$objs"
    printf -- '-include $(wildcard %s/*.d)\n' "$objdir"
  } > "$mk"
  make -s --no-print-directory -f "$mk" -j"${FUZZ_JOBS:-1}" all
}

# log_campaign TARGET START WALL CPU RUNS COV0 COV1 RC FOUND: one row of
# $FUZZ_CAMPAIGN_LOG (make fuzz-long: fuzz/campaigns.md), a Markdown table
# made with its header when the file is new.  The commit is the source
# tree's when the run started (with "+" when files other than the kept
# corpus and this log differed from it); coverage is libFuzzer's edge count when the run started
# (seeds and kept corpus loaded) and at its end.
source_commit() {
  c=$(git -C "$src" rev-parse --short=10 HEAD 2>/dev/null || echo unknown)
  if [ "$c" != unknown ] && ! git -C "$src" diff --quiet HEAD -- . ':(exclude)fuzz/corpus' \
       ':(exclude)fuzz/campaigns.md' 2>/dev/null; then
    c="$c+"
  fi
  echo "$c"
}
log_campaign() {
  if [ ! -s "$FUZZ_CAMPAIGN_LOG" ]; then
    cat > "$FUZZ_CAMPAIGN_LOG" <<'H'
# Fuzz campaigns

One row per run of a target by `make fuzz-long` (or `fuzz/run.sh` with
`FUZZ_CAMPAIGN_LOG` set), appended by fuzz/run.sh.  CPU s is the fuzzer's
user + system time; on a shared machine it, not the wall time, says how
much fuzzing a target got.  Coverage is libFuzzer's edge count at the start
(seeds and the kept corpus fuzz/corpus/TARGET loaded) and at the end.
Findings name the reproducer files; each must become a regression test.

| target | started (UTC) | commit | wall s | CPU s | runs | coverage start -> end (new) | kept corpus | findings |
|---|---|---|---|---|---|---|---|---|
H
  fi
  new=?
  [ "$6" != ? ] && [ "$7" != ? ] && new=$(( $7 - $6 ))
  kept="none"
  if [ -d "$src/fuzz/corpus/$1" ]; then
    kept="$(find "$src/fuzz/corpus/$1" -type f | wc -l) files, $(du -sk "$src/fuzz/corpus/$1" | cut -f1) KiB"
  fi
  findings="none"
  if [ "$8" != 0 ] || [ -n "$9" ]; then
    findings="exit $8: $(for f in $9; do printf '%s ' "$(basename "$f")"; done)"
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s -> %s (%s) | %s | %s |\n' "$1" "$2" "$commit" "$3" "$4" "$5" "$6" "$7" \
    "$new" "$kept" "$findings" >> "$FUZZ_CAMPAIGN_LOG"
}

status=0
summary=""
echo "== building the instrumented library once ($lib)"
if ! build_library; then
  echo "fuzz/run.sh: building the instrumented library failed" >&2
  exit 1
fi

# The seed writer (binary seeds are made with protobuf-c and wisp's ET writer).
need_seeds=no
for t in $targets; do
  case $t in xplane|et) need_seeds=yes ;; esac
done
if [ $need_seeds = yes ]; then
  mkdir -p "$base/fuzz-seeds"
  $CC -g -O1 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
    -fsanitize=address,undefined -I"$src" -I"$build" $(pkg-config --cflags $pkgs) \
    "$src/fuzz/fuzz_seeds.c" "$lib" $libs -o "$base/fuzz-seeds/fuzz_seeds"
fi

for t in $targets; do
  work=$base/fuzz-$t
  mkdir -p "$work/corpus"
  echo "== fuzz_$t: building"
  if ! $CC $cflags "$src/fuzz/fuzz_$t.c" "$lib" $libs -o "$work/fuzz_$t"; then
    echo "fuzz/run.sh: building fuzz_$t failed" >&2
    summary="$summary
  $t: BUILD FAILED"
    status=1
    continue
  fi
  rm -f "$work/dict"
  seeds "$t" "$work"
  if [ -d "$src/fuzz/corpus/$t" ]; then
    cp "$src/fuzz/corpus/$t"/* "$work/corpus/" 2>/dev/null || true
  fi
  dict=""
  [ -f "$work/dict" ] && dict="-dict=$work/dict"
  touch "$work/.start"
  # Harnesses that need files write them under $TMPDIR: a fresh directory
  # per target (on tmpfs when there is one), removed even after a crash.
  tmp_base=/tmp
  [ -d /dev/shm ] && [ -w /dev/shm ] && tmp_base=/dev/shm
  fuzz_tmp=$(mktemp -d "$tmp_base/wisp-fuzz-$t.XXXXXX")
  echo "== fuzz_$t: running for ${secs}s (log: $work/fuzz.log)"
  rc=0
  started=$(date -u '+%Y-%m-%d %H:%M')
  commit=$(source_commit)
  t0=$(date +%s)
  # The subshell's `times` after the run gives the fuzzer's CPU time (its
  # children's user and system time), which on a shared machine says more
  # than the wall time.
  # With FUZZ_CPU_SECONDS set, SECONDS is only a wall-clock ceiling: a
  # watcher reads the fuzzer's user + system time from /proc every 5 s and
  # interrupts it once the budget is spent (SIGINT: libFuzzer prints its
  # final statistics and exits with 72, which then counts as success), so a
  # campaign on a shared machine gets the CPU time it claims.
  rm -f "$work/cpu-budget-spent"
  (cd "$work" && r=0 && {
      TMPDIR=$fuzz_tmp ./fuzz_$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/" $dict ${FUZZ_FLAGS:-} corpus \
        > fuzz.log 2>&1 &
      pid=$!
      if [ -n "${FUZZ_CPU_SECONDS:-}" ]; then
        tck=$(getconf CLK_TCK)
        while kill -0 "$pid" 2>/dev/null; do
          ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
          if [ "$ticks" -ge $(( FUZZ_CPU_SECONDS * tck )) ]; then
            : > cpu-budget-spent; kill -INT "$pid" 2>/dev/null; break
          fi
          sleep 5
        done &
      fi
      wait "$pid" || r=$?
      if [ $r -eq 72 ] && [ -f cpu-budget-spent ]; then r=0; fi; } \
      && times > times.txt && exit $r) || rc=$?
  wall=$(( $(date +%s) - t0 ))
  cpu=$(sed -n 2p "$work/times.txt" 2>/dev/null | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/);
        s += a[1] * 60 + a[2] } printf "%.1f", s }')
  cov0=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$work/fuzz.log" | head -n 1)
  cov1=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$work/fuzz.log" | tail -n 1)
  rm -rf "$fuzz_tmp"
  if [ "${FUZZ_KEEP_CORPUS:-0}" = 1 ] && [ $rc -eq 0 ]; then
    # Keep only what adds coverage: merge the grown corpus into the kept one.
    mkdir -p "$src/fuzz/corpus/$t"
    (cd "$work" && TMPDIR=${TMPDIR:-/tmp} ./fuzz_$t -merge=1 -timeout=10 -rss_limit_mb=2048 \
        "$src/fuzz/corpus/$t" corpus > merge.log 2>&1) || echo "== fuzz_$t: merging the corpus failed (see $work/merge.log)"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n 1)
  [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$work/fuzz.log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log" | tail -n 1)
  found=$(find "$work" -maxdepth 1 -newer "$work/.start" \( -name 'crash-*' -o -name 'leak-*' \
            -o -name 'timeout-*' -o -name 'oom-*' \) | sort)
  if [ -n "${FUZZ_CAMPAIGN_LOG:-}" ]; then
    log_campaign "$t" "$started" "$wall" "${cpu:-?}" "${execs:-?}" "${cov0:-?}" "${cov1:-?}" "$rc" "$found"
  fi
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    status=1
    echo "== fuzz_$t: FAILED (exit $rc); last lines of $work/fuzz.log:"
    tail -n 40 "$work/fuzz.log"
    for f in $found; do
      echo "== fuzz_$t: reproducer: $f  (rerun: $work/fuzz_$t $f)"
      # The CI machine's files are gone after the run: print small
      # reproducers so the log alone can recreate them (base64 -d).
      if [ "$(wc -c < "$f")" -le 4096 ]; then
        echo "== fuzz_$t: $(basename "$f") as base64:"
        base64 "$f"
      fi
    done
    summary="$summary
  $t: FAILED, ${execs:-?} runs, ${rate:-?}/s; reproducers: ${found:-none written}"
  else
    echo "== fuzz_$t: ok, ${execs:-?} runs (${rate:-?}/s, ${cpu:-?} CPU s), coverage ${cov0:-?} -> ${cov1:-?}, corpus $(find "$work/corpus" -type f | wc -l) inputs"
    summary="$summary
  $t: ok, ${execs:-?} runs, ${rate:-?}/s"
  fi
done
echo "== fuzz summary (${secs}s per target):$summary"
exit $status
