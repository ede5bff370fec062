#!/bin/sh
# gpu-tpu-utility.sh WISP_BINARY: CCL-Bench's "utility of each network
# resource, a GPU job and a TPU job side by side" as one HTML page.
#
# CCL-Bench's claim: doubling a TPU's ICI bandwidth buys much more than
# doubling a GPU's scale-up (NVLink) bandwidth.  Its traces are not public,
# so the page holds two pairs, each said for what it is:
#
#   GENERATED: wisp's bundled example job (examples/make_example.c: a
#     16-rank TP4 x PP2 x DP2 training step) on the dgx-h100 preset (two
#     nodes of 8 GPUs, NVLink 450 GB/s, IB 50 GB/s) and on the tpu-v6e
#     preset (16 chips on a 2-D torus of ICI links, 100 GB/s).  Same
#     compute, only the network differs.
#   REAL (when ../shared/data is there): a TensorFlow multi-worker GPU
#     profile (xprof tf-gpu-multiworker/host0.xplane.pb, 8 GPUs) on
#     dgx-h100 and a TPU v6 Lite inference profile (xprof
#     test_xplanes/tpu_inference_2.xplane.pb, 4 chips) on tpu-v6e.
#
# Reading the side-by-side table: on tpu-v6e (one torus tier) the ICI is
# the scale_up_bw row; ici_bw says "the same change as scale_up_bw".  What
# wisp got (2026-12): generated, NVLink doubling 4.38 % of an 85.7 ms step,
# ICI doubling 13.33 % of a 104.0 ms step (ICI links are 4.5x slower, so
# more of the TPU's critical path is communication).  Real: 0.00 % for
# both: the GPU profile has no communication on its critical path, and the
# TPU profile's 12 all-reduces are replayed at their measured durations
# (no sizes to simulate), so no network change moves them.
#
# Output: $WISP_CCL_DIR (default BUILD/ccl-bench/gpu-tpu)/report.html and
# the four utility JSON files it was drawn from.
set -eu
wisp=${1:-build/wisp}
here=$(cd "$(dirname "$0")/.." && pwd)
bindir=$(cd "$(dirname "$wisp")" && pwd)
out=${WISP_CCL_DIR:-$bindir/ccl-bench/gpu-tpu}
data=${WISP_SHARED_DATA:-$here/../../shared/data}
mkdir -p "$out/workload"
"$bindir/examples/make_example" "$out/workload" llm >/dev/null
"$wisp" utility "$out/workload/llm" --cluster dgx-h100 --json "$out/generated-gpu.json" >/dev/null
"$wisp" utility "$out/workload/llm" --cluster tpu-v6e --json "$out/generated-tpu.json" >/dev/null
set -- "$out/generated-gpu.json" "$out/generated-tpu.json"
gpu=$data/xprof/tf-gpu-multiworker/host0.xplane.pb
tpu=$data/xprof/test_xplanes/tpu_inference_2.xplane.pb
if [ -f "$gpu" ] && [ -f "$tpu" ]; then
  "$wisp" utility "$gpu" --cluster dgx-h100 --json "$out/real-gpu.json" >/dev/null 2>&1
  "$wisp" utility "$tpu" --cluster tpu-v6e --json "$out/real-tpu.json" >/dev/null 2>&1
  set -- "$@" "$out/real-gpu.json" "$out/real-tpu.json"
else
  echo "gpu-tpu-utility: no real profiles under $data (set WISP_SHARED_DATA): generated pair only"
fi
"$wisp" report "$@" -o "$out/report.html" >/dev/null
echo "ccl-bench GPU vs TPU utility: open $out/report.html"
