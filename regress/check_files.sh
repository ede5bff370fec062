#!/bin/sh
# check_files.sh: one concern per file and no file circles (issue 26 item
# 3; doc/ARCHITECTURE.md, "Files and circles").  TAP output, two tests per
# layer folder (sub-folders included):
#  - "lines": no source file (.c or .h) is longer than MAX lines (800);
#  - "circles": no two files of the folder use each other, directly or
#    through other files of the folder.  File A uses file B when A names
#    a function B defines without `static` (a call, or the function handed
#    on as a callback) and A defines no function of that name itself.
#    A circle is reported as its files and, per edge, one function that
#    makes it.
# Exceptions are listed below, one per line, each with its reason after
# the colon: ALLOW for a reason that stands (none today), TODO for work
# still to do (reported "not ok ... # TODO", an expected failure, so that
# `make check` passes and the list stays visible).  An entry that no
# longer applies fails the test until it is removed, so the lists only
# shrink.  `check_files.sh --list` prints every file over MAX lines and
# every circle, exceptions included, and exits 0.
#
# How functions and uses are found: regress/c_scan.awk (shared with
# check_func_length.sh; its comment states the limits).  The regress/,
# bench/ and fuzz/ folders (tests and tools) and generated files are not
# checked.  Cost: one awk pass per file plus O(F^3) per folder of F files
# (under a second for the tree).
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
MAX=800
FOLDERS="common simcore chakra config topologies frontends net collectives replay studies calib cli examples"
# "path: reason" (lines) and "folder: file file ...: reason" (circles).
ALLOW_LINES='
'
TODO_LINES='
'
ALLOW_CIRCLES='
'
TODO_CIRCLES='
'

# scan FILE...: "D file name" for every non-static function definition,
# "U file ident" for every identifier used (once per file); see
# regress/c_scan.awk, shared with check_func_length.sh.
scan() {
  awk -v mode=uses -f "$src/regress/c_scan.awk" "$@"
}

# circles FOLDER: one line per circle, "a.c b.c ...|a.c->b.c(fn) ...".
circles() {
  files=$(find "$1" -name '*.c' | LC_ALL=C sort)
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086
  scan $files | awk '
  $1 == "D" { def[$3] = def[$3] " " $2; own[$2 SUBSEP $3] = 1; next }
  $1 == "S" { own[$2 SUBSEP $3] = 1; next }
  $1 == "U" { nu++; uf[nu] = $2; uw[nu] = $3; if (!($2 in idx)) { idx[$2] = ++nf; name[nf] = $2 } }
  END {
    for (k = 1; k <= nu; k++) {
      a = uf[k]; w = uw[k]
      if (!(w in def) || ((a SUBSEP w) in own)) continue
      m = split(def[w], bs, " ")
      for (j = 1; j <= m; j++) {
        b = bs[j]; if (b == a || !(b in idx)) continue
        i1 = idx[a]; i2 = idx[b]
        if (!((i1, i2) in e)) { e[i1, i2] = 1; why[i1, i2] = w; r[i1, i2] = 1 }
      }
    }
    for (k = 1; k <= nf; k++) for (i = 1; i <= nf; i++) if ((i, k) in r)
      for (j = 1; j <= nf; j++) if ((k, j) in r) r[i, j] = 1
    for (i = 1; i <= nf; i++) {
      if (done[i] || !((i, i) in r)) continue
      grp = ""; edges = ""
      for (j = 1; j <= nf; j++) if (j == i || (((i, j) in r) && ((j, i) in r))) { done[j] = 1; mem[j] = 1; grp = grp " " name[j] }
      for (a = 1; a <= nf; a++) for (b = 1; b <= nf; b++)
        if (mem[a] && mem[b] && ((a, b) in e)) edges = edges " " name[a] "->" name[b] "(" why[a, b] ")"
      for (j = 1; j <= nf; j++) mem[j] = 0
      print substr(grp, 2) "|" substr(edges, 2)
    }
  }'
}

long_files() { # FOLDER: "LINES path" for every .c/.h over MAX
  find "$1" -name '*.[ch]' | LC_ALL=C sort | xargs wc -l | awk -v max="$MAX" '$2 != "total" && $1 > max { print $1, $2 }'
}

listed() { # LIST KEY: the entry's reason, empty when KEY is not listed
  printf '%s\n' "$1" | awk -v k="$2" 'index($0, k ": ") == 1 { print substr($0, length(k) + 3); exit }'
}

cd "$src" || exit 1
if [ "${1:-}" = "--list" ]; then
  for d in $FOLDERS; do
    long_files "$d"
    circles "$d" | sed "s#^#circle in $d: #"
  done
  exit 0
fi
n=0
for d in $FOLDERS; do n=$((n + 2)); done
echo "1..$n"
i=0
status=0
for d in $FOLDERS; do
  # Lines.
  i=$((i + 1)); bad=""; todo=""; stale=""
  long=$(long_files "$d")
  for p in $(printf '%s\n' "$long" | awk 'NF { print $2 }'); do
    l=$(printf '%s\n' "$long" | awk -v p="$p" '$2 == p { print $1 }')
    if [ -n "$(listed "$ALLOW_LINES" "$p")" ]; then continue; fi
    if [ -n "$(listed "$TODO_LINES" "$p")" ]; then todo="$todo $p=$l"; continue; fi
    bad="$bad $p=$l"
  done
  for p in $(printf '%s\n%s\n' "$ALLOW_LINES" "$TODO_LINES" | awk -F': ' -v d="$d/" 'index($1, d) == 1 { print $1 }'); do
    printf '%s\n' "$long" | awk -v p="$p" '$2 == p { f = 1 } END { exit !f }' || stale="$stale $p"
  done
  if [ -n "$bad$stale" ]; then
    echo "not ok $i - $d lines: files over $MAX lines:${bad:- none}; listed but no longer over:${stale:- none} (split the file by concern, or write the reason into a list in $0)"
    status=1
  elif [ -n "$todo" ]; then
    echo "not ok $i - $d lines: files over $MAX lines still to split:$todo # TODO"
  else
    echo "ok $i - $d lines: every file within $MAX lines"
  fi
  # Circles.
  i=$((i + 1)); bad=""; todo=""; stale=""
  found=$(circles "$d")
  IFS_save=$IFS
  IFS='
'
  for c in $found; do
    key="$d: ${c%%|*}"
    if [ -n "$(listed "$ALLOW_CIRCLES" "$key")" ]; then continue; fi
    if [ -n "$(listed "$TODO_CIRCLES" "$key")" ]; then todo="$todo [${c%%|*}]"; continue; fi
    bad="$bad [${c#*|}]"
  done
  for e in $(printf '%s\n%s\n' "$ALLOW_CIRCLES" "$TODO_CIRCLES" | awk -F': ' -v d="$d" '$1 == d { print $1 ": " $2 }'); do
    printf '%s\n' "$found" | awk -F'|' -v k="${e#*: }" '$1 == k { f = 1 } END { exit !f }' || stale="$stale [$e]"
  done
  IFS=$IFS_save
  if [ -n "$bad$stale" ]; then
    echo "not ok $i - $d circles: files that use each other:${bad:- none}; listed but gone:${stale:- none} (let one side return what the other needs, or compose them one level up)"
    status=1
  elif [ -n "$todo" ]; then
    echo "not ok $i - $d circles: still to untie:$todo # TODO"
  else
    echo "ok $i - $d circles: none"
  fi
done
exit $status
