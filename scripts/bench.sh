#!/usr/bin/env bash
# Benchmarks: prints figures, asserts nothing. The Hexagon skel's size (text/data/bss) and worst stack; Hexagon
# packets one skel call executes (counted under qemu-hexagon, deterministic); and per-inference latency of the
# bundled model through the runtime directly and through the stub/skel wire path. Writes the same figures to
# target/bench/figures.json (whole or not at all).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p target/bench
built=target/bench/build-hexagon.log
bash scripts/build-hexagon.sh >"$built" 2>&1
skel=target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so
printf '== Hexagon skel (HEX_VER=%s), bytes\n' "${HEX_VER:-81}"
sections=$(size -A "$skel")
awk '$1 ~ /^\.(text|rodata|data|bss|dynsym|dynstr)/ {print "  " $1, $2}' <<<"$sections"
ls -l "$skel" | awk '{print "  file", $5}'
section() { awk -v name="$1" '$1 == name {total += $2} END {print total + 0}' <<<"$sections"; }
# The worst stack of the skel's entry points, as lpai-stack-check printed it during the build.
stack_worst=$(sed -n 's/^stack-check: //p' "$built" | grep -o '[0-9]* bytes\|[0-9]*,' | tr -dc '0-9\n' | sort -n | tail -1)
printf '\n== Hexagon packets per skel call (qemu-hexagon -cpu v73, 10 calls per batch, fake LPAI backend)\n'
exe=target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-bench
trace=$(mktemp)
trap 'rm -f "$trace"' EXIT
qemu-hexagon -cpu v73 -one-insn-per-tb -d exec,nochain -D "$trace" "$exe"
begin=$(nm "$exe" | awk '$3 == "lpai_bench_begin" {print $1}')
end=$(nm "$exe" | awk '$3 == "lpai_bench_end" {print $1}')
# One trace line per executed packet: "Trace 0: host [flags/PC/flags/flags] symbol".
packets=$(awk -v begin="$begin" -v end="$end" '
  { split($4, field, "/"); pc = substr(field[2], length(field[2]) - 7) }
  pc == begin { counting = 1; packets = 0; next }
  pc == end && counting { counting = 0; print packets / 10; next }
  counting { packets++ }' "$trace")
read -r -d '' packets_last_error packets_execute_native packets_execute_float <<<"$packets" || true
printf '  last_error (validate, lock, dispatch): %s packets per call\n' "$packets_last_error"
printf '  execute, native bytes: %s packets per call\n' "$packets_execute_native"
printf '  execute, float in and out: %s packets per call\n' "$packets_execute_float"
echo "  (each includes encoding the call and the fake backend's own work; the graph has 4 elements)"

printf '\n== latency (host, real libQnnHtp.so)\n'
cargo build -q --release -p lpai-direct-dsp # the host skel the local transport loads
latency=$(cargo run -q --release -p lpai-direct-hlos --example wire_overhead -- "$(cat .venv/qnn-lib-dir)" \
  tests/fixtures/kws_conv "${RUNS:-200}" 2>&1 | grep -v LIBNATIVE)
echo "$latency"
median() { sed -n "s/^$1 .* median *\([0-9.]*\) us.*/\1/p" <<<"$latency"; }

# The figures as JSON. Packet counts include encoding the call and the fake backend's own work (our share alone is
# issue 12's to measure); latencies are host microseconds on libQnnHtp.so's x86 emulator.
python3 - "$skel" <<EOF
import json, os, subprocess, sys
figures = {
    "rustc": subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip(),
    "hex_ver": int("${HEX_VER:-81}"),
    "skel_file_bytes": os.path.getsize(sys.argv[1]),
    "skel_text_bytes": $(section .text),
    "skel_rodata_bytes": $(section .rodata),
    "skel_data_bss_bytes": $(section .data) + $(section .data.rel.ro) + $(section .bss),
    "skel_stack_worst_bytes": int("${stack_worst:-0}"),
    "packets_last_error_with_encoding": float("${packets_last_error:-0}"),
    "packets_execute_native_with_encoding": float("${packets_execute_native:-0}"),
    "packets_execute_float_with_encoding": float("${packets_execute_float:-0}"),
    "latency_median_us_runtime_direct": float("$(median 'runtime called directly')" or 0),
    "latency_median_us_stub_local": float("$(median 'through the stub (local)')" or 0),
}
partial = "target/bench/figures.json.partial"
with open(partial, "w") as out:
    json.dump(figures, out, indent=2)
    out.write("\\n")
os.replace(partial, "target/bench/figures.json")
print("\\nfigures written to target/bench/figures.json")
EOF
