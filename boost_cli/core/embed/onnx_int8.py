"""Run a weight-quantised ONNX model's matrix products in int8, rewriting its graph in the
stdlib.

The local model stores each linear layer's weights as int8 with a per-output-channel
scale, in front of a float product: ``MatMul(X, Mul(Cast(W_int8), scale))``. Any graph
optimisation folds ``Cast`` and ``Mul`` into float32 weights once, so every product then
runs in float32. This module rewrites each such product into onnxruntime's dynamic
quantisation pattern, the one ``onnxruntime.quantization.quantize_dynamic`` produces and
onnxruntime fuses into one kernel (int8 dot products, VNNI where the CPU has it):

    Xq, xs, xz = DynamicQuantizeLinear(X)          # uint8 per tensor, per batch
    Y = Mul(Mul(Cast(MatMulInteger(Xq, W_int8, xz)), xs), scale)

The weights are the model's own int8 values, unchanged; only the activations are now
rounded to 8 bits as well (a cosine of ~0.995 to the float product: docs/dense.md).
The rewrite touches the node list alone: every initialiser (22 MB of the 23) is copied as
bytes, and the result is handed to onnxruntime from memory, so nothing is written and no
``onnx`` package is needed. Protocol Buffers' wire format is all this needs to read and
write: a field is a varint key ``number << 3 | type``, then a varint (type 0), 8 bytes
(1), a length-prefixed payload (2) or 4 bytes (5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

# Field numbers (onnx.proto): ModelProto.graph; GraphProto.node, .initializer, .output;
# NodeProto.input, .output, .name, .op_type, .attribute, .domain; TensorProto.name;
# ValueInfoProto.name; AttributeProto.name, .i, .type.
MODEL_GRAPH = 7
GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_OUTPUT = 1, 5, 12
NODE_INPUT, NODE_OUTPUT, NODE_NAME, NODE_OP, NODE_ATTRIBUTE, NODE_DOMAIN = 1, 2, 3, 4, 5, 7
TENSOR_NAME = 8
VALUE_NAME = 1
ATTR_NAME, ATTR_I, ATTR_TYPE = 1, 3, 20
ATTR_INT = 2  # AttributeProto.AttributeType.INT
FLOAT = 1  # TensorProto.DataType.FLOAT


class GraphFormatError(ValueError):
    """The bytes are not a model this rewrite understands."""


# --------------------------------------------------------------------------- wire format


def read_varint(data: memoryview, pos: int) -> Tuple[int, int]:
    """(value, position after it)."""
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise GraphFormatError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


@dataclass(frozen=True)
class Field:
    """One field as it was read: its number, wire type, payload (the bytes after a length
    prefix, or the raw varint/fixed bytes) and its whole encoding."""

    number: int
    wire: int
    payload: memoryview
    raw: memoryview


def fields(data: bytes | memoryview) -> Iterator[Field]:
    """The fields of one message, in order (views into ``data``: nothing is copied)."""
    data = memoryview(data)
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, end = read_varint(data, pos)
            body = data[pos:end]
        elif wire == 1:
            end = pos + 8
            body = data[pos:end]
        elif wire == 2:
            size, pos = read_varint(data, pos)
            end = pos + size
            body = data[pos:end]
        elif wire == 5:
            end = pos + 4
            body = data[pos:end]
        else:
            raise GraphFormatError(f"wire type {wire} is not used by ONNX")
        if end > len(data):
            raise GraphFormatError("a field runs past the end of its message")
        pos = end
        yield Field(number, wire, body, data[start:end])


def length_field(number: int, payload: bytes | memoryview) -> bytes:
    return b"".join((varint(number << 3 | 2), varint(len(payload)), payload))


def int_field(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def strings(message: memoryview, number: int) -> List[str]:
    return [str(f.payload, "utf-8") for f in fields(message) if f.number == number]


# --------------------------------------------------------------------------- nodes


@dataclass
class Node:
    """A node read from the graph (``raw`` is its encoding, reused when it is kept)."""

    op: str
    inputs: List[str]
    outputs: List[str]
    domain: str = ""
    raw: Optional[memoryview] = None
    extra: List[bytes] = field(default_factory=list)

    @classmethod
    def read(cls, raw: memoryview) -> Node:
        op = domain = ""
        inputs: List[str] = []
        outputs: List[str] = []
        for f in fields(raw):
            if f.number == NODE_INPUT:
                inputs.append(str(f.payload, "utf-8"))
            elif f.number == NODE_OUTPUT:
                outputs.append(str(f.payload, "utf-8"))
            elif f.number == NODE_OP:
                op = str(f.payload, "utf-8")
            elif f.number == NODE_DOMAIN:
                domain = str(f.payload, "utf-8")
        return cls(op, inputs, outputs, domain, raw)

    def encode(self) -> bytes:
        if self.raw is not None:
            return bytes(self.raw)
        out = b"".join(length_field(NODE_INPUT, i.encode("utf-8")) for i in self.inputs)
        out += b"".join(length_field(NODE_OUTPUT, o.encode("utf-8")) for o in self.outputs)
        out += length_field(NODE_NAME, self.outputs[0].encode("utf-8"))
        out += length_field(NODE_OP, self.op.encode("utf-8"))
        return out + b"".join(self.extra)


def int_attribute(name: str, value: int) -> bytes:
    body = length_field(ATTR_NAME, name.encode("utf-8"))
    body += int_field(ATTR_I, value) + int_field(ATTR_TYPE, ATTR_INT)
    return length_field(NODE_ATTRIBUTE, body)


def quantised_product(x: str, weights: str, scale: str, out: str, tag: str) -> List[Node]:
    """``out = X · (W_int8 · scale)`` as a dynamically quantised int8 product."""
    xq, xs, xz = f"{tag}/xq", f"{tag}/xs", f"{tag}/xz"
    return [
        Node("DynamicQuantizeLinear", [x], [xq, xs, xz]),
        Node("MatMulInteger", [xq, weights, xz], [f"{tag}/acc"]),
        Node("Cast", [f"{tag}/acc"], [f"{tag}/accf"], extra=[int_attribute("to", FLOAT)]),
        Node("Mul", [f"{tag}/accf", xs], [f"{tag}/y"]),
        Node("Mul", [f"{tag}/y", scale], [out]),
    ]


def rewrite_nodes(
    nodes: Sequence[Node], initializers: Sequence[str], graph_outputs: Sequence[str]
) -> Tuple[List[Node], int]:
    """(the new node list, how many products were rewritten). A ``MatMul`` is rewritten
    when its second input is ``Mul(Cast(an initialiser), s)`` (either order) and neither
    the ``Mul`` nor the ``Cast`` result is used anywhere else."""
    known = set(initializers)
    made_by = {o: n for n in nodes for o in n.outputs}
    uses: Dict[str, int] = {}
    for n in nodes:
        for i in n.inputs:
            uses[i] = uses.get(i, 0) + 1
    for o in graph_outputs:
        uses[o] = uses.get(o, 0) + 1
    replaced: Dict[int, List[Node]] = {}
    dropped: Set[int] = set()
    for n in nodes:
        if n.op != "MatMul" or n.domain or len(n.inputs) != 2:
            continue
        mul = made_by.get(n.inputs[1])
        if mul is None or mul.op != "Mul" or mul.domain or uses.get(mul.outputs[0]) != 1:
            continue
        found: Optional[Tuple[Node, str]] = None
        for a, b in ((0, 1), (1, 0)):
            cast = made_by.get(mul.inputs[a])
            if cast is not None and cast.op == "Cast" and cast.inputs[0] in known:
                found = (cast, mul.inputs[b])
                break
        if found is None or uses.get(found[0].outputs[0]) != 1:
            continue
        cast, scale = found
        tag = f"int8/{len(replaced)}"
        replaced[id(n)] = quantised_product(n.inputs[0], cast.inputs[0], scale, n.outputs[0], tag)
        dropped.update((id(mul), id(cast)))
    out: List[Node] = []
    for n in nodes:
        if id(n) in replaced:
            out.extend(replaced[id(n)])
        elif id(n) not in dropped:
            out.append(n)
    return out, len(replaced)


def dynamic_int8(model: bytes) -> Tuple[bytes, int]:
    """(the model with its weight-quantised products run in int8, products rewritten).
    Every field but the graph's nodes is kept as it was."""
    top = list(fields(model))
    graphs = [f for f in top if f.number == MODEL_GRAPH]
    if len(graphs) != 1:
        raise GraphFormatError("not an ONNX model (no graph)")
    parts = list(fields(graphs[0].payload))
    nodes = [Node.read(f.payload) for f in parts if f.number == GRAPH_NODE]
    inits = [
        name
        for f in parts
        if f.number == GRAPH_INITIALIZER
        for name in strings(f.payload, TENSOR_NAME)
    ]
    outputs = [
        name for f in parts if f.number == GRAPH_OUTPUT for name in strings(f.payload, VALUE_NAME)
    ]
    new_nodes, count = rewrite_nodes(nodes, inits, outputs)
    # One copy of the bytes: the pieces of the new graph, then one join with the rest.
    graph: List[bytes | memoryview] = [length_field(GRAPH_NODE, n.encode()) for n in new_nodes]
    graph += [f.raw for f in parts if f.number != GRAPH_NODE]
    pieces: List[bytes | memoryview] = []
    for f in top:
        if f.number == MODEL_GRAPH:
            pieces.append(varint(MODEL_GRAPH << 3 | 2) + varint(sum(len(p) for p in graph)))
            pieces.extend(graph)
        else:
            pieces.append(f.raw)
    return b"".join(pieces), count
