#!/usr/bin/env bash
# Installs the official MCP Python SDK (PyPI `mcp`, every package pinned in mcp-python.lock)
# into a venv in the per-user cache ($CORRAL_TOOLCHAINS, default
# ${XDG_CACHE_HOME:-~/.cache}/corral/toolchains/mcp-python), once per user and per lock, and
# prints the venv's python. The end-to-end suite tests/mcp_serve.rs drives corral with it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache_home="${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}"
T="${CORRAL_TOOLCHAINS:-${cache_home:+$cache_home/corral/toolchains}}"
T="${T:-$repo/target/toolchains}"
dir="$T/mcp-python"
lock="$here/mcp-python.lock"
want="$(sha256sum "$lock" | cut -c1-16)"
mkdir -p "$T"
# Two checkouts (or two test binaries) installing at once wait for each other.
exec 9>"$T/.mcp-python.lock"
flock 9
if ! { [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$want" ]; }; then
    echo "mcp-python: installing the MCP Python SDK ($(grep '^mcp==' "$lock")) into $dir" >&2
    rm -rf "$dir"
    python3 -m venv "$dir" >&2
    "$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$lock" >&2
    echo "$want" > "$dir/.stamp"
fi
echo "$dir/bin/python"
