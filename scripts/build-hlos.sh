#!/usr/bin/env bash
# Builds the HLOS side (lpai-net-run, the stub library) for QNN_TARGET_ARCH, default aarch64-oe-linux-gcc11.2, and
# the host build of the skel for the same target (liblpai_direct_skel.so beside lpai-net-run: the library the local
# transport loads when FastRPC is not available).
#   aarch64-oe-linux-gcc*  -> aarch64-unknown-linux-gnu (built here with gcc-aarch64-linux-gnu)
#   aarch64-android        -> aarch64-linux-android (needs the Android NDK's clang as linker; not on this machine)
#   aarch64-qnx800         -> aarch64-unknown-nto-qnx800 (needs QNX SDP 8.0's qcc; not on this machine)
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${QNN_TARGET_ARCH:-aarch64-oe-linux-gcc11.2}
case "$arch" in
  aarch64-oe-linux-gcc*) target=aarch64-unknown-linux-gnu ;;
  aarch64-android)
    echo "build-hlos: QNN_TARGET_ARCH=aarch64-android needs the Android NDK (set CARGO_TARGET_AARCH64_LINUX_ANDROID_LINKER to its aarch64-linux-android*-clang and run: rustup target add aarch64-linux-android; cargo build -p lpai-direct-stub -p lpai-net-run -p lpai-direct-dsp --release --target aarch64-linux-android)" >&2
    exit 2 ;;
  aarch64-qnx800)
    echo "build-hlos: QNN_TARGET_ARCH=aarch64-qnx800 needs QNX SDP 8.0 (qcc) and a nightly with -Z build-std for aarch64-unknown-nto-qnx800" >&2
    exit 2 ;;
  *) echo "build-hlos: unknown QNN_TARGET_ARCH=$arch (aarch64-android, aarch64-oe-linux-gcc*, aarch64-qnx800)" >&2; exit 2 ;;
esac
cargo build -q -p lpai-direct-stub -p lpai-net-run -p lpai-direct-dsp --release --target "$target"
echo "target/$target/release/lpai-net-run"
