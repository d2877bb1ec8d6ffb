#!/usr/bin/env bash
# Makes a new Debian (bookworm) machine ready to build and test lpai-direct; quick when already done.
# Installs: apt packages (qemu-user 10 from bookworm-backports, clang-19, lld-19, llvm-19, gcc-aarch64-linux-gnu,
# valgrind, proot), the pinned nightly of rust-toolchain.toml with rust-src, clippy, rustfmt, miri and the aarch64 target,
# mdbook 0.5.4 (cargo install, for the book), and the Python venv in .venv with onnxruntime-qnn==2.7.0 and onnx, which
# carries the real libQnnHtp.so and libQnnSystem.so.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'setup: %s\n' "$*" >&2; }

need_apt=()
qemu_ok() { command -v qemu-hexagon >/dev/null && (qemu-hexagon -cpu help 2>&1 || true) | grep -q v73; }
qemu_ok || need_apt+=(qemu-user)
command -v clang-19 >/dev/null || need_apt+=(clang-19)
command -v ld.lld-19 >/dev/null || need_apt+=(lld-19)
command -v llvm-objdump-19 >/dev/null || need_apt+=(llvm-19)
command -v aarch64-linux-gnu-gcc >/dev/null || need_apt+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v file >/dev/null || need_apt+=(file)
command -v readelf >/dev/null || need_apt+=(binutils)
command -v valgrind >/dev/null || need_apt+=(valgrind)
# The virtual device maps the device's paths with it (scripts/virtual-device.sh).
command -v proot >/dev/null || need_apt+=(proot)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ ! -f /etc/apt/sources.list.d/bookworm-backports.sources ]; then
    say "enabling bookworm-backports (a second sources file; debian.sources is left as it is)"
    awk 'BEGIN{RS="";ORS="\n\n"} NR==1{print; exit}' /etc/apt/sources.list.d/debian.sources \
      | sed 's/^Suites:.*/Suites: bookworm-backports/' >/etc/apt/sources.list.d/bookworm-backports.sources
  fi
  say "installing ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq -t bookworm-backports qemu-user >/dev/null
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
  qemu_ok || { say "qemu-hexagon with v73 support is still missing"; exit 1; }
fi

# The pinned nightly of rust-toolchain.toml with its components and the aarch64 target (a few seconds to fetch).
toolchain=$(sed -n 's/^channel = "\(.*\)"/\1/p' rust-toolchain.toml)
installed=$(rustup component list --toolchain "$toolchain" --installed 2>/dev/null || true)
for component in rust-src clippy rustfmt miri rust-std-aarch64-unknown-linux-gnu; do
  if ! grep -q "^$component" <<<"$installed"; then
    say "rustup toolchain install $toolchain (rust-src, clippy, rustfmt, miri, aarch64 target)"
    rustup toolchain install "$toolchain" --profile minimal -c rust-src -c clippy -c rustfmt -c miri \
      -t aarch64-unknown-linux-gnu >/dev/null
    break
  fi
done

# The book's builder (scripts/book.sh), from the Rust package registry.
mdbook_version=0.5.4
if [ "$(mdbook --version 2>/dev/null || true)" != "mdbook v$mdbook_version" ]; then
  say "cargo install mdbook --locked --version $mdbook_version"
  cargo install -q mdbook --locked --version "$mdbook_version"
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import onnxruntime_qnn, onnx' 2>/dev/null; then
  say "creating .venv with onnxruntime-qnn==2.7.0 and onnx"
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check 'onnxruntime-qnn==2.7.0' onnx numpy
fi
qnn_dir=$(.venv/bin/python -c 'import onnxruntime_qnn, os; print(os.path.dirname(onnxruntime_qnn.__file__))')
[ -f "$qnn_dir/libQnnHtp.so" ] || { say "libQnnHtp.so missing from $qnn_dir"; exit 1; }
echo "$qnn_dir" >.venv/qnn-lib-dir
