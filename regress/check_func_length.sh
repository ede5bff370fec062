#!/bin/sh
# check_func_length.sh: no function outside regress/, bench/ and fuzz/ is
# longer than MAX lines (120) unless it is in ALLOW below with the reason
# written in a comment above its definition (issue 16, "no function over
# ~120 lines without a reason written above it").  TAP output: one test per
# source folder.  `check_func_length.sh --list [N]` prints every function
# over N lines (default MAX) as "LINES FILE:LINE NAME" and exits 0.
#
# How a function is found: an awk scan per file that drops comments, string
# and character literals and preprocessor lines (with their backslash
# continuations), counts brace depth, and takes every brace that opens depth
# 1 after a header ending in ')' with no '=' in it as a function body.  The
# name is the identifier before the header's first '('; the length counts
# the lines from the line holding that name to the closing brace, both
# included.  Limits: a function whose header is produced by a macro, a
# body opened or closed inside an #if branch with an unbalanced twin, or a
# K&R-style definition is not measured correctly; wisp has none of these
# (the scan also reports the whole tree's longest functions, so a mistake
# shows up as a missing or absurd entry in --list).
# Cost: one awk pass over each .c file; the tree in well under a second.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
MAX=120
FOLDERS="common simcore chakra config topologies frontends net collectives collectives/libraries
  collectives/libraries/nccl collectives/libraries/supernode replay studies calib cli examples"
FOLDERS=$(echo $FOLDERS)
# Functions allowed over MAX, as "file:function"; each carries its reason in
# a comment right above its definition.
ALLOW=""
# Functions over MAX still waiting for their split, as "file:function".  A
# folder whose only long functions are listed here reports "not ok ... #
# TODO" (an expected failure, so `make check` passes and the list stays
# visible); remove an entry when its function is split.
TODO=""
# One space between entries (the lists above may span lines).
ALLOW=$(echo $ALLOW)
TODO=$(echo $TODO)

scan() { # scan FILE...: "LINES FILE:LINE NAME" for every function
  awk '
  FNR == 1 { depth = 0; incom = 0; hdr = ""; hdrline = 0; pp = 0 }
  {
    line = $0
    # Preprocessor lines and their continuations carry no function bodies.
    if (pp || (!incom && line ~ /^[ \t]*#/)) { pp = (line ~ /\\$/); next }
    out = ""
    n = length(line)
    for (i = 1; i <= n; i++) {
      c = substr(line, i, 1)
      if (incom) {
        if (c == "*" && substr(line, i + 1, 1) == "/") { incom = 0; i++ }
        continue
      }
      if (c == "/" && substr(line, i + 1, 1) == "*") { incom = 1; i++; continue }
      if (c == "/" && substr(line, i + 1, 1) == "/") break
      if (c == "\"" || c == "\047") {
        q = c
        for (i++; i <= n; i++) {
          d = substr(line, i, 1)
          if (d == "\\") { i++; continue }
          if (d == q) break
        }
        out = out " "
        continue
      }
      if (c == "{") {
        if (depth == 0) {
          h = hdr
          gsub(/[ \t]+$/, "", h)
          # Attributes after the parameter list (G_GNUC_*) are not expected on definitions.
          if (h ~ /\)$/ && h !~ /=/) {
            p = index(h, "(")
            pre = substr(h, 1, p - 1)
            gsub(/[ \t*]+$/, "", pre)
            if (match(pre, /[A-Za-z_][A-Za-z0-9_]*$/)) {
              fname = substr(pre, RSTART, RLENGTH); infunc = 1; start = hdrline
            }
          }
        }
        depth++
        hdr = ""
        continue
      }
      if (c == "}") {
        depth--
        if (depth == 0) {
          if (infunc) { printf "%d %s:%d %s\n", FNR - start + 1, FILENAME, start, fname; infunc = 0 }
          hdr = ""; hdrline = 0
        }
        continue
      }
      if (c == ";" && depth == 0) { hdr = ""; hdrline = 0; continue }
      if (depth == 0) {
        if (hdrline == 0 && c !~ /[ \t]/) hdrline = FNR
        # The line of the name: the line where the first "(" of the header appears.
        if (c == "(" && index(hdr, "(") == 0) hdrline = FNR
        hdr = hdr c
      }
    }
    if (depth == 0 && hdr != "") hdr = hdr " "
  }' "$@"
}

if [ "${1:-}" = "--list" ]; then
  lim=${2:-$MAX}
  cd "$src" || exit 1
  for d in $FOLDERS; do
    set -- "$d"/*.c
    [ -f "$1" ] && scan "$@"
  done | awk -v lim="$lim" '$1 > lim' | sort -rn
  exit 0
fi

cd "$src" || exit 1
n=0
for d in $FOLDERS; do n=$((n + 1)); done
echo "1..$n"
i=0
status=0
for d in $FOLDERS; do
  i=$((i + 1))
  set -- "$d"/*.c
  if [ ! -f "$1" ]; then echo "ok $i - $d # SKIP no sources"; continue; fi
  bad=""
  todo=""
  for entry in $(scan "$@" | awk -v lim="$MAX" '$1 > lim { sub(/:[0-9]+$/, "", $2); print $2 ":" $3 "=" $1 }'); do
    key=${entry%=*}
    case " $ALLOW " in *" $key "*) continue;; esac
    case " $TODO " in *" $key "*) todo="$todo $entry"; continue;; esac
    bad="$bad $entry"
  done
  if [ -n "$bad" ]; then
    echo "not ok $i - $d: functions over $MAX lines:$bad (split them, or write the reason above and add file:function to ALLOW in $0)"
    status=1
  elif [ -n "$todo" ]; then
    echo "not ok $i - $d: functions over $MAX lines still to split:$todo # TODO"
  else
    echo "ok $i - $d"
  fi
done
exit $status
