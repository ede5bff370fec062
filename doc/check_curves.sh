#!/bin/sh
# check_curves.sh: the real-vs-simulated curves doc/collectives.md shows
# (doc/ncclt-*.svg) are what scripts/doc_curves.sh writes with today's
# binary, byte for byte (rerun `scripts/doc_curves.sh` after a change that
# moves one, and say why in the commit).  TAP output, one test per curve.
# Issue 27: curves written by wisp itself that cannot drift from the model.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wisp-curves-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
names=$(sed -n 's/^\(ncclt-[a-z0-9-]*\.svg\) .*/\1/p' "$src/scripts/doc_curves.sh")
n=$(printf '%s\n' "$names" | grep -c .)
echo "1..$n"
if ! sh "$src/scripts/doc_curves.sh" "$tmp" >"$tmp/log" 2>&1; then
  i=0
  for f in $names; do i=$((i + 1)); echo "not ok $i $f: scripts/doc_curves.sh failed"; done
  sed 's/^/# /' "$tmp/log"
  exit 1
fi
status=0
i=0
for f in $names; do
  i=$((i + 1))
  if [ -f "$src/doc/$f" ] && cmp -s "$tmp/$f" "$src/doc/$f"; then
    echo "ok $i $f: doc/$f is what the binary writes today"
  else
    echo "not ok $i $f: doc/$f differs from what scripts/doc_curves.sh writes (rerun it and commit the curves)"
    status=1
  fi
done
exit $status
