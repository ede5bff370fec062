#!/bin/sh
# check_first_comment.sh: every source file of collectives/, chakra/,
# replay/ and frontends/ (sub-folders included) says in its first comment,
# in a sentence, what it is for (issue 26: "a reader can say in one
# sentence what each file is for, from its name and first comment";
# doc/ARCHITECTURE.md, "Files and circles").  TAP output, one test per
# folder.  A file passes when
#  - its first line opens a comment with the file's own name and a colon,
#    "/* name.c: ..." (so a copied or renamed file cannot keep another
#    file's comment), and
#  - the text after the colon, up to the first full stop (". " or a "."
#    ending a line) or the end of the comment, holds at least MIN_WORDS
#    words: a sentence, not a label.
# The rule is about form: whether the sentence is true is the reviewer's.
# Exceptions are listed below, one per line, "path: reason": ALLOW for a
# reason that stands (none today), TODO for work still to do (reported
# "not ok ... # TODO", an expected failure).  An entry that no longer
# applies fails the test until it is removed, so the lists only shrink.
# `check_first_comment.sh --list` prints every file that fails, listed or
# not, with the first sentence it found, and exits 0.
# Cost: one awk pass per folder over its files (well under a second).
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
MIN_WORDS=5
FOLDERS="collectives chakra replay frontends"
ALLOW='
'
TODO='
'

# failing FOLDER: "path<TAB>what is wrong" for every .c/.h that fails.
failing() {
  # shellcheck disable=SC2046
  awk -v min="$MIN_WORDS" '
  function base(p) { sub(/.*\//, "", p); return p }
  function verdict() {
    if (f == "") return
    if (bad != "") { print f "\t" bad; return }
    if (match(text, /\.( |$)/)) text = substr(text, 1, RSTART)
    n = split(text, w, /[ \t]+/)
    words = 0
    for (k = 1; k <= n; k++) if (w[k] ~ /[A-Za-z0-9]/) words++
    if (words < min)
      print f "\tfirst sentence has " words " word" (words == 1 ? "" : "s") " (at least " min "): \"" substr(text, 2) "\""
  }
  FNR == 1 {
    verdict()
    f = FILENAME; bad = ""; text = ""; done = 0
    head = "/* " base(f) ": "
    if (index($0, head) != 1) { bad = "first line is not \"" head "...\""; done = 1; next }
    $0 = substr($0, length(head) + 1)
  }
  done { next }
  {
    line = $0
    sub(/^[ \t]*\*[ \t]?/, "", line) # the comment leader of later lines
    end = index(line, "*/")
    if (end) line = substr(line, 1, end - 1)
    text = text " " line
    if (end || match(text, /\.( |$)/)) done = 1
  }
  END { verdict() }' $(find "$1" -name '*.[ch]' | LC_ALL=C sort)
}

listed() { # LIST KEY: the entry's reason, empty when KEY is not listed
  printf '%s\n' "$1" | awk -v k="$2" 'index($0, k ": ") == 1 { print substr($0, length(k) + 3); exit }'
}

cd "$src" || exit 1
if [ "${1:-}" = "--list" ]; then
  for d in $FOLDERS; do failing "$d"; done
  exit 0
fi
n=0
for d in $FOLDERS; do n=$((n + 1)); done
echo "1..$n"
i=0
status=0
tab=$(printf '\t')
for d in $FOLDERS; do
  i=$((i + 1)); bad=""; todo=""; stale=""
  found=$(failing "$d")
  for p in $(printf '%s\n' "$found" | cut -f1); do
    if [ -n "$(listed "$ALLOW" "$p")" ]; then continue; fi
    if [ -n "$(listed "$TODO" "$p")" ]; then todo="$todo $p"; continue; fi
    bad="$bad [$(printf '%s\n' "$found" | awk -F"$tab" -v p="$p" '$1 == p { print $1 ": " $2 }')]"
  done
  for p in $(printf '%s\n%s\n' "$ALLOW" "$TODO" | awk -F': ' -v d="$d/" 'index($1, d) == 1 { print $1 }'); do
    printf '%s\n' "$found" | awk -F"$tab" -v p="$p" '$1 == p { f = 1 } END { exit !f }' || stale="$stale $p"
  done
  if [ -n "$bad$stale" ]; then
    echo "not ok $i - $d first comments:${bad:- none}; listed but passing now:${stale:- none} (open the file with \"/* name.c: what it is for.\" in a sentence, or write the reason into a list in $0)"
    status=1
  elif [ -n "$todo" ]; then
    echo "not ok $i - $d first comments still to write:$todo # TODO"
  else
    echo "ok $i - $d first comments: every file says what it is for"
  fi
done
exit $status
