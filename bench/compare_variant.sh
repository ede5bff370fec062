#!/bin/bash
# compare_variant.sh BUILD_DIR OUT_DIR: record what topo_variant produces, so a
# change to it (issue 16: the topology edits became edits of the config
# document) can be checked byte for byte against a baseline build.
#   1. bench/variant_dump.c, compiled against BUILD_DIR's libwisp.a: accessors,
#      labels, notes, errors, the written YAML and the built topology of every
#      preset and example network under ~90 edits each (variant.txt).
#   2. `wisp utility --json` of the demo workload (16 ranks) and the DLRM
#      Kineto traces (8 ranks) on every preset and example network.
#   3. `wisp sweep` of examples/ccl-bench-sweep.yaml and of a grid over
#      bandwidth, latency and domain axes (on the demo and on DLRM), and of one
#      tier's keys and of ici_bw (DLRM), on every preset and example network
#      (the CSV/JSONL, whose input_sha256 hashes the variant's YAML), then the
#      same sweep again with --resume into the same directory.
#   4. `wisp calibrate` on DLRM with dgx1-v100 and two presets (JSON and the
#      written config).
# Compare two records with `diff -r OUT_A OUT_B`.  Only the speed lines vary
# between runs; they are filtered out.  WORK (default /tmp/compare_variant.work)
# holds the generated workload and specs at a fixed path, so the paths the
# outputs print are the same for every build; DLRM (default
# /tmp/dlrm/dlrm_kineto) the traces, extracted from
# $WISP_SHARED_DATA/param/dlrm_kineto.tar.gz when absent.
# Cost: about ten minutes per build on two cores.
set -u
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
data=${WISP_SHARED_DATA:-$src/../shared/data}
wisp=$build/wisp
dlrm=${DLRM:-/tmp/dlrm/dlrm_kineto}
work=${WORK:-/tmp/compare_variant.work}
speed='^wisp: [0-9]* events in\|^wisp: sweep: .* points/s$'

run() {   # run NAME ARGS...: stdout+stderr (speed lines removed) and exit code
  local name=$1 s; shift
  ( cd "$work" && "$wisp" "$@" >"$out/$name.out.raw" 2>"$out/$name.err.raw"; echo "rc=$?" >"$out/$name.rc" )
  for s in out err; do
    grep -v "$speed" "$out/$name.$s.raw" | sed -e 's/ in [0-9.]* s, [0-9.]* points\/s$//' -e 's/ in [0-9.]* s$//' \
      >"$out/$name.$s"
    rm -f "$out/$name.$s.raw"
  done
}

configs=$(ls "$src"/presets/*.yaml "$src"/examples/networks/*.y*ml "$src"/examples/cluster-*.yaml)
mkdir -p "$work/workload"

# 1. The variant itself.
# Headers from the tree BUILD_DIR was configured from; configs from this one
# (the same for both builds, so the paths in the outputs are too).
hdr=$(sed -n 's/^abs_top_srcdir = //p' "$build/Makefile")
cc -std=c11 -O1 -I"$build" -I"$hdr" $(pkg-config --cflags glib-2.0 yaml-0.1) "$src/bench/variant_dump.c" \
  "$build/.libs/libwisp.a" $(pkg-config --libs glib-2.0 yaml-0.1) -lprotobuf-c -lcjson -lz -lm -lpthread \
  -o "$work/variant_dump" || exit 1
(cd "$src" && "$work/variant_dump" $(for c in $configs; do echo "${c#"$src"/}"; done)) >"$out/variant.txt" 2>&1

# 2. Utility on the demo workload and DLRM.
"$build/examples/make_example" "$work/workload" llm >/dev/null
wl=$work/workload/llm
if [ ! -d "$dlrm" ] && [ -f "$data/param/dlrm_kineto.tar.gz" ]; then
  mkdir -p "$(dirname "$dlrm")" && tar -xzf "$data/param/dlrm_kineto.tar.gz" -C "$(dirname "$dlrm")"
fi
for c in $configs; do
  b=$(basename "$c"); b=${b%.*}
  case $c in */presets/*) b=preset-$b;; esac
  run "util_demo_$b" utility "$wl" --cluster "$c" --json "$out/util_demo_$b.json"
  [ -d "$dlrm" ] && run "util_dlrm_$b" utility "$dlrm" --cluster "$c" --json "$out/util_dlrm_$b.json"
done

# 3. Sweeps: the CCL-Bench spec and a grid, then --resume.
for c in $configs; do
  b=$(basename "$c"); b=${b%.*}
  case $c in */presets/*) b=preset-$b;; esac
  # The spec names cluster-2node's tiers; by index and role it fits every config.
  sed -e "s|^workload: .*|workload: $wl|" -e "s|^cluster: .*|cluster: $c|" -e "s|^name: .*|name: ccl-$b|" \
    -e "s|dims.scale_up.|dims.0.|" -e "s|dims.scale_out.latency|scale_out_latency|" \
    "$src/examples/ccl-bench-sweep.yaml" >"$work/ccl-$b.yaml"
  cat >"$work/grid-$b.yaml" <<EOF
sweep_version: 1
name: grid-$b
workload: $wl
cluster: $c
set: {collectives.all_reduce: ring}
combine: grid
base: first
axes:
  - {key: scale_up_bw, values: [300GB/s, 900GB/s]}
  - {key: scale_out_latency, values: [2us, 10us]}
  - {key: dims.0.latency, values: [100ns, 1us]}
  - {key: scale_up_domain, values: [4, 8]}
EOF
  # One tier's own keys (single-tier and torus configs have no scale-out).
  cat >"$work/tier-$b.yaml" <<EOF
sweep_version: 1
name: tier-$b
workload: $dlrm
cluster: $c
combine: grid
base: first
axes:
  - {key: dims.0.bandwidth, values: [100GB/s, 400GB/s]}
  - {key: dims.0.latency, values: [100ns, 1us]}
EOF
  sed -e "s|^name: tier-|name: ici-|" -e "s|dims.0.bandwidth, values: .*|ici_bw, values: [50GB/s, 200GB/s]}|" \
    "$work/tier-$b.yaml" >"$work/ici-$b.yaml"
  sed -e "s|^workload: .*|workload: $dlrm|" -e "s|^name: grid-|name: dlrm-|" "$work/grid-$b.yaml" >"$work/dlrm-$b.yaml"
  for s in ccl grid tier ici dlrm; do
    rm -rf "$work/sw-$s-$b"
    run "sweep_${s}_$b" sweep "$work/$s-$b.yaml" -o "$work/sw-$s-$b" --jobs 2 --no-progress
    run "sweep_${s}_${b}_resume" sweep "$work/$s-$b.yaml" -o "$work/sw-$s-$b" --jobs 2 --no-progress --resume
    for f in "$work/sw-$s-$b"/*.csv "$work/sw-$s-$b"/*.jsonl "$work/sw-$s-$b"/*.svg; do
      [ -f "$f" ] && cp "$f" "$out/sweep_${s}_${b}_$(basename "$f")"
    done
  done
done

# 4. Calibration on DLRM.
if [ -d "$dlrm" ]; then
  for c in "$src/examples/networks/dgx1-v100.yaml" "$src/presets/dgx-h100.yaml" "$src/presets/gb200-nvl72.yaml"; do
    b=$(basename "$c"); b=${b%.*}
    run "calib_$b" calibrate "$dlrm" --cluster "$c" --json "$work/calib_$b.json" -o "$work/calib_$b.yaml"
    cp "$work/calib_$b.json" "$work/calib_$b.yaml" "$out/"
  done
else
  echo "skip: DLRM traces absent ($dlrm)"
fi
echo "compare_variant: $(ls "$out" | wc -l) files in $out"
