#!/bin/sh
# Regenerates host/startup-order.txt, the order in which the linker lays out the functions a
# start and the bench's scripted session run (see docs/cold-start-and-plugin-identity.md).
# Needs perf, valgrind and python3. Run after large changes to what a start does, or after a
# Rust or dependency update (symbol names carry hashes; a stale name is skipped, not an error).
#
# Two sources, merged by host/startup-order.py:
# - valgrind's callgrind lists every function a run executes, however briefly: `--help`,
#   `run --help`, `tools` (empty and filled compile cache) and a scripted session (read_file,
#   grep, edit_file, answer) against a local model server, cold and warm. A function run
#   once still costs a page fault and the 64 KB mapped around it when it lies alone.
# - perf samples the bench's agent and tools sections: what runs where valgrind cannot follow
#   (wasmtime's pooling allocator, whose reservation valgrind refuses), and how hot each is.
set -eu
cd "$(dirname "$0")/.."
bin="$PWD/target/release/corral"
cargo build --release
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

# perf follows the bench into every corral it starts; only those samples are kept.
perf record -q -F 20000 --call-graph dwarf,32768 -o "$data/perf.data" -- sh -c "
    cargo bench --bench runtime -- agent tools >/dev/null
    for i in \$(seq 100); do '$bin' --help; '$bin' run --help; done >/dev/null"
perf script --no-inline --no-demangle -i "$data/perf.data" -F ip,sym,dso 2>/dev/null |
    awk -v bin="($bin)" '$3 == bin && $2 !~ /BUILTINS/ && $2 != "[unknown]" {print $2}' |
    sort | uniq -c | sort -k1,1nr -k2 | awk '{print $2}' >"$data/sampled.txt"

# One run under callgrind: $1 names it, the rest is the command (run in $data/ws).
grind() {
    name=$1
    shift
    (cd "$data/ws" && env -i PATH="$PATH" HOME="$data/home" CORRAL_CONFIG_DIR="$data/cfg" \
        CORRAL_CACHE_DIR="$cache" valgrind -q --tool=callgrind --demangle=no \
        --callgrind-out-file="$data/$name.cg" "$@" >"$data/$name.out" 2>&1) ||
        { cat "$data/$name.out"; exit 1; }
}
greet() {
    printf '/// Greets someone.\npub fn greet(name: &str) -> String {\n    format!("Hello, {name}!")\n}\n' \
        >"$data/ws/greet.rs"
}
mkdir -p "$data/ws/.git" "$data/home" "$data/cfg"
greet
cache="$data/cache"
grind 1-help "$bin" --help
grind 2-run-help "$bin" run --help
grind 3-tools-cold "$bin" tools
grind 4-tools-warm "$bin" tools
for run in 5-session-cold 6-session-warm; do
    # The cold session with a compile cache of its own, the warm one with the filled one.
    [ "$run" = 5-session-cold ] && cache="$data/cache-session" || cache="$data/cache"
    python3 host/startup-order.py serve "$data/port" &
    server=$!
    while [ ! -s "$data/port" ]; do
        kill -0 "$server" 2>/dev/null || { echo "the scripted model server did not start" >&2; exit 1; }
        sleep 0.05
    done
    grind "$run" "$bin" --base-url "http://127.0.0.1:$(cat "$data/port")/v1" --model m "replace Hello"
    wait "$server"
    rm -f "$data/port"
    grep -q Howdy "$data/ws/greet.rs" || { echo "the scripted session did not edit greet.rs" >&2; exit 1; }
    greet
done

python3 host/startup-order.py merge "$bin" "$data/sampled.txt" "$data"/*.cg >host/startup-order.txt.new
mv host/startup-order.txt.new host/startup-order.txt
wc -l host/startup-order.txt
