#!/bin/sh
# check_man.sh: every man page in doc/ formats without a groff warning
# (`groff -ww -man -z`: every warning category on, output discarded), so a
# broken macro or an unbreakable line shows up in `make check` (issue 29
# item 11).  TAP output: one test per page; skipped when groff is absent.
# Cost: one groff run per page, well under a second in all.
srcdir=${G_TEST_SRCDIR:-$(dirname "$0")/..}
pages=$(ls "$srcdir"/doc/*.1)
n=$(echo "$pages" | wc -l)
echo "1..$n"
i=0
for p in $pages; do
  i=$((i + 1))
  name=doc/$(basename "$p")
  if ! command -v groff >/dev/null 2>&1; then
    echo "ok $i $name # SKIP groff is not installed (apt-get install groff)"
    continue
  fi
  warn=$(groff -ww -man -Tutf8 -z "$p" 2>&1)
  if [ -n "$warn" ]; then
    echo "not ok $i $name"
    echo "$warn" | sed 's/^/# /'
  else
    echo "ok $i $name"
  fi
done
