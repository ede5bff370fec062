#!/bin/sh
# check_public_surface.sh: what `make install` puts in include/wisp is what
# a library user needs and nothing internal (issue 16 part 5).  TAP output:
#   1. no installed header is an internal one (*_internal.h, *_private.h,
#      *_testhooks.h), the prefix that marks internals (as libuv's uv-common.h
#      beside uv.h);
#   2. every wisp header an installed header includes is installed too, so
#      the installed set compiles on its own;
#   3. libwisp (the built archive or shared object in the build directory)
#      defines no test hook (sim_debug_*): those live in the test-only
#      simcore/libwisp_testhooks.la.  Skipped when libwisp is not built or
#      nm is missing.
# The installed set is read from the nobase_pkginclude_HEADERS lines of the
# Makefile.inc fragments (continuation lines included).  Cost: one pass
# over a few dozen headers.
src=${G_TEST_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${WISP_BUILD_DIR:-.}
installed=$(cd "$src" && cat */Makefile.inc */*/Makefile.inc 2>/dev/null |
  awk '/^nobase_pkginclude_HEADERS[ \t]*\+?=/ { on = 1; sub(/^[^=]*=/, "") }
       on { c = ($0 ~ /\\$/); sub(/\\$/, ""); print; if (!c) on = 0 }' | tr ' \t' '\n\n' | grep '\.h$' | sort -u)
echo "1..3"
bad=""
for h in $installed; do
  case $h in *_internal.h | *_private.h | *_testhooks.h) bad="$bad $h";; esac
done
if [ -n "$bad" ]; then echo "not ok 1 - internal headers installed:$bad"; st=1; else echo "ok 1 - no internal header installed ($(echo $installed | wc -w) headers)"; fi
bad=""
for h in $installed; do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\/[A-Za-z0-9_./]*\.h\)".*/\1/p' "$src/$h"); do
    case " $(echo $installed) " in *" $inc "*) ;; *) bad="$bad $h:$inc";; esac
  done
done
if [ -n "$bad" ]; then echo "not ok 2 - installed headers include uninstalled ones:$bad"; st=1; else echo "ok 2 - installed headers include installed headers only"; fi
lib=""
for f in "$build/.libs/libwisp.so" "$build/.libs/libwisp.a"; do [ -f "$f" ] && { lib=$f; break; }; done
if [ -z "$lib" ] || ! command -v nm >/dev/null 2>&1; then
  echo "ok 3 - # SKIP libwisp not built here or no nm"
elif nm "$lib" 2>/dev/null | grep -q ' [TDB] sim_debug_'; then
  echo "not ok 3 - $lib defines test hooks: $(nm "$lib" | grep ' [TDB] sim_debug_' | awk '{print $3}' | tr '\n' ' ')"; st=1
else
  echo "ok 3 - $lib defines no sim_debug_* test hook"
fi
exit ${st:-0}
