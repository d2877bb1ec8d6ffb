#!/usr/bin/env bash
# Builds the Hexagon artifacts:
#   target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so  the skel for the aDSP (HEX_VER, default 81)
#   target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest  the qemu-hexagon self-test (v73)
#   target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-bench     packet-count benchmark (v73)
#   target/hexagon-panic-probe/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so  the skel's build plus one
#       reachable panic (feature panic-probe), left as linked: tests/stack_and_panic.rs expects lpai-skel-fixup to
#       refuse it
#   target/hexagon-stack/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so  the skel's build plus
#       -Z emit-stack-sizes (the same code, with a .stack_sizes section), whose entry points' worst-case stack
#       depth lpai-stack-check prints; tests/stack_and_panic.rs holds them to the 8192-byte budget
# The skel is linked with linker/skel.ld and linker/skel.ver, then fixed up and checked by lpai-skel-fixup.
set -euo pipefail
cd "$(dirname "$0")/.."
HEX_VER=${HEX_VER:-81}
case "$HEX_VER" in
  60|62|65|66|67|68|69|71|73|75|79|81) ;;
  *) echo "build-hexagon: HEX_VER=$HEX_VER is not a Hexagon version LLVM knows (60..81)" >&2; exit 2 ;;
esac
# The newest CPU the installed qemu-hexagon emulates (qemu-user 10 from bookworm-backports: v73).
SELFTEST_HEX_VER=73
target=hexagon-unknown-linux-musl
build_std=(-Z build-std=core -Z build-std-features=compiler-builtins-mem --target "$target" --release)
encode() { local IFS=$'\x1f'; echo "$*"; }

skel_flags=(-C linker-flavor=ld.lld -C "target-cpu=hexagonv$HEX_VER" -C target-feature=-small-data
  -C relocation-model=pic -C "link-arg=-T$PWD/linker/skel.ld" -C "link-arg=--version-script=$PWD/linker/skel.ver"
  -C link-arg=-znow)
CARGO_ENCODED_RUSTFLAGS=$(encode "${skel_flags[@]}") cargo build -q -p lpai-direct-dsp --lib "${build_std[@]}"
skel=target/$target/release/liblpai_direct_skel.so
cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$skel" linker/dsp-runtime-symbols.txt

selftest_flags=(-C linker-flavor=ld.lld -C "target-cpu=hexagonv$SELFTEST_HEX_VER" -C relocation-model=static
  -C target-feature=+crt-static -C link-self-contained=no)
CARGO_TARGET_DIR=target/hexagon-selftest CARGO_ENCODED_RUSTFLAGS=$(encode "${selftest_flags[@]}") \
  cargo build -q -p lpai-direct-dsp --bin lpai-dsp-selftest --bin lpai-dsp-bench --features linux-user,self-test "${build_std[@]}"

CARGO_TARGET_DIR=target/hexagon-panic-probe CARGO_ENCODED_RUSTFLAGS=$(encode "${skel_flags[@]}") \
  cargo build -q -p lpai-direct-dsp --lib --features panic-probe "${build_std[@]}"

CARGO_TARGET_DIR=target/hexagon-stack CARGO_ENCODED_RUSTFLAGS=$(encode "${skel_flags[@]}" -Z emit-stack-sizes) \
  cargo build -q -p lpai-direct-dsp --lib "${build_std[@]}"
# Prints the figures even when over the limit; the test enforces it.
cargo run -q --release -p lpai-skel-fixup --bin lpai-stack-check -- \
  "target/hexagon-stack/$target/release/liblpai_direct_skel.so" --limit 8192 --report-only --shipped "$skel"
