#!/bin/sh
# check_coll_layers.sh: the three libraries of collectives/ include only
# downward (doc/ARCHITECTURE.md, "Collectives"; issue 16 part 4), so the
# old coll_policy <-> coll_library cycle cannot come back.  TAP output:
#  1. the leaf (coll_facts.*, coll_nccltests.*) includes no collectives/
#     header but its own;
#  2. collectives/libraries/ includes from collectives/ only its own
#     headers and the leaf (never coll.h, coll_internal.h or the report);
#  3. nothing outside collectives/ and regress/ includes
#     coll_library_internal.h or coll_internal.h.
# Cost: a few greps over the tree, well under a second.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
incs() { # FILE...: the quoted includes, one per line, as FILE:HEADER
  for f in "$@"; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([A-Za-z0-9_./]*\)".*/\1/p' "$f" |
      sed "s#^#${f#"$src"/}:#"
  done
}
echo "1..3"
status=0
leaf="collectives/coll_facts.h collectives/coll_nccltests.h"
bad=$(incs "$src"/collectives/coll_facts.* "$src"/collectives/coll_nccltests.* | while IFS=: read -r f h; do
  case $h in collectives/*) case " $leaf " in *" $h "*) ;; *) echo "$f:$h" ;; esac ;; esac
done)
if [ -z "$bad" ]; then echo "ok 1 - the conventions leaf includes no other collectives/ header"
else echo "not ok 1 - the leaf includes:" $bad; status=1; fi
bad=$(incs "$src"/collectives/libraries/*.c "$src"/collectives/libraries/*.h | while IFS=: read -r f h; do
  case $h in
  collectives/libraries/*) ;;
  collectives/*) case " $leaf " in *" $h "*) ;; *) echo "$f:$h" ;; esac ;;
  esac
done)
if [ -z "$bad" ]; then echo "ok 2 - collectives/libraries/ includes only itself and the leaf from collectives/"
else echo "not ok 2 - collectives/libraries/ includes:" $bad; status=1; fi
bad=$(cd "$src" && grep -rlE '#[[:space:]]*include[[:space:]]*"collectives/(libraries/coll_library_internal|coll_internal)\.h"' \
  --include='*.c' --include='*.h' . | sed 's#^\./##' | grep -v -e '^collectives/' -e '^regress/' -e '^bench/' -e '^build')
if [ -z "$bad" ]; then echo "ok 3 - collectives internals are included only by collectives/, regress/ and bench/"
else echo "not ok 3 - collectives internals included by:" $bad; status=1; fi
exit $status
