"""`onnx_int8`: the stdlib rewrite of weight-quantised products into int8 products.

The wire format and the node rewrite are tested on literals; the whole rewrite on a tiny
committed model stored as the real one is (tests/fixtures/local/tiny-int8.onnx, made by
scripts/make_tiny_onnx.py), run by onnxruntime where the [local] extra is installed; and
on the real model, whose rewritten bytes are pinned, wherever it is installed."""

from __future__ import annotations

import hashlib
from typing import Any, List

import pytest

from boost_cli.core.embed import local
from boost_cli.core.embed.onnx_int8 import (
    GRAPH_NODE,
    MODEL_GRAPH,
    GraphFormatError,
    Node,
    dynamic_int8,
    fields,
    length_field,
    read_varint,
    rewrite_nodes,
    varint,
)
from tests.helpers import ROOT

TINY_INT8 = ROOT / "tests" / "fixtures" / "local" / "tiny-int8.onnx"
# The real model rewritten: 36 products (6 layers x Q, K, V, output, 2 feed-forward).
REAL_REWRITTEN_SHA256 = "f5ba65562384e92e5662e05d3a7b3994e963182df20690608146825f15e51d5c"


def ops(model: bytes) -> List[str]:
    graph = next(f for f in fields(model) if f.number == MODEL_GRAPH)
    return [Node.read(f.payload).op for f in fields(graph.payload) if f.number == GRAPH_NODE]


def test_varints_round_trip_and_bad_input_is_refused() -> None:
    for value in (0, 1, 127, 128, 300, 2**31, 2**63 - 1):
        data = varint(value)
        assert read_varint(memoryview(data), 0) == (value, len(data))
    assert varint(300) == b"\xac\x02"  # the protobuf documentation's example
    with pytest.raises(GraphFormatError, match="truncated"):
        read_varint(memoryview(b"\x80\x80"), 0)
    with pytest.raises(GraphFormatError, match="past the end"):
        list(fields(b"\x0a\x05ab"))  # field 1, 5 bytes announced, 2 there
    with pytest.raises(GraphFormatError, match="wire type 3"):
        list(fields(b"\x0b"))
    with pytest.raises(GraphFormatError, match="no graph"):
        dynamic_int8(length_field(2, b"producer"))


def test_fields_keep_their_bytes() -> None:
    data = length_field(1, b"abc") + varint(2 << 3) + varint(300) + length_field(1, b"")
    got = list(fields(data))
    assert [(f.number, f.wire, bytes(f.payload)) for f in got] == [
        (1, 2, b"abc"),
        (2, 0, b"\xac\x02"),
        (1, 2, b""),
    ]
    assert b"".join(bytes(f.raw) for f in got) == data


def node(op: str, inputs: List[str], outputs: List[str]) -> Node:
    return Node(op, inputs, outputs)


def test_only_products_of_an_unshared_cast_and_mul_are_rewritten() -> None:
    nodes = [
        node("Cast", ["w1q"], ["w1f"]),
        node("Mul", ["s1", "w1f"], ["w1"]),  # the scale first: either order is matched
        node("MatMul", ["x", "w1"], ["y1"]),
        node("Cast", ["w2q"], ["w2f"]),
        node("Mul", ["w2f", "s2"], ["w2"]),
        node("MatMul", ["y1", "w2"], ["y2"]),
        node("Add", ["w2", "y2"], ["y3"]),  # w2 is used twice: its product stays float
        node("Cast", ["notinit"], ["w3f"]),
        node("Mul", ["w3f", "s3"], ["w3"]),
        node("MatMul", ["y3", "w3"], ["out"]),  # not an initialiser behind the Cast
    ]
    new, count = rewrite_nodes(nodes, ["w1q", "w2q", "s1", "s2", "s3"], ["out"])
    assert count == 1
    assert [n.op for n in new] == [
        *("DynamicQuantizeLinear", "MatMulInteger", "Cast", "Mul", "Mul"),
        *("Cast", "Mul", "MatMul", "Add", "Cast", "Mul", "MatMul"),
    ]
    quant, product, cast, by_x, by_w = new[:5]
    assert quant.inputs == ["x"] and product.inputs == ["int8/0/xq", "w1q", "int8/0/xz"]
    assert by_w.inputs == ["int8/0/y", "s1"] and by_w.outputs == ["y1"]
    assert b"\x0a\x02to" in cast.encode()  # its attribute: to = FLOAT


@pytest.fixture
def ort() -> Any:
    pytest.importorskip("numpy", reason="the [local] extra is not installed: numpy")
    return pytest.importorskip("onnxruntime", reason="the [local] extra is not installed")


def run(ort: Any, model: Any, ids: Any) -> Any:
    import numpy as np

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    feeds["token_type_ids"] = np.zeros_like(ids)
    return session.run(None, feeds)[0]


def test_the_tiny_model_runs_in_int8_and_gives_nearly_the_same_vectors(ort: Any) -> None:
    import numpy as np

    data = TINY_INT8.read_bytes()
    rewritten, count = dynamic_int8(data)
    assert count == 1
    assert ops(data) == ["Gather", "Cast", "Mul", "MatMul", "Tanh"]
    assert ops(rewritten) == [
        *("Gather", "DynamicQuantizeLinear", "MatMulInteger", "Cast", "Mul", "Mul", "Tanh")
    ]
    assert dynamic_int8(rewritten) == (rewritten, 0)  # nothing left to rewrite
    ids = np.array([[2, 5, 6, 7, 3], [2, 12, 13, 14, 3]], dtype=np.int64)
    before, after = run(ort, str(TINY_INT8), ids), run(ort, rewritten, ids)
    assert before.shape == after.shape == (2, 5, 8)
    # Activations rounded to 8 bits: within a few quantisation steps, not equal.
    assert 0 < np.abs(before - after).max() < 0.05


@pytest.mark.skipif(not local.installed(), reason="the [local] extra is not installed")
def test_the_real_model_rewrite_is_pinned() -> None:
    data = local.model_path(local.MINILM).read_bytes()
    rewritten, count = dynamic_int8(data)
    assert count == 36
    assert hashlib.sha256(rewritten).hexdigest() == REAL_REWRITTEN_SHA256
    assert "MatMul" in ops(rewritten)  # attention's own products (Q·K, ·V) stay float
