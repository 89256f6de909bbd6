#!/bin/sh
# Regenerates host/startup-order.txt, the order in which the linker lays out the functions a
# start and the bench's scripted session run (see docs/cold-start-and-plugin-identity.md).
# Needs perf. Run after large changes to what a start does, or after a Rust or dependency
# update (symbol names carry hashes; a stale name is skipped, not an error).
set -eu
cd "$(dirname "$0")/.."
bin="$PWD/target/release/corral"
cargo build --release
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
# perf follows the bench into every corral it starts; only those samples are kept. A start
# that only prints help is short, so it is run more often to be sampled as well.
perf record -q -F 20000 --call-graph dwarf,32768 -o "$data/perf.data" -- sh -c "
    cargo bench --bench runtime -- agent tools >/dev/null
    for i in \$(seq 100); do '$bin' --help; '$bin' run --help; done >/dev/null"
{
    echo "# The functions of corral that a start and the bench's scripted session run, the most"
    echo "# often sampled first (host/startup-order.sh; lld's --symbol-ordering-file via build.rs)."
    perf script --no-inline --no-demangle -i "$data/perf.data" -F ip,sym,dso 2>/dev/null |
        awk -v bin="($bin)" '$3 == bin && $2 !~ /BUILTINS/ && $2 != "[unknown]" {print $2}' |
        sort | uniq -c | sort -k1,1nr -k2 | awk '{print $2}'
} >host/startup-order.txt.new
mv host/startup-order.txt.new host/startup-order.txt
wc -l host/startup-order.txt
