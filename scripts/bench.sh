#!/usr/bin/env bash
# Benchmarks: prints figures, asserts nothing. The Hexagon skel's size (text/data/bss), and per-inference
# latency of the bundled model through the runtime directly and through the stub/skel wire path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-hexagon.sh >/dev/null 2>&1
printf '== Hexagon skel (HEX_VER=%s), bytes\n' "${HEX_VER:-81}"
size -A target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so | awk '$1 ~ /^\.(text|rodata|data|bss|dynsym|dynstr)/ {print "  " $1, $2}'
ls -l target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so | awk '{print "  file", $5}'
printf '\n== latency (host, real libQnnHtp.so)\n'
cargo run -q --release -p lpai-direct-hlos --example wire_overhead -- "$(cat .venv/qnn-lib-dir)" tests/fixtures/kws_conv "${RUNS:-200}" \
  2>&1 | grep -v LIBNATIVE
