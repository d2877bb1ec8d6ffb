#!/usr/bin/env bash
# What each of the skel's features costs in .text: builds the skel (HEX_VER, default 81, the shipped flags and
# linker script) from a scratch worktree of HEAD with a feature cut out, and prints the .text of each build.
#   all features          the shipped skel
#   without messages      fail!, log! and the refusals say nothing (no error or log text in the skel)
#   without direct mode   run_job is not dispatched (the job decoder and the loop go with it)
#   without records       load never takes a metadata record (the record reader and SHA-256 go with it)
#   without memory placement  load never reads LPAI memory types from its flags (issue 23; both pools in DDR)
#   without async execution  start_frame never calls graphExecuteAsync (issue 23; direct mode runs each frame
#                         inside start_frame, as on a backend without it: the notify trampoline goes)
#   without op packages   register_op_package is not dispatched (issue 23; the method, the runtime's registration
#                         and its messages go with it)
#   without all three
# The cuts are edits of the sources this script makes in the scratch worktree; it stops when one no longer applies.
# Nothing it builds is shipped or committed. Takes a few minutes (one build of the dsp crate per line).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
HEX_VER=${HEX_VER:-81}
scratch=$(mktemp -d /tmp/lpai-feature-costs.XXXXXX)
cleanup() { git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"; }
trap cleanup EXIT
git worktree add --detach -q "$scratch/tree" HEAD
cd "$scratch/tree"

target=hexagon-unknown-linux-musl
encode() { local IFS=$'\x1f'; echo "$*"; }
flags=(-C linker-flavor=ld.lld -C "target-cpu=hexagonv$HEX_VER" -C target-feature=-small-data
  -C relocation-model=pic -C "link-arg=-T$PWD/linker/skel.ld" -C "link-arg=--version-script=$PWD/linker/skel.ver"
  -C link-arg=-znow -C force-unwind-tables=no)
text_bytes() {
  CARGO_TARGET_DIR=$root/target/feature-costs CARGO_ENCODED_RUSTFLAGS=$(encode "${flags[@]}") \
    cargo build -q -p lpai-direct-dsp --lib -Z build-std=core \
    --target "$target" --release 2>/dev/null
  llvm-size -A "$root/target/feature-costs/$target/release/liblpai_direct_skel.so" | awk '$1 == ".text" { print $2 }'
}

# Replaces `from` with `to` in `file`; fails when `from` is not there (the sources moved on: update the cut).
replace() {
  local file=$1 from=$2 to=$3
  python3 - "$file" "$from" "$to" <<'EOF'
import sys
path, old, new = sys.argv[1:]
text = open(path).read()
if old not in text:
    sys.exit(f"skel-feature-costs: {path} no longer holds the text this cut replaces:\n{old}")
open(path, "w").write(text.replace(old, new))
EOF
}
cut_messages() {
  replace dsp/src/skel/session.rs '        $crate::say!(session.error_line(), $($part),+);
        session.log_error();' '        let _ = session.error_line();'
  replace dsp/src/skel/session.rs '        say!(&mut self.last_error, what, " ", path.text(), ": ", error);
        self.log_error();' '        let _ = (what, path, error);'
  replace dsp/src/platform/line.rs '            let mut line = $crate::platform::Line::new();
            $crate::say!(&mut line, $($part),+);' '            let line = $crate::platform::Line::new();'
  replace dsp/src/skel/mod.rs '        describe(session.error_line());' '        let _ = (session.error_line(), describe);'
}
cut_direct_mode() {
  replace dsp/src/skel/dispatch.rs '        codec::run_job::ID => job::run_job(session, call),' ''
}
cut_records() {
  replace dsp/src/skel/load.rs '    if let Some(index) = params.metadata {' \
    '    if let Some(index) = params.metadata.filter(|_| false) {'
}
cut_memory_placement() {
  replace dsp/src/skel/load.rs '    let memory = match placement_of_load(flags) {' \
    '    let memory = match Ok::<lpai_direct::qnn::lpai::MemoryPlacement, u32>(Default::default()) {'
  replace dsp/src/skel/load.rs 'use lpai_direct::wire::{placement_of_load, priority_of_load,' 'use lpai_direct::wire::{priority_of_load,'
}
cut_op_packages() {
  replace dsp/src/skel/dispatch.rs '        codec::register_op_package::ID => methods::register_op_package(session, call),' ''
}

cut_async_execution() {
  replace dsp/src/runtime/graph/frames.rs \
    '        match self.table.graph_execute_async.filter(|_| record.executes_async() != Some(false)) {' \
    '        match None::<lpai_direct::qnn::interface::GraphExecuteAsyncFn> {'
}

all=$(text_bytes)
row() { printf '  %-24s %8s bytes  %+7d\n' "$1" "$2" $(($2 - all)); }
echo "skel .text by feature (HEX_VER=$HEX_VER, $(git rev-parse --short HEAD)):"
row "all features" "$all"
cut_messages; row "without messages" "$(text_bytes)"; git checkout -q .
cut_direct_mode; row "without direct mode" "$(text_bytes)"; git checkout -q .
cut_records; row "without records" "$(text_bytes)"; git checkout -q .
cut_memory_placement; row "without memory placement" "$(text_bytes)"; git checkout -q .
cut_async_execution; row "without async execution" "$(text_bytes)"; git checkout -q .
cut_op_packages; row "without op packages" "$(text_bytes)"; git checkout -q .
cut_messages; cut_direct_mode; cut_records; row "without all three" "$(text_bytes)"
