#!/usr/bin/env bash
# Builds the `outline` component for wasm32-wasip2 into prebuilt/outline.wasm, with
# prebuilt/outline.sources: the digest of every source it was built from (this folder's
# manifest, lock and code, the guest SDK, the contract crate, the WIT) and the toolchain.
# host/build.rs embeds the prebuilt file; `build.sh --check` (run by the test suite) fails
# when the sources no longer match the digest, i.e. when someone changed them without
# running `make outline`.
#
# Why prebuilt: tree-sitter and its grammars are C, and compiling C for wasm32 needs clang and
# a WASI libc, which `cargo build` of corral should not ask of anyone. This script installs
# them (Debian packages, through plugins/examples/toolchains.sh c) and paths are remapped, so
# a rebuild on the same toolchain gives the same bytes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="$here/prebuilt"

# The sources, as paths relative to the repository, sorted; the digest covers names and bytes.
sources() {
    (cd "$repo" && find plugins/outline/Cargo.toml plugins/outline/Cargo.lock plugins/outline/build.sh \
        plugins/outline/src plugins/sdk/Cargo.toml plugins/sdk/src plugins/Cargo.toml \
        contract/Cargo.toml contract/src wit/0.1 -type f | LC_ALL=C sort)
}
digest() {
    (cd "$repo" && sources | while read -r f; do printf '%s\n' "$f"; sha256sum < "$f"; done | sha256sum | cut -d' ' -f1)
}

if [ "${1:-}" = "--check" ]; then
    want="$(sed -n 's/^sources: //p' "$out/outline.sources" 2>/dev/null || true)"
    have="$(digest)"
    wasm_want="$(sed -n 's/^wasm: //p' "$out/outline.sources" 2>/dev/null || true)"
    wasm_have="$(sha256sum < "$out/outline.wasm" 2>/dev/null | cut -d' ' -f1 || true)"
    if [ "$want" != "$have" ]; then
        echo "plugins/outline/prebuilt/outline.wasm was built from other sources than these (digest $have, built from ${want:-nothing})." >&2
        echo "Rebuild it with: make outline (then commit plugins/outline/prebuilt/)" >&2
        exit 1
    fi
    if [ "$wasm_want" != "$wasm_have" ]; then
        echo "plugins/outline/prebuilt/outline.wasm is not the file its build recorded (sha256 $wasm_have, recorded $wasm_want)." >&2
        echo "Rebuild it with: make outline (then commit plugins/outline/prebuilt/)" >&2
        exit 1
    fi
    exit 0
fi

"$repo/plugins/examples/toolchains.sh" c
rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
export CC_wasm32_wasip2=clang AR_wasm32_wasip2=llvm-ar
command -v llvm-ar >/dev/null || export AR_wasm32_wasip2=ar
# Debian's wasi-libc headers; build paths mapped to fixed names so the bytes do not depend on
# where the repository or the cargo registry are.
export CFLAGS_wasm32_wasip2="--sysroot=/usr -isystem /usr/include/wasm32-wasi \
-ffile-prefix-map=$cargo_home=/cargo -ffile-prefix-map=$repo=/corral"
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$cargo_home=/cargo"$'\x1f'"--remap-path-prefix=$repo=/corral"
unset RUSTFLAGS CARGO_BUILD_TARGET CARGO_TARGET_DIR
cargo build --locked --release --target wasm32-wasip2 --manifest-path "$here/Cargo.toml" \
    --target-dir "$here/target"
mkdir -p "$out"
cp "$here/target/wasm32-wasip2/release/outline.wasm" "$out/outline.wasm.tmp"
mv "$out/outline.wasm.tmp" "$out/outline.wasm"
{
    echo "sources: $(digest)"
    echo "wasm: $(sha256sum < "$out/outline.wasm" | cut -d' ' -f1)"
    echo "rustc: $(rustc --version)"
    echo "clang: $(clang --version | head -1)"
} > "$out/outline.sources.tmp"
mv "$out/outline.sources.tmp" "$out/outline.sources"
echo "built $out/outline.wasm ($(wc -c < "$out/outline.wasm") bytes)" >&2
