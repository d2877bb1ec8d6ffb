#!/usr/bin/env python3
"""Gathers the benchmark figures scripts/bench.sh measured into target/bench/figures.json (whole or not at all),
prints them beside their targets and, with --check, compares the deterministic ones with tests/bench/baseline.json
(none may grow more than 5%, and the baseline must come from the same rustc); --update-baseline writes that file.

Inputs, all under target/bench/: skel-sections.txt and capi-sections.txt (`size -A` of the shipped skel and audio
module), stack.txt and capi-stack.txt (lpai-stack-check),
packets.json (lpai-packet-bench), callgrind.json (bench-callgrind.sh) and, when present, walltime.json
(bench-walltime.sh). Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys

BENCH = "target/bench"
BASELINE = "tests/bench/baseline.json"
GROWTH_ALLOWED = 1.05

# The deterministic figures: the same every run on the same build and toolchain.
DETERMINISTIC = [
    "skel_text_bytes",
    "skel_rodata_bytes",
    "skel_data_bss_bytes",
    "skel_stack_worst_bytes",
    "packets_trivial_call",
    "packets_per_inference_native",
    "packets_per_inference_float_16",
    "packets_per_element_quantize",
    "packets_per_element_dequantize",
    "packets_per_frame_embedded",
    "packets_audio_frame_480",
    "packets_audio_frame_480_with_inference_480",
    "packets_audio_frame_480_with_inference_16",
    "capi_text_bytes",
    "capi_stack_worst_bytes",
    "arena_overhead_bytes",
    "host_instructions_per_inference_traditional",
    "host_instructions_per_inference_direct",
]

# Issue 12's targets: (key, limit, how the figure compares).
TARGETS = [
    ("packets_trivial_call", 300, "<="),
    ("packets_per_inference_native", 1500, "<="),
    ("packets_per_frame_embedded", 500, "<="),
    ("packets_per_element_quantize", 8, "<="),
    ("packets_per_element_dequantize", 8, "<="),
    ("skel_text_bytes", 40 * 1024, "<="),
    ("skel_data_bss_bytes", 4 * 1024, "<="),
    ("arena_overhead_bytes", 1024, "<="),
    ("ratio_direct_to_floor", 1.03, "<="),
    ("ratio_traditional_to_floor", 1.05, "<="),
]


def read_json(name, required=True):
    path = os.path.join(BENCH, name)
    if not os.path.exists(path):
        if required:
            sys.exit(f"bench: {path} is missing: run scripts/bench.sh")
        return {}
    with open(path) as file:
        return json.load(file)


def sections(path):
    sizes = {}
    with open(path) as file:
        for line in file:
            fields = line.split()
            if len(fields) >= 2 and fields[0].startswith(".") and fields[1].isdigit():
                sizes[fields[0]] = sizes.get(fields[0], 0) + int(fields[1])
    return sizes


def worst_stack(path):
    with open(path) as file:
        worst = [int(bytes) for bytes in re.findall(r"worst case (\d+) bytes", file.read())]
    if not worst:
        sys.exit(f"bench: {path} names no worst case (lpai-stack-check's output changed?)")
    return max(worst)


def gather(skel, hex_ver):
    sizes = sections(os.path.join(BENCH, "skel-sections.txt"))
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    figures = {
        "rustc": rustc,
        "hex_ver": hex_ver,
        "skel_file_bytes": os.path.getsize(skel),
        "skel_text_bytes": sizes.get(".text", 0),
        "skel_rodata_bytes": sizes.get(".rodata", 0),
        "skel_data_bss_bytes": sizes.get(".data", 0) + sizes.get(".data.rel.ro", 0) + sizes.get(".bss", 0),
        "skel_stack_worst_bytes": worst_stack(os.path.join(BENCH, "stack.txt")),
    }
    capi = sections(os.path.join(BENCH, "capi-sections.txt"))
    figures["capi_text_bytes"] = capi.get(".text", 0)
    figures["capi_rodata_bytes"] = capi.get(".rodata", 0)
    figures["capi_stack_worst_bytes"] = worst_stack(os.path.join(BENCH, "capi-stack.txt"))
    figures.update(read_json("packets.json"))
    callgrind = read_json("callgrind.json")
    for key in ("host_instructions_per_inference_traditional", "host_instructions_per_inference_direct"):
        figures[key] = callgrind[key]
    figures["host_instructions_backend"] = callgrind.get("backend")
    figures.update(read_json("walltime.json", required=False))
    return figures


def print_targets(figures):
    print("figure                                        value          target")
    for key, limit, _ in TARGETS:
        value = figures.get(key)
        if value is None:
            print(f"  {key:<42} (not measured: scripts/bench.sh without --deterministic)")
            continue
        verdict = "met" if value <= limit else "NOT MET"
        print(f"  {key:<42} {value:>12,}   <= {limit:,} {verdict}")


def check(figures):
    if not os.path.exists(BASELINE):
        sys.exit(f"bench: no {BASELINE}: write one with scripts/bench.sh --deterministic --update-baseline")
    with open(BASELINE) as file:
        baseline = json.load(file)
    if baseline.get("rustc") != figures["rustc"]:
        sys.exit(
            f"bench: {BASELINE} was measured with {baseline.get('rustc')!r}, this is {figures['rustc']!r}: the "
            "figures are not comparable (the toolchain is pinned in rust-toolchain.toml; move both together)"
        )
    grown = []
    print(f"\nregression check against {BASELINE} ({baseline.get('measured', '?')}), at most +5% each:")
    for key in DETERMINISTIC:
        before, now = baseline["figures"].get(key), figures.get(key)
        if before is None or now is None:
            grown.append(f"{key}: missing from the {'baseline' if before is None else 'figures'}")
            continue
        change = (now - before) / before * 100 if before else 0.0
        over = now > before * GROWTH_ALLOWED
        print(f"  {key:<46} {before:>12,} -> {now:>12,}  {change:+6.1f}%{'  GREW' if over else ''}")
        if over:
            grown.append(f"{key}: {before:,} -> {now:,} ({change:+.1f}%)")
    if grown:
        sys.exit("bench: over the baseline by more than 5%: " + "; ".join(grown)
                 + f". Bring it back, or update {BASELINE} on purpose (scripts/bench.sh --deterministic "
                 "--update-baseline) and say why in the commit")
    print("no figure grew more than 5%")


def write_atomically(path, value):
    partial = path + ".partial"
    with open(partial, "w") as file:
        json.dump(value, file, indent=2)
        file.write("\n")
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skel", required=True)
    parser.add_argument("--hex-ver", type=int, required=True)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--update-baseline", action="store_true")
    arguments = parser.parse_args()
    figures = gather(arguments.skel, arguments.hex_ver)
    write_atomically(os.path.join(BENCH, "figures.json"), figures)
    print_targets(figures)
    print(f"\nfigures written to {BENCH}/figures.json")
    if arguments.update_baseline:
        os.makedirs(os.path.dirname(BASELINE), exist_ok=True)
        baseline = {
            "rustc": figures["rustc"],
            "measured": datetime.date.today().isoformat(),
            "figures": {key: figures[key] for key in DETERMINISTIC},
        }
        write_atomically(BASELINE, baseline)
        print(f"baseline written to {BASELINE}: commit it, saying why the figures moved")
    if arguments.check:
        check(figures)


if __name__ == "__main__":
    main()
