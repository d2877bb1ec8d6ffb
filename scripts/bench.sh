#!/usr/bin/env bash
# Benchmarks: prints figures, asserts nothing. The Hexagon skel's size (text/data/bss); Hexagon packets one skel
# call executes (counted under qemu-hexagon, deterministic); and per-inference latency of the bundled model through
# the runtime directly and through the stub/skel wire path.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-hexagon.sh >/dev/null 2>&1
printf '== Hexagon skel (HEX_VER=%s), bytes\n' "${HEX_VER:-81}"
size -A target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so | awk '$1 ~ /^\.(text|rodata|data|bss|dynsym|dynstr)/ {print "  " $1, $2}'
ls -l target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so | awk '{print "  file", $5}'
printf '\n== Hexagon packets per skel call (qemu-hexagon -cpu v73, 10 calls per batch, fake LPAI backend)\n'
exe=target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-bench
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
qemu-hexagon -cpu v73 -one-insn-per-tb -d exec,nochain -D "$trace" "$exe"
begin=$(nm "$exe" | awk '$3 == "lpai_bench_begin" {print $1}')
end=$(nm "$exe" | awk '$3 == "lpai_bench_end" {print $1}')
# One trace line per executed packet: "Trace 0: host [flags/PC/flags/flags] symbol".
awk -v begin="$begin" -v end="$end" '
  { split($4, field, "/"); pc = substr(field[2], length(field[2]) - 7) }
  pc == begin { counting = 1; packets = 0; next }
  pc == end && counting { counting = 0; batch++; print batch ": " packets / 10; next }
  counting { packets++ }' "$trace" | sed -e 's/^1:/  last_error (validate, lock, dispatch):/' \
  -e 's/^2:/  execute, native bytes:/' -e 's/^3:/  execute, float in and out:/' -e 's/$/ packets per call/'
echo "  (each includes encoding the call and the fake backend's own work; the graph has 4 elements)"

printf '\n== latency (host, real libQnnHtp.so)\n'
cargo build -q --release -p lpai-direct-dsp # the host skel the local transport loads
cargo run -q --release -p lpai-direct-hlos --example wire_overhead -- "$(cat .venv/qnn-lib-dir)" tests/fixtures/kws_conv "${RUNS:-200}" \
  2>&1 | grep -v LIBNATIVE
