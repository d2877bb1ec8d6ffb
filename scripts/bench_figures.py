#!/usr/bin/env python3
"""Gathers the benchmark figures scripts/bench.sh measured into target/bench/figures.json (whole or not at all),
prints them beside their targets and budgets and, with --check, holds them to two things apart. The budgets
(tests/bench/budgets.json, read by scripts/bench_budgets.py): a budgeted figure over its budget fails, naming the artifact, the
figure, the budget and the artifact's ten largest symbols, whatever the baseline says. The baseline
(tests/bench/baseline.json): each deterministic figure must stay within 5% of it either way (a figure that grew is
a regression; one that dropped is either a gain to record on purpose or a broken measurement, such as a trace that
no longer attributes packets), and the baseline must come from the same rustc, Hexagon version and callgrind
backend. --update-baseline writes the baseline and the book's tables of its figures (BOOK_TABLES). --bench-dir,
--baseline and --budgets point it elsewhere (tests/bench_check.rs checks the checker that way). --book-table NAME
prints one book table from the baseline and the budgets, --write-book-tables writes them all between their markers,
measuring nothing.

Inputs, all under target/bench/, for each artifact of ARTIFACTS (the shipped skel, the embedding library's device
build, the audio module): ARTIFACT-sections.txt (`size -A`, whose first line names the file), ARTIFACT-symbols.txt
(`llvm-nm-19 -S --size-sort`) and its worst stack (STACK_REPORTS: lpai-stack-check); then packets.json
(lpai-packet-bench), callgrind.json (bench-callgrind.sh) and, when present, walltime.json (bench-walltime.sh).
Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import textwrap

import bench_budgets

BENCH = "target/bench"
BASELINE = "tests/bench/baseline.json"
BUDGETS = "tests/bench/budgets.json"
TOLERANCE = 0.05
# The artifacts whose sizes and stacks are figures, by the name that starts their figures' keys (skel_*, embed_*,
# capi_*) and their inputs' names, with the sections their figures read: a missing one is an error, never a zero.
ARTIFACTS = {
    "skel": (".text", ".rodata", ".data", ".bss"),
    "embed": (".text", ".rodata"),
    "capi": (".text", ".rodata"),
}
# Each artifact's lpai-stack-check report (the skel's kept its first name).
STACK_REPORTS = {"skel": "stack.txt", "embed": "embed-stack.txt", "capi": "capi-stack.txt"}
# What the deterministic figures depend on besides the code: compared before any figure.
CONDITIONS = ("rustc", "hex_ver", "host_instructions_backend")

# The deterministic figures: the same every run on the same build and toolchain.
DETERMINISTIC = [
    "skel_text_bytes",
    "skel_rodata_bytes",
    "skel_text_rodata_bytes",
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
    "capi_text_rodata_bytes",
    "capi_stack_worst_bytes",
    "embed_text_rodata_bytes",
    "embed_stack_worst_bytes",
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


# How the book's figure table names each deterministic figure, and its unit.
LABELS = {
    "skel_text_bytes": ("skel `.text`", "bytes"),
    "skel_rodata_bytes": ("skel `.rodata`", "bytes"),
    "skel_text_rodata_bytes": ("skel `.text` + `.rodata`", "bytes"),
    "skel_data_bss_bytes": ("skel `.data` + `.data.rel.ro` + `.bss`", "bytes"),
    "skel_stack_worst_bytes": ("worst stack of a skel entry point (limit of `tests/stack_and_panic.rs`: 8,192)",
                               "bytes"),
    "packets_trivial_call": ("`last_error` on a valid handle: decode, lookup, dispatch, reply", "packets"),
    "packets_per_inference_native": ("`execute`, 1 uint8 input and output of 16 elements, native", "packets"),
    "packets_per_inference_float_16": ("the same in float", "packets"),
    "packets_per_element_quantize": ("float to uint8, per element", "packets"),
    "packets_per_element_dequantize": ("uint8 to float, per element", "packets"),
    "packets_per_frame_embedded": ("embedding API, one pre-bound `execute_frame`", "packets"),
    "packets_audio_frame_480": ("audio module, a 10 ms stereo Q15 frame, no inference", "packets"),
    "packets_audio_frame_480_with_inference_480": ("the same frame with an inference on a 480-sample window", "packets"),
    "packets_audio_frame_480_with_inference_16": ("the same frame with an inference on a 16-sample window", "packets"),
    "capi_text_bytes": ("audio module `.text`", "bytes"),
    "capi_text_rodata_bytes": ("audio module `.text` + `.rodata`", "bytes"),
    "capi_stack_worst_bytes": ("worst stack of an audio module entry point", "bytes"),
    "embed_text_rodata_bytes": ("embedding library, device build (`liblpai_direct_embed_check.so`), `.text` + "
                                "`.rodata`", "bytes"),
    "embed_stack_worst_bytes": ("worst stack of an embedding library function (`lpai_direct_embed_*`)", "bytes"),
    "arena_overhead_bytes": ("arena beyond the tensors, LPAI scratch and persistent memory, binary in place", "bytes"),
    "host_instructions_per_inference_traditional": ("our host instructions per inference, traditional mode", ""),
    "host_instructions_per_inference_direct": ("our host instructions per inference, direct mode", ""),
}

# The audio module's bench frames (tests/packet-bench/src/audio_module.rs): 10 ms at 48 kHz, and the two windows.
AUDIO_FRAME_SAMPLES, AUDIO_SAMPLE_RATE = 480, 48000
AUDIO_WINDOWS = (480, 16)
# The book's prose lines wrap at this width, as its chapters' do.
LINE_WIDTH = 118


def wrap(paragraph):
    """A paragraph in lines of the book's width, never broken inside a word or at a hyphen."""
    return textwrap.fill(paragraph, width=LINE_WIDTH, break_on_hyphens=False, break_long_words=False)


def measured_under(baseline):
    return f"measured {baseline['measured']} with {baseline['rustc']}, HEX_VER={baseline['hex_ver']}"


def figures_table(baseline, budgets):
    """Every deterministic figure, then every other budgeted one, beside its target and its budget
    (docs/src/design/benchmarks.md): the budgets column is the budgets file's, so the two cannot drift."""
    targets = {key: limit for key, limit, _ in TARGETS}
    budgeted = {budget.key: budget for budget in budgets}
    lines = [
        wrap(f"The baseline (`tests/bench/baseline.json`), {measured_under(baseline)}, host instructions on "
             f"{baseline['host_instructions_backend']}; the targets are issue 12's, the budgets "
             f"`{BUDGETS}`'s, each with the issue that set it:"),
        "",
        "| figure (`figures.json` key) | value | target |",
        "| --- | --- | --- |",
    ]
    for key in DETERMINISTIC + [key for key in budgeted if key not in DETERMINISTIC]:
        label, unit = LABELS.get(key, (key.replace("_", " "), "bytes"))
        value = baseline["figures"].get(key)
        shown = "not in the baseline yet" if value is None else f"{value:,}" + (f" {unit}" if unit else "")
        target = []
        if key in targets:
            met = "" if value is None else (" (met)" if value <= targets[key] else " (**not met**)")
            target.append(f"≤ {targets[key]:,}{met}")
        if key in budgeted:
            target.append(bench_budgets.book_cell(budgeted[key], value))
        lines.append(f"| {label} (`{key}`) | {shown} | {'; '.join(target)} |")
    return "\n".join(lines) + "\n"


def audio_frames_table(baseline, _budgets):
    """The audio module's packets per frame and what they come to (docs/src/audio.md). An inference's cost is a base
    plus a cost per element of the samples converted, the window quantized and the outputs dequantized, found from
    the two windows as lpai-packet-bench finds its packets_audio_per_inference_* figures."""
    figures = baseline["figures"]
    quiet = figures["packets_audio_frame_480"]
    wide, small = (figures[f"packets_audio_frame_480_with_inference_{window}"] for window in AUDIO_WINDOWS)
    element = (wide - small) / (3 * (AUDIO_WINDOWS[0] - AUDIO_WINDOWS[1]))
    base = small - quiet - element * 3 * AUDIO_WINDOWS[1]
    frames_per_second = AUDIO_SAMPLE_RATE // AUDIO_FRAME_SAMPLES
    per_second = wide * frames_per_second
    paragraph = (
        f"The baseline (`tests/bench/baseline.json`), {measured_under(baseline)}. From the two windows: {base:,.0f}"
        f" packets per inference plus {element:.2f} per element converted. The contract model's own packets and the"
        " framework's (the event callback the shell plays, the clock) are counted apart (`lpai-packet-bench` prints"
        " them); on a device graphExecute runs on LPAI. At"
        f" {AUDIO_SAMPLE_RATE // 1000} kHz with one inference every {1000 // frames_per_second} ms on a 480-sample"
        f" window that is {per_second:,} packets a second, {per_second / 1e6:.2f} MPPS of the aDSP for the module's"
        " own work."
    )
    lines = [
        "| frame | own packets | figure |",
        "| --- | --- | --- |",
        f"| no inference in it | {quiet:,} | `packets_audio_frame_480` |",
        f"| one inference, 480-sample window (480 samples converted, 480 quantized, 480 outputs dequantized) "
        f"| {wide:,} | `packets_audio_frame_480_with_inference_480` |",
        f"| one inference, 16-sample window | {small:,} | `packets_audio_frame_480_with_inference_16` |",
        "",
        wrap(paragraph),
    ]
    return "\n".join(lines) + "\n"


# The tables the book shows from the baseline and the budgets: name -> (file, how it is made). Each sits between
# <!-- bench-NAME:start --> and <!-- bench-NAME:end --> in its file; tests/bench_check.rs holds each to the two.
BOOK_TABLES = {
    "figures": ("docs/src/design/benchmarks.md", figures_table),
    "audio-frames": ("docs/src/audio.md", audio_frames_table),
}


def write_book_tables(baseline, budgets):
    """Puts each book table between its markers (each file whole or not at all)."""
    for name, (path, table) in BOOK_TABLES.items():
        start, end = f"<!-- bench-{name}:start -->\n", f"<!-- bench-{name}:end -->"
        with open(path) as file:
            text = file.read()
        if start not in text or end not in text:
            sys.exit(f"bench: {path} has no {start.strip()} ... {end} markers for the {name} table")
        before, rest = text.split(start, 1)
        after = rest[rest.index(end):]
        partial = path + ".partial"
        with open(partial, "w") as file:
            file.write(before + start + table(baseline, budgets) + after)
        os.replace(partial, path)
        print(f"{name} table written to {path}")


def read_json(name, required=True):
    path = os.path.join(BENCH, name)
    if not os.path.exists(path):
        if required:
            sys.exit(f"bench: {path} is missing: run scripts/bench.sh")
        return {}
    with open(path) as file:
        return json.load(file)


def sections(path, required):
    sizes = {}
    with open(path) as file:
        for line in file:
            fields = line.split()
            if len(fields) >= 2 and fields[0].startswith(".") and fields[1].isdigit():
                sizes[fields[0]] = sizes.get(fields[0], 0) + int(fields[1])
    missing = [name for name in required if name not in sizes]
    if missing:
        sys.exit(f"bench: {path} has no {', '.join(missing)} section (size -A's output changed, or the library did)")
    return sizes


def worst_stack(path):
    with open(path) as file:
        worst = [int(bytes) for bytes in re.findall(r"worst case (\d+) bytes", file.read())]
    if not worst:
        sys.exit(f"bench: {path} names no worst case (lpai-stack-check's output changed?)")
    return max(worst)


def gather(skel, hex_ver):
    sizes = sections(os.path.join(BENCH, "skel-sections.txt"), ARTIFACTS["skel"])
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    figures = {
        "rustc": rustc,
        "hex_ver": hex_ver,
        "skel_file_bytes": os.path.getsize(skel),
        "skel_text_bytes": sizes[".text"],
        "skel_rodata_bytes": sizes[".rodata"],
        "skel_data_bss_bytes": sizes[".data"] + sizes.get(".data.rel.ro", 0) + sizes[".bss"],
    }
    capi = sections(os.path.join(BENCH, "capi-sections.txt"), ARTIFACTS["capi"])
    figures["capi_text_bytes"] = capi[".text"]
    figures["capi_rodata_bytes"] = capi[".rodata"]
    # Each artifact's .text + .rodata (what its budget holds: moving a string between the two saves nothing) and
    # the worst stack of its entry points.
    for artifact, required in ARTIFACTS.items():
        sizes = sections(os.path.join(BENCH, f"{artifact}-sections.txt"), required)
        figures[f"{artifact}_text_rodata_bytes"] = sizes[".text"] + sizes[".rodata"]
        figures[f"{artifact}_stack_worst_bytes"] = worst_stack(os.path.join(BENCH, STACK_REPORTS[artifact]))
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


def read_budgets():
    """The budgets file's budgets, or the run's end naming what is wrong with it."""
    try:
        return bench_budgets.read(BUDGETS, ARTIFACTS)
    except bench_budgets.BudgetsError as error:
        sys.exit(f"bench: {error}")


def check_budgets(figures, budgets):
    """The failures of the budgets: every figure over its budget, whatever the baseline says."""
    stack_reports = {f"{artifact}_stack_worst_bytes": os.path.join(BENCH, report)
                     for artifact, report in STACK_REPORTS.items()}
    return bench_budgets.failures(figures, budgets, BUDGETS, BENCH, stack_reports)


def check_baseline(figures):
    """The failures of the regression check against the baseline (one when it was measured under other
    conditions: then no figure is compared)."""
    if not os.path.exists(BASELINE):
        return [f"bench: no {BASELINE}: write one with scripts/bench.sh --deterministic --update-baseline"]
    with open(BASELINE) as file:
        baseline = json.load(file)
    for condition in CONDITIONS:
        if baseline.get(condition) != figures.get(condition):
            return [
                f"bench: {BASELINE} was measured with {condition} {baseline.get(condition)!r}, this is "
                f"{figures.get(condition)!r}: the figures are not comparable (the toolchain is pinned in "
                "rust-toolchain.toml, HEX_VER defaults to 81; measure the baseline again under the same conditions)"
            ]
    moved, missing = [], []
    percent = round(TOLERANCE * 100)
    print(f"\nregression check against {BASELINE} ({baseline.get('measured', '?')}), within {percent}% either way:")
    for key in DETERMINISTIC:
        before, now = baseline["figures"].get(key), figures.get(key)
        if before is None or now is None:
            where = "the baseline" if before is None else "the figures"
            print(f"  {key:<46} missing from {where}")
            missing.append(f"{key} is missing from {where}")
            continue
        change = (now - before) / before * 100 if before else (0.0 if now == before else float("inf"))
        verdict = ""
        if now > before * (1 + TOLERANCE) or (before == 0 and now != 0):
            verdict = "GREW"
        elif now < before * (1 - TOLERANCE):
            verdict = "DROPPED"
        print(f"  {key:<46} {before:>12,} -> {now:>12,}  {change:+6.1f}%{'  ' + verdict if verdict else ''}")
        if verdict:
            moved.append(f"{key}: {before:,} -> {now:,} ({change:+.1f}%, {verdict.lower()})")
    failures = []
    if moved:
        failures.append(f"bench: beyond {percent}% of the baseline: " + "; ".join(moved)
                        + ". A figure that grew: bring it back. One that dropped: check the measurement still counts "
                        f"what it should, then record the gain. Either way update {BASELINE} on purpose "
                        "(scripts/bench.sh --deterministic --update-baseline) and say why in the commit")
    if missing:
        failures.append(f"bench: not compared with {BASELINE}: " + "; ".join(missing) + ". A figure new to the "
                        "bench enters the baseline when it is next written on purpose (scripts/bench.sh "
                        "--deterministic --update-baseline); one the bench no longer measures: measure it again")
    if not failures:
        print(f"every figure within {percent}% of the baseline")
    return failures


def write_atomically(path, value):
    partial = path + ".partial"
    with open(partial, "w") as file:
        json.dump(value, file, indent=2)
        file.write("\n")
    os.replace(partial, path)


def main():
    global BENCH, BASELINE, BUDGETS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skel")
    parser.add_argument("--hex-ver", type=int)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--update-baseline", action="store_true")
    parser.add_argument("--bench-dir", default=BENCH, help="where the inputs are and figures.json goes")
    parser.add_argument("--baseline", default=BASELINE, help="the baseline to check against or write")
    parser.add_argument("--budgets", default=BUDGETS, help="the budgets to hold the figures to")
    parser.add_argument("--book-table", choices=BOOK_TABLES,
                        help="print the book's table NAME from the baseline and the budgets")
    parser.add_argument("--write-book-tables", action="store_true",
                        help="write every book table from the baseline and the budgets between its markers")
    arguments = parser.parse_args()
    BENCH, BASELINE, BUDGETS = arguments.bench_dir, arguments.baseline, arguments.budgets
    budgets = read_budgets()
    if arguments.book_table or arguments.write_book_tables:
        with open(BASELINE) as file:
            baseline = json.load(file)
        if arguments.book_table:
            sys.stdout.write(BOOK_TABLES[arguments.book_table][1](baseline, budgets))
        else:
            write_book_tables(baseline, budgets)
        return
    if arguments.skel is None or arguments.hex_ver is None:
        parser.error("--skel and --hex-ver are needed to measure")
    figures = gather(arguments.skel, arguments.hex_ver)
    write_atomically(os.path.join(BENCH, "figures.json"), figures)
    print_targets(figures)
    bench_budgets.print_verdicts(figures, budgets, BUDGETS)
    print(f"\nfigures written to {BENCH}/figures.json")
    if arguments.update_baseline:
        os.makedirs(os.path.dirname(BASELINE), exist_ok=True)
        baseline = {condition: figures[condition] for condition in CONDITIONS}
        baseline["measured"] = datetime.date.today().isoformat()
        baseline["figures"] = {key: figures[key] for key in DETERMINISTIC}
        write_atomically(BASELINE, baseline)
        print(f"baseline written to {BASELINE}")
        if BASELINE == "tests/bench/baseline.json":
            write_book_tables(baseline, budgets)
        print("commit the baseline and the book's tables together, saying why they moved")
    if arguments.check:
        # The budgets first and apart: a figure over its budget fails whatever the baseline says, and the baseline's
        # verdict is given as well.
        failures = check_budgets(figures, budgets) + check_baseline(figures)
        if failures:
            sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
