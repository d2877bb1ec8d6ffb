#!/usr/bin/env python3
"""ONNX Runtime's scores for windows of audio: the expected results of the audio module's tests.

Usage (from the repository root):

    .venv/bin/python scripts/ort_audio_scores.py WRAPPER WINDOWS OUT

WRAPPER is a fixture's EPContext wrapper `<name>_ctx.onnx` (made by scripts/make_fixtures.py, next to its context
binary `<name>_qnn.bin` and its manifest.json). WINDOWS holds the float windows one after another, each one float
input of the model (as many float32 values as its first input has elements), little-endian. The wrapper runs on
ONNX Runtime's QNN execution provider (HTP backend, the fixture's provider options from its manifest), as
make_fixtures.py runs it for the fixtures' float references: the wrapper's CPU QuantizeLinear quantizes each
window, the EPContext node runs the context binary on the QNN EP, the wrapper's CPU DequantizeLinear gives the
float outputs. OUT receives the first output of each window as float32, little-endian, one after another.

Nothing of lpai-direct takes part: neither its runtime nor its quantizer.
"""

import json
import os
import sys

import numpy as np

import onnxruntime as ort
import onnxruntime_qnn

EP_NAME = "QNNExecutionProvider"
BASE_PROVIDER_OPTIONS = {"backend_type": "htp"}


def provider_options(wrapper):
    """The fixture's provider options, as its manifest records them (make_fixtures.py's defaults without one)."""
    manifest = os.path.join(os.path.dirname(os.path.abspath(wrapper)), "manifest.json")
    options = dict(BASE_PROVIDER_OPTIONS)
    if os.path.exists(manifest):
        with open(manifest) as f:
            options.update(json.load(f).get("provider_options", {}))
    return options


def qnn_session(wrapper):
    """The wrapper on the QNN EP (plugin EP), never falling back to the CPU EP for the EPContext node."""
    ort.register_execution_provider_library(EP_NAME, onnxruntime_qnn.get_library_path())
    devices = [device for device in ort.get_ep_devices() if device.ep_name == EP_NAME]
    if not devices:
        raise RuntimeError("QNN EP device not found")
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.add_provider_for_devices(devices, provider_options(wrapper))
    session = ort.InferenceSession(wrapper, so)
    session.disable_fallback()
    return session


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    wrapper, windows_path, out_path = argv[1:]
    session = qnn_session(wrapper)
    first_input = session.get_inputs()[0]
    if len(session.get_inputs()) != 1 or first_input.type != "tensor(float)":
        raise RuntimeError(f"{wrapper}: expected one float input, got {[i.type for i in session.get_inputs()]}")
    shape = [int(d) for d in first_input.shape]
    elements = int(np.prod(shape))
    floats = np.fromfile(windows_path, dtype="<f4")
    if floats.size == 0 or floats.size % elements:
        raise RuntimeError(f"{windows_path}: {floats.size} floats is no whole number of windows of {elements}")
    output_name = session.get_outputs()[0].name
    scores = []
    for window in floats.astype(np.float32).reshape([-1] + shape):
        (out,) = session.run([output_name], {first_input.name: np.ascontiguousarray(window)})
        if out.dtype != np.float32:
            raise RuntimeError(f"{wrapper}: output {output_name} is {out.dtype}, not float32")
        scores.append(np.ascontiguousarray(out, dtype="<f4").reshape(-1))
    with open(out_path, "wb") as f:
        for score in scores:
            f.write(score.tobytes())
    print(f"{len(scores)} windows of {elements} -> {scores[0].size} scores each ({output_name})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
