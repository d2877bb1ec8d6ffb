#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ (docs/src/design/hardening.md: Fuzzing), installing cargo-fuzz when it is missing.
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]     run TARGET (default: every target, one after the other) for SECONDS
#                                              each (default 600); prints the executions each run reached
#   scripts/fuzz.sh --minimise [TARGET|all]    merge what the runs found into fuzz/corpus/TARGET, minimised: the
#                                              fewest files that reach every edge (hit counts aside, which keeps
#                                              the committed corpus to a few hundred small files)
#
# Runs read fuzz/corpus/TARGET (the committed corpus) and add what they find to target/fuzz/corpus/TARGET; a crash
# is saved in fuzz/artifacts/TARGET. Nothing is written outside fuzz/ and target/ (besides installing cargo-fuzz
# with cargo). FUZZ_JOBS=N runs N targets at once (default 1); FUZZ_ARGS adds libFuzzer flags.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(skel_invoke codec input_list lpai_params config_json metadata_record binary_info elf_loader)
build=(--fuzz-dir fuzz --target-dir target/fuzz)

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz.sh: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi

minimise=false
if [ "${1:-}" = "--minimise" ]; then
  minimise=true
  shift
fi
choice="${1:-all}"
seconds="${2:-600}"
if [ "$choice" = all ]; then
  selected=("${targets[@]}")
else
  [[ " ${targets[*]} " == *" $choice "* ]] || { echo "fuzz.sh: no target $choice (${targets[*]})" >&2; exit 2; }
  selected=("$choice")
fi

cargo fuzz build "${build[@]}" >&2

if $minimise; then
  for target in "${selected[@]}"; do
    merged="target/fuzz/minimised/$target"
    rm -rf "$merged"
    mkdir -p "$merged" "target/fuzz/corpus/$target"
    # ELF files are cut to 48 KiB (mutated copies of the 139 KiB skel would make megabytes); the skel seed itself
    # is kept whole, so the corpus still loads and relocates a complete library.
    limit=()
    keep=()
    if [ "$target" = elf_loader ]; then
      limit=(-max_len=49152)
      [ -f fuzz/corpus/elf_loader/seed-liblpai_direct_skel.so ] && cp fuzz/corpus/elf_loader/seed-liblpai_direct_skel.so "$merged.keep" && keep=("$merged.keep")
    fi
    cargo fuzz run "${build[@]}" "$target" "$merged" "fuzz/corpus/$target" "target/fuzz/corpus/$target" -- \
      -merge=1 -use_counters=0 "${limit[@]}" -close_fd_mask=2 >"target/fuzz/$target.merge.log" 2>&1 ||
      { tail -20 "target/fuzz/$target.merge.log"; exit 1; }
    rm -rf "fuzz/corpus/$target"
    mkdir -p "fuzz/corpus/$target"
    cp "$merged"/* "fuzz/corpus/$target/"
    if [ "${#keep[@]}" -gt 0 ]; then
      mv "${keep[0]}" fuzz/corpus/elf_loader/seed-liblpai_direct_skel.so
    fi
    echo "$target: $(ls "fuzz/corpus/$target" | wc -l) files, $(du -sk "fuzz/corpus/$target" | cut -f1) KiB"
  done
  exit 0
fi

run() {
  local target=$1 log="target/fuzz/$1.log"
  mkdir -p "target/fuzz/corpus/$target" "fuzz/corpus/$target"
  # -close_fd_mask=2: the skel's log lines would slow the fuzzer down; libFuzzer keeps its own report.
  if nice cargo fuzz run "${build[@]}" "$target" "target/fuzz/corpus/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -close_fd_mask=2 -print_final_stats=1 ${FUZZ_ARGS:-} >"$log" 2>&1; then
    local runs
    runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 executions in \2 s/p' "$log" | tail -1)
    echo "$target: ${runs:-see $log}, corpus $(find "target/fuzz/corpus/$target" "fuzz/corpus/$target" -type f | wc -l) files"
  else
    echo "$target: FAILED (crash or error), see $log and fuzz/artifacts/$target/" >&2
    tail -40 "$log" >&2
    return 1
  fi
}

jobs="${FUZZ_JOBS:-1}"
status=0
pids=()
for target in "${selected[@]}"; do
  run "$target" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
exit $status
