#!/usr/bin/env bash
# Wall time side by side in one run (issue 12): the same context binary (kws_conv), the same inputs, the real
# libQnnHtp.so, from inputs in memory to outputs in memory per inference, four ways interleaved in rounds: the floor
# (a bare graphExecute loop), lpai-net-run's direct mode (the skel's in-memory span; its file I/O apart), the
# traditional path over the local transport, and ONNX Runtime's QNN EP on the same binary (scripts/bench_ort.py).
# Prints a table and writes target/bench/walltime.json whole or not at all. Asserts nothing.
# RUNS (default 300) inferences per path, ROUNDS (default 30) rounds, WARMUP (default 10) warm-up runs per path
# (and per direct-mode run of lpai-net-run) not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p target/bench
rm -f target/bench/walltime.json.partial
# The host skel the local transport loads, the command for direct mode, and the benchmark itself.
cargo build -q --release -p lpai-direct-dsp -p lpai-net-run
cargo build -q --release -p lpai-net-run --example walltime
target/release/examples/walltime \
  --qnn "$(cat .venv/qnn-lib-dir)" \
  --fixture tests/fixtures/kws_conv \
  --net-run target/release/lpai-net-run \
  --python .venv/bin/python \
  --ort-script scripts/bench_ort.py \
  --json target/bench/walltime.json \
  --runs "${RUNS:-300}" \
  --rounds "${ROUNDS:-30}" \
  --warmup "${WARMUP:-10}" \
  | grep -v LIBNATIVE
