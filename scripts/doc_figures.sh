#!/bin/sh
# doc_figures.sh [--update]: regenerates the figures doc/studies.md shows
# from the commands it shows, so the doc cannot drift from the binary
# (issue 29 item 10).  Each figure block of the doc sits between
#   <!-- figures: NAME (scripts/doc_figures.sh) -->  and  <!-- /figures -->
# and this script prints every block's text as the commands give it today.
# doc/check_figures.sh (make check) compares the printed blocks with the
# doc's; `--update` writes them into doc/studies.md instead.
# Environment: WISP_BIN (default build/wisp), G_TEST_BUILDDIR (default
# the binary's directory: examples/make_example is taken from there),
# WISP_SHARED_DATA (default ../shared/data: the DLRM trace of levers-dlrm),
# G_TEST_SRCDIR (default this script's parent).  Cost: three utility runs, two on
# the 16-rank example workload, one of them scaled to 1,024 ranks, and one
# on DLRM's 8 ranks (about a second of CPU).
set -eu
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
wisp=${WISP_BIN:-$src/build/wisp}
build=${G_TEST_BUILDDIR:-$(cd "$(dirname "$wisp")" && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wisp-figures-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
"$build/examples/make_example" "$tmp" llm >/dev/null

blocks() {
  # utility-demo: the demo workload's baseline and its scale-out row.
  echo "<!-- figures: utility-demo (scripts/doc_figures.sh) -->"
  echo "    \$ wisp utility build/demo/workload/llm --network examples/cluster-2node.yaml"
  (cd "$src" && "$wisp" utility "$tmp/llm" --network examples/cluster-2node.yaml 2>/dev/null) |
    awk '/^simulated baseline step time T:/ || /^resource  / || /^scale_out_bw / { print "    " $0 }'
  echo "    ..."
  echo "<!-- /figures -->"
}

# why-scale: examples/run-scale.sh's why-lines for scale_out_bw and
# latency (dp=128 on cluster-1024, 1,024 ranks), wrapped at 100 columns
# under the text's column.
why_block() {
  echo "<!-- figures: why-scale (scripts/doc_figures.sh) -->"
  echo "    why, per row (from the baseline's critical path):"
  (cd "$src" && "$wisp" utility "$tmp/llm" --scale dp=128 --network examples/cluster-1024.yaml 2>/dev/null) |
    awk '/^why, per row/ { on = 1; next }
         on && /^$/ { on = 0 }
         on && ($1 == "scale_out_bw" || $1 == "latency") {
           head = sprintf("      %-16s", $1); line = head; pad = sprintf("%23s", "")
           for (i = 2; i <= NF; i++) {
             if (length(line) + 1 + length($i) > 100 && line != head) { print line; line = pad $i }
             else line = (line == head ? line " " : line " ") $i
           }
           print line
         }'
  echo "<!-- /figures -->"
}

# levers-dlrm: the lever rows on the shared DLRM trace (8 ranks,
# examples/networks/dgx1-v100.yaml); WISP_SHARED_DATA/param/dlrm_kineto.tar.gz,
# printed empty without it (doc/check_figures.sh then skips the block).
# The doc said host 49.8 %, compute 0.017 %, scale_up_bw 0 where the
# command gave 49.4464 %, 0.0203 % and 0.1851 %.
dlrm_block() {
  tgz=${WISP_SHARED_DATA:-$src/../shared/data}/param/dlrm_kineto.tar.gz
  [ -f "$tgz" ] || return 0
  tar -xzf "$tgz" -C "$tmp"
  echo "<!-- figures: levers-dlrm (scripts/doc_figures.sh) -->"
  echo "    \$ wisp utility dlrm_kineto --network examples/networks/dgx1-v100.yaml -r host,compute,scale_up_bw"
  (cd "$src" && "$wisp" utility "$tmp/dlrm_kineto" --network examples/networks/dgx1-v100.yaml \
    -r host,compute,scale_up_bw 2>/dev/null) |
    awk '/^resource  / { on = 1 } on && /^$/ { on = 0 } on { printf "    %-16s %14s %14s %10s\n", $1, $2, $3, $4 }'
  echo "<!-- /figures -->"
}

if [ "${1:-}" = "--update" ]; then
  blocks >"$tmp/new1"
  why_block >"$tmp/new2"
  dlrm_block >"$tmp/new3"
  awk -v new1="$tmp/new1" -v new2="$tmp/new2" -v new3="$tmp/new3" '
    /^<!-- figures: utility-demo / { while ((getline l < new1) > 0) print l; skip = 1; next }
    /^<!-- figures: why-scale / { while ((getline l < new2) > 0) print l; skip = 1; next }
    /^<!-- figures: levers-dlrm / { if ((getline l < new3) <= 0) { print; next } print l; while ((getline l < new3) > 0) print l; skip = 1; next }
    skip && /^<!-- \/figures -->/ { skip = 0; next }
    !skip { print }' "$src/doc/studies.md" >"$tmp/studies.md"
  cat "$tmp/studies.md" >"$src/doc/studies.md"
  echo "doc/studies.md: figure blocks regenerated"
else
  blocks
  why_block
  dlrm_block
fi
