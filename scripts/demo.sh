#!/usr/bin/env bash
# The demo: sets the machine up, builds the Hexagon skel and the aarch64 lpai-net-run, shows that the skel is what
# the aDSP loader expects, and runs the dsp self-tests on Hexagon under qemu-hexagon.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }
bash scripts/setup.sh
step "building the Hexagon skel (HEX_VER=${HEX_VER:-81}) and the qemu self-test executable"
bash scripts/build-hexagon.sh
skel=target/hexagon-unknown-linux-musl/release/liblpai_direct_skel.so
step "the skel as the aDSP loader sees it"
file "$skel"
readelf -lW "$skel" | sed -n '/Program Headers/,/^$/p'
readelf -dW "$skel" | grep -E 'NEEDED|0x70000001' || true
readelf --dyn-syms -W "$skel" | awk 'NR > 3 && $7 != "UND" {print "  exports", $8} NR > 3 && $7 == "UND" && $8 != "" {print "  needs  ", $8}'
step "dsp self-tests on Hexagon (qemu-hexagon -cpu v73)"
qemu-hexagon -cpu v73 target/hexagon-selftest/hexagon-unknown-linux-musl/release/lpai-dsp-selftest
step "lpai-net-run for aarch64, under qemu-aarch64"
exe=$(QNN_TARGET_ARCH=aarch64-oe-linux-gcc11.2 bash scripts/build-hlos.sh)
qemu-aarch64 -L /usr/aarch64-linux-gnu "$exe" --help
