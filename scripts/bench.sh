#!/usr/bin/env bash
# Benchmarks: prints the figures and writes target/bench/figures.json (whole or not at all). Asserts nothing,
# except with --check.
#
#   scripts/bench.sh                    every figure: the deterministic ones below, then wall time side by side
#   scripts/bench.sh --deterministic    only the figures that are the same every run on the same build
#   scripts/bench.sh --deterministic --check
#                                       ... and fails when a figure is over its budget in tests/bench/budgets.json
#                                       (whatever the baseline says: naming the artifact, the figure, the budget
#                                       and the artifact's ten largest symbols), or when one moved more than 5% from
#                                       tests/bench/baseline.json, up or down (or the baseline was measured with
#                                       another rustc, HEX_VER or callgrind backend): the test command's step
#   scripts/bench.sh --deterministic --update-baseline
#                                       ... and writes them to tests/bench/baseline.json, to commit on purpose
#
# Deterministic figures: the sections (HEX_VER, default 81) and worst stack of the shipped skel, of the embedding
# library's device build (its check library: what firmware links from it) and of the audio module;
# Hexagon packets per call of the skel .so as the virtual aDSP loads and runs it, by phase, per frame of the
# embedding API, and per frame of the audio module .so as the PD shell runs it (tests/packet-bench: qemu-hexagon's per-packet trace, attributed by the libraries' symbol tables); host
# instructions per inference of our own code (scripts/bench-callgrind.sh). Not deterministic: wall time of the
# floor, direct mode, traditional mode and ONNX Runtime on the same binary (scripts/bench-walltime.sh).
# BENCH_SKIP_BUILD=1 uses the Hexagon artifacts already built (the test command has just built them).
set -euo pipefail
cd "$(dirname "$0")/.."
deterministic=0 check=0 update=0
for argument in "$@"; do
  case "$argument" in
    --deterministic) deterministic=1 ;;
    --check) check=1 ;;
    --update-baseline) update=1 ;;
    *) echo "bench: unknown argument $argument (--deterministic, --check, --update-baseline)" >&2; exit 2 ;;
  esac
done
if [ $((check + update)) -gt 0 ] && [ $deterministic -eq 0 ]; then
  echo "bench: --check and --update-baseline compare only the deterministic figures: add --deterministic" >&2
  exit 2
fi
bash scripts/setup.sh
mkdir -p target/bench
rm -f target/bench/figures.json.partial target/bench/walltime.json
if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  bash scripts/build-hexagon.sh >target/bench/build-hexagon.log 2>&1 \
    || { tail -20 target/bench/build-hexagon.log >&2; exit 1; }
fi
# Each artifact's sections and symbols by size (what an over-budget failure names): target/bench/NAME-*.txt.
sections_and_symbols() {
  size -A "$2" >"target/bench/$1-sections.txt"
  llvm-nm-19 -S --size-sort --demangle "$2" >"target/bench/$1-symbols.txt"
}
skel=target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so
sections_and_symbols skel "$skel"
cargo run -q --release -p lpai-skel-fixup --bin lpai-stack-check -- \
  target/hexagon-stack/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so --limit 8192 --report-only \
  --shipped "$skel" >target/bench/stack.txt 2>&1
# The audio module (AudioReach CAPI): its sections and the worst stack of its entry points and function table.
capi=target/hexagon-capi/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so
sections_and_symbols capi "$capi"
cargo run -q --release -p lpai-skel-fixup --bin lpai-stack-check -- \
  target/hexagon-capi-stack/hexagon-unknown-linux-musl/release/liblpai_direct_capi.so --capi-module --limit 16384 \
  --report-only --shipped "$capi" >target/bench/capi-stack.txt 2>&1
# The embedding library's device build as firmware links it (the check library: only what its lpai_direct_embed_*
# functions reach): its sections, and the worst stack of each of those functions, from its stack variant.
embed=target/hexagon-embed-device/liblpai_direct_embed_check.so
sections_and_symbols embed "$embed"
embed_entries=()
for function in $(llvm-nm-19 --defined-only --extern-only "$embed" \
    | awk '$2 == "T" && $3 ~ /^lpai_direct_embed_/ { print $3 }'); do
  embed_entries+=(--entry "$function")
done
if [ ${#embed_entries[@]} -eq 0 ]; then
  echo "bench: $embed exports no lpai_direct_embed_* function to measure the stack of" >&2
  exit 1
fi
cargo run -q --release -p lpai-skel-fixup --bin lpai-stack-check -- \
  target/hexagon-embed-stack/liblpai_direct_embed_check.so "${embed_entries[@]}" --limit 8192 --report-only \
  --shipped "$embed" >target/bench/embed-stack.txt 2>&1 || { cat target/bench/embed-stack.txt >&2; exit 1; }
cargo run -q --release -p lpai-packet-bench -- --out target/bench/packets.json
echo
bash scripts/bench-callgrind.sh
if [ $deterministic -eq 0 ]; then
  echo
  bash scripts/bench-walltime.sh
fi
echo
python3 scripts/bench_figures.py --skel "$skel" --hex-ver "${HEX_VER:-81}" \
  $([ $check -eq 1 ] && echo --check) $([ $update -eq 1 ] && echo --update-baseline)
