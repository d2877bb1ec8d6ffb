#!/usr/bin/env python3
"""The peer in the wall-time benchmark: ONNX Runtime's QNN execution provider (plugin EP, backend_path libQnnHtp.so)
running a fixture's EPContext model, session.run timed with time.perf_counter_ns, float inputs in memory.

Usage: bench_ort.py FIXTURE_DIR QNN_LIB_DIR WARMUP

It first checks that the EPContext node refers to the fixture's context binary (the same bytes), creates the session
(QNN EP only, no CPU fallback for the EPContext node), runs WARMUP inferences untimed and checks the outputs equal the
fixture's float reference, then prints one JSON line (`ready`). After that it serves the benchmark driver on stdin:
`run N` runs N inferences, cycling through the fixture's float inputs where the last `run` left off, and prints
their times in nanoseconds on one line; `quit` ends it.
"""

import hashlib
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import onnxruntime_qnn

EP_NAME = "QNNExecutionProvider"


def epcontext_binary(model_path):
    """The context binary the model's EPContext node refers to, as bytes, and how it refers to it."""
    model = onnx.load(model_path)
    nodes = [node for node in model.graph.node if node.op_type == "EPContext"]
    if len(nodes) != 1:
        raise SystemExit(f"{model_path}: expected one EPContext node, found {len(nodes)}")
    attributes = {attribute.name: onnx.helper.get_attribute_value(attribute) for attribute in nodes[0].attribute}
    cache = attributes["ep_cache_context"]
    if attributes.get("embed_mode", 1) == 1:
        return cache, "embedded"
    path = os.path.join(os.path.dirname(os.path.abspath(model_path)), cache.decode())
    with open(path, "rb") as file:
        return file.read(), path


def float_inputs(fixture, manifest):
    """The fixture's float input list, one feed per line, as numpy arrays in memory."""
    feeds = []
    with open(os.path.join(fixture, "input_list_float.txt")) as listing:
        for line in listing:
            if not line.strip() or line.startswith("#"):
                continue
            feed = {}
            for entry, spec in zip(line.split(), manifest["inputs"]):
                name, _, path = entry.rpartition(":=")
                data = np.fromfile(os.path.join(fixture, path), dtype=np.float32)
                feed[spec["onnx_name"]] = data.reshape(spec["shape"])
            feeds.append(feed)
    return feeds


def main():
    fixture, qnn_dir, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(os.path.join(fixture, "manifest.json")) as file:
        manifest = json.load(file)
    model_path = os.path.join(fixture, manifest["epcontext_wrapper"])
    with open(os.path.join(fixture, manifest["context_binary"]), "rb") as file:
        ours = file.read()
    theirs, where = epcontext_binary(model_path)
    if theirs != ours:
        raise SystemExit(f"{model_path}: its EPContext binary ({where}) is not {manifest['context_binary']}")

    ort.register_execution_provider_library(EP_NAME, onnxruntime_qnn.get_library_path())
    devices = [device for device in ort.get_ep_devices() if device.ep_name == EP_NAME]
    if not devices:
        raise SystemExit("the QNN execution provider offers no device")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_provider_for_devices(devices, {"backend_path": os.path.join(qnn_dir, "libQnnHtp.so")})
    session = ort.InferenceSession(model_path, options)
    session.disable_fallback()

    feeds = float_inputs(fixture, manifest)
    output_names = [output["onnx_name"] for output in manifest["outputs"]]
    for run in range(max(warmup, len(feeds))):
        outputs = session.run(output_names, feeds[run % len(feeds)])
        if run < len(feeds):
            for name, value in zip(output_names, outputs):
                reference = os.path.join(fixture, "reference", "float", f"Result_{run}", f"{name}.raw")
                if value.astype(np.float32).tobytes() != open(reference, "rb").read():
                    raise SystemExit(f"ORT's {name} for line {run} differs from {reference}")
    print(json.dumps({
        "ready": True,
        "onnxruntime": ort.__version__,
        "onnxruntime_qnn": onnxruntime_qnn.__version__,
        "providers": session.get_providers(),
        "context_binary": where,
        "context_binary_sha256": hashlib.sha256(theirs).hexdigest(),
    }), flush=True)

    position = 0
    clock = time.perf_counter_ns
    for command in sys.stdin:
        words = command.split()
        if words == ["quit"]:
            break
        if len(words) != 2 or words[0] != "run":
            raise SystemExit(f"unknown command {command!r}")
        times = []
        for _ in range(int(words[1])):
            feed = feeds[position % len(feeds)]
            position += 1
            started = clock()
            session.run(output_names, feed)
            times.append(clock() - started)
        print(" ".join(map(str, times)), flush=True)


if __name__ == "__main__":
    main()
