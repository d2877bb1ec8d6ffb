#!/usr/bin/env bash
# The demo: runs the bundled keyword-spotting model (tests/fixtures/kws_conv, an offline-prepared QNN context
# binary) through lpai-net-run on the real QNN HTP backend, checks the outputs against ONNX Runtime's, then builds
# the Hexagon skel, shows it is what the aDSP loader expects, and runs the dsp self-tests on Hexagon under qemu.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }
bash scripts/setup.sh
qnn=$(cat .venv/qnn-lib-dir)

step "building lpai-net-run and the host skel it loads (target/release/liblpai_direct_skel.so)"
cargo build -q --release -p lpai-net-run -p lpai-direct-dsp
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

step "lpai-net-run on the bundled keyword-spotting model (libQnnHtp.so, float in, float out)"
(cd tests/fixtures/kws_conv && "$OLDPWD/target/release/lpai-net-run" --backend "$qnn/libQnnHtp.so" \
  --retrieve_context kws_conv_qnn.bin --input_list input_list_float.txt --output_dir "$out" 2>&1) | grep -v LIBNATIVE
for result in "$out"/Result_*; do
  reference=tests/fixtures/kws_conv/reference/float/$(basename "$result")/logits.raw
  if cmp -s "$result/logits.raw" "$reference"; then verdict="bit-identical to ONNX Runtime on the QNN EP"; else verdict="DIFFERS from ONNX Runtime"; fi
  printf '%s/logits.raw: %s\n' "$(basename "$result")" "$verdict"
  od -A n -t f4 -w48 "$result/logits.raw" | tr -s ' ' | sed 's/^/  logits:/'
done

step "building the Hexagon skel (HEX_VER=${HEX_VER:-81}) and the qemu self-test executable"
bash scripts/build-hexagon.sh
skel=target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so
step "the skel as the aDSP loader sees it"
file "$skel"
readelf -lW "$skel" | sed -n '/Program Headers/,/^$/p'
readelf -dW "$skel" | grep -E 'NEEDED|0x70000001' || true

step "dsp self-tests on Hexagon (qemu-hexagon -cpu v73)"
qemu-hexagon -cpu v73 target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest | tail -n 1
