#!/usr/bin/env bash
# Builds the Hexagon artifacts:
#   target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so  the skel for the aDSP (HEX_VER, default 81)
#   target/hexagon-capi/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so  the audio module (AudioReach CAPI)
#       for the aDSP (HEX_VER), exporting capi_lpai_direct_get_static_properties and capi_lpai_direct_init alone
#   target/hexagon-capi-stack/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so  the module's build plus
#       -Z emit-stack-sizes, whose worst-case stack depth (entry points and function table) lpai-stack-check prints
#   target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest  the qemu-hexagon self-test (v73,
#       tests/dsp-selftest: dsp's self-tests, with the contract model of libQnnLpai registered as built-in libraries)
#   target/hexagon-panic-probe/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so  the skel's build plus one
#       reachable panic (feature panic-probe), left as linked: tests/stack_and_panic.rs expects lpai-skel-fixup to
#       refuse it
#   target/hexagon-stack/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so  the skel's build plus
#       -Z emit-stack-sizes (the same code, with a .stack_sizes section), whose entry points' worst-case stack
#       depth lpai-stack-check prints; tests/stack_and_panic.rs holds them to the 8192-byte budget
#   target/virtual-adsp/  the virtual aDSP qemu-hexagon runs (all v73, the newest CPU it emulates):
#       liblpai_direct_skel.so  the skel (the shipped file itself when HEX_VER <= 73, else a v73 build of the same
#                               sources, linker script and fixup)
#       liblpai_direct_capi.so  the audio module, likewise (run by `lpai-pd-shell --capi`)
#       lpai-pd-shell           the PD shell that loads it with its own ELF loader (tests/pd-shell)
#       libQnnLpaiContract.so, libQnnSystemContract.so  the contract model of libQnnLpai (tests/contract-model)
#       liblpai_test_op_package.so  the test op package (tests/op-package: lpai.test::TestGain), test-only
#       older-interface/liblpai_direct_skel.so  a skel speaking interface 1.0 (feature older-interface), test-only
#   target/hexagon-embed/  the embedding API's qemu programs' parts (v73, static): liblpai_embed_qemu.a
#       (tests/embed-qemu: the C library with the Linux user-mode platform, feature qemu-example, plus the contract
#       model of libQnnLpai and lpai_embed_qemu_register_contract_model), which tests/embed_api.rs links
#       dsp/examples/c/sensor_loop.c against, and examples/sensor-loop, the Rust sensor-style loop (which registers
#       the contract model itself)
#   target/hexagon-embed-device/  liblpai_direct_embed.a for a device (QuRT platform, HEX_VER), and
#       liblpai_direct_embed_check.so: that library linked as a PD library keeping only what the
#       lpai_direct_embed_* functions reach, checked by lpai-skel-fixup (no reachable panic, PD services only)
#   target/hexagon-embed-stack/liblpai_direct_embed_check.so  the same check library from a build plus
#       -Z emit-stack-sizes, whose worst-case stack depth from its lpai_direct_embed_* functions lpai-stack-check
#       prints (scripts/bench.sh: embed_stack_worst_bytes)
# The skel is linked with linker/skel.ld, linker/skel.ver and linker/compiler-helpers.ld (which keeps compiler-builtins'
# Hexagon assembly, every double-precision helper with it, out of the link), then fixed up and checked by
# lpai-skel-fixup. Every PD library below is linked the same way.
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
# PD libraries (the skel, the audio module, the embedding library, the contract model, the op package) take memcpy,
# memmove, memset, memcmp and strlen from the PD's C library, as they take malloc (linker/dsp-runtime-symbols.txt),
# instead of carrying compiler-builtins' copies (about 1.5 KB each). The static qemu programs (the PD shell, the
# self-test, the embedding API's qemu programs) have no C library under them and carry compiler-builtins' own.
library_std=(-Z build-std=core --target "$target" --release)
program_std=(-Z build-std=core -Z build-std-features=compiler-builtins-mem --target "$target" --release)
encode() { local IFS=$'\x1f'; echo "$*"; }

skel_flags=(-C linker-flavor=ld.lld -C "target-cpu=hexagonv$HEX_VER" -C target-feature=-small-data
  -C relocation-model=pic -C "link-arg=-T$PWD/linker/skel.ld" -C "link-arg=--version-script=$PWD/linker/skel.ver"
  -C link-arg=-znow -C force-unwind-tables=no -C "link-arg=$PWD/linker/compiler-helpers.ld"
  -C "link-arg=$PWD/linker/compiler-helpers-f32.ld")
CARGO_ENCODED_RUSTFLAGS=$(encode "${skel_flags[@]}") cargo build -q -p lpai-direct-dsp --lib "${library_std[@]}"
skel=target/$target/release/liblpai_direct_skel.so
cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$skel" linker/dsp-runtime-symbols.txt

# The audio module (AudioReach CAPI, dsp/capi) for the aDSP: the skel's flags and linker script, exporting its two
# entry points alone (linker/capi.ver), without the skel's entry points (the dsp crate's `skel` feature off), then
# the same post-link fixup and checks as the skel (no reachable panic, PD services only).
capi_flags=("${skel_flags[@]}")
capi_flags[11]="link-arg=--version-script=$PWD/linker/capi.ver"
# The module divides 64-bit numbers (its votes, its sample clock's rare long products): linker/compiler-helpers-u64.ld.
capi_flags+=(-C "link-arg=$PWD/linker/compiler-helpers-u64.ld")
CARGO_TARGET_DIR=target/hexagon-capi CARGO_ENCODED_RUSTFLAGS=$(encode "${capi_flags[@]}") \
  cargo build -q -p lpai-direct-capi --lib "${library_std[@]}"
capi=target/hexagon-capi/$target/release/liblpai_direct_capi.so
cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$capi" linker/dsp-runtime-symbols.txt \
  --exports capi_lpai_direct_

selftest_flags=(-C linker-flavor=ld.lld -C "target-cpu=hexagonv$SELFTEST_HEX_VER" -C relocation-model=static
  -C target-feature=+crt-static -C link-self-contained=no)

# The virtual aDSP (target/virtual-adsp/): the skel qemu-hexagon can run, the PD shell that loads it, and the
# contract model of libQnnLpai with its system library. qemu-hexagon emulates up to v73: with HEX_VER <= 73 the
# shipped skel itself is used; otherwise a second build of the same sources, linker script and fixup for v73.
virtual=target/virtual-adsp
mkdir -p "$virtual"
if [ "$HEX_VER" -le "$SELFTEST_HEX_VER" ]; then
  virtual_skel=$skel
else
  v73_flags=("${skel_flags[@]}")
  v73_flags[3]="target-cpu=hexagonv$SELFTEST_HEX_VER"
  CARGO_TARGET_DIR=target/hexagon-v73 CARGO_ENCODED_RUSTFLAGS=$(encode "${v73_flags[@]}") \
    cargo build -q -p lpai-direct-dsp --lib "${library_std[@]}"
  virtual_skel=target/hexagon-v73/$target/release/liblpai_direct_skel.so
  cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$virtual_skel" linker/dsp-runtime-symbols.txt
fi
cp "$virtual_skel" "$virtual/liblpai_direct_skel.so.partial"
mv "$virtual/liblpai_direct_skel.so.partial" "$virtual/liblpai_direct_skel.so"
# Test-only: a v73 skel speaking interface 1.0 (the dsp crate's `older-interface` feature), as a skel of an older
# release answers, for tests/virtual_device.rs's older skel found first on the DSP's library path.
older_flags=("${skel_flags[@]}")
older_flags[3]="target-cpu=hexagonv$SELFTEST_HEX_VER"
CARGO_TARGET_DIR=target/hexagon-older-interface CARGO_ENCODED_RUSTFLAGS=$(encode "${older_flags[@]}") \
  cargo build -q -p lpai-direct-dsp --lib --features older-interface "${library_std[@]}"
mkdir -p "$virtual/older-interface"
cp "target/hexagon-older-interface/$target/release/liblpai_direct_skel.so" \
  "$virtual/older-interface/liblpai_direct_skel.so.partial"
cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- \
  "$virtual/older-interface/liblpai_direct_skel.so.partial" linker/dsp-runtime-symbols.txt
mv "$virtual/older-interface/liblpai_direct_skel.so.partial" "$virtual/older-interface/liblpai_direct_skel.so"
# The audio module the same way: the shipped file itself when HEX_VER <= 73, else a v73 build of it.
if [ "$HEX_VER" -le "$SELFTEST_HEX_VER" ]; then
  virtual_capi=$capi
else
  capi_v73_flags=("${capi_flags[@]}")
  capi_v73_flags[3]="target-cpu=hexagonv$SELFTEST_HEX_VER"
  CARGO_TARGET_DIR=target/hexagon-capi-v73 CARGO_ENCODED_RUSTFLAGS=$(encode "${capi_v73_flags[@]}") \
    cargo build -q -p lpai-direct-capi --lib "${library_std[@]}"
  virtual_capi=target/hexagon-capi-v73/$target/release/liblpai_direct_capi.so
  cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$virtual_capi" linker/dsp-runtime-symbols.txt \
    --exports capi_lpai_direct_
fi
cp "$virtual_capi" "$virtual/liblpai_direct_capi.so.partial"
mv "$virtual/liblpai_direct_capi.so.partial" "$virtual/liblpai_direct_capi.so"
# The contract model of libQnnLpai and its system library: PD libraries laid out like the skel, exporting only
# their QNN entry points; the same post-link fixup and checks (no panic, PD services only), where the PD services
# are the runtime's and the virtual hardware's (linker/virtual-hardware-symbols.txt: the model asks it for eNPU cores).
model_flags=("${skel_flags[@]}")
model_flags[3]="target-cpu=hexagonv$SELFTEST_HEX_VER"
model_flags[11]="link-arg=--version-script=$PWD/linker/contract-model.ver"
CARGO_TARGET_DIR=target/hexagon-contract CARGO_ENCODED_RUSTFLAGS=$(encode "${model_flags[@]}") \
  cargo build -q -p lpai-contract-lpai -p lpai-contract-system --lib "${library_std[@]}"
for library in libQnnLpaiContract.so libQnnSystemContract.so; do
  cp "target/hexagon-contract/$target/release/$library" "$virtual/$library.partial"
  cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$virtual/$library.partial" \
    linker/dsp-runtime-symbols.txt,linker/virtual-hardware-symbols.txt --exports Qnn
  mv "$virtual/$library.partial" "$virtual/$library"
done
# The test op package (tests/op-package, test-only: package lpai.test, op TestGain) as a PD library beside them, so
# the PD's dlopen finds it by its bare name; built and checked like the contract model (exports LpaiTestOpPackage_*).
package_flags=("${model_flags[@]}")
package_flags[11]="link-arg=--version-script=$PWD/tests/op-package/exports.ver"
CARGO_TARGET_DIR=target/hexagon-op-package CARGO_ENCODED_RUSTFLAGS=$(encode "${package_flags[@]}") \
  cargo build -q -p lpai-test-op-package --lib "${library_std[@]}"
cp "target/hexagon-op-package/$target/release/liblpai_test_op_package.so" "$virtual/liblpai_test_op_package.so.partial"
cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$virtual/liblpai_test_op_package.so.partial" \
  linker/dsp-runtime-symbols.txt --exports LpaiTestOpPackage_
mv "$virtual/liblpai_test_op_package.so.partial" "$virtual/liblpai_test_op_package.so"
# The PD shell: a static Hexagon program (the Linux-user platform), v73 like everything qemu runs.
CARGO_TARGET_DIR=target/hexagon-shell CARGO_ENCODED_RUSTFLAGS=$(encode "${selftest_flags[@]}") \
  cargo build -q -p lpai-pd-shell "${program_std[@]}"
cp "target/hexagon-shell/$target/release/lpai-pd-shell" "$virtual/lpai-pd-shell"

CARGO_TARGET_DIR=target/hexagon-selftest CARGO_ENCODED_RUSTFLAGS=$(encode "${selftest_flags[@]}") \
  cargo build -q -p lpai-dsp-selftest --bin lpai-dsp-selftest "${program_std[@]}"

# The embedding API: its C library with the qemu platform plus the contract model and its registration
# (tests/embed-qemu), and the Rust example, for the qemu-hexagon programs of tests/embed_api.rs.
CARGO_TARGET_DIR=target/hexagon-embed CARGO_ENCODED_RUSTFLAGS=$(encode "${selftest_flags[@]}") \
  cargo build -q -p lpai-embed-qemu --lib "${program_std[@]}"
CARGO_TARGET_DIR=target/hexagon-embed CARGO_ENCODED_RUSTFLAGS=$(encode "${selftest_flags[@]}") \
  cargo build -q -p lpai-direct-dsp --example sensor-loop --features linux-user "${program_std[@]}"
# The device build of the C library (as firmware links it), and the proof that no panic is reachable from its
# functions: linked as a PD library whose only roots are the lpai_direct_embed_* exports (linker/embed.ver), it
# passes the skel's post-link checks.
embed_device=target/hexagon-embed-device
embed_flags=(-C "target-cpu=hexagonv$HEX_VER" -C target-feature=-small-data -C relocation-model=pic
  -C force-unwind-tables=no)
CARGO_TARGET_DIR=$embed_device CARGO_ENCODED_RUSTFLAGS=$(encode "${embed_flags[@]}") \
  cargo build -q -p lpai-direct-embed "${library_std[@]}"
# The check library as firmware's link would keep it: ARCHIVE linked to OUTPUT with only the exports as roots.
link_embed_check() {
  ld.lld-19 -shared --gc-sections -znow -T linker/skel.ld --version-script linker/embed.ver linker/compiler-helpers.ld \
    --whole-archive "$1" --no-whole-archive -o "$2"
}
link_embed_check "$embed_device/$target/release/liblpai_direct_embed.a" \
  "$embed_device/liblpai_direct_embed_check.so.partial"
cargo run -q --release -p lpai-skel-fixup --bin lpai-skel-fixup -- "$embed_device/liblpai_direct_embed_check.so.partial" \
  linker/dsp-runtime-symbols.txt --exports lpai_direct_embed_
mv "$embed_device/liblpai_direct_embed_check.so.partial" "$embed_device/liblpai_direct_embed_check.so"

CARGO_TARGET_DIR=target/hexagon-panic-probe CARGO_ENCODED_RUSTFLAGS=$(encode "${skel_flags[@]}") \
  cargo build -q -p lpai-direct-dsp --lib --features panic-probe "${library_std[@]}"

CARGO_TARGET_DIR=target/hexagon-stack CARGO_ENCODED_RUSTFLAGS=$(encode "${skel_flags[@]}" -Z emit-stack-sizes) \
  cargo build -q -p lpai-direct-dsp --lib "${library_std[@]}"
# Prints the figures even when over the limit; the test enforces it.
cargo run -q --release -p lpai-skel-fixup --bin lpai-stack-check -- \
  "target/hexagon-stack/$target/release/liblpai_direct_skel.so" --limit 8192 --report-only --shipped "$skel"
# The audio module's stack variant: its entry points and the six functions of its table, whose worst case
# (plus the allowance for foreign code) is its STACK_SIZE; tests/stack_and_panic.rs holds the two together.
CARGO_TARGET_DIR=target/hexagon-capi-stack CARGO_ENCODED_RUSTFLAGS=$(encode "${capi_flags[@]}" -Z emit-stack-sizes) \
  cargo build -q -p lpai-direct-capi --lib "${library_std[@]}"
cargo run -q --release -p lpai-skel-fixup --bin lpai-stack-check -- \
  "target/hexagon-capi-stack/$target/release/liblpai_direct_capi.so" --capi-module --limit 16384 --report-only \
  --shipped "$capi"
# The embedding library's stack variant: the same device build plus -Z emit-stack-sizes, linked as its check
# library is; scripts/bench.sh measures the worst case of its exported functions (the same .text as the shipped one).
embed_stack=target/hexagon-embed-stack
CARGO_TARGET_DIR=$embed_stack CARGO_ENCODED_RUSTFLAGS=$(encode "${embed_flags[@]}" -Z emit-stack-sizes) \
  cargo build -q -p lpai-direct-embed "${library_std[@]}"
link_embed_check "$embed_stack/$target/release/liblpai_direct_embed.a" "$embed_stack/liblpai_direct_embed_check.so"
