"""The device artifacts' budgets (tests/bench/budgets.json, issue 32): reads the file, holds the measured figures to
it whatever the baseline says and, for a figure over its budget, names the artifact, the figure, the budget and the
artifact's largest symbols. scripts/bench_figures.py measures the figures and calls it. Standard library only.

The file: {"about": TEXT, "artifacts": {ARTIFACT: {FIGURE: {"budget": BYTES, "issue": NUMBER}, ...}, ...}}, where
ARTIFACT is one of bench_figures.ARTIFACTS (skel, embed, capi) and FIGURE a figure of that artifact without its
prefix: the budget `"skel": {"text_rodata_bytes": ...}` holds figures.json's skel_text_rodata_bytes. Any figure the
bench measures takes a budget in one more line (such as frame_section_bytes once the frame section is measured); a
budget on a figure nothing measures fails the check instead of holding nothing. A budget changes only with an issue,
the one it names.
"""

import collections
import json
import os

# One budget: the artifact, its figure's name in the file and its key in figures.json, the bytes, the issue.
Budget = collections.namedtuple("Budget", "artifact figure key budget issue")
# llvm-nm's types of the symbols that take room in .text and .rodata: code and read-only data, local or global.
TEXT_RODATA_TYPES = frozenset("tTrR")
# How many of an over-budget artifact's largest symbols its failure lists.
LARGEST_SYMBOLS = 10


class BudgetsError(Exception):
    """The budgets file is missing or malformed; the message names the file and the entry at fault."""


def _refuse_duplicates(path):
    """A JSON object hook that refuses a key written twice (json would keep the last one, silently)."""

    def hook(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise BudgetsError(f"{path} has {key!r} twice in one object: which budget holds is ambiguous")
            seen[key] = value
        return seen

    return hook


def read(path, artifacts):
    """Every budget of the file at `path`, in its order; `artifacts` are the artifacts the bench measures."""
    try:
        with open(path) as file:
            document = json.load(file, object_pairs_hook=_refuse_duplicates(path))
    except (OSError, ValueError) as error:
        raise BudgetsError(f"cannot read the budgets {path}: {error}") from error
    by_artifact = document.get("artifacts") if isinstance(document, dict) else None
    if not isinstance(by_artifact, dict) or not by_artifact:
        raise BudgetsError(f"{path} has no \"artifacts\" object of budgets")
    budgets = []
    for artifact, figures in by_artifact.items():
        if artifact not in artifacts:
            raise BudgetsError(f"{path} budgets {artifact!r}, which the bench does not measure (one of "
                               f"{', '.join(artifacts)})")
        if not isinstance(figures, dict) or not figures:
            raise BudgetsError(f"{path}: {artifact} has no budgets ({{FIGURE: {{\"budget\": ..., \"issue\": ...}}}})")
        for figure, entry in figures.items():
            fields = entry if isinstance(entry, dict) else {}
            numbers = [fields.get("budget"), fields.get("issue")]
            if set(fields) != {"budget", "issue"} or not all(type(n) is int and n > 0 for n in numbers):
                raise BudgetsError(f"{path}: {artifact} {figure} is {entry!r}; a budget is "
                                   "{\"budget\": BYTES, \"issue\": NUMBER}, both positive whole numbers")
            budgets.append(Budget(artifact, figure, f"{artifact}_{figure}", *numbers))
    return budgets


def artifact_file(sections_path):
    """The artifact's file as `size -A` named it on its first line (`FILE  :`), or the sections file's own path."""
    try:
        with open(sections_path) as file:
            first = file.readline().strip()
    except OSError:
        return sections_path
    return first[:-1].strip() if first.endswith(":") else sections_path


def largest_symbols(symbols_path, count=LARGEST_SYMBOLS):
    """The `count` largest code and read-only data symbols in `llvm-nm -S --size-sort` output, largest first, as
    (bytes, type, name); none when the file is missing."""
    symbols = []
    if not os.path.exists(symbols_path):
        return symbols
    with open(symbols_path) as file:
        for line in file:
            fields = line.split(maxsplit=3)
            if len(fields) == 4 and fields[2] in TEXT_RODATA_TYPES:
                try:
                    symbols.append((int(fields[1], 16), fields[2], fields[3].strip()))
                except ValueError:
                    continue
    return sorted(symbols, key=lambda symbol: symbol[0], reverse=True)[:count]


def over_budget(budget, value, path, bench_dir, see_also):
    """The failure of one figure over its budget: artifact, figure, budget, largest symbols."""
    sections_path = os.path.join(bench_dir, f"{budget.artifact}-sections.txt")
    symbols_path = os.path.join(bench_dir, f"{budget.artifact}-symbols.txt")
    lines = [
        f"bench: {budget.artifact} ({artifact_file(sections_path)}) is over budget: {budget.key} is {value:,} bytes, "
        f"its budget {budget.budget:,} ({path}, issue {budget.issue}), {value - budget.budget:,} over. Bring it "
        "under its budget; a budget changes only with an issue."
        + (f" Its report: {see_also[budget.key]}." if budget.key in see_also else "")
    ]
    symbols = largest_symbols(symbols_path)
    if symbols:
        lines.append(f"  {budget.artifact}'s {len(symbols)} largest symbols in .text and .rodata "
                     f"(llvm-nm-19 -S --size-sort, {symbols_path}):")
        lines.extend(f"    {size:>8,}  {kind}  {name}" for size, kind, name in symbols)
    else:
        lines.append(f"  {symbols_path} lists no symbols of .text or .rodata (missing, or the artifact is stripped)")
    return "\n".join(lines)


def print_verdicts(figures, budgets, path):
    """Every budget beside its figure, failing nothing."""
    print(f"\nbudgets ({path}), in bytes, held whatever the baseline says:")
    for budget in budgets:
        value = figures.get(budget.key)
        shown = "not measured" if value is None else f"{value:,}"
        verdict = "" if value is None else ("within" if value <= budget.budget else "OVER")
        print(f"  {budget.key:<46} {shown:>12}   <= {budget.budget:,} (issue {budget.issue}) {verdict}")


def failures(figures, budgets, path, bench_dir, see_also):
    """One message for each budget its figure exceeds or that nothing measured; `see_also` maps a figure's key to
    the report that explains it (the stack check's deepest paths)."""
    messages = []
    for budget in budgets:
        value = figures.get(budget.key)
        if value is None:
            messages.append(f"bench: {path} budgets {budget.key} of {budget.artifact} at {budget.budget:,} bytes "
                            f"(issue {budget.issue}), but nothing measures {budget.key}: measure it in "
                            "scripts/bench_figures.py's gather with the budget, or the budget holds nothing")
        elif value > budget.budget:
            messages.append(over_budget(budget, value, path, bench_dir, see_also))
    return messages


def book_cell(budget, value):
    """The book's target cell of a budgeted figure: the budget, its issue, and whether the baseline's value is
    within it (nothing when the baseline does not hold the figure)."""
    cell = f"budget ≤ {budget.budget:,}, issue {budget.issue}"
    if value is not None:
        cell += " (within)" if value <= budget.budget else " (**over**)"
    return cell
