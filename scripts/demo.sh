#!/usr/bin/env bash
# The demo. Runs the bundled keyword-spotting model (tests/fixtures/kws_conv, an offline-prepared QNN context binary)
# in direct mode on this machine's real QNN HTP backend (libQnnHtp.so from onnxruntime-qnn, its x86 NPU emulator),
# checks its outputs against ONNX Runtime's and prints the top classes; then a contract-model fixture in direct mode
# on the virtual aDSP (the Hexagon skel .so under qemu-hexagon); prints the profile tables and writes the latency
# chart. Everything it writes stays in target/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }
bash scripts/setup.sh
qnn=$(cat .venv/qnn-lib-dir)
root=$PWD
net_run=$root/target/release/lpai-net-run
demo=$root/target/demo
rm -rf "$demo"
mkdir -p "$demo"

step "building lpai-net-run, the host skel and the host contract model"
cargo build -q --release -p lpai-net-run -p lpai-direct-dsp -p lpai-contract-lpai -p lpai-contract-system

step "[real QNN HTP backend] keyword spotting (kws_conv) in direct mode: 30 inferences, the skel runs the list"
(cd tests/fixtures/kws_conv && "$net_run" --backend "$qnn/libQnnHtp.so" --retrieve_context kws_conv_qnn.bin \
  --input_list input_list_float.txt --num_inferences 30 --keep_num_outputs 3 --direct_mode \
  --profiling_level basic --output_dir "$demo/kws/direct" 2>&1)
(cd tests/fixtures/kws_conv && "$net_run" --backend "$qnn/libQnnHtp.so" --retrieve_context kws_conv_qnn.bin \
  --input_list input_list_float.txt --num_inferences 30 --keep_num_outputs 3 \
  --profiling_level basic --output_dir "$demo/kws/traditional" 2>&1 >/dev/null)
kws_same=0 kws_total=0
for result in "$demo"/kws/direct/Result_*; do
  name=$(basename "$result")
  reference=tests/fixtures/kws_conv/reference/float/$name/logits.raw
  kws_total=$((kws_total + 1))
  if cmp -s "$result/logits.raw" "$reference"; then verdict="bit-identical to ONNX Runtime on the QNN EP"; kws_same=$((kws_same + 1)); else verdict="DIFFERS from ONNX Runtime"; fi
  top=$(.venv/bin/python - "$result/logits.raw" <<'EOF'
import sys
import numpy
logits = numpy.fromfile(sys.argv[1], dtype=numpy.float32)
order = numpy.argsort(-logits)[:3]
print(", ".join(f"class {index} ({logits[index]:+.3f})" for index in order))
EOF
)
  printf '%s: top classes %s; %s\n' "$name" "$top" "$verdict"
done

step "building the Hexagon skel (HEX_VER=${HEX_VER:-81}), the virtual aDSP and the self-test executable"
bash scripts/build-hexagon.sh >"$demo/build-hexagon.log" 2>&1 || { cat "$demo/build-hexagon.log"; exit 1; }
skel=target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so
file "$skel"

step "[virtual aDSP: the Hexagon skel .so, loaded and run under qemu-hexagon; a contract model of libQnnLpai, not the vendor library] contract_single in direct mode, configured as qnn-net-run is"
fixture=$root/tests/fixtures/contract_single
work=$demo/contract
mkdir -p "$work"
cat >"$work/lpaiParams.conf" <<'EOF'
{"lpai_backend": {"target_env": "adsp", "enable_hw_ver": "v6"},
 "lpai_graph": {"execute": {"fps": 100, "ftrt_ratio": 10, "client_type": "real_time"}}}
EOF
cat >"$work/config.json" <<'EOF'
{"backend_extensions": {"shared_library_path": "libQnnLpaiNetRunExtensions.so", "config_file_path": "lpaiParams.conf"},
 "context_configs": {"is_persistent_binary": true}}
EOF
sed "s|:=|:=$fixture/|" "$fixture/input_list_float.txt" >"$work/input_list.txt"
(cd "$work" && "$net_run" --transport qemu --backend "$root/target/virtual-adsp/libQnnLpaiContract.so" \
  --system_library "$root/target/release/libQnnSystemContract.so" --retrieve_context "$fixture/contract_single.bin" \
  --input_list input_list.txt --config_file config.json --direct_mode --profiling_level basic --output_dir "$work/direct" 2>&1)
contract_same=0 contract_total=0
for result in "$work"/direct/Result_*; do
  name=$(basename "$result")
  contract_total=$((contract_total + 1))
  if cmp -s "$result/out.raw" "$fixture/reference/float/$name/out.raw"; then verdict="the contract's expected output"; contract_same=$((contract_same + 1)); else verdict="DIFFERS from the contract's expected output"; fi
  printf '%s/out.raw: %s\n' "$name" "$verdict"
done

step "the latency chart: DSP execute time vs host round trip, direct vs traditional"
"$net_run" chart "$demo/kws"
printf 'open %s in a browser\n' "$demo/kws/latency.svg"

step "dsp self-tests on Hexagon (qemu-hexagon -cpu v73)"
# The self-tests break the backend's contract on purpose and check each refusal; the lines those refusals log are
# kept in a file, not shown: they are expected, and the tests hold them.
selftest=$(qemu-hexagon -cpu v73 target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest \
  2>"$demo/selftest-refusals.log" | tail -n 1)
printf '%s (the expected refusals they log: %s)\n' "$selftest" "$demo/selftest-refusals.log"

step "summary"
printf 'kws_conv on the real QNN HTP backend, direct mode: %d of %d kept results bit-identical to ONNX Runtime\n' \
  "$kws_same" "$kws_total"
printf 'contract_single on the virtual aDSP (the Hexagon skel .so), direct mode: %d of %d results as the contract says\n' \
  "$contract_same" "$contract_total"
printf 'dsp self-tests on Hexagon: %s\n' "$selftest"
printf 'everything written: %s (the latency chart: %s)\n' "$demo" "$demo/kws/latency.svg"
[ "$kws_same" -eq "$kws_total" ] && [ "$contract_same" -eq "$contract_total" ] && [[ "$selftest" == *", 0 failed" ]]
