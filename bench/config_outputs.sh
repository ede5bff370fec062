#!/bin/sh
# config_outputs.sh WISP_BUILD_DIR OUT_DIR: records the outputs that the
# config redesign (issue 16, part 1) must leave byte-identical, so that
#   bench/config_outputs.sh BASE_BUILD base && bench/config_outputs.sh NEW_BUILD new && diff -r base new
# proves it.  Recorded: `wisp topo` on every preset and example network,
# `wisp collbench --json` (all_reduce, all_gather at 64K and 1G) on each,
# the bundled demo's `wisp utility --json` and `wisp sweep` outputs, one
# `wisp simulate --json` on a shared ASTRA-sim trace with a library set,
# and the error text of the topology and config tests.  Paths in the
# outputs are made relative by running from the source tree.  Run time:
# about five minutes on two cores, 281 s of it the collbench of the
# 1536-rank cloudmatrix384-x2 (its NCCL plans at 1 GiB).
set -u
[ $# -eq 2 ] || { echo "usage: $0 WISP_BUILD_DIR OUT_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
wisp=$build/wisp
cd "$src" || exit 1
for f in presets/*.yaml examples/networks/* examples/cluster-2node.yaml; do
  b=$(echo "$f" | tr '/' '_')
  "$wisp" topo "$f" >"$out/topo.$b.txt" 2>&1
  echo "rc=$?" >>"$out/topo.$b.txt"
  "$wisp" collbench --network "$f" --op all_reduce,all_gather --sizes 64K,1G --json "$out/collbench.$b.json" \
    >"$out/collbench.$b.txt" 2>&1
  echo "rc=$?" >>"$out/collbench.$b.txt"
  # The run time is the one line that differs between runs.
  sed -i '/^wisp: collbench: .* rows in .* s$/d' "$out/collbench.$b.txt"
done
# The demo's workload, utility study and the CCL-Bench sweep.
demo=$out/demo-work
mkdir -p "$demo"
"$build/examples/make_example" "$demo" llm >/dev/null
"$wisp" utility "$demo/llm" --cluster examples/cluster-2node.yaml --json "$out/utility.json" \
  --svg "$out/utility.svg" >"$out/utility.txt" 2>&1
echo "rc=$?" >>"$out/utility.txt"
"$wisp" simulate "$demo/llm" --network examples/cluster-2node.yaml --json "$out/demo-simulate.json" \
  >"$out/demo-simulate.txt" 2>&1
echo "rc=$?" >>"$out/demo-simulate.txt"
"$wisp" sweep examples/ccl-bench-sweep.yaml --workload "$demo/llm" -o "$out/sweep" --jobs 2 2>&1 |
  sed 's/ in [0-9.]* s, [0-9.]* points\/s$//' >"$out/sweep.txt"
# A shared ASTRA-sim trace on CloudMatrix384 with the StrataCL model.
trace=$src/../shared/data/astrasim/all_gather/8npus_1MB
if [ -d "$trace" ]; then
  cfg=$out/cm384-stratacl.yaml
  { cat examples/networks/cloudmatrix384.yaml; echo "library: {name: stratacl}"; } >"$cfg"
  "$wisp" simulate "$trace" --network "$cfg" --json "$out/simulate-cm384.json" >"$out/simulate-cm384.txt" 2>&1
  echo "rc=$?" >>"$out/simulate-cm384.txt"
else
  echo "skip: $trace absent" >"$out/simulate-cm384.txt"
fi
# Error messages checked by the topology tests (their verbose output).
for t in test_topo test_topo_fabric test_units test_study test_net; do
  if [ -x "$build/regress/$t" ]; then
    (cd "$build" && G_TEST_SRCDIR=$src WISP_SHARED_DATA=$src/../shared/data "./regress/$t" --verbose 2>&1) |
      grep -v '^# random seed\|^# Start of\|^# End of\|seconds' >"$out/$t.log"
  fi
done
rm -rf "$demo"
# Make two runs comparable: the output directory's name and the run-time
# lines ("wisp: N events in T s (R events/s)") are the only parts that vary.
normalize() {
  find "$1" -type f ! -name '*.yaml' -exec sed -i "s|$1|OUT|g; /^wisp: [0-9]* events in .* events\/s)\$/d" {} +
}
normalize "$out"
echo "config_outputs: $(ls "$out" | wc -l) files in $out"
