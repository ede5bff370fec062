#!/bin/sh
# quickstart.sh: one-command set-up for a fresh Debian 12 machine.
#
#   scripts/quickstart.sh demo    install what is missing, build, run the bundled what-if study
#   scripts/quickstart.sh check   install what is missing, build, run the whole test suite
#
# Idempotent: packages already installed are not reinstalled, and the build
# directory (build/, or $WISP_BUILD_DIR) is reused.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${WISP_BUILD_DIR:-$top/build}
action=${1:-demo}
# An unknown action is refused before anything is installed or built.
case "$action" in
  demo|check) ;;
  *)
    echo "usage: scripts/quickstart.sh demo|check" >&2
    exit 2
    ;;
esac

packages="build-essential autoconf automake libtool pkg-config libglib2.0-dev libyaml-dev \
libprotobuf-c-dev protobuf-c-compiler libcjson-dev zlib1g-dev libsqlite3-dev groff-base python3 clang chromium"

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "quickstart: installing:$missing"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi

[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || ./bootstrap
mkdir -p "$build"
cd "$build"
[ -f Makefile ] && [ config.status -nt "$top/configure" ] || "$top/configure" -q ${WISP_CONFIGURE_FLAGS:---enable-werror}
make -j"$(nproc)" >/dev/null

case "$action" in
  demo)
    exec "$top/examples/run-demo.sh" "$build/wisp"
    ;;
  check)
    make -j"$(nproc)" check
    ;;
esac
