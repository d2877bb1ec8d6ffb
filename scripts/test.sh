#!/usr/bin/env bash
# Runs every test: sets the machine up, checks formatting, the book (docs/), the lints (host and Hexagon) and rustdoc,
# builds the Hexagon and aarch64 artifacts, runs the Hexagon self-test under qemu-hexagon and the whole cargo test
# suite (the book's tested blocks among it), then holds the device artifacts to their budgets and the benchmarks'
# deterministic figures (sizes, Hexagon packets, host instructions) to the committed baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*" >&2; }

step setup
bash scripts/setup.sh

step "rustfmt --check"
cargo fmt --all -- --check
# fuzz/ is its own workspace (outside the project's): its targets are checked file by file.
rustfmt --check --edition 2021 fuzz/fuzz_targets/*.rs

step "book (mdbook, warnings fatal; links, blocks, --help, tables)"
bash scripts/book.sh
cargo test -q -p lpai-direct --test book source_

step "clippy (host, -D warnings)"
cargo clippy -q --workspace --all-targets -- -D warnings
cargo clippy -q -p lpai-direct-idl --features reader --all-targets -- -D warnings

step "clippy (Hexagon: the QuRT skel, the qemu platform alone, the qemu self-test build, the embedding API; -D warnings)"
for features in "" "--features=linux-user" "--features=linux-user,self-test"; do
  CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-direct-dsp --lib $features \
    --target hexagon-unknown-linux-musl -Z build-std=core -Z build-std-features=compiler-builtins-mem -- -D warnings
done
# The qemu self-test program (tests/dsp-selftest: dsp's self-tests with the contract model registered).
CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-dsp-selftest \
  --target hexagon-unknown-linux-musl -Z build-std=core -Z build-std-features=compiler-builtins-mem -- -D warnings
# The embedding API's C library (device build, and the qemu-example build), the qemu programs' library over it
# (tests/embed-qemu, with the contract model) and its Rust example.
for features in "" "--features=qemu-example"; do
  CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-direct-embed $features \
    --target hexagon-unknown-linux-musl -Z build-std=core -Z build-std-features=compiler-builtins-mem -- -D warnings
done
CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-embed-qemu \
  --target hexagon-unknown-linux-musl -Z build-std=core -Z build-std-features=compiler-builtins-mem -- -D warnings
# The audio module's C shell (AudioReach CAPI).
CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-direct-capi --lib --target hexagon-unknown-linux-musl \
  -Z build-std=core -Z build-std-features=compiler-builtins-mem -- -D warnings
CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-direct-dsp --example sensor-loop \
  --features linux-user --target hexagon-unknown-linux-musl -Z build-std=core \
  -Z build-std-features=compiler-builtins-mem -- -D warnings
CARGO_PROFILE_DEV_PANIC=abort CARGO_TARGET_DIR=target/hexagon-clippy cargo clippy -q -p lpai-pd-shell -p lpai-contract-model -p lpai-contract-lpai \
  -p lpai-contract-system --target hexagon-unknown-linux-musl -Z build-std=core \
  -Z build-std-features=compiler-builtins-mem -- -D warnings

step "rustdoc (-D warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --no-deps

step "build the Hexagon skel, the self-test executable and the virtual aDSP"
bash scripts/build-hexagon.sh

step "build the host skel (cdylib), the embedding API's host static library, the audio module (cdylib), the host contract model and its test op package, the aarch64 HLOS side and the virtual device"
cargo build -q -p lpai-direct-dsp -p lpai-direct-embed -p lpai-direct-capi --release
cargo build -q --release -p lpai-contract-lpai -p lpai-contract-system -p lpai-test-op-package
QNN_TARGET_ARCH=aarch64-oe-linux-gcc11.2 bash scripts/build-hlos.sh >/dev/null
# The virtual device's parts (tests/virtual_device.rs): its aarch64 libadsprpc.so, the aarch64 contract system
# library the stage puts on the HLOS side, and its host tools (the seccomp wrapper, the signing tool).
cargo build -q --release --target aarch64-unknown-linux-gnu -p lpai-contract-system -p lpai-virtual-device --lib
cargo build -q --release -p lpai-virtual-device --bins

step "Hexagon self-test under qemu-hexagon"
qemu-hexagon -cpu v73 target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest

step "Miri (Stacked Borrows) on the codec, the shared core, the dsp self-tests and the embedding API's C functions"
# Three dsp self-tests reach dlopen on purpose (a missing library), which Miri cannot call; they run natively and on
# Hexagon above and below, and so do the fuzz corpus replays (hundreds of call scripts: too slow under Miri).
export MIRIFLAGS=-Zmiri-disable-isolation
cargo miri test -q -p lpai-direct-idl 2>&1
cargo miri test -q -p lpai-direct --lib 2>&1
cargo miri test -q -p lpai-direct-dsp -- --skip a_well_formed_call --skip malformed_calls --skip corpus_replays \
  --skip failed_library_names_a_library_that_does_not_load 2>&1
cargo miri test -q -p lpai-direct-embed 2>&1
unset MIRIFLAGS

step "cargo test (host)"
# The full-tmpfs cases of tests/malformed_files.rs need a tmpfs in a user namespace of their own: where this
# machine allows it they must run (the test fails instead of skipping); where it does not, say so here.
if unshare --user --map-root-user --mount true 2>/dev/null; then
  export LPAI_REQUIRE_USER_NAMESPACES=1
else
  echo "skipped: needs unprivileged user namespaces (unshare --user --mount): the 3 full-tmpfs cases of tests/malformed_files.rs"
fi
cargo build -q -p lpai-net-run -p fake-adsprpc
cargo build -q --release -p lpai-direct-stub -p lpai-net-run
cargo test -q -p lpai-direct-idl --features reader 2>&1
cargo test -q --workspace 2>&1

step "benchmark check: the budgets (tests/bench/budgets.json), then the deterministic figures against tests/bench/baseline.json (within 5% each, either way)"
BENCH_SKIP_BUILD=1 bash scripts/bench.sh --deterministic --check
