#!/usr/bin/env python3
"""Writes the contract-model fixtures tests/fixtures/contract_single/, contract_stream/ and contract_custom_op/.

Their context binaries are LPCM files (version 1; version 3 for contract_custom_op, whose graph names the custom op
lpai.test::TestGain of the test op package tests/op-package), the format of the contract model of the LPAI backend
(tests/contract-model: a model of the documented LPAI contract, not the vendor library). The expected outputs are
computed here with this script's own implementation of the model's documented formula and counters, including
what the runtime does on EARLY_TERMINATION (6038): it calls graphExecute again with the same inputs. The Rust
model and this script are two implementations checked against each other (tests/contract-model/tests/fixtures.rs).

Standard library only; deterministic (fixed seeds). Usage, from anywhere:

    python3 scripts/make_contract_fixtures.py [--out DIR]
"""

import argparse
import json
import os
import random
import shutil
import struct

MAGIC = b"LPCM"
VERSION = 1
VERSION_3 = 3
# Version 3's API versions: the model's own (core API 2.32.0, LPAI backend API 2.26.0).
MODEL_API_VERSIONS = (2, 32, 0, 2, 26, 0)
UFIXED_POINT_8 = 0x0408
UFIXED_POINT_16 = 0x0416
EARLY_TERMINATION = 6038
LINES = 4
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def tensor(name, qnn_id, wide, scale_exponent, offset, shape, source=0, multiplier=1, addend=0, shift=0, step=0):
    return {
        "name": name,
        "id": qnn_id,
        "wide": wide,
        "scale": 2.0**scale_exponent,
        "offset": offset,
        "shape": shape,
        "source": source,
        "multiplier": multiplier,
        "addend": addend,
        "shift": shift,
        "step": step,
    }


FIXTURES = [
    {
        "name": "contract_single",
        "description": "Contract-model fixture (LPCM binary for the model of the documented LPAI contract, not the "
        "vendor library): one graph, in u8 [1,16] -> out u8 [1,16] = clamp((3*in - 200 + 7*frame) >> 2); "
        "no early termination.",
        "seed": 4242,
        "payload_bytes": 96,
        "graph": {
            "name": "single",
            "scratch_bytes": 100,
            "persistent_bytes": 40,
            "early_every": 0,
            "inputs": [tensor("in", 1, False, -4, -128, [1, 16])],
            "outputs": [tensor("out", 2, False, -3, -100, [1, 16], multiplier=3, addend=-200, shift=2, step=7)],
        },
    },
    {
        "name": "contract_stream",
        "description": "Contract-model fixture (LPCM binary for the model of the documented LPAI contract, not the "
        "vendor library): graph 'stream', frame u8 [1,4,8] and level u16 [1,6] -> mixed u8 [1,40] "
        "= clamp((-3*frame[i%32] + 700 + 9*n) >> 2), energy u16 [1,6] = clamp((level + 1000 - 300*n) >> 1); "
        "every 3rd graphExecute answers EARLY_TERMINATION and the runtime repeats it on the same inputs.",
        "seed": 7331,
        "payload_bytes": 384,
        "graph": {
            "name": "stream",
            "scratch_bytes": 300,
            "persistent_bytes": 40,
            "early_every": 3,
            "inputs": [
                tensor("frame", 1, False, -4, -128, [1, 4, 8]),
                tensor("level", 2, True, -7, -32768, [1, 6]),
            ],
            "outputs": [
                tensor("mixed", 3, False, -3, -64, [1, 40], source=0, multiplier=-3, addend=700, shift=2, step=9),
                tensor("energy", 4, True, -5, -16384, [1, 6], source=1, multiplier=1, addend=1000, shift=1, step=-300),
            ],
        },
    },
]


FIXTURES.append(
    {
        **FIXTURES[0],
        "name": "contract_custom_op",
        "description": "Contract-model fixture (LPCM binary for the model of the documented LPAI contract, not the "
        "vendor library): contract_single's graph in LPCM version 3, naming the custom op lpai.test::TestGain, so "
        "contextCreateFromBinary needs the test op package (tests/op-package, provider "
        "LpaiTestOpPackage_interfaceProvider) registered first; the outputs are contract_single's.",
        "custom_ops": [("lpai.test", "TestGain")],
    }
)


def elements(t):
    count = 1
    for dimension in t["shape"]:
        count *= dimension
    return count


def name_field(text):
    raw = text.encode("ascii")
    assert 0 < len(raw) < 32, text
    return raw + b"\0" * (32 - len(raw))


def lpcm(graph, payload, custom_ops=None):
    """The LPCM file of one graph (format documented in tests/contract-model/src/format/mod.rs): version 1, or
    version 3 (the model's own API versions) when the graph names custom ops (package, op)."""
    records = struct.pack(
        "<32sIIIII",
        name_field(graph["name"]),
        graph["scratch_bytes"],
        graph["persistent_bytes"],
        graph["early_every"],
        len(graph["inputs"]),
        len(graph["outputs"]),
    )
    for t in graph["inputs"] + graph["outputs"]:
        dims = t["shape"] + [0] * (4 - len(t["shape"]))
        records += struct.pack(
            "<32sIIfiI4IIiiIi",
            name_field(t["name"]),
            t["id"],
            UFIXED_POINT_16 if t["wide"] else UFIXED_POINT_8,
            t["scale"],
            t["offset"],
            len(t["shape"]),
            *dims,
            t["source"],
            t["multiplier"],
            t["addend"],
            t["shift"],
            t["step"],
        )
    assert len(records) == 52 + 88 * (len(graph["inputs"]) + len(graph["outputs"]))
    if custom_ops is None:
        version, prefix = VERSION, b""
    else:
        version = VERSION_3
        prefix = struct.pack("<6II", *MODEL_API_VERSIONS, len(custom_ops))
        for package, op in custom_ops:
            prefix += struct.pack("<I32s32s", 0, name_field(package), name_field(op))
    total = 16 + len(prefix) + len(records) + len(payload)
    return struct.pack("<4sIII", MAGIC, version, total, 1) + prefix + records + payload


def saturate(value):
    return max(I64_MIN, min(I64_MAX, value))


def output_values(t, source_values, frame):
    """The model's formula: acc = x[i % m] * multiplier + addend + n * step (i64, saturating), >> shift, clamp."""
    top = 65535 if t["wide"] else 255
    out = []
    for i in range(elements(t)):
        x = source_values[i % len(source_values)]
        acc = saturate(saturate(saturate(x * t["multiplier"]) + t["addend"]) + saturate(frame * t["step"]))
        out.append(min(top, max(0, acc >> t["shift"])))
    return out


def native_bytes(t, values):
    return struct.pack("<%d%s" % (len(values), "H" if t["wide"] else "B"), *values)


def float_bytes(t, values):
    # (q + offset) * scale is exact in float32: power-of-two scales and |q + offset| < 2**24.
    return struct.pack("<%df" % len(values), *[(q + t["offset"]) * t["scale"] for q in values])


def run_lines(graph, lines):
    """What the model answers to the runtime's calls: per line the graphExecute answers, the frame used, outputs."""
    frames = calls = 0
    results = []
    for inputs in lines:
        answers = []
        while True:
            calls += 1
            if graph["early_every"] > 0 and calls % graph["early_every"] == 0:
                frames += 1
                answers.append(EARLY_TERMINATION)
                continue
            outputs = [output_values(t, inputs[t["source"]], frames) for t in graph["outputs"]]
            results.append({"answers": answers + [0], "frame": frames, "outputs": outputs})
            frames += 1
            break
    return results


def f32_bits(value):
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", value))[0]


def tensor_entry(t, is_output):
    entry = {
        "qnn_name": t["name"],
        "qnn_id": t["id"],
        "shape": t["shape"],
        "float_dtype": "float32",
        "native_dtype": "uint16" if t["wide"] else "uint8",
        "qnn_data_type": "UFIXED_POINT_16 (0x0416)" if t["wide"] else "UFIXED_POINT_8 (0x0408)",
        "scale": t["scale"],
        "scale_f32_bits": f32_bits(t["scale"]),
        "zero_point": -t["offset"],
        "qnn_offset": t["offset"],
    }
    if is_output:
        entry["contract_formula"] = {k: t[k] for k in ("source", "multiplier", "addend", "shift", "step")}
    return entry


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def make(fixture, out_root):
    rng = random.Random(fixture["seed"])
    graph = fixture["graph"]
    directory = os.path.join(out_root, fixture["name"])
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    binary_name = fixture["name"] + ".bin"
    payload = bytes(rng.randrange(256) for _ in range(fixture["payload_bytes"]))
    write(os.path.join(directory, binary_name), lpcm(graph, payload, fixture.get("custom_ops")))

    lines = []
    for _ in range(LINES):
        lines.append([[rng.randrange(65536 if t["wide"] else 256) for _ in range(elements(t))] for t in graph["inputs"]])
    results = run_lines(graph, lines)

    list_lines = {"float": [], "native": []}
    for line, (inputs, result) in enumerate(zip(lines, results)):
        for mode, encode in (("native", native_bytes), ("float", float_bytes)):
            entries = []
            for index, (t, values) in enumerate(zip(graph["inputs"], inputs)):
                relative = "inputs/%s/%d_%d.raw" % (mode, line, index)
                write(os.path.join(directory, relative), encode(t, values))
                entries.append("%s:=%s" % (t["name"], relative))
            list_lines[mode].append(" ".join(entries))
            for t, values in zip(graph["outputs"], result["outputs"]):
                write(os.path.join(directory, "reference", mode, "Result_%d" % line, t["name"] + ".raw"), encode(t, values))
    for mode, entries in list_lines.items():
        write(os.path.join(directory, "input_list_%s.txt" % mode), ("\n".join(entries) + "\n").encode())

    for index, t in enumerate(graph["outputs"]):
        values = [v for result in results for v in result["outputs"][index]]
        assert len(set(values)) > 8, "%s: output %s hardly varies" % (fixture["name"], t["name"])

    manifest = {
        "name": fixture["name"],
        "description": fixture["description"],
        "context_binary": binary_name,
        "backend_library": "libQnnLpaiContract.so",
        "system_library": "libQnnSystemContract.so",
        "graph_name": graph["name"],
        "inputs": [tensor_entry(t, False) for t in graph["inputs"]],
        "outputs": [tensor_entry(t, True) for t in graph["outputs"]],
        "lines": LINES,
        "seed": fixture["seed"],
        "contract_model": {
            "format": "LPCM version %d (tests/contract-model/src/format/mod.rs)" % (3 if fixture.get("custom_ops") else 1),
            "scratch_bytes": graph["scratch_bytes"],
            "persistent_bytes": graph["persistent_bytes"],
            "early_every": graph["early_every"],
            "payload_bytes": fixture["payload_bytes"],
            "formula": "acc = x[i % m] * multiplier + addend + n * step (i64, saturating); q = acc >> shift "
            "(arithmetic); clamped to the output type; n = the graph's frame counter",
            "execute_answers_per_line": [result["answers"] for result in results],
            "frame_per_line": [result["frame"] for result in results],
        },
        "quantization": {
            "quantize_formula": "q = saturate(round_half_to_even(x / scale) + zero_point); float inputs are "
            "scale * (q + qnn_offset) exactly (power-of-two scales)",
            "dequantize_formula": "x = float32((q + qnn_offset) * scale)",
        },
    }
    if fixture.get("custom_ops"):
        manifest["contract_model"]["custom_ops"] = ["%s::%s" % op for op in fixture["custom_ops"]]
        manifest["op_packages"] = [
            {
                "library": "liblpai_test_op_package.so",
                "interface_provider": "LpaiTestOpPackage_interfaceProvider",
                "package": "lpai.test",
                "ops": ["TestGain"],
            }
        ]
    write(os.path.join(directory, "manifest.json"), (json.dumps(manifest, indent=2) + "\n").encode())
    print("%s: %d lines, answers %s" % (directory, LINES, manifest["contract_model"]["execute_answers_per_line"]))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(root, "tests", "fixtures"), help="directory of fixtures")
    args = parser.parse_args()
    for fixture in FIXTURES:
        make(fixture, args.out)


if __name__ == "__main__":
    main()
