#!/usr/bin/env bash
# Installs the third-party MCP servers tests/mcp_client.rs runs, from npm with the committed
# lock file (tests/tools/mcp-node/), into a per-user cache shared by every checkout
# ($CORRAL_TOOLCHAINS, default ${XDG_CACHE_HOME:-~/.cache}/corral/toolchains/mcp-node).
# Prints the install folder on stdout; prints nothing else when it is already there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache_home="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
T="${CORRAL_TOOLCHAINS:-${cache_home:+$cache_home/corral/toolchains}}"
T="${T:-$here/../../target/toolchains}"
dir="$T/mcp-node"
want="$(cat "$here/mcp-node/package.json" "$here/mcp-node/package-lock.json" | sha256sum | cut -c1-16)"
if ! [ -f "$dir/.stamp" ] || [ "$(cat "$dir/.stamp")" != "$want" ]; then
    command -v npm >/dev/null || { echo "mcp-node: npm is missing; install Node.js 18 or later" >&2; exit 1; }
    echo "mcp-node: installing the MCP test servers into $dir" >&2
    tmp="$dir.tmp$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    cp "$here/mcp-node/package.json" "$here/mcp-node/package-lock.json" "$tmp/"
    (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$want" > "$tmp/.stamp"
    rm -rf "$dir"
    mv "$tmp" "$dir"
fi
echo "$dir"
