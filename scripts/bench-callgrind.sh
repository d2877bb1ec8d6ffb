#!/usr/bin/env bash
# Host instructions per inference of our own code, counted by valgrind's callgrind: lpai-net-run on the local
# transport, traditional mode (one stub `execute` per inference) and direct mode (`--direct_mode`, one `run_job`
# for the whole list), kws_conv's float input list on the real libQnnHtp.so from onnxruntime-qnn. Builds what it
# needs (release), prints a table and the functions the instructions per inference go to, and writes
# target/bench/callgrind.json (whole or not at all) with host_instructions_per_inference_traditional and _direct,
# the backend and the fixture.
#
# What is counted: the instructions (callgrind's Ir) executed inside two ELF objects, the lpai-net-run executable
# (the net-run job and the stub are linked into it, with the parts of Rust's std it uses) and the host skel
# liblpai_direct_skel.so that the local transport loads. Everything else is left out: libQnnHtp.so,
# libQnnSystem.so, their libc++, libc (memcpy included), libm, libgcc_s, ld.so and the kernel. Attribution is by
# object: callgrind writes each function's own (exclusive) cost under the `ob=` record of the object holding its
# code; the script sums the cost lines of the functions whose object is one of ours, skipping the line after each
# `calls=` (a call's inclusive cost, which belongs to the callee), over every profile a run writes (the process
# and the child that reads the binary's metadata with libQnnSystem).
#
# Per inference: each mode runs twice, with N1 and N2 inferences (--num_inferences), and start-up, loading, the
# metadata child and the summary cancel in (ours(N2) - ours(N1)) / (N2 - N1). The defaults 1 and 4 make N2 - N1
# one pass over the list's 3 inputs and keep every Result_<i> name one digit long.
#
# Deterministic: our code formats durations (the summary line, the run record's microseconds), and formatting a
# number costs more instructions the more digits it has, so every run preloads a small shim (compiled here with cc
# into target/bench/fixed-clock.so) whose clock_gettime reads a fixed time when called from our two objects; every
# other caller, libQnnHtp included, gets the real clock. The count also grows with the length of the paths our
# code copies and checks per inference (inputs, Result_<i>, partial files), so the fixture is copied into a
# /tmp/lpai-callgrind.XXXXXX directory and the outputs go there: the same lengths in every checkout and TMPDIR.
# The same build then gives the same figures run after run (in one checkout, the totals too).
#
# Why libQnnHtp.so and not the host contract model: it is the real backend, and under callgrind it is both
# deterministic (as far as our objects see) and fast enough: each run spends ~18 s of CPU, most of it callgrind
# translating libQnnHtp's start-up; the 4 runs, 2 at a time, took 47-98 s of wall time on this 2-core machine,
# depending on the other builds sharing it (65-75 s of CPU in all). CALLGRIND_BACKEND=contract
# measures on the contract model instead (tests/fixtures/contract_single, its libQnnLpaiContract.so and
# libQnnSystemContract.so; a few seconds), for a machine where that matters; the JSON names the backend either way.
#
# Environment: CALLGRIND_BACKEND (htp or contract), N1 and N2 (default 1 and 4), CALLGRIND_JOBS (valgrind runs at
# once; default the number of cores, at most 4), FIXED_CLOCK=0 (no shim: to see the digits move the counts),
# CALLGRIND_PROFILES=DIR (copy the callgrind profiles there, for callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
say() { printf 'bench-callgrind: %s\n' "$*" >&2; }

command -v valgrind >/dev/null || { say "valgrind is missing: run scripts/setup.sh"; exit 1; }
case ${CALLGRIND_BACKEND:-htp} in
  htp)
    [ -f .venv/qnn-lib-dir ] || { say ".venv/qnn-lib-dir is missing: run scripts/setup.sh"; exit 1; }
    qnn=$(cat .venv/qnn-lib-dir)
    backend=$qnn/libQnnHtp.so
    system=$qnn/libQnnSystem.so
    [ -f "$backend" ] || { say "$backend is missing: run scripts/setup.sh"; exit 1; }
    fixture=tests/fixtures/kws_conv
    binary=kws_conv_qnn.bin
    packages=()
    ;;
  contract)
    fixture=tests/fixtures/contract_single
    binary=contract_single.bin
    packages=(-p lpai-contract-lpai -p lpai-contract-system)
    ;;
  *) say "CALLGRIND_BACKEND is htp or contract, not ${CALLGRIND_BACKEND}"; exit 1 ;;
esac
n1=${N1:-1}
n2=${N2:-4}
[ "$n2" -gt "$n1" ] || { say "N2 ($n2) must be larger than N1 ($n1)"; exit 1; }
jobs=${CALLGRIND_JOBS:-$(nproc)}
[ "$jobs" -le 4 ] || jobs=4

nice cargo build -q --release -p lpai-net-run -p lpai-direct-dsp "${packages[@]}"
target_dir=$(cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
exe=$target_dir/release/lpai-net-run
skel=$target_dir/release/liblpai_direct_skel.so
if [ "${CALLGRIND_BACKEND:-htp}" = contract ]; then
  backend=$target_dir/release/libQnnLpaiContract.so
  system=$target_dir/release/libQnnSystemContract.so
fi
mkdir -p target/bench
clock=target/bench/fixed-clock.so
cc -O2 -shared -fPIC -o "$clock.tmp" -x c - -ldl <<'EOF'
/* clock_gettime for our objects only: a monotonic clock that always reads 1000 s, so that our code formats the
   same durations run after run. Every other caller (libQnnHtp, libc) gets the real clock. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <time.h>
static int ours(const void *caller) {
    Dl_info info;
    if (!dladdr(caller, &info) || !info.dli_fname) return 0;
    const char *name = strrchr(info.dli_fname, '/');
    name = name ? name + 1 : info.dli_fname;
    return strcmp(name, "lpai-net-run") == 0 || strcmp(name, "liblpai_direct_skel.so") == 0;
}
int clock_gettime(clockid_t id, struct timespec *ts) {
    static int (*real)(clockid_t, struct timespec *);
    if (id != CLOCK_REALTIME && ours(__builtin_return_address(0))) {
        ts->tv_sec = 1000;
        ts->tv_nsec = 0;
        return 0;
    }
    if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    return real(id, ts);
}
EOF
mv "$clock.tmp" "$clock"

preload=$root/$clock
[ "${FIXED_CLOCK:-1}" = 1 ] || preload= # FIXED_CLOCK=0: the real clock, to see what the shim is for

# Every path our code handles per inference (inputs, Result_<i>, the partial files) lies under one directory of
# a fixed length, so the counts do not depend on where the checkout is or on TMPDIR: the paths' lengths are the
# same on every machine.
work=$(mktemp -d /tmp/lpai-callgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$fixture" "$work/fixture"
# measure MODE N: one callgrind run of lpai-net-run; its profiles go to $work/MODE-N.<pid>.out.
measure() {
  local mode=$1 n=$2 flags=()
  [ "$mode" = direct ] && flags=(--direct_mode)
  (cd "$work/fixture" && LD_PRELOAD="$preload" nice valgrind --tool=callgrind -q \
    --callgrind-out-file="$work/$mode-$n.%p.out" "$exe" --backend "$backend" --system_library "$system" \
    --retrieve_context "$binary" --input_list input_list_float.txt --output_dir "$work/output-$mode-$n" \
    --num_inferences "$n" "${flags[@]}" >"$work/$mode-$n.log" 2>&1) \
    || { say "$mode mode, $n inferences failed:"; cat "$work/$mode-$n.log" >&2; return 1; }
}
say "callgrind: lpai-net-run with $n1 and $n2 inferences, traditional and direct mode ($jobs at a time)"
running=0
for mode in traditional direct; do
  for n in "$n1" "$n2"; do
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    measure "$mode" "$n" &
    running=$((running + 1))
  done
done
while [ "$running" -gt 0 ]; do wait -n; running=$((running - 1)); done
if [ -n "${CALLGRIND_PROFILES:-}" ]; then
  mkdir -p "$CALLGRIND_PROFILES"
  cp "$work"/*.out "$work"/*.log "$CALLGRIND_PROFILES"/
fi

python3 - "$work" "$n1" "$n2" "$exe" "$skel" "$backend" "$fixture" <<'EOF'
import collections, glob, json, os, re, sys

work, n1, n2, exe, skel, backend, fixture = sys.argv[1:]
n1, n2 = int(n1), int(n2)
ours = {os.path.realpath(exe): "lpai-net-run", os.path.realpath(skel): "liblpai_direct_skel.so"}
# Which name-compression table each callgrind record uses (callgrind's format: "(id) name" defines, "(id)" reuses).
tables = {"ob": "ob", "cob": "ob", "fn": "fn", "cfn": "fn"}
tables.update({key: "fl" for key in ("fl", "fi", "fe", "cfl", "cfi")})
record = re.compile(r"^(\w+)=(.*)$")
compressed = re.compile(r"^\((\d+)\)(?: (.*))?$")

def profile(path):
    """Exclusive Ir of every (object, function) in one callgrind output file."""
    names = {"ob": {}, "fl": {}, "fn": {}}
    obj = fn = None
    inclusive_next = False
    cost = collections.Counter()
    with open(path) as lines:
        for line in lines:
            first = line[:1]
            if first.isdigit() or first in "+-*":
                if inclusive_next:  # the line after calls= is the call's inclusive cost: not this function's own
                    inclusive_next = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    cost[(obj, fn)] += int(fields[1])
                continue
            match = record.match(line.rstrip("\n"))
            if not match:
                continue
            key, value = match.groups()
            if key == "calls":
                inclusive_next = True
            elif key in tables:
                table = names[tables[key]]
                short = compressed.match(value)
                if short:
                    if short.group(2) is not None:
                        table[short.group(1)] = short.group(2)
                    value = table[short.group(1)]
                if key == "ob":
                    obj = os.path.realpath(value) if value.startswith("/") else value
                elif key == "fn":
                    fn = value
    return cost

def run(mode, n):
    files = glob.glob(os.path.join(work, f"{mode}-{n}.*.out"))
    if not files:
        sys.exit(f"bench-callgrind: no callgrind profile for {mode} mode, {n} inferences")
    total = collections.Counter()
    for path in files:
        total.update(profile(path))
    return collections.Counter({key: value for key, value in total.items() if key[0] in ours})

figures = {}
table = []
top = {}
for mode in ("traditional", "direct"):
    low, high = run(mode, n1), run(mode, n2)
    per_object = {}
    for path, name in ours.items():
        a = sum(v for (o, _), v in low.items() if o == path)
        b = sum(v for (o, _), v in high.items() if o == path)
        per_object[name] = (b - a) / (n2 - n1)
    total_low, total_high = sum(low.values()), sum(high.values())
    per_inference = (total_high - total_low) / (n2 - n1)
    figures[f"host_instructions_per_inference_{mode}"] = round(per_inference, 1)
    table.append((mode, total_low, total_high, per_inference, per_object))
    delta = collections.Counter(high)
    delta.subtract(low)
    top[mode] = [(key, value / (n2 - n1)) for key, value in delta.most_common(12) if value > 0]

where = f"{os.path.basename(fixture)} on {os.path.basename(backend)}"
print(f"\n== host instructions of our code (callgrind Ir), {where}, local transport")
heads = ("N1=" + str(n1), "N2=" + str(n2), "per inference", "lpai-net-run", "skel .so")
print(f"{'mode':<12} {heads[0]:>12} {heads[1]:>12} {heads[2]:>14} {heads[3]:>13} {heads[4]:>10}")
for mode, a, b, per, split in table:
    net_run, skel_so = split["lpai-net-run"], split["liblpai_direct_skel.so"]
    print(f"{mode:<12} {a:>12,} {b:>12,} {per:>14,.1f} {net_run:>13,.1f} {skel_so:>10,.1f}")
for mode, rows in top.items():
    print(f"\n== {mode} mode: top functions per inference (exclusive Ir)")
    for (obj, fn), value in rows:
        print(f"  {value:>10,.1f}  {ours[obj]:<22} {fn[:110]}")

figures.update({
    "backend": os.path.basename(backend),
    "fixture": fixture,
    "input_list": "input_list_float.txt",
    "transport": "local",
    "num_inferences": [n1, n2],
    "counted_objects": sorted(ours.values()),
})
os.makedirs("target/bench", exist_ok=True)
partial = "target/bench/callgrind.json.partial"
with open(partial, "w") as out:
    json.dump(figures, out, indent=2)
    out.write("\n")
os.replace(partial, "target/bench/callgrind.json")
print("\nfigures written to target/bench/callgrind.json")
EOF
