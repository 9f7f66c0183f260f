"""Write the tiny BERT-shaped ONNX model the local provider's tests run on
(tests/fixtures/local/tiny.onnx + tiny-vocab.txt), so CI needs no real model, and
tiny-int8.onnx: the same shape with its weights stored as the real model stores them
(int8 behind ``Cast`` and a per-column ``Mul``), for `onnx_int8`'s tests.

Same inputs (input_ids, attention_mask, token_type_ids: int64 [batch, sequence]) and output
(last_hidden_state: float32 [batch, sequence, 8]) as all-MiniLM-L6-v2's export. The graph is
Gather(embedding table) -> MatMul(W) -> Tanh with seeded weights, so each token's vector
depends on its id alone: the expected sentence vectors are a few lines of numpy, and padding
or batch composition must not change them. IR version 8, so every onnxruntime boost allows
reads it. Deterministic: the same bytes on every run (the tests pin its sha256).

Needs numpy and the ``onnx`` package (only to regenerate; not a dev dependency):

    python scripts/make_tiny_onnx.py tests/fixtures/local
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

VOCAB = [
    *("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "skill", "search", "find", "the", "a"),
    *("to", "agent", "pdf", "test", "##s", "##ing", "write", "code", "review", "git"),
    *(",", ".", "!", "-", "'"),
]
DIM = 8


def build(out: Path) -> str:
    rng = np.random.default_rng(13)
    table = rng.standard_normal((len(VOCAB), DIM)).astype(np.float32)
    w = (rng.standard_normal((DIM, DIM)) / np.sqrt(DIM)).astype(np.float32)
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIM]
    )
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["emb"], axis=0),
        helper.make_node("MatMul", ["emb", "w"], ["proj"]),
        helper.make_node("Tanh", ["proj"], ["last_hidden_state"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-bert-shaped",
        inputs,
        [output],
        initializer=[numpy_helper.from_array(table, "table"), numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(
        graph, producer_name="boost-tests", opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    out.mkdir(parents=True, exist_ok=True)
    data = model.SerializeToString()
    (out / "tiny.onnx").write_bytes(data)
    (out / "tiny-vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return hashlib.sha256(data).hexdigest()


def build_int8(out: Path) -> str:
    """Gather -> MatMul(emb, Mul(Cast(W_int8), scale)) -> Tanh, W symmetric per column."""
    rng = np.random.default_rng(17)
    table = rng.standard_normal((len(VOCAB), DIM)).astype(np.float32)
    w = (rng.standard_normal((DIM, DIM)) / np.sqrt(DIM)).astype(np.float32)
    scale = (np.abs(w).max(axis=0, keepdims=True) / 127).astype(np.float32)
    wq = np.round(w / scale).astype(np.int8)
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIM]
    )
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["emb"], axis=0),
        helper.make_node("Cast", ["wq"], ["wf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["wf", "scale"], ["w"]),
        helper.make_node("MatMul", ["emb", "w"], ["proj"]),
        helper.make_node("Tanh", ["proj"], ["last_hidden_state"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-bert-shaped-int8",
        inputs,
        [output],
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(wq, "wq"),
            numpy_helper.from_array(scale, "scale"),
        ],
    )
    model = helper.make_model(
        graph, producer_name="boost-tests", opset_imports=[helper.make_opsetid("", 17)]
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    (out / "tiny-int8.onnx").write_bytes(data)
    return hashlib.sha256(data).hexdigest()


if __name__ == "__main__":
    print(build(Path(sys.argv[1])))
    print(build_int8(Path(sys.argv[1])))
