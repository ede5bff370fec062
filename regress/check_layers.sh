#!/bin/sh
# check_layers.sh: the folders' include graph has no upward edge and no
# layer includes another layer's internals (doc/ARCHITECTURE.md, "Layers
# and their contracts"; issue 16).  TAP output, one test per folder.
#
# Each folder has a rank; a source or header file may include headers of
# its own folder and of folders of strictly lower rank only, and never
# another folder's *_internal.h or *_private.h.  Folders not in the table
# sit on top of every layer: bench/ (each benchmark measures one layer, so
# bench_sweep.c includes studies/ and bench_replay.c replay/) and examples/
# may include any layer's public headers but never internals (the last
# test: they measure and show what a user of the layers gets); regress/ and
# fuzz/ are white-box tests and may include internals too.
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
echo "1..$((n + 2))"
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
# The top folders that must keep to public headers.
i=$((i + 1))
bad=""
for f in $(find "$src/bench" "$src/examples" -name '*.[ch]' | LC_ALL=C sort); do
  rel=${f#"$src"/}
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\/[A-Za-z0-9_./]*\)".*/\1/p' "$f"); do
    case "$inc" in *_internal.h | *_private.h) bad="$bad $rel:$inc" ;; esac
  done
done
if [ -z "$bad" ]; then
  echo "ok $i - bench and examples (on top of every layer) include only public headers"
else
  echo "not ok $i - bench and examples include internals:$bad (go through the layer's public header)"
  status=1
fi
# doc/ARCHITECTURE.md's folder table names exactly the ranked folders, so
# the table a reader starts from stays true.
i=$((i + 1))
doc=$(sed -n 's/^| `\([a-z]*\)\/` |.*/\1/p' "$src/doc/ARCHITECTURE.md" | LC_ALL=C sort | tr '\n' ' ')
want=$(for l in $LAYERS; do echo "${l%%:*}"; done | LC_ALL=C sort | tr '\n' ' ')
if [ "$doc" = "$want" ]; then
  echo "ok $i - doc/ARCHITECTURE.md's folder table names every ranked folder"
else
  echo "not ok $i - doc/ARCHITECTURE.md's folder table names [$doc]; the ranked folders are [$want] (keep the table and LAYERS together)"
  status=1
fi
exit $status
