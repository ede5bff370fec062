#!/bin/sh
# check_layers.sh: the folders' include graph has no upward edge and no
# layer includes another layer's internals (doc/ARCHITECTURE.md, "Layers
# and their contracts"; issue 16).  TAP output, one test per folder.
#
# Each folder has a rank; a source or header file may include headers of
# its own folder and of folders of strictly lower rank only, and never
# another folder's *_internal.h or *_private.h.  Folders not in the table
# (regress, bench, fuzz, examples) sit on top and are not checked.
# Known exceptions, to be removed by the change that fixes them, are listed
# in EXCEPT as "file:included-header".
# Cost: one grep per folder; the whole tree in well under a second.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
LAYERS="common:0 simcore:1 chakra:1 config:1 topologies:2 frontends:2 net:3 collectives:4 replay:5 studies:6 calib:7 cli:8"
EXCEPT=""

rank_of() {
  for l in $LAYERS; do
    [ "${l%%:*}" = "$1" ] && { echo "${l#*:}"; return; }
  done
  echo ""
}

n=0
for l in $LAYERS; do n=$((n + 1)); done
echo "1..$n"
i=0
status=0
for l in $LAYERS; do
  i=$((i + 1))
  dir=${l%%:*}
  mine=${l#*:}
  bad=""
  # Every file of the folder, sub-folders included (collectives/libraries/nccl/...).
  for f in $(find "$src/$dir" -name '*.[ch]' | LC_ALL=C sort); do
    [ -f "$f" ] || continue
    rel=${f#"$src"/}
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\/[A-Za-z0-9_./]*\)".*/\1/p' "$f"); do
      top=${inc%%/*}
      [ "$top" = "$dir" ] && continue
      r=$(rank_of "$top")
      [ -n "$r" ] || continue
      case " $EXCEPT " in *" $rel:$inc "*) continue ;; esac
      case "$inc" in
      *_internal.h | *_private.h) bad="$bad $rel:$inc(internals)" ;;
      *) [ "$r" -lt "$mine" ] || bad="$bad $rel:$inc(rank $r >= $mine)" ;;
      esac
    done
  done
  if [ -z "$bad" ]; then
    echo "ok $i - $dir (rank $mine) includes only lower layers"
  else
    echo "not ok $i - $dir (rank $mine) includes:$bad"
    status=1
  fi
done
exit $status
