#!/usr/bin/env bash
# Builds the example plugins, each with its own toolchain (installed by toolchains.sh), into
# $CORRAL_EXAMPLES_OUT (default <repo>/target/examples):
#   rust    rust-validate/      -> validate_config.wasm   (cargo, wasm32-wasip2)
#   python  python-code-stats/  -> code_stats.wasm        (componentize-py)
#   js      js-json-query/      -> json_query.wasm        (componentize-js)
#   c       c-checksum/         -> checksum.wasm          (clang + wasi-libc, then corral)
# Usage: build.sh [rust|python|js|c|all]...
# The Python, JS and C builds use corral itself (`plugin wit`, `plugin c-bindings`,
# `plugin componentize`): $CORRAL, else target/release/corral, else corral on PATH.
# Each build also runs the example's native unit tests where it has them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
OUT="${CORRAL_EXAMPLES_OUT:-$repo/target/examples}"
# Shared by every checkout: the installs are keyed by their pins, so a second clone reuses them.
cache_home="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
T="${CORRAL_TOOLCHAINS:-${cache_home:+$cache_home/corral/toolchains}}"
T="${T:-$repo/target/toolchains}"
export CORRAL_TOOLCHAINS="$T"
if [ -z "${CORRAL:-}" ]; then
    if [ -x "$repo/target/release/corral" ]; then CORRAL="$repo/target/release/corral"; else CORRAL=corral; fi
fi
mkdir -p "$OUT"

build_rust() {
    local dir="$here/rust-validate"
    # The host's flags are not for wasm.
    env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_TARGET CARGO_TARGET_DIR="$OUT/rust-target" \
        cargo build --quiet --release --target wasm32-wasip2 --manifest-path "$dir/Cargo.toml"
    env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS CARGO_TARGET_DIR="$OUT/rust-target" \
        cargo test --quiet --manifest-path "$dir/Cargo.toml" >/dev/null
    cp "$OUT/rust-target/wasm32-wasip2/release/validate_config.wasm" "$OUT/validate_config.wasm"
}

build_python() {
    local dir="$here/python-code-stats"
    "$here/toolchains.sh" python
    (cd "$dir" && python3 -B -m unittest -q test_stats 2>/dev/null) || {
        (cd "$dir" && python3 -B -m unittest test_stats)
        return 1
    }
    # code_stats only reads: against the contract narrowed to no capability, it imports no
    # host function that needs a grant, so it loads without one.
    rm -rf "$OUT/py-wit"   # a contract written by another corral may hold other files
    "$CORRAL" plugin wit --capabilities none --out "$OUT/py-wit" >/dev/null
    "$T/python/bin/componentize-py" -d "$OUT/py-wit" -w tool-plugin componentize -p "$dir" app \
        -o "$OUT/code_stats.wasm" >/dev/null
}

build_js() {
    "$here/toolchains.sh" js
    rm -rf "$OUT/js-wit"
    "$CORRAL" plugin wit --js --capabilities none --out "$OUT/js-wit" >/dev/null
    node "$T/js/node_modules/@bytecodealliance/componentize-js/src/cli.js" "$here/js-json-query/query.js" \
        --wit "$OUT/js-wit" --world-name tool-plugin-js --disable http fetch-event \
        -o "$OUT/json_query.wasm" >/dev/null
}

build_c() {
    local dir="$here/c-checksum"
    "$here/toolchains.sh" c
    cc -O2 -o "$OUT/digest_test" "$dir/digest.c" "$dir/digest_test.c" && "$OUT/digest_test" >/dev/null
    "$CORRAL" plugin c-bindings --out "$OUT/c-gen" >/dev/null
    clang --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -Wextra -Wno-unused-parameter -Werror \
        -I"$OUT/c-gen" -o "$OUT/checksum.core.wasm" \
        "$dir/checksum.c" "$dir/digest.c" "$dir/json.c" "$OUT/c-gen/tool_plugin.c" \
        "$OUT/c-gen/tool_plugin_component_type.o"
    "$CORRAL" plugin componentize "$OUT/checksum.core.wasm" -o "$OUT/checksum.wasm" >/dev/null
}

[ $# -gt 0 ] || set -- all
for what in "$@"; do
    case "$what" in
        rust) build_rust ;;
        python) build_python ;;
        js) build_js ;;
        c) build_c ;;
        all) build_rust; build_python; build_js; build_c ;;
        *) echo "build.sh: unknown example '$what' (rust, python, js, c, all)" >&2; exit 2 ;;
    esac
done
