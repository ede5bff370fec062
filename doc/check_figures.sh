#!/bin/sh
# check_figures.sh: the figure blocks of doc/studies.md are what the
# commands they show print today (scripts/doc_figures.sh regenerates them;
# `scripts/doc_figures.sh --update` rewrites the doc after a change that
# moves a figure).  TAP output, one test per block (utility-demo,
# why-scale).  Issue 29 item 10:
# the doc showed T = 91.000710 ms where the command gave 93.374524 ms.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
echo "1..2"
all=$(sh "$src/scripts/doc_figures.sh") || { echo "not ok 1 # scripts/doc_figures.sh failed"; echo "not ok 2"; exit 1; }
status=0
i=0
for name in utility-demo why-scale; do
  i=$((i + 1))
  want=$(printf '%s\n' "$all" | awk -v n="$name" '$0 ~ "^<!-- figures: " n " " { on = 1 } on { print } on && /^<!-- \/figures -->/ { on = 0 }')
  have=$(awk -v n="$name" '$0 ~ "^<!-- figures: " n " " { on = 1 } on { print } on && /^<!-- \/figures -->/ { on = 0 }' "$src/doc/studies.md")
  if [ -n "$want" ] && [ "$want" = "$have" ]; then
    echo "ok $i $name: doc/studies.md matches the command's output"
  else
    echo "not ok $i $name: doc/studies.md differs from what the command prints (run scripts/doc_figures.sh --update)"
    printf '%s\n' "$want" >"${TMPDIR:-/tmp}/check_figures.want.$$"
    printf '%s\n' "$have" | diff - "${TMPDIR:-/tmp}/check_figures.want.$$" | sed 's/^/# /'
    rm -f "${TMPDIR:-/tmp}/check_figures.want.$$"
    status=1
  fi
done
exit $status
