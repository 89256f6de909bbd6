#!/usr/bin/env bash
# Installs the guest toolchains the example plugins need, from the package registries, into
# a cache that later runs and other checkouts reuse ($CORRAL_TOOLCHAINS, default
# ${XDG_CACHE_HOME:-~/.cache}/corral/toolchains):
#   python  componentize-py (PyPI, pinned) in a venv          -> $T/python/bin/componentize-py
#   js      @bytecodealliance/componentize-js (npm, locked)    -> $T/js/node_modules
#   c       clang, lld, wasi-libc, compiler-rt for wasm32 (Debian packages, system-wide)
# Usage: toolchains.sh python|js|c|all ... Prints nothing when everything is already there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# Shared by every checkout: the installs are keyed by their pins, so a second clone reuses them.
cache_home="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
T="${CORRAL_TOOLCHAINS:-${cache_home:+$cache_home/corral/toolchains}}"
T="${T:-$repo/target/toolchains}"
COMPONENTIZE_PY_VERSION=0.25.1
mkdir -p "$T"

# The stamp of an install: what was asked for. A changed pin or lock file reinstalls.
stamp_ok() { [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; }

python_tc() {
    local dir="$T/python" want="componentize-py==$COMPONENTIZE_PY_VERSION"
    stamp_ok "$dir" "$want" && return 0
    echo "toolchains: installing $want into $dir" >&2
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$want"
    echo "$want" > "$dir/.stamp"
}

js_tc() {
    local dir="$T/js" want
    want="$(cat "$here/js-toolchain/package.json" "$here/js-toolchain/package-lock.json" | sha256sum | cut -c1-16)"
    stamp_ok "$dir" "$want" && return 0
    echo "toolchains: installing @bytecodealliance/componentize-js into $dir" >&2
    command -v npm >/dev/null || { echo "toolchains: npm is missing; install Node.js 18 or later" >&2; exit 1; }
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$here/js-toolchain/package.json" "$here/js-toolchain/package-lock.json" "$dir/"
    # npm ci refuses this lock (npm leaves other platforms' optional packages out of it);
    # npm install follows the lock all the same.
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error)
    echo "$want" > "$dir/.stamp"
}

# Whether clang can build a WASI preview-1 reactor module here.
c_works() {
    local tmp
    tmp="$(mktemp -d)"
    printf '#include <stdio.h>\nint f(void){return printf("x");}\n' > "$tmp/t.c"
    local ok=1
    clang --target=wasm32-wasi -mexec-model=reactor -O2 -o "$tmp/t.wasm" "$tmp/t.c" >/dev/null 2>&1 && ok=0
    rm -rf "$tmp"
    return $ok
}

c_tc() {
    command -v clang >/dev/null && c_works && return 0
    local pkgs="clang lld wasi-libc libclang-rt-dev-wasm32"
    echo "toolchains: installing $pkgs (Debian packages)" >&2
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    command -v apt-get >/dev/null || { echo "toolchains: no apt-get; install $pkgs with your package manager" >&2; exit 1; }
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $pkgs >/dev/null
    c_works || { echo "toolchains: clang still cannot build for wasm32-wasi" >&2; exit 1; }
}

[ $# -gt 0 ] || set -- all
for tc in "$@"; do
    case "$tc" in
        python) python_tc ;;
        js) js_tc ;;
        c) c_tc ;;
        all) python_tc; js_tc; c_tc ;;
        *) echo "toolchains: unknown toolchain '$tc' (python, js, c, all)" >&2; exit 2 ;;
    esac
done
