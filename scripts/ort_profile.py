#!/usr/bin/env python3
"""ONNX Runtime's QNN profile of a fixture: the oracle lpai-net-run's qnn-profile-viewer outputs are held to.

Usage (from the repository root):

    .venv/bin/python scripts/ort_profile.py FIXTURE_DIR LEVEL OUT_DIR [STEM]

LEVEL is `basic` or `detailed`. The fixture's EPContext model (its manifest's `epcontext_wrapper`, which refers to
its context binary) runs on ONNX Runtime's QNN execution provider with the real libQnnHtp.so of the venv
(`.venv/qnn-lib-dir`) and the provider options `profiling_level=LEVEL` and `profiling_file_path=OUT_DIR/STEM.csv`
(STEM defaults to `ort_<LEVEL>`), once for each line of the fixture's float input list, in order. The QNN EP then
writes `OUT_DIR/STEM.csv` (its CSV) and `OUT_DIR/STEM_qnn.log` (the binary log, through libQnnSystem's System
Profile API). Both are appended to by the QNN EP, so they must not exist beforehand.

It fails (non-zero exit, a message on stderr) if the outputs exist already, the EPContext node does not refer to the
fixture's context binary, the session cannot run on the QNN EP alone, an output differs from the fixture's float
reference, or either profile file is missing or empty afterwards. On success it prints one JSON line naming the
files and the versions.
"""

import json
import os
import sys

import numpy as np
import onnxruntime as ort
import onnxruntime_qnn

# The EPContext check and the input feeds are the wall-time benchmark's (scripts/bench_ort.py), one owner each.
from bench_ort import epcontext_binary, float_inputs

EP_NAME = "QNNExecutionProvider"
LEVELS = ("basic", "detailed")
CSV_HEADER = "Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier"


def fail(message):
    raise SystemExit(f"ort_profile.py: {message}")


def qnn_lib_dir():
    """The directory of the real QNN libraries, as scripts/setup.sh records it in .venv/qnn-lib-dir."""
    recorded = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".venv", "qnn-lib-dir")
    try:
        with open(recorded) as file:
            return file.read().strip()
    except OSError as error:
        fail(f"{recorded}: {error} (run scripts/setup.sh)")


def check_epcontext(model_path, binary_path):
    """Fails unless the model's single EPContext node refers to the bytes of `binary_path`."""
    referred, where = epcontext_binary(model_path)
    with open(binary_path, "rb") as ours:
        if referred != ours.read():
            fail(f"{model_path}: its EPContext binary ({where}) is not {binary_path}")


def main(argv):
    if len(argv) not in (4, 5) or argv[2] not in LEVELS:
        sys.stderr.write(__doc__)
        return 2
    fixture, level, out_dir = os.path.abspath(argv[1]), argv[2], os.path.abspath(argv[3])
    stem = argv[4] if len(argv) == 5 else f"ort_{level}"
    csv_path = os.path.join(out_dir, f"{stem}.csv")
    log_path = os.path.join(out_dir, f"{stem}_qnn.log")
    for path in (csv_path, log_path):
        if os.path.exists(path):
            fail(f"{path} exists already (the QNN EP would append to it)")
    os.makedirs(out_dir, exist_ok=True)

    with open(os.path.join(fixture, "manifest.json")) as file:
        manifest = json.load(file)
    model_path = os.path.join(fixture, manifest["epcontext_wrapper"])
    check_epcontext(model_path, os.path.join(fixture, manifest["context_binary"]))

    ort.register_execution_provider_library(EP_NAME, onnxruntime_qnn.get_library_path())
    devices = [device for device in ort.get_ep_devices() if device.ep_name == EP_NAME]
    if not devices:
        fail("the QNN execution provider offers no device")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # The fixture's provider options, its backend_type (htp) given as the backend library lpai-net-run loads: the
    # QNN EP takes one of the two.
    provider_options = {key: value for key, value in manifest.get("provider_options", {}).items()
                        if key != "backend_type"}
    provider_options.update({
        "backend_path": os.path.join(qnn_lib_dir(), "libQnnHtp.so"),
        "profiling_level": level,
        "profiling_file_path": csv_path,
    })
    options.add_provider_for_devices(devices, provider_options)
    session = ort.InferenceSession(model_path, options)
    session.disable_fallback()

    output_names = [output["onnx_name"] for output in manifest["outputs"]]
    feeds = float_inputs(fixture, manifest)
    for line, feed in enumerate(feeds):
        outputs = session.run(output_names, feed)
        for name, value in zip(output_names, outputs):
            reference = os.path.join(fixture, "reference", "float", f"Result_{line}", f"{name}.raw")
            with open(reference, "rb") as file:
                if value.astype(np.float32).tobytes() != file.read():
                    fail(f"ORT's {name} for line {line} differs from {reference}")
    del session  # the QNN EP writes no more once the session is gone

    for path in (csv_path, log_path):
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            fail(f"the QNN EP wrote no {path}")
    with open(csv_path) as file:
        first = file.readline().rstrip("\n")
    if first != CSV_HEADER:
        fail(f"{csv_path} starts {first!r}, not the QNN EP's header {CSV_HEADER!r}")
    print(json.dumps({
        "csv": csv_path,
        "log": log_path,
        "level": level,
        "inferences": len(feeds),
        "onnxruntime": ort.__version__,
        "onnxruntime_qnn": onnxruntime_qnn.__version__,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
