#!/bin/sh
# test_planning.sh: the planning examples (doc/interfaces.md) in `make check`,
# TAP output.
#  1. plan_clusters.py on the bundled example workload: exit 0, four options
#     ranked, each row's cost per step equal to step_time_ns / 1e9 x n_ranks
#     x price / 3600 recomputed here (awk) from the sweep's JSON lines with
#     the prices of costs.yaml written out below, and the rows in ascending
#     cost order.  Skipped visibly when python3 is absent.
#  2. plan_clusters.py refuses a cost file outside its YAML subset, naming
#     the line.
#  3. plan_clusters.py --scale dp=4 --starts together --network-model
#     analytical: wisp's options reach every point, so each option is priced
#     at the scaled job's 32 GPUs (the example's 16 ranks at dp=2 x 2) on the
#     dgx-a100 preset (a preset is fitted to the scaled job).
#  4. a cost file with an unquoted numeric name (123), a NaN price, a
#     negative price and an integer price of 401 digits (past a double:
#     fuzz_costs.py's finding, an OverflowError traceback): one error
#     listing all four, never a traceback.
#  5. utility_study (built by automake against libwisp.la) runs a utility
#     study through the public API; it checks Utility = (T - T_2x) / T itself.
#  6. the same program compiled and linked through `pkg-config wisp` with the
#     build tree's wisp-uninstalled.pc, and its output equal to 5's.
#  7. utility_study on DLRM's Kineto directory (../shared/data; skipped
#     without it): the library's readers, not only Chakra ET.
src=${G_TEST_SRCDIR:?run through make check}
build=${G_TEST_BUILDDIR:?run through make check}
wisp=${WISP_BIN:?run through make check}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wisp-plan-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..7"
"$build/examples/make_example" "$tmp" llm >/dev/null || { echo "Bail out! make_example failed"; exit 1; }
work=$tmp/llm
cluster=$src/examples/cluster-2node.yaml

if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' >/dev/null 2>&1; then
  if python3 "$src/examples/planning/plan_clusters.py" --wisp "$wisp" --workload "$work" --cluster "$cluster" \
      --costs "$src/examples/planning/costs.yaml" --out "$tmp/plan" >"$tmp/table" 2>"$tmp/err"; then
    # Prices from costs.yaml, typed here independently of the script's parser.
    awk -v prices="baseline=2.00 fast-scale-out=2.60 fast-scale-up=2.30 both=3.10" '
      BEGIN { n = split(prices, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); price[p[1]] = p[2] } }
      FNR == NR {
        match($0, /"label": "[^"]*"/); label = substr($0, RSTART + 10, RLENGTH - 11)
        match($0, /"step_time_ns": [0-9.]+/); step = substr($0, RSTART + 16, RLENGTH - 16) + 0
        match($0, /"n_ranks": [0-9]+/); ranks = substr($0, RSTART + 11, RLENGTH - 11) + 0
        want[label] = sprintf("%.6g", step / 1e9 * ranks * price[label] / 3600); lines++
        next
      }
      $1 ~ /^[0-9]+$/ && NF == 7 {
        rows++
        if ($6 != want[$2]) { printf "# %s: cost per step %s, expected %s\n", $2, $6, want[$2]; bad = 1 }
        if (rows > 1 && $6 + 0 < last) { printf "# %s ranked after a costlier option\n", $2; bad = 1 }
        last = $6 + 0
      }
      END { if (lines != 4 || rows != 4) { printf "# %d JSON lines, %d table rows (want 4, 4)\n", lines, rows; bad = 1 }
            exit bad }' "$tmp/plan/planning.jsonl" "$tmp/table" && ok=1 || ok=0
    sed 's/^/# /' "$tmp/table"
    if [ $ok = 1 ]; then echo "ok 1 - plan_clusters.py ranks 4 options by cost per step"; else echo "not ok 1 - plan_clusters.py table"; fi
  else
    sed 's/^/# /' "$tmp/err"
    echo "not ok 1 - plan_clusters.py failed"
  fi
  printf 'options:\n  - name: a\n    set: {scale_out_bw: 1Gbps}\n' > "$tmp/flow.yaml"
  if python3 "$src/examples/planning/plan_clusters.py" --wisp "$wisp" --workload "$work" --cluster "$cluster" \
      --costs "$tmp/flow.yaml" >/dev/null 2>"$tmp/err"; then
    echo "not ok 2 - a flow mapping was accepted"
  elif grep -q "flow.yaml:3: '{scale_out_bw: 1Gbps}': flow collections" "$tmp/err"; then
    echo "ok 2 - a cost file outside the YAML subset is refused with its line"
  else
    sed 's/^/# /' "$tmp/err"
    echo "not ok 2 - unexpected message"
  fi
  if python3 "$src/examples/planning/plan_clusters.py" --wisp "$wisp" --workload "$work" --cluster dgx-a100 \
      --costs "$src/examples/planning/costs.yaml" --out "$tmp/plan5" --scale dp=4 --starts together \
      --network-model analytical >"$tmp/table5" 2>"$tmp/err" &&
     [ "$(awk '$1 ~ /^[0-9]+$/ && NF == 7 && $4 == 32' "$tmp/table5" | wc -l)" -eq 4 ] &&
     [ "$(grep -c '"n_ranks": 32' "$tmp/plan5/planning.jsonl")" -eq 4 ]; then
    echo "ok 3 - plan_clusters.py passes --scale/--starts/--network-model: 4 options at 32 GPUs"
  else
    sed 's/^/# /' "$tmp/table5" "$tmp/err"
    echo "not ok 3 - plan_clusters.py with wisp's scaling options"
  fi
  huge=1$(printf '%0400d' 0)
  printf 'options:\n  - name: 123\n    price_gpu_hour: nan\n    set:\n      scale_out_bw: 200Gbps\n  - name: b\n    price_gpu_hour: -2\n    set:\n      scale_out_bw: 400Gbps\n  - name: c\n    price_gpu_hour: %s\n    set:\n      scale_out_bw: 800Gbps\n' "$huge" > "$tmp/bad.yaml"
  if python3 "$src/examples/planning/plan_clusters.py" --wisp "$wisp" --workload "$work" --cluster "$cluster" \
      --costs "$tmp/bad.yaml" >/dev/null 2>"$tmp/err"; then
    echo "not ok 4 - a NaN or negative price was accepted"
  elif grep -q "4 problems" "$tmp/err" && grep -q "name 123 is not a string; quote it" "$tmp/err" &&
       grep -q "option 'c': price_gpu_hour must be a positive finite number (per GPU-hour), got 1000000000" "$tmp/err" &&
       grep -q "option '123': price_gpu_hour must be a positive finite number (per GPU-hour), got nan" "$tmp/err" &&
       grep -q "option 'b': price_gpu_hour must be a positive finite number (per GPU-hour), got -2" "$tmp/err" &&
       ! grep -q Traceback "$tmp/err"; then
    echo "ok 4 - numeric name, NaN, negative and 401-digit prices refused together"
  else
    sed 's/^/# /' "$tmp/err"
    echo "not ok 4 - unexpected message"
  fi
else
  echo "ok 1 # SKIP python3 not installed (apt-get install python3)"
  echo "ok 2 # SKIP python3 not installed"
  echo "ok 3 # SKIP python3 not installed"
  echo "ok 4 # SKIP python3 not installed"
fi

# The program's T_2x of scale_out_bw equals `wisp utility`'s (third column
# of both tables: the command prints resource, T, T_2x; the program
# resource, T_2x, utility -> its second column).
if "$build/examples/planning/utility_study" "$work" "$cluster" >"$tmp/u1" 2>"$tmp/err" &&
   "$wisp" utility "$work" --network "$cluster" >"$tmp/cli" 2>>"$tmp/err" &&
   a=$(awk '$1 == "scale_out_bw" { print $2 }' "$tmp/u1") && b=$(awk '$1 == "scale_out_bw" { print $3; exit }' "$tmp/cli") &&
   [ -n "$a" ] && [ "$a" = "$b" ]; then
  echo "ok 5 - utility_study through the public API (scale_out_bw T_2x $a ms, as wisp utility)"
else
  sed 's/^/# /' "$tmp/u1" "$tmp/err"
  echo "not ok 5 - utility_study"
fi

export PKG_CONFIG_PATH="$build/examples/planning${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "ok 6 # SKIP pkg-config not installed"
elif cc=$(pkg-config --variable=cc wisp) && flags=$(pkg-config --cflags --libs wisp) &&
     $cc "$src/examples/planning/utility_study.c" $flags -o "$tmp/us" 2>"$tmp/err" &&
     "$tmp/us" "$work" "$cluster" >"$tmp/u2" 2>>"$tmp/err" && cmp -s "$tmp/u1" "$tmp/u2"; then
  echo "ok 6 - utility_study built through pkg-config wisp (uninstalled .pc) prints the same"
else
  sed 's/^/# /' "$tmp/err"
  echo "not ok 6 - pkg-config build of utility_study"
fi

dlrm=${WISP_SHARED_DATA:-}/param/dlrm_kineto.tar.gz
if [ ! -f "$dlrm" ]; then
  echo "ok 7 # SKIP $dlrm not found (make check sets WISP_SHARED_DATA)"
elif tar -xzf "$dlrm" -C "$tmp" && "$build/examples/planning/utility_study" "$tmp/dlrm_kineto" dgx-a100 >"$tmp/u7" 2>"$tmp/err" &&
     grep -q "(8 ranks) on" "$tmp/u7" && grep -q '^scale_up_bw ' "$tmp/u7"; then
  echo "ok 7 - utility_study reads DLRM's Kineto directory"
else
  sed 's/^/# /' "$tmp/u7" "$tmp/err"
  echo "not ok 7 - utility_study on Kineto traces"
fi
