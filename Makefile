# corral's everyday commands. `make test` is what CI runs.
CARGO ?= cargo

.PHONY: build test test-host test-plugins lint lint-fmt lint-host lint-plugins lint-test-plugins bench plugins outline examples install clean

## Build the release binary (the built-in plugins are compiled and embedded by host/build.rs).
build:
	$(CARGO) build --release

## The whole test suite: host unit tests, end-to-end suites, and the plugins' logic tests.
test: test-host test-plugins

# In the release profile: after the README's first command (`cargo run --release`) every
# dependency, corral's library and its binary are already built, so only the test harnesses
# compile (tests/build.rs checks that nothing is compiled a second time). The tests also run
# the binary the person runs.
test-host:
	$(CARGO) test --workspace --release

test-plugins:
	$(CARGO) test --manifest-path plugins/Cargo.toml --workspace
	$(CARGO) test --manifest-path plugins/outline/Cargo.toml

## Formatting and lints for all three workspaces.
lint: lint-fmt lint-host lint-plugins lint-test-plugins

lint-fmt:
	$(CARGO) fmt --check
	$(CARGO) fmt --manifest-path plugins/Cargo.toml --all --check
	$(CARGO) fmt --manifest-path tests/plugins/Cargo.toml --all --check
	$(CARGO) fmt --manifest-path plugins/outline/Cargo.toml --check

# The host is linted in the release profile: its build script (wasmtime, Cranelift and the
# precompiled built-ins) is then the very one `cargo build --release` and `make test` use, so
# the wasmtime stack is compiled once instead of once more in the dev profile.
lint-host:
	$(CARGO) clippy --release --all-targets -- -D warnings

lint-plugins:
	$(CARGO) clippy --manifest-path plugins/Cargo.toml --all-targets -- -D warnings
	$(CARGO) clippy --manifest-path plugins/outline/Cargo.toml --all-targets -- -D warnings

# tests/plugins in the release profile and target folder the end-to-end suites build it in, so
# its proc macros (the wit-bindgen stack) are compiled once for both.
lint-test-plugins:
	$(CARGO) clippy --manifest-path tests/plugins/Cargo.toml --release --target wasm32-wasip2 \
		--target-dir target/plugins-wasm -- -D warnings

## Benchmarks (prints a table; see BENCHMARKS.md). Installs ripgrep for the grep comparison.
bench:
	@command -v rg >/dev/null || (command -v apt-get >/dev/null && (apt-get update -qq && apt-get install -y -qq ripgrep) || echo "ripgrep not installed: the rg column will be empty")
	$(CARGO) build --release
	$(CARGO) bench --bench runtime

## The built-in plugins alone, as .wasm files in plugins/target.
plugins:
	$(CARGO) build --release --target wasm32-wasip2 --manifest-path plugins/Cargo.toml

## The outline built-in (tree-sitter grammars in C), rebuilt into plugins/outline/prebuilt/
## after a change to its sources, the SDK, the contract or the WIT (installs clang/wasi-libc).
outline:
	plugins/outline/build.sh

## The example plugins in Rust, Python, JavaScript and C, as .wasm files in target/examples
## (installs componentize-py, componentize-js and clang/wasi-libc on first use).
examples: build
	CORRAL=target/release/corral plugins/examples/build.sh all

install:
	$(CARGO) install --path host

clean:
	$(CARGO) clean
	$(CARGO) clean --manifest-path plugins/Cargo.toml
