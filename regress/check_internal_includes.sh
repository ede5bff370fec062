#!/bin/sh
# check_internal_includes.sh: a layer's private header (FOLDER/*_internal.h)
# is included only from its own folder (tests under regress/ may look
# inside), and config/ includes no wisp folder but common/ (every layer
# reads it, so it sits below them all; doc/ARCHITECTURE.md).  TAP output.
# Cost: one grep over the sources.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1
echo "1..2"
bad=$(grep -rn --include='*.c' --include='*.h' '#include "[a-z_]*/[a-z_]*_internal\.h"' \
        common config simcore chakra topologies net collectives frontends studies calib cli 2>/dev/null |
      awk -F: '{ split($1, f, "/"); match($0, /#include "[a-z_]*\//); inc = substr($0, RSTART + 10, RLENGTH - 11);
                 if (f[1] != inc) print }')
if [ -z "$bad" ]; then
  echo "ok 1 - no folder includes another folder's _internal.h"
else
  echo "not ok 1 - cross-folder _internal.h includes:"
  echo "$bad" | sed 's/^/# /'
fi
bad=$(grep -rn --include='*.c' --include='*.h' '#include "[a-z_]*/' config | grep -v '#include "\(config\|common\)/')
if [ -z "$bad" ]; then
  echo "ok 2 - config/ includes only config/ and common/"
else
  echo "not ok 2 - config/ includes a layer above it:"
  echo "$bad" | sed 's/^/# /'
fi
