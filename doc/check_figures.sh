#!/bin/sh
# check_figures.sh: the figure blocks of doc/studies.md are what the
# commands they show print today (scripts/doc_figures.sh regenerates them;
# `scripts/doc_figures.sh --update` rewrites the doc after a change that
# moves a figure).  TAP output, one test per block.  Issue 29 item 10:
# the doc showed T = 91.000710 ms where the command gave 93.374524 ms.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
echo "1..1"
want=$(sh "$src/scripts/doc_figures.sh") || { echo "not ok 1 utility-demo # scripts/doc_figures.sh failed"; exit 1; }
have=$(awk '/^<!-- figures: utility-demo /, /^<!-- \/figures -->/' "$src/doc/studies.md")
if [ "$want" = "$have" ]; then
  echo "ok 1 utility-demo: doc/studies.md matches the command's output"
else
  echo "not ok 1 utility-demo: doc/studies.md differs from what the command prints (run scripts/doc_figures.sh --update)"
  printf '%s\n' "$want" >"${TMPDIR:-/tmp}/check_figures.want.$$"
  printf '%s\n' "$have" | diff - "${TMPDIR:-/tmp}/check_figures.want.$$" | sed 's/^/# /'
  rm -f "${TMPDIR:-/tmp}/check_figures.want.$$"
  exit 1
fi
