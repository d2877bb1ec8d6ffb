#!/usr/bin/env python3
"""Generate the QNN context-binary test fixtures under tests/fixtures/.

Usage (from the repository root):

    .venv/bin/python scripts/make_fixtures.py            # all fixtures -> tests/fixtures/
    .venv/bin/python scripts/make_fixtures.py --out DIR  # write somewhere else (e.g. to diff two runs)
    .venv/bin/python scripts/make_fixtures.py --only kws_conv

For every fixture this script:
  1. builds a small float ONNX model in code (fixed seeds),
  2. quantizes it with onnxruntime.quantization.quantize_static (QDQ, MinMax calibration over a
     few random inputs),
  3. compiles it with ONNX Runtime's QNN execution provider (plugin EP, HTP backend) into a QNN
     context binary `<name>_qnn.bin` plus the EPContext ONNX wrapper `<name>_ctx.onnx`,
  4. reads the binary's own graph/tensor metadata through libQnnSystem (graph name, tensor ids,
     names, data types, scale/offset),
  5. runs the wrapper with ORT + QNN EP on 3 random input lines (for the fixtures whose cfg sets
     edge_line, line 0 then gets saturating values and exact ties: put_edges) and stores float and
     native (quantized, exactly what crosses the EPContext node) inputs and reference outputs,
  6. checks that numpy's QuantizeLinear / DequantizeLinear formulas reproduce ORT bit for bit.

A plain (unquantized) uint8 or bool graph input or output (u8_bool_io) has no Q/DQ in the wrapper: ORT
feeds and returns the integer or bool tensor itself, its float file is those values as float32.

`two_graphs` is built by make_multi_graph_fixture: its model is split by the QNN EP into two
partitions, which end up as two graphs in one context binary; graphs/<g>/ then holds the input
lists, inputs and references of each graph alone (see tests/fixtures/README.md).

Nothing here is downloaded; everything comes from the packages in .venv.
"""

import argparse
import ctypes
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxruntime as ort
import onnxruntime_qnn
from onnxruntime.quantization import (
    CalibrationDataReader,
    CalibrationMethod,
    QuantFormat,
    QuantType,
    quantize_static,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "fixtures")

LINES = 3            # inference lines per fixture
CALIB_SAMPLES = 8    # calibration inputs per fixture
OPSET = 21           # opset 21: QuantizeLinear/DequantizeLinear accept uint16 in the default domain
IR_VERSION = 10

EP_NAME = "QNNExecutionProvider"
BASE_PROVIDER_OPTIONS = {"backend_type": "htp"}

NP_TO_ONNX = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.uint16): TensorProto.UINT16,
              np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int16): TensorProto.INT16,
              np.dtype(np.bool_): TensorProto.BOOL}

# Qnn_DataType_t values (see /work/shared/docs/qnn-abi.md)
QNN_DTYPES = {
    0x0008: "INT_8", 0x0016: "INT_16", 0x0032: "INT_32", 0x0064: "INT_64",
    0x0108: "UINT_8", 0x0116: "UINT_16", 0x0132: "UINT_32", 0x0164: "UINT_64",
    0x0216: "FLOAT_16", 0x0232: "FLOAT_32", 0x0264: "FLOAT_64",
    0x0308: "SFIXED_POINT_8", 0x0316: "SFIXED_POINT_16", 0x0332: "SFIXED_POINT_32",
    0x0408: "UFIXED_POINT_8", 0x0416: "UFIXED_POINT_16", 0x0432: "UFIXED_POINT_32",
    0x0508: "BOOL_8",
}
# The numpy dtype of a QNN tensor's native bytes (a BOOL_8 element is one byte, 0 or 1).
QNN_NATIVE_NP = {0x0408: "uint8", 0x0416: "uint16", 0x0308: "int8", 0x0316: "int16",
                 0x0108: "uint8", 0x0116: "uint16", 0x0008: "int8", 0x0016: "int16",
                 0x0508: "bool", 0x0232: "float32"}
# The ONNX element type of those native dtypes.
NP_DTYPE_TO_ELEM = {"uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16, "int8": TensorProto.INT8,
                    "int16": TensorProto.INT16, "bool": TensorProto.BOOL, "float32": TensorProto.FLOAT}


# --------------------------------------------------------------------------------------------
# Model builders.  Each returns (float ModelProto, {input name: sampler(rng) -> ndarray}, cfg)
# --------------------------------------------------------------------------------------------

def _init(rng, name, shape, fan_in):
    w = rng.standard_normal(shape).astype(np.float32) * np.float32(np.sqrt(2.0 / fan_in))
    return numpy_helper.from_array(w, name)


def _bias(rng, name, n):
    return numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name)


def _model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="lpai-direct make_fixtures.py")
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m, full_check=True)
    return m


def build_kws_conv():
    """Keyword-spotting-sized CNN: MFCC [1,1,49,10] -> 12 class logits."""
    rng = np.random.default_rng(1001)
    inits = [
        _init(rng, "c1_w", (8, 1, 3, 3), 9), _bias(rng, "c1_b", 8),
        _init(rng, "c2_w", (16, 8, 3, 3), 72), _bias(rng, "c2_b", 16),
        _init(rng, "c3_w", (16, 16, 3, 3), 144), _bias(rng, "c3_b", 16),
        _init(rng, "fc_w", (12, 16 * 12 * 3), 16 * 12 * 3), _bias(rng, "fc_b", 12),
    ]
    nodes = [
        helper.make_node("Conv", ["mfcc", "c1_w", "c1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2_w", "c2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "c3_w", "c3_b"], ["c3"], name="conv3", pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("Flatten", ["r3"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
    ]
    g = helper.make_graph(
        nodes, "kws_conv",
        [helper.make_tensor_value_info("mfcc", TensorProto.FLOAT, [1, 1, 49, 10])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 12])], inits)

    def mfcc(r):
        # MFCC-like: a per-coefficient mean and spread, smooth-ish over time.
        base = r.standard_normal((1, 1, 49, 10)).astype(np.float32)
        coef_mean = np.linspace(-2.0, 1.0, 10, dtype=np.float32)
        coef_std = np.linspace(3.0, 0.5, 10, dtype=np.float32)
        return (base * coef_std + coef_mean).astype(np.float32)

    cfg = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QUInt8,
           "description": "Keyword-spotting CNN: MFCC [1,1,49,10] -> 3x(Conv+Relu), MaxPool 2x2, "
                          "Flatten, Gemm -> 12 logits. uint8 activations, uint8 weights."}
    return _model(g), {"mfcc": mfcc}, cfg


def build_multi_io():
    """Two inputs, two outputs of different shapes: Add(broadcast) + MatMul, Concat + Gemm."""
    rng = np.random.default_rng(2002)
    inits = [
        _init(rng, "w_seq", (8, 6), 8),
        _init(rng, "w_vec", (5, 40), 40), _bias(rng, "b_vec", 5),
        numpy_helper.from_array(np.array([1, 32], dtype=np.int64), "flat_shape"),
    ]
    nodes = [
        helper.make_node("Add", ["frames", "ctx"], ["mixed"], name="add_ctx"),
        helper.make_node("MatMul", ["mixed", "w_seq"], ["seq_mm"], name="seq_matmul"),
        helper.make_node("Relu", ["seq_mm"], ["seq_out"], name="seq_relu"),
        helper.make_node("Reshape", ["frames", "flat_shape"], ["frames_flat"], name="flatten_frames"),
        helper.make_node("Concat", ["ctx", "frames_flat"], ["joined"], name="concat", axis=1),
        helper.make_node("Gemm", ["joined", "w_vec", "b_vec"], ["vec_out"], name="vec_gemm", transB=1),
    ]
    g = helper.make_graph(
        nodes, "multi_io",
        [helper.make_tensor_value_info("frames", TensorProto.FLOAT, [1, 4, 8]),
         helper.make_tensor_value_info("ctx", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("seq_out", TensorProto.FLOAT, [1, 4, 6]),
         helper.make_tensor_value_info("vec_out", TensorProto.FLOAT, [1, 5])], inits)

    samplers = {
        "frames": lambda r: r.standard_normal((1, 4, 8)).astype(np.float32),
        "ctx": lambda r: (r.uniform(-0.5, 1.5, (1, 8))).astype(np.float32),
    }
    cfg = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QUInt8,
           "description": "Two inputs frames[1,4,8], ctx[1,8]; seq_out[1,4,6] = Relu(MatMul(frames + ctx)); "
                          "vec_out[1,5] = Gemm(Concat(ctx, Reshape(frames,[1,32]))). uint8."}
    return _model(g), samplers, cfg


def build_u16_act():
    """Small conv net with 16-bit activations (A16W8)."""
    rng = np.random.default_rng(3003)
    inits = [
        _init(rng, "c1_w", (8, 3, 3, 3), 27), _bias(rng, "c1_b", 8),
        _init(rng, "c2_w", (4, 8, 1, 1), 8), _bias(rng, "c2_b", 4),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "c1_w", "c1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c1"], ["s1"], name="sigmoid1"),
        helper.make_node("AveragePool", ["s1"], ["p1"], name="avgpool", kernel_shape=[2, 2], strides=[2, 2]),
        # No Sigmoid at the graph output: with 16-bit activations the QNN EP gives a Sigmoid output
        # the fixed encoding scale 1/65536, offset 0 inside the QNN graph, but the CPU
        # DequantizeLinear it offloads into the wrapper keeps the calibrated scale, so ORT's float
        # output would be off by that ratio (see tests/fixtures/README.md).
        helper.make_node("Conv", ["p1", "c2_w", "c2_b"], ["score"], name="conv2"),
    ]
    g = helper.make_graph(
        nodes, "u16_act",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 4, 4, 4])], inits)
    samplers = {"image": lambda r: r.uniform(-1.0, 1.0, (1, 3, 8, 8)).astype(np.float32)}
    cfg = {"activation_type": QuantType.QUInt16, "weight_type": QuantType.QUInt8,
           "description": "image[1,3,8,8] -> Conv3x3+Sigmoid, AveragePool 2x2, Conv1x1 -> "
                          "score[1,4,4,4]. uint16 activations, uint8 weights."}
    return _model(g), samplers, cfg


def build_float_out():
    """uint8 in, the QNN graph's output is FLOAT_32 (final Softmax left unquantized)."""
    rng = np.random.default_rng(4004)
    inits = [
        _init(rng, "w1", (32, 16), 32), _bias(rng, "b1", 16),
        _init(rng, "w2", (16, 10), 16), _bias(rng, "b2", 10),
    ]
    nodes = [
        helper.make_node("MatMul", ["feat", "w1"], ["h1"], name="mm1"),
        helper.make_node("Add", ["h1", "b1"], ["h1b"], name="add1"),
        helper.make_node("Relu", ["h1b"], ["h1r"], name="relu1"),
        helper.make_node("MatMul", ["h1r", "w2"], ["h2"], name="mm2"),
        helper.make_node("Add", ["h2", "b2"], ["h2b"], name="add2"),
        helper.make_node("Softmax", ["h2b"], ["probs"], name="softmax_out", axis=-1),
    ]
    g = helper.make_graph(
        nodes, "float_out",
        [helper.make_tensor_value_info("feat", TensorProto.FLOAT, [1, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], inits)
    samplers = {"feat": lambda r: (r.standard_normal((1, 32)) * 2.0).astype(np.float32)}
    cfg = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QUInt8,
           "nodes_to_exclude": ["softmax_out"],
           "description": "feat[1,32] -> MatMul+Add+Relu, MatMul+Add, Softmax -> probs[1,10]. "
                          "uint8 QDQ everywhere except the final Softmax, which is excluded from "
                          "quantization, so the QNN graph ends in a float op and its output is FLOAT_32."}
    return _model(g), samplers, cfg


def build_two_graphs():
    """Two QNN graphs in one context binary: a float Erf (not taken by the QNN EP on HTP) in the
    middle splits the model into two QNN partitions, and the EP writes both into one _qnn.bin."""
    rng = np.random.default_rng(5005)
    inits = [
        _init(rng, "wa", (24, 16), 24), _bias(rng, "ba", 16),
        _init(rng, "wb", (16, 8), 16), _bias(rng, "bb", 8),
    ]
    nodes = [
        helper.make_node("MatMul", ["signal", "wa"], ["stage1_mm"], name="mm_a"),
        helper.make_node("Add", ["stage1_mm", "ba"], ["stage1"], name="add_a"),
        helper.make_node("Erf", ["stage1"], ["stage1_erf"], name="erf_mid"),
        helper.make_node("MatMul", ["stage1_erf", "wb"], ["head_mm"], name="mm_b"),
        helper.make_node("Add", ["head_mm", "bb"], ["head_out"], name="add_b"),
    ]
    g = helper.make_graph(
        nodes, "two_graphs",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [1, 24])],
        [helper.make_tensor_value_info("head_out", TensorProto.FLOAT, [1, 8])], inits)
    samplers = {"signal": lambda r: (r.standard_normal((1, 24)) * 1.5).astype(np.float32)}
    cfg = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QUInt8,
           "nodes_to_exclude": ["erf_mid"],
           "description": "signal[1,24] -> MatMul+Add -> stage1[1,16] -> Erf (float, excluded from "
                          "quantization; the QNN EP does not take it, so it runs on ORT's CPU EP) -> "
                          "MatMul+Add -> head_out[1,8]. uint8. The two QNN partitions (before and after "
                          "the Erf) are two graphs in one context binary."}
    return _model(g), samplers, cfg


def build_audio_frame():
    """An audio-frame classifier for the audio module (issue 13): one window of 160 PCM samples as float in
    [-1, 1) (x / 2^q of Q15 or Q31 audio) -> 4 class scores."""
    rng = np.random.default_rng(6006)
    inits = [
        _init(rng, "w1", (160, 16), 160), _bias(rng, "b1", 16),
        _init(rng, "w2", (16, 4), 16), _bias(rng, "b2", 4),
    ]
    nodes = [
        helper.make_node("MatMul", ["pcm", "w1"], ["h1"], name="mm1"),
        helper.make_node("Add", ["h1", "b1"], ["h1b"], name="add1"),
        helper.make_node("Relu", ["h1b"], ["h1r"], name="relu1"),
        helper.make_node("MatMul", ["h1r", "w2"], ["h2"], name="mm2"),
        helper.make_node("Add", ["h2", "b2"], ["scores"], name="add2"),
    ]
    g = helper.make_graph(
        nodes, "audio_frame",
        [helper.make_tensor_value_info("pcm", TensorProto.FLOAT, [1, 160])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 4])], inits)

    def pcm(r):
        # Audio-like: two tones at random frequencies and phases, and a little noise, within [-1, 1).
        t = np.arange(160, dtype=np.float64) / 16000.0
        tones = sum(0.4 * np.sin(2 * np.pi * r.uniform(100, 4000) * t + r.uniform(0, 2 * np.pi)) for _ in range(2))
        signal = tones + 0.05 * r.standard_normal(160)
        return np.clip(signal, -1.0, 0.999969482421875).reshape(1, 160).astype(np.float32)

    cfg = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QUInt8,
           "description": "pcm[1,160] (one window of audio samples as float) -> MatMul+Add+Relu -> 16, "
                          "MatMul+Add -> scores[1,4]. uint8. The audio module's model: its window is the "
                          "input's 160 elements."}
    return _model(g), {"pcm": pcm}, cfg


def build_s8_act():
    """Small conv net with signed 8-bit activations and weights (QInt8 A8W8): SFIXED_POINT_8 graph I/O."""
    rng = np.random.default_rng(7007)
    inits = [
        _init(rng, "c1_w", (6, 2, 3, 3), 18), _bias(rng, "c1_b", 6),
        _init(rng, "c2_w", (3, 6, 1, 1), 6), _bias(rng, "c2_b", 3),
    ]
    nodes = [
        helper.make_node("Conv", ["feat", "c1_w", "c1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        # No Relu at the end: the output has both signs, so its int8 bytes use the whole signed range.
        helper.make_node("Conv", ["p1", "c2_w", "c2_b"], ["delta"], name="conv2"),
    ]
    g = helper.make_graph(
        nodes, "s8_act",
        [helper.make_tensor_value_info("feat", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("delta", TensorProto.FLOAT, [1, 3, 4, 4])], inits)
    # An input range off centre (about [-1, 2]), so that the zero point is not 0.
    samplers = {"feat": lambda r: (r.standard_normal((1, 2, 8, 8)) * 0.7 + 0.5).astype(np.float32)}
    cfg = {"activation_type": QuantType.QInt8, "weight_type": QuantType.QInt8, "edge_line": True,
           "description": "feat[1,2,8,8] -> Conv3x3(6)+Relu, MaxPool 2x2, Conv1x1(3) -> delta[1,3,4,4]. "
                          "int8 activations, int8 weights (A8W8 signed): the QNN graph's input and output "
                          "are SFIXED_POINT_8. Line 0's input saturates at both ends and holds exact ties "
                          "(line_0_edges)."}
    return _model(g), samplers, cfg


def build_s16_act():
    """Two dense layers with signed 16-bit activations and int8 weights (QInt16 A16W8): SFIXED_POINT_16 graph I/O."""
    rng = np.random.default_rng(8008)
    inits = [
        _init(rng, "w1", (48, 16), 48), _bias(rng, "b1", 16),
        _init(rng, "w2", (16, 6), 16), _bias(rng, "b2", 6),
    ]
    nodes = [
        helper.make_node("MatMul", ["wave", "w1"], ["h1"], name="mm1"),
        helper.make_node("Add", ["h1", "b1"], ["h1b"], name="add1"),
        helper.make_node("Relu", ["h1b"], ["h1r"], name="relu1"),
        helper.make_node("MatMul", ["h1r", "w2"], ["h2"], name="mm2"),
        helper.make_node("Add", ["h2", "b2"], ["level"], name="add2"),
    ]
    g = helper.make_graph(
        nodes, "s16_act",
        [helper.make_tensor_value_info("wave", TensorProto.FLOAT, [1, 48])],
        [helper.make_tensor_value_info("level", TensorProto.FLOAT, [1, 6])], inits)
    samplers = {"wave": lambda r: (r.standard_normal((1, 48)) * 1.2 - 0.4).astype(np.float32)}
    cfg = {"activation_type": QuantType.QInt16, "weight_type": QuantType.QInt8, "edge_line": True,
           "description": "wave[1,48] -> MatMul+Add+Relu -> 16, MatMul+Add -> level[1,6]. int16 activations, "
                          "int8 weights (A16W8 signed): the QNN graph's input and output are SFIXED_POINT_16. "
                          "Line 0's input saturates at both ends and holds exact ties (line_0_edges)."}
    return _model(g), samplers, cfg


def build_u8_bool_io():
    """Plain (unquantized) uint8 and bool graph inputs and outputs: a Cast from each input, a Greater and a
    Cast to uint8 at the outputs, which the QNN EP keeps in the graph (UINT_8 and BOOL_8 graph I/O)."""
    rng = np.random.default_rng(9009)
    # Counts up to 255 times weights of about 1/255: the dense layer's output stays within about +-8, so the
    # Cast to uint8 of its Relu never saturates.
    w = rng.standard_normal((16, 12)).astype(np.float32) * np.float32(4.0 / 255.0)
    inits = [
        numpy_helper.from_array(w, "w1"), _bias(rng, "b1", 12),
        numpy_helper.from_array(np.array([4.0], dtype=np.float32), "gain"),
        numpy_helper.from_array(np.array([0.0], dtype=np.float32), "zero"),
    ]
    nodes = [
        helper.make_node("Cast", ["counts"], ["counts_f"], name="cast_counts", to=TensorProto.FLOAT),
        helper.make_node("Cast", ["mask"], ["mask_f"], name="cast_mask", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["counts_f", "mask_f"], ["kept"], name="apply_mask"),
        helper.make_node("MatMul", ["kept", "w1"], ["h1"], name="mm1"),
        helper.make_node("Add", ["h1", "b1"], ["score"], name="add1"),
        helper.make_node("Greater", ["score", "zero"], ["active"], name="is_active"),
        helper.make_node("Relu", ["score"], ["pos"], name="relu"),
        helper.make_node("Mul", ["pos", "gain"], ["scaled"], name="gain4"),
        helper.make_node("Cast", ["scaled"], ["level"], name="cast_level", to=TensorProto.UINT8),
    ]
    g = helper.make_graph(
        nodes, "u8_bool_io",
        [helper.make_tensor_value_info("counts", TensorProto.UINT8, [1, 16]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [1, 16])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 12]),
         helper.make_tensor_value_info("active", TensorProto.BOOL, [1, 12]),
         helper.make_tensor_value_info("level", TensorProto.UINT8, [1, 12])], inits)
    samplers = {
        "counts": lambda r: r.integers(0, 256, (1, 16)).astype(np.uint8),
        "mask": lambda r: r.integers(0, 4, (1, 16)) > 0,
    }
    cfg = {"activation_type": QuantType.QUInt8, "weight_type": QuantType.QUInt8,
           "description": "counts[1,16] uint8, mask[1,16] bool -> Cast to float each, Mul, MatMul+Add -> "
                          "score[1,12]; active[1,12] = Greater(score, 0) (bool); level[1,12] = Cast(Relu(score) * 4) "
                          "to uint8. uint8 QDQ between. The QNN graph's inputs are UINT_8 and BOOL_8 (the "
                          "Casts from them are in the graph), its outputs UFIXED_POINT_8, BOOL_8 and UINT_8."}
    return _model(g), samplers, cfg


FIXTURES = {
    "kws_conv": build_kws_conv,
    "multi_io": build_multi_io,
    "u16_act": build_u16_act,
    "float_out": build_float_out,
    "two_graphs": build_two_graphs,
    "audio_frame": build_audio_frame,
    "s8_act": build_s8_act,
    "s16_act": build_s16_act,
    "u8_bool_io": build_u8_bool_io,
}
SEEDS = {"kws_conv": 11, "multi_io": 22, "u16_act": 33, "float_out": 44, "two_graphs": 55, "audio_frame": 66,
         "s8_act": 77, "s16_act": 88, "u8_bool_io": 99}
# Fixtures whose context binary holds several graphs (built by make_multi_graph_fixture).
MULTI_GRAPH_FIXTURES = {"two_graphs": 2}


# --------------------------------------------------------------------------------------------
# Reading the context binary's metadata through libQnnSystem (ctypes; layouts for x86_64
# as documented in /work/shared/docs/qnn-abi.md).
# --------------------------------------------------------------------------------------------

def _u32(addr):
    return ctypes.c_uint32.from_address(addr).value


def _i32(addr):
    return ctypes.c_int32.from_address(addr).value


def _f32(addr):
    return ctypes.c_float.from_address(addr).value


def _ptr(addr):
    return ctypes.c_void_p.from_address(addr).value


def _cstr(addr):
    p = _ptr(addr)
    return ctypes.string_at(p).decode() if p else None


def _read_tensor(addr):
    version = _u32(addr)
    if version not in (1, 2):
        raise RuntimeError(f"unexpected Qnn_Tensor_t version {version}")
    v = addr + 8
    rank = _u32(v + 72)
    dims_p = _ptr(v + 80)
    dims = [_u32(dims_p + 4 * i) for i in range(rank)] if dims_p else []
    q = v + 32
    enc_def, enc = _u32(q), _u32(q + 4)
    dtype = _u32(v + 24)
    t = {"id": _u32(v), "name": _cstr(v + 8), "type": _u32(v + 16), "data_type": dtype,
         "data_type_name": QNN_DTYPES.get(dtype, hex(dtype)), "dims": dims,
         "encoding_definition": enc_def, "quantization_encoding": enc}
    if enc_def == 1 and enc == 0:  # DEFINED, SCALE_OFFSET
        t["scale"] = _f32(q + 8)
        t["scale_bits"] = ctypes.c_uint32.from_address(q + 8).value
        t["offset"] = _i32(q + 12)
    return t


def qnn_binary_info(path):
    lib = ctypes.CDLL(os.path.join(os.path.dirname(onnxruntime_qnn.get_library_path()), "libQnnSystem.so"))
    providers = ctypes.POINTER(ctypes.c_void_p)()
    count = ctypes.c_uint32()
    lib.QnnSystemInterface_getProviders.restype = ctypes.c_uint64
    err = lib.QnnSystemInterface_getProviders(ctypes.byref(providers), ctypes.byref(count))
    if err & 0xFFFF or count.value < 1:
        raise RuntimeError(f"QnnSystemInterface_getProviders failed: {err & 0xFFFF}")
    iface = providers[0]
    sys_api = (_u32(iface + 16), _u32(iface + 20), _u32(iface + 24))
    table = iface + 32
    proto_create = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p))
    proto_info = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                  ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint64))
    proto_free = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)
    create = proto_create(_ptr(table + 0))
    get_info = proto_info(_ptr(table + 8))
    free = proto_free(_ptr(table + 24))

    with open(path, "rb") as f:
        blob = f.read()
    buf = ctypes.create_string_buffer(blob, len(blob))
    handle = ctypes.c_void_p()
    err = create(ctypes.byref(handle))
    if err & 0xFFFF:
        raise RuntimeError(f"systemContextCreate failed: {err & 0xFFFF}")
    try:
        info_p = ctypes.c_void_p()
        info_size = ctypes.c_uint64()
        err = get_info(handle, ctypes.cast(buf, ctypes.c_void_p), len(blob), ctypes.byref(info_p),
                       ctypes.byref(info_size))
        if err & 0xFFFF:
            raise RuntimeError(f"systemContextGetBinaryInfo failed: {err & 0xFFFF}")
        bi = info_p.value
        version = _u32(bi)
        u = bi + 8
        if version == 3:
            build_id = _cstr(u + 8)
            num_graphs, graphs_p = _u32(u + 88), _ptr(u + 96)
        elif version in (1, 2):
            build_id = _cstr(u + 8)
            num_graphs, graphs_p = _u32(u + 112), _ptr(u + 120)
        else:
            raise RuntimeError(f"unexpected BinaryInfo version {version}")
        graphs = []
        for gi in range(num_graphs):
            g = graphs_p + 88 * gi
            gv = g + 8
            n_in, ins_p = _u32(gv + 8), _ptr(gv + 16)
            n_out, outs_p = _u32(gv + 24), _ptr(gv + 32)
            graphs.append({
                "graph_info_version": _u32(g),
                "name": _cstr(gv),
                "inputs": [_read_tensor(ins_p + 144 * i) for i in range(n_in)],
                "outputs": [_read_tensor(outs_p + 144 * i) for i in range(n_out)],
            })
        return {"binary_info_version": version, "build_id": build_id,
                "system_api": "%d.%d.%d" % sys_api, "graphs": graphs}
    finally:
        free(handle)


# --------------------------------------------------------------------------------------------
# ORT helpers
# --------------------------------------------------------------------------------------------

_REGISTERED = False


def qnn_devices():
    global _REGISTERED
    if not _REGISTERED:
        ort.register_execution_provider_library(EP_NAME, onnxruntime_qnn.get_library_path())
        _REGISTERED = True
    devs = [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]
    if not devs:
        raise RuntimeError("QNN EP device not found")
    return devs


def session_options():
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return so


class ListReader(CalibrationDataReader):
    def __init__(self, feeds):
        self._feeds = list(feeds)
        self._it = iter(self._feeds)

    def get_next(self):
        return next(self._it, None)

    def rewind(self):
        self._it = iter(self._feeds)


def make_feeds(samplers, input_names, seed, n):
    rng = np.random.default_rng(seed)
    feeds = []
    for _ in range(n):
        feeds.append({name: np.ascontiguousarray(samplers[name](rng)) for name in input_names})
    return feeds


def compile_context(qmodel, ctx_path, provider_options):
    so = session_options()
    so.add_session_config_entry("ep.context_enable", "1")
    so.add_session_config_entry("ep.context_embed_mode", "0")
    so.add_session_config_entry("ep.context_file_path", ctx_path)
    so.add_provider_for_devices(qnn_devices(), provider_options)
    # Created from bytes (no model path) so that the partition name's hash does not depend on
    # where the temporary files live.
    ort.InferenceSession(qmodel.SerializeToString(), so)


def qnn_session(model_path, provider_options):
    so = session_options()
    so.add_provider_for_devices(qnn_devices(), provider_options)
    sess = ort.InferenceSession(model_path, so)
    sess.disable_fallback()  # never silently rerun on the CPU EP
    return sess


def attr(node, name):
    for a in node.attribute:
        if a.name == name:
            v = helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return None


def scalar_init(model, name):
    for i in model.graph.initializer:
        if i.name == name:
            return numpy_helper.to_array(i)
    raise KeyError(name)


def quantize_np(x, scale, zp, dtype):
    """ONNX/ORT QuantizeLinear: saturate(round_half_to_even(x / scale) + zero_point)."""
    info = np.iinfo(dtype)
    q = np.rint(x.astype(np.float32) / np.float32(scale)) + np.float32(zp)
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize_np(q, scale, zp):
    """ONNX/ORT DequantizeLinear: (q - zero_point) * scale, in float32."""
    return ((q.astype(np.int32) - np.int32(zp)).astype(np.float32) * np.float32(scale)).astype(np.float32)


def probe_quantize(scale, zp, dtype):
    """Run ORT's CPU QuantizeLinear on a probe vector (exact .5 ties, both saturation edges,
    random values) and assert numpy's formula gives the same bytes.  Returns counts."""
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    scale = np.float32(scale)
    k = np.arange(int(info.min) - zp - 4, int(info.max) - zp + 5, dtype=np.float64)
    rng = np.random.default_rng(7)
    probe = np.concatenate([
        (k * scale).astype(np.float32),
        ((k + 0.5) * scale).astype(np.float32),
        ((k - 0.5) * scale).astype(np.float32),
        rng.uniform(float(k[0] * scale), float(k[-1] * scale), 4096).astype(np.float32),
        np.array([0.0, -0.0, 1e30, -1e30], dtype=np.float32),
    ]).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "q",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [probe.size])],
        [helper.make_tensor_value_info("y", NP_TO_ONNX[dtype], [probe.size])],
        [numpy_helper.from_array(np.array(scale, dtype=np.float32), "s"),
         numpy_helper.from_array(np.array(zp, dtype=dtype), "z")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": probe})[0]
    mine = quantize_np(probe, scale, zp, dtype.type)
    if not np.array_equal(got, mine):
        raise AssertionError(f"QuantizeLinear probe: numpy differs from ORT in {int(np.sum(got != mine))} values")
    ratio = probe / scale
    ties = int(np.sum(np.abs(ratio - np.floor(ratio)) == 0.5))
    alt = np.clip(np.rint(probe * (np.float32(1.0) / scale)) + np.float32(zp), info.min, info.max).astype(dtype)
    return {"values": int(probe.size), "exact_half_ties": ties,
            "reciprocal_multiply_mismatches": int(np.sum(alt != got))}


def f32_bits(v):
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", float(v)))[0]


# --------------------------------------------------------------------------------------------
# Wrapper analysis
# --------------------------------------------------------------------------------------------

def analyse_wrapper(wrapper):
    """Find the EPContext node and the CPU Q/DQ nodes around it.

    Returns (ep_node, inputs, outputs) where inputs/outputs are lists (in EPContext node order) of
    dicts with onnx_name (wrapper graph I/O), epcontext_name, and scale/zero_point/native dtype if
    a CPU QuantizeLinear/DequantizeLinear sits between the graph I/O and the EPContext node.
    """
    g = wrapper.graph
    ep_nodes = [n for n in g.node if n.op_type == "EPContext"]
    if len(ep_nodes) != 1:
        raise RuntimeError(f"expected exactly one EPContext node, got {len(ep_nodes)}")
    ep = ep_nodes[0]
    others = [n for n in g.node if n is not ep]
    graph_inputs = [i.name for i in g.input]
    graph_outputs = [o.name for o in g.output]
    produced_by = {o: n for n in others for o in n.output}
    consumers = {}
    for n in others:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    used = set()
    inputs = []
    for name in ep.input:
        rec = {"epcontext_name": name}
        if name in graph_inputs:
            rec.update(onnx_name=name, offloaded_q=False)
        else:
            q = produced_by.get(name)
            if q is None or q.op_type != "QuantizeLinear" or q.input[0] not in graph_inputs:
                raise RuntimeError(f"EPContext input {name} is not fed by a graph input or CPU Q node")
            scale = scalar_init(wrapper, q.input[1])
            zp = scalar_init(wrapper, q.input[2])
            if scale.size != 1 or zp.size != 1:
                raise RuntimeError("per-channel I/O quantization is not expected")
            rec.update(onnx_name=q.input[0], offloaded_q=True, q_node=q.name,
                       scale=np.float32(scale.reshape(())), zero_point=int(zp.reshape(())),
                       native_np=zp.dtype)
            used.add(q.name)
        inputs.append(rec)

    outputs = []
    for name in ep.output:
        rec = {"epcontext_name": name}
        if name in graph_outputs:
            rec.update(onnx_name=name, offloaded_dq=False)
        else:
            cons = consumers.get(name, [])
            if len(cons) != 1 or cons[0].op_type != "DequantizeLinear" or cons[0].output[0] not in graph_outputs:
                raise RuntimeError(f"EPContext output {name} does not go to a graph output or one CPU DQ node")
            dq = cons[0]
            scale = scalar_init(wrapper, dq.input[1])
            zp = scalar_init(wrapper, dq.input[2])
            rec.update(onnx_name=dq.output[0], offloaded_dq=True, dq_node=dq.name,
                       scale=np.float32(scale.reshape(())), zero_point=int(zp.reshape(())),
                       native_np=zp.dtype)
            used.add(dq.name)
        outputs.append(rec)

    leftover = [n.name for n in others if n.name not in used]
    if leftover:
        raise RuntimeError(f"wrapper has nodes outside the QNN partition: {leftover}")
    return ep, inputs, outputs


def boundary_model(wrapper, inputs, outputs):
    """Copy of the wrapper that also returns the tensors entering/leaving the EPContext node."""
    m = onnx.ModelProto()
    m.CopyFrom(wrapper)
    existing = {o.name for o in m.graph.output}
    # Q/DQ keep the shape, so the boundary tensor has the shape of the graph I/O it belongs to.
    shapes = {}
    for vi in list(m.graph.input) + list(m.graph.output):
        shapes[vi.name] = [d.dim_value for d in vi.type.tensor_type.shape.dim]
    for rec in inputs + outputs:
        name = rec["epcontext_name"]
        if name in existing or rec.get("offloaded_q") is False:
            # A graph output already, or a wrapper input fed to the EPContext node as it is.
            continue
        elem = NP_TO_ONNX[np.dtype(rec["native_np"])] if "native_np" in rec else TensorProto.FLOAT
        m.graph.output.append(helper.make_tensor_value_info(name, elem, shapes[rec["onnx_name"]]))
        existing.add(name)
    return m


def epcontext_only_model(wrapper, ep, manifest_inputs, manifest_outputs):
    """The wrapper reduced to its EPContext node: native tensors in, native tensors out."""
    m = onnx.ModelProto()
    m.CopyFrom(wrapper)
    g = m.graph
    keep = onnx.NodeProto()
    keep.CopyFrom(ep)
    del g.node[:]
    g.node.append(keep)
    del g.initializer[:]
    del g.input[:]
    del g.output[:]
    del g.value_info[:]
    by_ep_in = {d["epcontext_name"]: d for d in manifest_inputs}
    by_ep_out = {d["epcontext_name"]: d for d in manifest_outputs}
    for n in ep.input:
        d = by_ep_in[n]
        g.input.append(helper.make_tensor_value_info(n, NP_DTYPE_TO_ELEM[d["native_dtype"]], d["shape"]))
    for n in ep.output:
        d = by_ep_out[n]
        g.output.append(helper.make_tensor_value_info(n, NP_DTYPE_TO_ELEM[d["native_dtype"]], d["shape"]))
    return m


def read_raw(path, dtype, shape):
    return np.fromfile(path, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)


# --------------------------------------------------------------------------------------------
# One fixture
# --------------------------------------------------------------------------------------------

SAFE_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def find_qnn_tensor(name, overrides, ep_name, tensors):
    """The QNN tensor (from the binary) that the EPContext I/O `ep_name` maps to."""
    qnn_name = overrides.get(ep_name, ep_name)
    hits = [t for t in tensors if t["name"] == qnn_name]
    if len(hits) != 1:
        raise RuntimeError(f"{name}: QNN tensor for {ep_name} ({qnn_name}) not found in "
                           f"{[t['name'] for t in tensors]}")
    return hits[0]


def describe_io(name, rec, qt):
    """Manifest entry for one QNN graph input/output; checks the binary's encoding against
    the wrapper's CPU Q/DQ parameters."""
    if not SAFE_NAME.match(qt["name"]):
        raise RuntimeError(f"{name}: QNN tensor name {qt['name']!r} needs escaping")
    native = QNN_NATIVE_NP.get(qt["data_type"])
    if native is None:
        raise RuntimeError(f"{name}: unsupported QNN dtype {qt['data_type_name']}")
    d = {"onnx_name": rec["onnx_name"], "epcontext_name": rec["epcontext_name"],
         "qnn_name": qt["name"], "qnn_id": qt["id"], "shape": qt["dims"],
         "float_dtype": "float32", "native_dtype": native,
         "qnn_data_type": "%s (0x%04x)" % (qt["data_type_name"], qt["data_type"]),
         "scale": None, "scale_f32_bits": None, "zero_point": None, "qnn_offset": None,
         "cpu_qdq_offloaded": "scale" in rec}
    if "scale" in rec:
        if native != np.dtype(rec["native_np"]).name:
            raise RuntimeError(f"{name}: ORT Q/DQ dtype {rec['native_np']} vs QNN {native}")
        if qt.get("scale_bits") != struct.unpack("<I", struct.pack("<f", rec["scale"]))[0] \
                or qt.get("offset") != -rec["zero_point"]:
            raise RuntimeError(f"{name}: QNN quant params of {qt['name']} ({qt.get('scale')}, "
                               f"{qt.get('offset')}) differ from ORT's ({rec['scale']}, "
                               f"{rec['zero_point']})")
        d.update(scale=float(rec["scale"]), scale_f32_bits=f32_bits(rec["scale"]),
                 zero_point=rec["zero_point"], qnn_offset=qt["offset"])
    elif "scale" in qt:
        raise RuntimeError(f"{name}: QNN tensor {qt['name']} is quantized but ORT has no CPU Q/DQ for it")
    return d


def write_raw(path, arr):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">":
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    with open(path, "wb") as f:
        f.write(a.tobytes())


def rel(p, root):
    return os.path.relpath(p, root).replace(os.sep, "/")


def put_edges(qmodel, feed, ties=6, beyond=100):
    """Writes into `feed` (one input line) the values where a conversion can go wrong: for every float input the
    QDQ model quantizes, its first element lies `beyond` steps below the lowest representable value and its second
    as far above the highest (both saturate), and the next `ties` are exact half-way points (x / scale in float32
    is k + 0.5), spread over the range.  Returns what was written, per input, for the manifest."""
    written = {}
    for q in qmodel.graph.node:
        if q.op_type != "QuantizeLinear" or q.input[0] not in feed:
            continue
        x = feed[q.input[0]]
        scale = np.float32(scalar_init(qmodel, q.input[1]).reshape(()))
        zp_arr = scalar_init(qmodel, q.input[2])
        zp, info = int(zp_arr.reshape(())), np.iinfo(zp_arr.dtype)
        flat = x.reshape(-1)
        flat[0] = np.float32((info.min - zp - beyond) * np.float64(scale))
        flat[1] = np.float32((info.max - zp + beyond) * np.float64(scale))
        found = []
        for start in np.linspace(info.min - zp, info.max - zp - 1, ties).astype(np.int64):
            for k in range(int(start), int(start) + 64):
                v = np.float32((k + 0.5) * np.float64(scale))
                if v / scale == np.float32(k + 0.5) and k + zp + 1 <= info.max:
                    found.append(v)
                    break
        if len(found) != ties:
            raise RuntimeError(f"put_edges: only {len(found)} exact ties found for {q.input[0]}")
        flat[2:2 + ties] = found
        written[q.input[0]] = {"elements": f"0..{1 + ties}", "saturating_low": 1, "saturating_high": 1,
                               "exact_half_ties": ties}
    return written


def compile_fixture(name, out_root, work_root):
    """Steps 1-3: float model, QDQ quantization, QNN EP compile.  Creates the fixture directory
    (emptied first) with `<name>_qnn.bin` and `<name>_ctx.onnx` in it."""
    fmodel, samplers, cfg = FIXTURES[name]()
    input_names = [i.name for i in fmodel.graph.input]
    provider_options = dict(BASE_PROVIDER_OPTIONS)
    provider_options.update(cfg.get("provider_options", {}))

    work = os.path.join(work_root, name)
    os.makedirs(work)
    fpath = os.path.join(work, "float.onnx")
    qpath = os.path.join(work, "qdq.onnx")
    onnx.save(fmodel, fpath)

    seed = SEEDS[name]
    calib = make_feeds(samplers, input_names, seed * 1000 + 1, CALIB_SAMPLES)
    lines = make_feeds(samplers, input_names, seed * 1000 + 2, LINES)

    quantize_static(
        fpath, qpath, ListReader(calib),
        quant_format=QuantFormat.QDQ,
        activation_type=cfg["activation_type"],
        weight_type=cfg["weight_type"],
        per_channel=False,
        calibrate_method=CalibrationMethod.MinMax,
        nodes_to_exclude=cfg.get("nodes_to_exclude"),
        extra_options={"ActivationSymmetric": False, "WeightSymmetric": True},
    )
    qmodel = onnx.load(qpath)
    # After calibration, so that the calibration range is that of the ordinary inputs.
    edges = put_edges(qmodel, lines[0]) if cfg.get("edge_line") else None

    # Compile to <work>/ctx/<name>.onnx + <name>_qnn.bin
    ctx_dir = os.path.join(work, "ctx")
    os.makedirs(ctx_dir)
    compile_context(qmodel, os.path.join(ctx_dir, f"{name}.onnx"), provider_options)
    produced = sorted(os.listdir(ctx_dir))
    bin_name = f"{name}_qnn.bin"
    if bin_name not in produced:
        raise RuntimeError(f"{name}: expected {bin_name}, the EP produced {produced}")

    fx = os.path.join(out_root, name)
    if os.path.exists(fx):
        shutil.rmtree(fx)
    os.makedirs(fx)
    shutil.copyfile(os.path.join(ctx_dir, bin_name), os.path.join(fx, bin_name))
    wrapper = onnx.load(os.path.join(ctx_dir, f"{name}.onnx"))
    ctx_onnx = os.path.join(fx, f"{name}_ctx.onnx")
    onnx.save(wrapper, ctx_onnx)
    return dict(cfg=cfg, provider_options=provider_options, fpath=fpath, qpath=qpath, ctx_dir=ctx_dir, edges=edges,
                seed=seed, lines=lines, fx=fx, bin_name=bin_name, wrapper=wrapper, ctx_onnx=ctx_onnx)


def make_fixture(name, out_root, work_root, log):
    if name in MULTI_GRAPH_FIXTURES:
        make_multi_graph_fixture(name, out_root, work_root, log)
        return
    c = compile_fixture(name, out_root, work_root)
    cfg, provider_options, fpath, qpath = c["cfg"], c["provider_options"], c["fpath"], c["qpath"]
    ctx_dir, seed, lines, fx = c["ctx_dir"], c["seed"], c["lines"], c["fx"]
    bin_name, wrapper, ctx_onnx = c["bin_name"], c["wrapper"], c["ctx_onnx"]

    ep, ep_inputs, ep_outputs = analyse_wrapper(wrapper)
    if attr(ep, "ep_cache_context") != bin_name or attr(ep, "embed_mode") != 0:
        raise RuntimeError(f"{name}: unexpected EPContext attributes")
    overrides = {}
    for item in (attr(ep, "io_name_overrides") or "").split(";"):
        if item:
            k, v = item.split("=", 1)
            overrides[k] = v

    log(f"[{name}] wrapper nodes:")
    for n in wrapper.graph.node:
        log(f"    {n.op_type:17s} {n.name}: {list(n.input)} -> {list(n.output)}")

    # The binary's own view of its graph.
    binfo = qnn_binary_info(os.path.join(fx, bin_name))
    if len(binfo["graphs"]) != 1:
        raise RuntimeError(f"{name}: expected one graph in the binary")
    qg = binfo["graphs"][0]
    partition = attr(ep, "partition_name")
    if qg["name"] != partition:
        raise RuntimeError(f"{name}: binary graph {qg['name']} != EPContext partition {partition}")

    def qnn_tensor_for(ep_name, tensors):
        return find_qnn_tensor(name, overrides, ep_name, tensors)

    def describe(rec, qt):
        return describe_io(name, rec, qt)

    in_desc = {r["epcontext_name"]: describe(r, qnn_tensor_for(r["epcontext_name"], qg["inputs"]))
               for r in ep_inputs}
    out_desc = {r["epcontext_name"]: describe(r, qnn_tensor_for(r["epcontext_name"], qg["outputs"]))
                for r in ep_outputs}
    # Manifest order = QNN graph order (what graphExecute expects).
    by_qnn_in = {d["qnn_name"]: d for d in in_desc.values()}
    by_qnn_out = {d["qnn_name"]: d for d in out_desc.values()}
    inputs_m = [by_qnn_in[t["name"]] for t in qg["inputs"]]
    outputs_m = [by_qnn_out[t["name"]] for t in qg["outputs"]]
    recs_in = {r["epcontext_name"]: r for r in ep_inputs}
    recs_out = {r["epcontext_name"]: r for r in ep_outputs}

    # Reference runs: the unmodified wrapper (float refs) and a copy that also exposes the
    # EPContext node's inputs/outputs (native refs).  The copy has to sit next to the .bin.
    sess = qnn_session(ctx_onnx, provider_options)
    bpath = os.path.join(ctx_dir, f"{name}_boundary.onnx")
    onnx.save(boundary_model(wrapper, ep_inputs, ep_outputs), bpath)
    bsess = qnn_session(bpath, provider_options)
    out_names = [o.name for o in sess.get_outputs()]
    b_names = [o.name for o in bsess.get_outputs()]

    cpu_float = ort.InferenceSession(fpath, providers=["CPUExecutionProvider"])
    cpu_qdq = ort.InferenceSession(qpath, providers=["CPUExecutionProvider"])

    list_float, list_native = [], []
    results = []
    cpu_results = []
    recip_mismatch = {}
    probes = {}
    for d in inputs_m:
        if d["cpu_qdq_offloaded"]:
            probes[d["qnn_name"]] = probe_quantize(d["scale"], d["zero_point"], d["native_dtype"])
            log(f"    quantize probe {d['qnn_name']}: {probes[d['qnn_name']]}")
    for li, feed in enumerate(lines):
        outs = dict(zip(out_names, sess.run(None, feed)))
        cpu_results.append((dict(zip([o.name for o in cpu_float.get_outputs()], cpu_float.run(None, feed))),
                            dict(zip([o.name for o in cpu_qdq.get_outputs()], cpu_qdq.run(None, feed)))))
        bouts = dict(zip(b_names, bsess.run(None, feed)))
        ent_f, ent_n = [], []
        for ii, d in enumerate(inputs_m):
            x = feed[d["onnx_name"]]
            native = bouts[d["epcontext_name"]] if d["epcontext_name"] in bouts else x
            if d["cpu_qdq_offloaded"]:
                r = recs_in[d["epcontext_name"]]
                mine = quantize_np(x, r["scale"], r["zero_point"], np.dtype(r["native_np"]).type)
                if mine.dtype != native.dtype or not np.array_equal(mine, native):
                    bad = int(np.sum(mine != native))
                    raise AssertionError(f"{name} line {li} {d['onnx_name']}: numpy QuantizeLinear "
                                         f"differs from ORT in {bad} elements")
                # Informational: does x * (1/scale) (cheaper than a division) give the same bytes?
                info = np.iinfo(native.dtype)
                alt = np.clip(np.rint(x * (np.float32(1.0) / r["scale"])) + np.float32(r["zero_point"]),
                              info.min, info.max).astype(native.dtype)
                recip_mismatch[d["qnn_name"]] = recip_mismatch.get(d["qnn_name"], 0) + int(np.sum(alt != native))
            assert native.dtype == np.dtype(d["native_dtype"]), (native.dtype, d["native_dtype"])
            assert list(native.shape) == d["shape"], (native.shape, d["shape"])
            fp = os.path.join(fx, "inputs", "float", f"{li}_{ii}.raw")
            npth = os.path.join(fx, "inputs", "native", f"{li}_{ii}.raw")
            write_raw(fp, x.astype(np.float32))
            write_raw(npth, native)
            ent_f.append(f"{d['qnn_name']}:={rel(fp, fx)}")
            ent_n.append(f"{d['qnn_name']}:={rel(npth, fx)}")
        list_float.append(" ".join(ent_f))
        list_native.append(" ".join(ent_n))

        line_res = []
        for d in outputs_m:
            fl = outs[d["onnx_name"]]
            if not np.array_equal(fl, bouts[d["onnx_name"]]):
                raise AssertionError(f"{name}: boundary copy of the wrapper changed {d['onnx_name']}")
            native = bouts[d["epcontext_name"]]
            assert native.dtype == np.dtype(d["native_dtype"]), (native.dtype, d["native_dtype"])
            assert list(native.shape) == d["shape"], (native.shape, d["shape"])
            if d["cpu_qdq_offloaded"]:
                r = recs_out[d["epcontext_name"]]
                deq = dequantize_np(native, r["scale"], r["zero_point"])
                if not np.array_equal(deq.view(np.uint32), fl.astype(np.float32).view(np.uint32)):
                    raise AssertionError(f"{name}: numpy DequantizeLinear differs from ORT for {d['onnx_name']}")
            write_raw(os.path.join(fx, "reference", "float", f"Result_{li}", f"{d['qnn_name']}.raw"),
                      fl.astype(np.float32))
            write_raw(os.path.join(fx, "reference", "native", f"Result_{li}", f"{d['qnn_name']}.raw"), native)
            line_res.append(fl)
        results.append(line_res)

    # Sanity: outputs not constant and different from line to line.
    for oi, d in enumerate(outputs_m):
        for li in range(LINES):
            if np.unique(results[li][oi]).size < 2:
                raise AssertionError(f"{name}: output {d['onnx_name']} line {li} is constant")
        for a in range(LINES):
            for b in range(a + 1, LINES):
                if np.array_equal(results[a][oi], results[b][oi]):
                    raise AssertionError(f"{name}: output {d['onnx_name']} equal on lines {a} and {b}")

    # Sanity: the QNN results must stay close to ORT's CPU run of the same QDQ model (catches a
    # wrong I/O scale); the distance to the float model is only recorded (uint8 error is large).
    # Integer and bool outputs are compared as float32 values; a bool output, where one flipped element is
    # the whole range, may differ from the CPU run in at most a tenth of its elements.
    sanity = {}
    for oi, d in enumerate(outputs_m):
        qnn = np.stack([results[li][oi] for li in range(LINES)]).astype(np.float32)
        flt = np.stack([cpu_results[li][0][d["onnx_name"]] for li in range(LINES)]).astype(np.float32)
        qdq = np.stack([cpu_results[li][1][d["onnx_name"]] for li in range(LINES)]).astype(np.float32)
        span = float(flt.max() - flt.min())
        e_f = float(np.abs(qnn - flt).max())
        e_q = float(np.abs(qnn - qdq).max())
        sanity[d["qnn_name"]] = {"float_model_range": span, "max_abs_diff_vs_cpu_float_model": e_f,
                                 "max_abs_diff_vs_cpu_qdq_model": e_q}
        log(f"    sanity {d['qnn_name']}: range {span:.4g}, |qnn-float| {e_f:.4g}, |qnn-cpu_qdq| {e_q:.4g}")
        if d["native_dtype"] == "bool":
            differing = int(np.sum(qnn != qdq))
            sanity[d["qnn_name"]]["elements_differing_from_cpu_qdq_model"] = differing
            log(f"    sanity {d['qnn_name']}: {differing} of {qnn.size} elements differ from the CPU QDQ run")
            if differing > qnn.size // 10:
                raise AssertionError(f"{name}: {d['onnx_name']} differs from ORT's CPU QDQ result too often")
        elif e_q > 0.05 * span:
            raise AssertionError(f"{name}: {d['onnx_name']} is too far from ORT's CPU QDQ result")

    with open(os.path.join(fx, "input_list_float.txt"), "w") as f:
        f.write("\n".join(list_float) + "\n")
    with open(os.path.join(fx, "input_list_native.txt"), "w") as f:
        f.write("\n".join(list_native) + "\n")

    manifest = {
        "name": name,
        "description": cfg["description"],
        "context_binary": bin_name,
        "epcontext_wrapper": os.path.basename(ctx_onnx),
        "graph_name": qg["name"],
        "epcontext_node": {
            "name": ep.name,
            "partition_name": partition,
            "io_name_overrides": attr(ep, "io_name_overrides"),
            "ep_sdk_version": attr(ep, "ep_sdk_version"),
        },
        "qnn_binary": {
            "build_id": binfo["build_id"],
            "binary_info_version": binfo["binary_info_version"],
            "graph_info_version": qg["graph_info_version"],
        },
        "input_list_names": "QNN tensor names read from the context binary with libQnnSystem "
                            "(systemContextGetBinaryInfo); entries are in QNN graph input order",
        "inputs": inputs_m,
        "outputs": outputs_m,
        "lines": LINES,
        "seed": seed,
        "sanity": sanity,
        "reciprocal_multiply_quantize_mismatches": recip_mismatch,
        "quantize_probe": probes,
        **({"line_0_edges": c["edges"]} if c["edges"] else {}),
        "quantization": {
            "activation_type": cfg["activation_type"].name,
            "weight_type": cfg["weight_type"].name,
            "calibration": f"MinMax over {CALIB_SAMPLES} random inputs",
            "nodes_to_exclude": cfg.get("nodes_to_exclude") or [],
            "quantize_formula": "q = saturate(round_half_to_even(x / scale) + zero_point)  (float32 division)",
            "dequantize_formula": "x = (q - zero_point) * scale  (float32); QNN: scale * (q + offset), offset = -zero_point",
        },
        "ort_version": ort.__version__,
        "onnxruntime_qnn_version": onnxruntime_qnn.__version__,
        "onnx_opset": OPSET,
        "provider_options": provider_options,
        "session_config": {"ep.context_enable": "1", "ep.context_embed_mode": "0",
                           "ep.context_file_path": f"{name}.onnx (renamed to {os.path.basename(ctx_onnx)})"},
    }
    with open(os.path.join(fx, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")

    # Self-check from the written files only: the EPContext node alone, fed the native input
    # files in input_list_native.txt order, must return the native reference files exactly.
    eonly = os.path.join(ctx_dir, f"{name}_epcontext_only.onnx")
    onnx.save(epcontext_only_model(wrapper, ep, inputs_m, outputs_m), eonly)
    esess = qnn_session(eonly, provider_options)
    by_qnn = {d["qnn_name"]: d for d in inputs_m}
    with open(os.path.join(fx, "input_list_native.txt")) as f:
        native_lines = [ln.split() for ln in f.read().splitlines() if ln.strip()]
    assert len(native_lines) == LINES
    for li, entries in enumerate(native_lines):
        feed = {}
        for e in entries:
            qname, path = e.split(":=", 1)
            d = by_qnn[qname]
            feed[d["epcontext_name"]] = read_raw(os.path.join(fx, path), d["native_dtype"], d["shape"])
        got = dict(zip([o.name for o in esess.get_outputs()], esess.run(None, feed)))
        for d in outputs_m:
            want = read_raw(os.path.join(fx, "reference", "native", f"Result_{li}", f"{d['qnn_name']}.raw"),
                            d["native_dtype"], d["shape"])
            if not np.array_equal(got[d["epcontext_name"]], want):
                raise AssertionError(f"{name}: EPContext-only run differs from native reference, line {li}")
    log(f"    EPContext-only replay of the native files: OK ({LINES} lines)")

    log(f"[{name}] graph {qg['name']}")
    for kind, lst in (("in ", inputs_m), ("out", outputs_m)):
        for d in lst:
            log(f"    {kind} qnn={d['qnn_name']!r} id={d['qnn_id']} {d['qnn_data_type']} shape={d['shape']} "
                f"scale={d['scale']} zp={d['zero_point']} offset={d['qnn_offset']} "
                f"onnx={d['onnx_name']!r} epctx={d['epcontext_name']!r}")


# --------------------------------------------------------------------------------------------
# A context binary holding several graphs (one per QNN partition of the model)
# --------------------------------------------------------------------------------------------

def analyse_multi_wrapper(wrapper):
    """analyse_wrapper for a wrapper with several EPContext nodes (one per QNN graph) and CPU nodes
    between them.  Returns (ep_nodes, [(inputs, outputs) per EPContext node], glue_nodes).

    inputs/outputs are as in analyse_wrapper, plus `onnx_graph_io`: whether `onnx_name` (the float
    tensor on the CPU side of the Q/DQ) is a graph input/output of the wrapper or an intermediate
    tensor.  glue_nodes are the wrapper's nodes that run on the CPU between the graphs: all
    non-EPContext nodes except the Q nodes fed by wrapper inputs and the DQ nodes producing wrapper
    outputs.
    """
    g = wrapper.graph
    eps = [n for n in g.node if n.op_type == "EPContext"]
    others = [n for n in g.node if n.op_type != "EPContext"]
    graph_inputs = {i.name for i in g.input}
    graph_outputs = {o.name for o in g.output}
    produced_by = {o: n for n in others for o in n.output}
    consumers = {}
    for n in others:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def qdq_params(node):
        scale = scalar_init(wrapper, node.input[1])
        zp = scalar_init(wrapper, node.input[2])
        if scale.size != 1 or zp.size != 1:
            raise RuntimeError("per-channel I/O quantization is not expected")
        return dict(scale=np.float32(scale.reshape(())), zero_point=int(zp.reshape(())), native_np=zp.dtype)

    per_graph = []
    for ep in eps:
        inputs, outputs = [], []
        for name in ep.input:
            rec = {"epcontext_name": name}
            if name in graph_inputs:
                rec.update(onnx_name=name, onnx_graph_io=True, offloaded_q=False)
            else:
                q = produced_by.get(name)
                if q is None or q.op_type != "QuantizeLinear":
                    raise RuntimeError(f"EPContext input {name} is neither a graph input nor fed by a CPU Q node")
                rec.update(onnx_name=q.input[0], onnx_graph_io=q.input[0] in graph_inputs, offloaded_q=True,
                           q_node=q.name, **qdq_params(q))
            inputs.append(rec)
        for name in ep.output:
            rec = {"epcontext_name": name}
            if name in graph_outputs:
                rec.update(onnx_name=name, onnx_graph_io=True, offloaded_dq=False)
            else:
                cons = consumers.get(name, [])
                if len(cons) != 1 or cons[0].op_type != "DequantizeLinear":
                    raise RuntimeError(f"EPContext output {name} goes neither to a graph output nor to one CPU DQ node")
                dq = cons[0]
                rec.update(onnx_name=dq.output[0], onnx_graph_io=dq.output[0] in graph_outputs, offloaded_dq=True,
                           dq_node=dq.name, **qdq_params(dq))
            outputs.append(rec)
        per_graph.append((inputs, outputs))

    glue = [n for n in others
            if not (n.op_type == "QuantizeLinear" and n.input[0] in graph_inputs)
            and not (n.op_type == "DequantizeLinear" and n.output[0] in graph_outputs)]
    return eps, per_graph, glue


def with_extra_outputs(model, names):
    """Serialized copy of `model` that also returns the float tensors `names` (if it has them)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output} | {i.name for i in m.graph.input}
    known = {t for n in m.graph.node for t in n.output}
    for n in names:
        if n not in have and n in known:
            m.graph.output.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, None))
            have.add(n)
    return m.SerializeToString()


def make_multi_graph_fixture(name, out_root, work_root, log):
    """A fixture whose context binary holds several graphs.  Besides the usual top-level files
    (which describe graph 0, so single-graph readers keep working), it writes graphs/<g>/ for every
    graph: input lists, inputs and references of that graph alone."""
    n_graphs = MULTI_GRAPH_FIXTURES[name]
    c = compile_fixture(name, out_root, work_root)
    cfg, provider_options, fpath, qpath = c["cfg"], c["provider_options"], c["fpath"], c["qpath"]
    ctx_dir, seed, lines, fx = c["ctx_dir"], c["seed"], c["lines"], c["fx"]
    bin_name, wrapper, ctx_onnx = c["bin_name"], c["wrapper"], c["ctx_onnx"]

    bins = sorted(f for f in os.listdir(ctx_dir) if f.endswith(".bin"))
    if bins != [bin_name]:
        raise RuntimeError(f"{name}: expected the single context binary {bin_name}, got {bins}")

    log(f"[{name}] wrapper nodes:")
    for n in wrapper.graph.node:
        log(f"    {n.op_type:17s} {n.name}: {list(n.input)} -> {list(n.output)}")

    eps, per_graph, glue = analyse_multi_wrapper(wrapper)
    if len(eps) != n_graphs:
        raise RuntimeError(f"{name}: expected {n_graphs} EPContext nodes, got {len(eps)}")
    for k, ep in enumerate(eps):
        # The first EPContext node carries the file; the others point into the same context.
        if attr(ep, "embed_mode") != 0 or attr(ep, "main_context") != (1 if k == 0 else 0) \
                or attr(ep, "ep_cache_context") != (bin_name if k == 0 else None):
            raise RuntimeError(f"{name}: unexpected attributes on EPContext node {k} ({ep.name})")

    binfo = qnn_binary_info(os.path.join(fx, bin_name))
    if len(binfo["graphs"]) != n_graphs:
        raise RuntimeError(f"{name}: expected {n_graphs} graphs in the binary, got {len(binfo['graphs'])}")

    graphs = []
    for k, (ep, (ep_inputs, ep_outputs)) in enumerate(zip(eps, per_graph)):
        qg = binfo["graphs"][k]
        partition = attr(ep, "partition_name")
        if qg["name"] != partition or ep.name != partition:
            raise RuntimeError(f"{name}: binary graph {k} is {qg['name']}, EPContext node {k} is {partition}")
        overrides = {}
        for item in (attr(ep, "io_name_overrides") or "").split(";"):
            if item:
                key, v = item.split("=", 1)
                overrides[key] = v

        def desc(rec, tensors):
            d = describe_io(name, rec, find_qnn_tensor(name, overrides, rec["epcontext_name"], tensors))
            d["onnx_graph_io"] = rec["onnx_graph_io"]
            return d

        by_in = {d["qnn_name"]: d for d in (desc(r, qg["inputs"]) for r in ep_inputs)}
        by_out = {d["qnn_name"]: d for d in (desc(r, qg["outputs"]) for r in ep_outputs)}
        graphs.append({
            "index": k, "qg": qg, "ep": ep, "partition": partition,
            "recs": {r["epcontext_name"]: r for r in ep_inputs + ep_outputs},
            "inputs": [by_in[t["name"]] for t in qg["inputs"]],     # QNN graph order
            "outputs": [by_out[t["name"]] for t in qg["outputs"]],
        })
    ids = [d["qnn_id"] for G in graphs for d in G["inputs"] + G["outputs"]]
    if len(set(ids)) != len(ids):
        raise RuntimeError(f"{name}: QNN tensor ids repeat across graphs: {ids}")

    # Reference runs: the unmodified wrapper, and a copy that also returns every tensor on both
    # sides of every EPContext node (native and float).
    sess = qnn_session(ctx_onnx, provider_options)
    bm = onnx.ModelProto()
    bm.CopyFrom(wrapper)
    have = {o.name for o in bm.graph.output} | {i.name for i in bm.graph.input}
    for G in graphs:
        for d in G["inputs"] + G["outputs"]:
            for tname, elem in ((d["epcontext_name"], NP_DTYPE_TO_ELEM[d["native_dtype"]]),
                                (d["onnx_name"], TensorProto.FLOAT)):
                if tname not in have:
                    bm.graph.output.append(helper.make_tensor_value_info(tname, elem, d["shape"]))
                    have.add(tname)
    bpath = os.path.join(ctx_dir, f"{name}_boundary.onnx")
    onnx.save(bm, bpath)
    bsess = qnn_session(bpath, provider_options)
    out_names = [o.name for o in sess.get_outputs()]
    b_names = [o.name for o in bsess.get_outputs()]

    # CPU runs for the sanity check, returning the float tensors at every graph output.
    fmodel, qmodel = onnx.load(fpath), onnx.load(qpath)
    q_producer = {o: n for n in qmodel.graph.node for o in n.output}

    def float_model_name(t):
        # The float model's tensor behind a DQ output of the QDQ model: DQ <- Q <- tensor.
        if t in {o for n in fmodel.graph.node for o in n.output}:
            return t
        dq = q_producer.get(t)
        q = q_producer.get(dq.input[0]) if dq is not None and dq.op_type == "DequantizeLinear" else None
        return q.input[0] if q is not None and q.op_type == "QuantizeLinear" else None

    out_float = [d["onnx_name"] for G in graphs for d in G["outputs"]]
    fm_names = {t: float_model_name(t) for t in out_float}
    cpu_float = ort.InferenceSession(with_extra_outputs(fmodel, [v for v in fm_names.values() if v]),
                                     providers=["CPUExecutionProvider"])
    cpu_qdq = ort.InferenceSession(with_extra_outputs(qmodel, out_float), providers=["CPUExecutionProvider"])

    lists = [([], []) for _ in graphs]
    results = [[] for _ in graphs]           # results[g][line] = [float output per QNN output]
    cpu_results = []
    recip_mismatch = [{} for _ in graphs]
    probes = [{} for _ in graphs]
    for G in graphs:
        for d in G["inputs"]:
            if d["cpu_qdq_offloaded"]:
                probes[G["index"]][d["qnn_name"]] = probe_quantize(d["scale"], d["zero_point"], d["native_dtype"])
                log(f"    quantize probe graph {G['index']} {d['qnn_name']}: {probes[G['index']][d['qnn_name']]}")

    for li, feed in enumerate(lines):
        outs = dict(zip(out_names, sess.run(None, feed)))
        bouts = dict(zip(b_names, bsess.run(None, feed)))
        for k, v in outs.items():
            if not np.array_equal(v, bouts[k]):
                raise AssertionError(f"{name}: boundary copy of the wrapper changed {k}")
        cpu_results.append((dict(zip([o.name for o in cpu_float.get_outputs()], cpu_float.run(None, feed))),
                            dict(zip([o.name for o in cpu_qdq.get_outputs()], cpu_qdq.run(None, feed)))))

        def tensor(t):
            return feed[t] if t in feed else bouts[t]

        for G in graphs:
            gi = G["index"]
            gdir = os.path.join(fx, "graphs", str(gi))
            ent_f, ent_n = [], []
            for ii, d in enumerate(G["inputs"]):
                x = tensor(d["onnx_name"])
                native = tensor(d["epcontext_name"])
                if d["cpu_qdq_offloaded"]:
                    r = G["recs"][d["epcontext_name"]]
                    mine = quantize_np(x, r["scale"], r["zero_point"], np.dtype(r["native_np"]).type)
                    if mine.dtype != native.dtype or not np.array_equal(mine, native):
                        bad = int(np.sum(mine != native))
                        raise AssertionError(f"{name} graph {gi} line {li} {d['qnn_name']}: numpy "
                                             f"QuantizeLinear differs from ORT in {bad} elements")
                    info = np.iinfo(native.dtype)
                    alt = np.clip(np.rint(x * (np.float32(1.0) / r["scale"])) + np.float32(r["zero_point"]),
                                  info.min, info.max).astype(native.dtype)
                    recip_mismatch[gi][d["qnn_name"]] = recip_mismatch[gi].get(d["qnn_name"], 0) + \
                        int(np.sum(alt != native))
                assert x.dtype == np.float32, (x.dtype, d["onnx_name"])
                assert native.dtype == np.dtype(d["native_dtype"]), (native.dtype, d["native_dtype"])
                assert list(native.shape) == d["shape"], (native.shape, d["shape"])
                fp = os.path.join(gdir, "inputs", "float", f"{li}_{ii}.raw")
                npth = os.path.join(gdir, "inputs", "native", f"{li}_{ii}.raw")
                write_raw(fp, x)
                write_raw(npth, native)
                ent_f.append(f"{d['qnn_name']}:={rel(fp, gdir)}")
                ent_n.append(f"{d['qnn_name']}:={rel(npth, gdir)}")
            lists[gi][0].append(" ".join(ent_f))
            lists[gi][1].append(" ".join(ent_n))

            line_res = []
            for d in G["outputs"]:
                fl = tensor(d["onnx_name"])
                native = tensor(d["epcontext_name"])
                assert native.dtype == np.dtype(d["native_dtype"]), (native.dtype, d["native_dtype"])
                assert list(native.shape) == d["shape"], (native.shape, d["shape"])
                if d["cpu_qdq_offloaded"]:
                    r = G["recs"][d["epcontext_name"]]
                    deq = dequantize_np(native, r["scale"], r["zero_point"])
                    if not np.array_equal(deq.view(np.uint32), fl.astype(np.float32).view(np.uint32)):
                        raise AssertionError(f"{name} graph {gi}: numpy DequantizeLinear differs from ORT "
                                             f"for {d['qnn_name']}")
                write_raw(os.path.join(gdir, "reference", "float", f"Result_{li}", f"{d['qnn_name']}.raw"),
                          fl.astype(np.float32))
                write_raw(os.path.join(gdir, "reference", "native", f"Result_{li}", f"{d['qnn_name']}.raw"),
                          native)
                line_res.append(fl)
            results[gi].append(line_res)

    for G in graphs:
        gdir = os.path.join(fx, "graphs", str(G["index"]))
        for kind, lst in zip(("float", "native"), lists[G["index"]]):
            with open(os.path.join(gdir, f"input_list_{kind}.txt"), "w") as f:
                f.write("\n".join(lst) + "\n")

    # Sanity: outputs not constant, different from line to line, close to ORT's CPU QDQ run.
    sanity = [{} for _ in graphs]
    for G in graphs:
        gi = G["index"]
        for oi, d in enumerate(G["outputs"]):
            for li in range(LINES):
                if np.unique(results[gi][li][oi]).size < 2:
                    raise AssertionError(f"{name}: graph {gi} output {d['qnn_name']} line {li} is constant")
            for a in range(LINES):
                for b in range(a + 1, LINES):
                    if np.array_equal(results[gi][a][oi], results[gi][b][oi]):
                        raise AssertionError(f"{name}: graph {gi} output {d['qnn_name']} equal on lines {a}, {b}")
            qnn = np.stack([results[gi][li][oi] for li in range(LINES)])
            fname = fm_names[d["onnx_name"]]
            flt = np.stack([cpu_results[li][0][fname] for li in range(LINES)])
            qdq = np.stack([cpu_results[li][1][d["onnx_name"]] for li in range(LINES)])
            span = float(flt.max() - flt.min())
            e_f = float(np.abs(qnn - flt).max())
            e_q = float(np.abs(qnn - qdq).max())
            sanity[gi][d["qnn_name"]] = {
                "float_model_tensor": fname, "qdq_model_tensor": d["onnx_name"], "float_model_range": span,
                "max_abs_diff_vs_cpu_float_model": e_f, "max_abs_diff_vs_cpu_qdq_model": e_q}
            log(f"    sanity graph {gi} {d['qnn_name']}: range {span:.4g}, |qnn-float| {e_f:.4g}, "
                f"|qnn-cpu_qdq| {e_q:.4g}")
            if e_q > 0.05 * span:
                raise AssertionError(f"{name}: graph {gi} {d['qnn_name']} is too far from ORT's CPU QDQ result")

    # The top-level files describe graph 0 (byte copies of graphs/0/), for single-graph readers.
    g0 = os.path.join(fx, "graphs", "0")
    for sub in ("inputs", "reference"):
        shutil.copytree(os.path.join(g0, sub), os.path.join(fx, sub))
    for kind in ("float", "native"):
        shutil.copyfile(os.path.join(g0, f"input_list_{kind}.txt"), os.path.join(fx, f"input_list_{kind}.txt"))

    # Self-checks from the written files only.
    # (1) Each graph alone: a model made only of its EPContext node (a non-main node gets
    #     main_context=1 and ep_cache_context, so it loads the shared binary by itself), fed the
    #     files in its input_list_native.txt, returns exactly its reference/native files.
    def replay(G, list_dir):
        m = epcontext_only_model(wrapper, G["ep"], G["inputs"], G["outputs"])
        node = m.graph.node[0]
        if attr(node, "main_context") != 1:
            for a in node.attribute:
                if a.name == "main_context":
                    a.i = 1
            node.attribute.append(helper.make_attribute("ep_cache_context", bin_name))
        p = os.path.join(ctx_dir, f"{name}_graph{G['index']}_only.onnx")
        onnx.save(m, p)
        s = qnn_session(p, provider_options)
        by_qnn = {d["qnn_name"]: d for d in G["inputs"]}
        with open(os.path.join(list_dir, "input_list_native.txt")) as f:
            native_lines = [ln.split() for ln in f.read().splitlines() if ln.strip()]
        assert len(native_lines) == LINES
        for li, entries in enumerate(native_lines):
            feed = {}
            for e in entries:
                qname, path = e.split(":=", 1)
                d = by_qnn[qname]
                feed[d["epcontext_name"]] = read_raw(os.path.join(list_dir, path), d["native_dtype"], d["shape"])
            got = dict(zip([o.name for o in s.get_outputs()], s.run(None, feed)))
            for d in G["outputs"]:
                want = read_raw(os.path.join(list_dir, "reference", "native", f"Result_{li}", f"{d['qnn_name']}.raw"),
                                d["native_dtype"], d["shape"])
                if not np.array_equal(got[d["epcontext_name"]], want):
                    raise AssertionError(f"{name}: graph {G['index']} alone differs from its native "
                                         f"reference in {list_dir}, line {li}")

    for G in graphs:
        replay(G, os.path.join(fx, "graphs", str(G["index"])))
    replay(graphs[0], fx)
    log(f"    each graph alone, replaying its native files: OK ({n_graphs} graphs + top level, {LINES} lines)")

    # (2) The CPU nodes between the graphs (ORT CPU EP), fed the upstream graphs' native output
    #     files, give exactly the downstream graphs' native input files.
    by_ep = {d["epcontext_name"]: (G, d) for G in graphs for d in G["inputs"] + G["outputs"]}
    glue_in = sorted({t for n in glue for t in n.input if t in by_ep}, key=list(by_ep).index)
    glue_out = [t for n in glue for t in n.output if t in by_ep]
    gm = helper.make_graph(
        [onnx.NodeProto.FromString(n.SerializeToString()) for n in glue], "glue",
        [helper.make_tensor_value_info(t, NP_DTYPE_TO_ELEM[by_ep[t][1]["native_dtype"]], by_ep[t][1]["shape"])
         for t in glue_in],
        [helper.make_tensor_value_info(t, NP_DTYPE_TO_ELEM[by_ep[t][1]["native_dtype"]], by_ep[t][1]["shape"])
         for t in glue_out],
        [i for i in wrapper.graph.initializer if any(i.name in n.input for n in glue)])
    gmodel = helper.make_model(gm, opset_imports=[helper.make_opsetid("", OPSET)])
    gmodel.ir_version = IR_VERSION
    gsess = ort.InferenceSession(gmodel.SerializeToString(), providers=["CPUExecutionProvider"])
    for li in range(LINES):
        feed = {}
        for t in glue_in:
            G, d = by_ep[t]
            feed[t] = read_raw(os.path.join(fx, "graphs", str(G["index"]), "reference", "native",
                                            f"Result_{li}", f"{d['qnn_name']}.raw"), d["native_dtype"], d["shape"])
        got = dict(zip(glue_out, gsess.run(glue_out, feed)))
        for t in glue_out:
            G, d = by_ep[t]
            ii = G["inputs"].index(d)
            want = read_raw(os.path.join(fx, "graphs", str(G["index"]), "inputs", "native", f"{li}_{ii}.raw"),
                            d["native_dtype"], d["shape"])
            if not np.array_equal(got[t], want):
                raise AssertionError(f"{name}: CPU nodes between the graphs do not reproduce {t}, line {li}")
    log("    CPU nodes between the graphs reproduce the downstream native inputs: OK")

    def ep_desc(G):
        ep = G["ep"]
        return {"name": ep.name, "partition_name": G["partition"], "main_context": attr(ep, "main_context"),
                "ep_cache_context": attr(ep, "ep_cache_context"),
                "io_name_overrides": attr(ep, "io_name_overrides"), "ep_sdk_version": attr(ep, "ep_sdk_version")}

    g0m = graphs[0]
    manifest = {
        "name": name,
        "description": cfg["description"],
        "context_binary": bin_name,
        "epcontext_wrapper": os.path.basename(ctx_onnx),
        "graph_name": g0m["qg"]["name"],
        "epcontext_node": ep_desc(g0m),
        "qnn_binary": {
            "build_id": binfo["build_id"],
            "binary_info_version": binfo["binary_info_version"],
            "graph_info_version": g0m["qg"]["graph_info_version"],
            "num_graphs": len(binfo["graphs"]),
        },
        "input_list_names": "QNN tensor names read from the context binary with libQnnSystem "
                            "(systemContextGetBinaryInfo); entries are in QNN graph input order; paths are "
                            "relative to the directory holding the list",
        "top_level_files": "inputs/, reference/ and input_list_*.txt at the top level describe graph 0 "
                           "(byte copies of graphs/0/); top-level graph_name/inputs/outputs are graph 0's",
        "inputs": g0m["inputs"],
        "outputs": g0m["outputs"],
        "graphs": [{
            "index": G["index"],
            "graph_name": G["qg"]["name"],
            "dir": f"graphs/{G['index']}",
            "input_list_float": f"graphs/{G['index']}/input_list_float.txt",
            "input_list_native": f"graphs/{G['index']}/input_list_native.txt",
            "graph_info_version": G["qg"]["graph_info_version"],
            "epcontext_node": ep_desc(G),
            "inputs": G["inputs"],
            "outputs": G["outputs"],
            "sanity": sanity[G["index"]],
            "reciprocal_multiply_quantize_mismatches": recip_mismatch[G["index"]],
            "quantize_probe": probes[G["index"]],
        } for G in graphs],
        "cpu_nodes_between_graphs": [{"op_type": n.op_type, "name": n.name, "inputs": list(n.input),
                                      "outputs": list(n.output)} for n in glue],
        "lines": LINES,
        "seed": seed,
        "sanity": sanity[0],
        "reciprocal_multiply_quantize_mismatches": recip_mismatch[0],
        "quantize_probe": probes[0],
        "quantization": {
            "activation_type": cfg["activation_type"].name,
            "weight_type": cfg["weight_type"].name,
            "calibration": f"MinMax over {CALIB_SAMPLES} random inputs",
            "nodes_to_exclude": cfg.get("nodes_to_exclude") or [],
            "quantize_formula": "q = saturate(round_half_to_even(x / scale) + zero_point)  (float32 division)",
            "dequantize_formula": "x = (q - zero_point) * scale  (float32); QNN: scale * (q + offset), offset = -zero_point",
        },
        "ort_version": ort.__version__,
        "onnxruntime_qnn_version": onnxruntime_qnn.__version__,
        "onnx_opset": OPSET,
        "provider_options": provider_options,
        "session_config": {"ep.context_enable": "1", "ep.context_embed_mode": "0",
                           "ep.context_file_path": f"{name}.onnx (renamed to {os.path.basename(ctx_onnx)})"},
    }
    with open(os.path.join(fx, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")

    for G in graphs:
        log(f"[{name}] graph {G['index']}: {G['qg']['name']}")
        for kind, lst in (("in ", G["inputs"]), ("out", G["outputs"])):
            for d in lst:
                log(f"    {kind} qnn={d['qnn_name']!r} id={d['qnn_id']} {d['qnn_data_type']} shape={d['shape']} "
                    f"scale={d['scale']} zp={d['zero_point']} offset={d['qnn_offset']} "
                    f"onnx={d['onnx_name']!r} epctx={d['epcontext_name']!r}")
    log("    CPU between the graphs: " + ", ".join(f"{n.op_type} {n.name}" for n in glue))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT, help="fixtures root (default: tests/fixtures)")
    ap.add_argument("--only", action="append", choices=sorted(FIXTURES), help="build only these fixtures")
    ap.add_argument("--keep-work", action="store_true", help="keep the temporary build directory")
    args = ap.parse_args()

    names = args.only or list(FIXTURES)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    if len(names) > 1:
        # One fresh process per fixture: the QNN libraries number tensors and pickled graphs with
        # process-wide counters that end up in the context binary, so building fixtures one after
        # another in one process would make a fixture's bytes depend on which ones came before.
        for name in names:
            cmd = [sys.executable, os.path.abspath(__file__), "--out", out, "--only", name]
            if args.keep_work:
                cmd.append("--keep-work")
            sys.stdout.flush()
            rc = subprocess.call(cmd)
            if rc != 0:
                print(f"fixture {name} failed (exit {rc})", file=sys.stderr)
                return rc
        print("done:", ", ".join(names))
        return 0

    work_root = tempfile.mkdtemp(prefix="lpai-fixtures-")
    try:
        make_fixture(names[0], out, work_root, print)
    finally:
        if args.keep_work:
            print(f"work directory kept: {work_root}")
        else:
            shutil.rmtree(work_root, ignore_errors=True)
    print("built:", names[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
