#!/bin/sh
# check_coll_layers.sh: the collectives' internal layering, by includes
# (doc/ARCHITECTURE.md, "Collectives"; issue 16 part 4, issue 26 item 1).
# Bottom up: the leaf (coll_facts, coll_nccltests); the library catalog
# (libraries/coll_library.*: names and parameters); the runtime's core
# (the plan, the run, the ring recurrence, the buffer lifecycle, the
# schedules, the policy: coll_run.h); the library families
# (libraries/nccl/, libraries/supernode/), which use the core and give it
# their hooks (coll_lib_ops); and the front (coll_rt.c, which picks a
# family, and collbench's library report).  TAP output:
#  1. the leaf includes no collectives/ header but its own;
#  2. the core includes no family header and not the hook registry
#     (coll_lib_ops.h): the run and the plan never name a library;
#  3. a family includes from collectives/ only the core, the leaf, the
#     catalog, the registry and its own folder (never another family,
#     never the front's report), except that rccl/ builds on nccl/'s
#     tuner and plan interfaces (coll_nccl.h, coll_nccl_plan.h; one way);
#  4. the catalog includes from collectives/ only itself, the leaf and
#     the NCCL tuner's header (its algorithm names);
#  5. nothing outside collectives/, regress/ and bench/ includes an
#     internal header (coll_internal.h, coll_run.h, coll_lib_ops.h,
#     supernode/coll_library_internal.h).
# Cost: a few greps over the tree, well under a second.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
incs() { # FILE...: the quoted includes, one per line, as FILE:HEADER
  for f in "$@"; do
    [ -f "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([A-Za-z0-9_./]*\)".*/\1/p' "$f" |
      sed "s#^#${f#"$src"/}:#"
  done
}
C=$src/collectives
echo "1..5"
status=0
leaf="collectives/coll_facts.h collectives/coll_nccltests.h"
core_h="collectives/coll.h collectives/coll_internal.h collectives/coll_run.h"
catalog="collectives/libraries/coll_library.h"
bad=$(incs "$C"/coll_facts.* "$C"/coll_nccltests.* | while IFS=: read -r f h; do
  case $h in collectives/*) case " $leaf " in *" $h "*) ;; *) echo "$f:$h" ;; esac ;; esac
done)
if [ -z "$bad" ]; then echo "ok 1 - the conventions leaf includes no other collectives/ header"
else echo "not ok 1 - the leaf includes:" $bad; status=1; fi
core="$C/coll_plan.c $C/coll_run.c $C/coll_ring.c $C/coll_buffer.c $C/coll_sched.c $C/coll_twohop.c \
  $C/coll_policy.c $C/coll_run.h $C/coll_internal.h $C/coll.h"
bad=$(incs $core | while IFS=: read -r f h; do
  case $h in collectives/libraries/coll_library.h) ;; collectives/libraries/*) echo "$f:$h" ;; esac
done)
if [ -z "$bad" ]; then echo "ok 2 - the core (plan, run, ring, buffers) names no library family"
else echo "not ok 2 - the core includes:" $bad; status=1; fi
bad=$(for fam in nccl rccl supernode; do
  incs "$C"/libraries/$fam/*.c "$C"/libraries/$fam/*.h | while IFS=: read -r f h; do
    case $fam:$h in rccl:collectives/libraries/nccl/coll_nccl.h | rccl:collectives/libraries/nccl/coll_nccl_plan.h) continue ;; esac
    case $h in
    collectives/libraries/$fam/*) ;;
    collectives/libraries/coll_lib_ops.h) ;;
    collectives/*) case " $leaf $core_h $catalog " in *" $h "*) ;; *) echo "$f:$h" ;; esac ;;
    esac
  done
done)
if [ -z "$bad" ]; then echo "ok 3 - each library family includes only the core, the leaf, the catalog and itself"
else echo "not ok 3 - a family includes:" $bad; status=1; fi
bad=$(incs "$C"/libraries/coll_library.c "$C"/libraries/coll_library.h | while IFS=: read -r f h; do
  case $h in
  collectives/libraries/coll_library.h | collectives/libraries/nccl/coll_nccl.h) ;;
  collectives/*) case " $leaf " in *" $h "*) ;; *) echo "$f:$h" ;; esac ;;
  esac
done)
if [ -z "$bad" ]; then echo "ok 4 - the library catalog includes only itself, the leaf and the NCCL tuner's names"
else echo "not ok 4 - the catalog includes:" $bad; status=1; fi
bad=$(cd "$src" && grep -rlE \
  '#[[:space:]]*include[[:space:]]*"collectives/(libraries/supernode/coll_library_internal|libraries/coll_lib_ops|coll_internal|coll_run)\.h"' \
  --include='*.c' --include='*.h' . | sed 's#^\./##' | grep -v -e '^collectives/' -e '^regress/' -e '^bench/' -e '^build')
if [ -z "$bad" ]; then echo "ok 5 - collectives internals are included only by collectives/, regress/ and bench/"
else echo "not ok 5 - collectives internals included by:" $bad; status=1; fi
exit $status
