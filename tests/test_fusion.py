"""Compile's epilogue rewrites (src/core/fuse_epilogues.h), on every executor: an activation after a GEMM, a
convolution, an ADD or a batch normalization folds into it; an ADD of a GEMM's output and another tensor becomes
that GEMM with the tensor as C, an ADD of a convolution's output and a per-channel tensor its bias. For each rule the fused graph gives the numbers of the same graph kept unfused (its
intermediate also read as an output, which stops the rewrite) and of a NumPy reference, and the rewrite happened:
an activation's leaves no intermediate (the graph needs no more temporary memory than its producer alone); a
residual add's rounds float16 once where the unfused graph rounds twice. Then compile's element-wise chains
(src/core/fuse_elementwise_chains.h), checked the same way, the rewrite seen in the compiled node types."""

import math

import numpy as np
import pytest

import directml as dml

FA = dml.FusedActivation
RNG = np.random.default_rng(7)


def erf(v):
    return np.vectorize(math.erf)(v)


ACTIVATIONS = {  # name: (builder, NumPy reference); gelu is not in DirectML's fusable list, yet folds here
    "relu": (dml.activation_relu, lambda v: np.maximum(v, 0)),
    "sigmoid": (dml.activation_sigmoid, lambda v: 1 / (1 + np.exp(-v))),
    "tanh": (dml.activation_tanh, np.tanh),
    "gelu": (dml.activation_gelu, lambda v: v * 0.5 * (1 + erf(v / math.sqrt(2)))),
}


def compile_and_run(device, build, feeds):
    """build(graph, inputs) -> (outputs, producer-only outputs): returns the results and both compiled operators'
    node types."""
    results, nodes = None, []
    for which in (0, 1):
        g = dml.Graph(device)
        inputs = {name: g.input(a.shape, a.dtype, name=name) for name, a in feeds.items()}
        op = g.compile(build(g, inputs)[which])
        nodes.append(op._node_types)
        if which == 0:
            results = op(feeds)
    return results, nodes


def check(device, build, feeds, want, fused=True):
    """The chain (first output of build) matches `want` and the unfused chain, and (`fused`) compiles to as many
    nodes as its producer alone; build(g, inputs, unfused) also gives the producer alone as its second list. (Not the
    temporary sizes: the cuda executor measures the library's algorithms at compile, and the one chosen for the fused
    form may take a workspace the producer's did not.)"""
    (result,), (chain_nodes, producer_nodes) = compile_and_run(device, lambda g, i: build(g, i, False), feeds)
    unfused, _ = compile_and_run(device, lambda g, i: build(g, i, True), feeds)
    np.testing.assert_allclose(result, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(result, unfused[0], rtol=1e-5, atol=1e-6)
    assert not fused or len(chain_nodes) == len(producer_nodes), f"the rewrite left {chain_nodes} for {producer_nodes}"


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_folds_into_gemm(device, name):
    build_act, ref = ACTIVATIONS[name]
    a, b = RNG.standard_normal((2, 3, 5, 8)).astype(np.float32), RNG.standard_normal((2, 3, 8, 4)).astype(np.float32)

    def build(g, i, unfused):
        y = dml.gemm(i["a"], i["b"], alpha=0.5)
        return [build_act(y)] + ([y] if unfused else []), [y]

    check(device, build, {"a": a, "b": b}, ref(0.5 * a.astype(np.float64) @ b))


def test_activation_folds_into_convolution(device):
    x, f = RNG.standard_normal((1, 3, 6, 6)).astype(np.float32), RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = RNG.standard_normal((1, 4, 1, 1)).astype(np.float32)

    def build(g, i, unfused):
        y = dml.convolution(i["x"], i["f"], i["bias"], start_padding=[1, 1], end_padding=[1, 1])
        return [dml.activation_sigmoid(y)] + ([y] if unfused else []), [y]

    X = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 4, 6, 6)) + bias
    for r in range(3):
        for s in range(3):
            conv += np.einsum("nchw,oc->nohw", X[:, :, r:r + 6, s:s + 6], f[:, :, r, s])
    check(device, build, {"x": x, "f": f, "bias": bias}, 1 / (1 + np.exp(-conv)))


def test_activation_folds_into_add_and_batch_normalization(device):
    x, y = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32), RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    stats = [RNG.uniform(0.5, 1.5, (1, 3, 1, 1)).astype(np.float32) for _ in range(4)]
    names = ["mean", "variance", "scale", "bias"]

    def build_add(g, i, unfused):
        s = dml.add(i["x"], i["y"])
        return [dml.activation_tanh(s)] + ([s] if unfused else []), [s]

    check(device, build_add, {"x": x, "y": y}, np.tanh(x.astype(np.float64) + y))

    def build_norm(g, i, unfused):
        n = dml.batch_normalization(i["x"], *(i[k] for k in names), spatial=True, epsilon=1e-5)
        return [dml.activation_relu(n)] + ([n] if unfused else []), [n]

    m, v, sc, b = (s.astype(np.float64) for s in stats)
    check(device, build_norm, {"x": x, **dict(zip(names, stats))},
          np.maximum((x - m) / np.sqrt(v + 1e-5) * sc + b, 0))


def test_integer_relu_after_add_stays_a_node(device):
    """Fused activations are on floats only: an int8 ADD then RELU gives the RELU's answer (it was folded into the
    ADD, whose integer kernels apply no fused activation: -1 + -1 gave -2)."""
    a, b = np.array([-1, 3, -128, 100], np.int8), np.array([-1, -5, 1, 27], np.int8)
    g = dml.Graph(device)
    x, y = g.input(a.shape, np.int8, name="a"), g.input(b.shape, np.int8, name="b")
    (got,) = g.compile([dml.activation_relu(dml.add(x, y))])({"a": a, "b": b})
    np.testing.assert_array_equal(got, np.maximum(a + b, 0))  # int8 wraps: 100 + 27 = 127, no overflow here


@pytest.mark.parametrize("gemm_first", [True, False])
@pytest.mark.parametrize("then_relu", [False, True])
def test_residual_add_becomes_gemm_c(device, gemm_first, then_relu):
    """x @ w + r, the residual computed after the GEMM in graph order (it runs where the ADD ran), then perhaps a
    ReLU, which folds into the same GEMM."""
    x, w = RNG.standard_normal((1, 2, 6, 8)).astype(np.float32), RNG.standard_normal((1, 2, 8, 5)).astype(np.float32)
    r = RNG.standard_normal((1, 2, 6, 5)).astype(np.float32)

    def build(g, i, unfused):
        y = dml.gemm(i["x"], i["w"], alpha=2.0)
        res = dml.exp(i["r"])
        s = dml.add(y, res) if gemm_first else dml.add(res, y)
        out = dml.activation_relu(s) if then_relu else s
        return [out] + ([y] if unfused else []), [dml.gemm(i["x"], i["w"], dml.exp(i["r"]))]

    want = 2.0 * x.astype(np.float64) @ w + np.exp(r.astype(np.float64))
    check(device, build, {"x": x, "w": w, "r": r}, np.maximum(want, 0) if then_relu else want, fused=False)


def test_residual_add_rounds_once(device):
    """float16: 1025 + 1024 = 2049 rounds to 2048 as a GEMM's output, and 2048 + 1 to 2048 again; the GEMM that
    takes the residual as C rounds 2049 + 1 = 2050 once, exactly."""
    x = np.array([[[[1025, 1024]]]], np.float16)
    w, r = np.ones((1, 1, 2, 1), np.float16), np.ones((1, 1, 1, 1), np.float16)
    for unfused, want in ((False, 2050), (True, 2048)):
        g = dml.Graph(device)
        i = {k: g.input(a.shape, np.float16, name=k) for k, a in {"x": x, "w": w, "r": r}.items()}
        y = dml.gemm(i["x"], i["w"])
        got = g.compile([dml.add(y, i["r"])] + ([y] if unfused else []))({"x": x, "w": w, "r": r})
        assert got[0].item() == want


@pytest.mark.parametrize("channel_stride", [1, 0])  # a per-channel bias, and one value broadcast over all
def test_per_channel_add_becomes_convolution_bias(device, channel_stride):
    """conv(x, f) + b broadcast from [1, C, 1, 1], then a ReLU: one convolution with bias and activation. An addend
    that varies along the image stays an ADD."""
    x, f = RNG.standard_normal((2, 3, 5, 5)).astype(np.float32), RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = RNG.standard_normal((1, 4, 1, 1)).astype(np.float32)
    full = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)

    def build(g, i, unfused):
        y = dml.convolution(i["x"], i["f"])
        per_channel = dml.reinterpret(i["b"], [2, 4, 3, 3], [0, channel_stride, 0, 0])
        return ([dml.activation_relu(dml.add(y, per_channel))] + ([y] if unfused else []),
                [dml.convolution(i["x"], i["f"], dml.reinterpret(i["b"], [1, 4, 1, 1], [0, channel_stride, 0, 0]))])

    X = x.astype(np.float64)
    conv = sum(np.einsum("nchw,oc->nohw", X[:, :, r:r + 3, s:s + 3], f[:, :, r, s]) for r in range(3) for s in range(3))
    bias = b if channel_stride else np.full_like(b, b.flat[0])
    check(device, build, {"x": x, "f": f, "b": b}, np.maximum(conv + bias, 0))

    g = dml.Graph(device)
    i = {k: g.input(a.shape, np.float32, name=k) for k, a in {"x": x, "f": f, "full": full}.items()}
    (got,) = g.compile([dml.add(dml.convolution(i["x"], i["f"]), i["full"])])({"x": x, "f": f, "full": full})
    np.testing.assert_allclose(got, conv + full, rtol=1e-5, atol=1e-5)


def test_add_after_gemm_with_c_or_a_fused_activation_does_not_fold(device):
    # On directml this also checks the lowering's workaround: handed GEMM(relu) then ADD, DirectML's CompileGraph
    # folds the ADD into the GEMM ahead of the relu (relu(x w + r)), so the GEMM's activation is lowered as its own
    # node (docs/operators.md).
    x, w = RNG.standard_normal((1, 1, 4, 3)).astype(np.float32), RNG.standard_normal((1, 1, 3, 4)).astype(np.float32)
    c, r = (RNG.standard_normal((1, 1, 4, 4)).astype(np.float32) for _ in range(2))
    g = dml.Graph(device)
    i = {k: g.input(a.shape, np.float32, name=k) for k, a in {"x": x, "w": w, "c": c, "r": r}.items()}
    outs = [dml.add(dml.gemm(i["x"], i["w"], i["c"], beta=0.5), i["r"]),
            dml.add(dml.gemm(i["x"], i["w"], fused_activation=FA.relu()), i["r"])]
    got = g.compile(outs)({"x": x, "w": w, "c": c, "r": r})
    p = x.astype(np.float64) @ w
    np.testing.assert_allclose(got[0], p + 0.5 * c + r, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], np.maximum(p, 0) + r, rtol=1e-5, atol=1e-5)


# --- element-wise chains (src/core/fuse_elementwise_chains.h) ------------------------------------------------------

CHAIN = "internal ELEMENT_WISE_CHAIN"
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float16: dict(rtol=4e-3, atol=4e-3)}


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def compile_chain(device, build, feeds, keep=False):
    """build(inputs) -> (output, intermediates): the compiled operator of the output alone, or (`keep`) with the
    intermediates also as outputs, which keeps every node."""
    g = dml.Graph(device)
    inputs = {name: g.input(a.shape, a.dtype, name=name) for name, a in feeds.items()}
    out, intermediates = build(inputs)
    return g.compile([out] + (intermediates if keep else []))


def check_chain(device, build, feeds, want, chains=1):
    """The output matches `want` (float64) and the same graph kept unfused; compile made `chains` chain nodes of it
    where the executor takes them (the directml executor never does) and none in the unfused graph."""
    fused_op, unfused_op = compile_chain(device, build, feeds), compile_chain(device, build, feeds, keep=True)
    takes = device.kind != "directml"
    assert fused_op._node_types.count(CHAIN) == (chains if takes else 0), fused_op._node_types
    assert CHAIN not in unfused_op._node_types, unfused_op._node_types
    (fused,), unfused = fused_op(feeds), unfused_op(feeds)
    tol = TOLERANCE[fused.dtype.type]
    np.testing.assert_allclose(fused.astype(np.float64), want, **tol)
    np.testing.assert_allclose(fused.astype(np.float64), unfused[0].astype(np.float64), **tol)
    return fused_op


DTYPES = [np.float32, np.float16]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (3, 1000), (1, 37)])  # 16-byte vectors and a tail; a tail alone
def test_swish_written_as_two_nodes_is_one_chain(device, dtype, shape):
    x = RNG.standard_normal(shape).astype(dtype)

    def build(i):
        s = dml.activation_sigmoid(i["x"])
        return i["x"] * s, [s]

    X = x.astype(np.float64)
    op = check_chain(device, build, {"x": x}, X * sigmoid(X))
    assert device.kind == "directml" or op._node_types == [CHAIN]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sigmoid_in_a_chain_saturates(device, dtype):
    """x * sigmoid(x) where exp(-x) overflows float32 or vanishes (|x| up to float16's largest, and infinity): the
    chain's sigmoid (float16: MUFU's exponential and reciprocal) goes to 0 and 1 as the reference does."""
    big = [0.0, -0.0, 1.0, -1.0, 15.0, -15.0, 87.0, -87.0, 89.0, -89.0, 104.0, -104.0, 300.0, -300.0, 65504.0,
           -65504.0, np.inf]
    x = np.array(big * 2, dtype).reshape(2, 17)

    def build(i):
        s = dml.activation_sigmoid(i["x"])
        return i["x"] * s, [s]

    X = x.astype(np.float64)
    with np.errstate(over="ignore"):
        check_chain(device, build, {"x": x}, X * sigmoid(X))


@pytest.mark.parametrize("dtype", DTYPES)
def test_y_plus_half_y_is_one_chain(device, dtype):
    """y + y * 0.5: the scalar multiply is a scale on the unary identity, the add reads the chain's start again."""
    y = RNG.standard_normal((2, 4, 8, 8)).astype(dtype)

    def build(i):
        half = i["y"] * 0.5
        return i["y"] + half, [half]

    check_chain(device, build, {"y": y}, 1.5 * y.astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_multiply_add_activation_with_a_broadcast_operand(device, dtype, act):
    """(a * w + b) then an activation, b a per-channel tensor broadcast over the image: the activation folds into
    the ADD first (fuse_epilogues), the chain then takes MULTIPLY and ADD with its activation, reading the broadcast
    operand through its zero strides."""
    a, w = (RNG.standard_normal((2, 3, 4, 5)).astype(dtype) for _ in range(2))
    b = RNG.standard_normal((1, 3, 1, 1)).astype(dtype)
    build_act, ref = ACTIVATIONS[act]

    def build(i):
        p = i["a"] * i["w"]
        s = dml.add(p, dml.broadcast(i["b"], [2, 3, 4, 5]))
        return build_act(s), [p, s]

    check_chain(device, build, {"a": a, "w": w, "b": b}, ref(a.astype(np.float64) * w + b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_chain_operand_order_and_parameters(device, dtype):
    """Unary functions with scale/bias and parameters, activations with theirs, a square (the running value on both
    sides), and subtract / divide with the running value second: each step as its node computes it."""
    x = RNG.uniform(0.5, 2.0, (4, 33)).astype(dtype)
    c = RNG.uniform(4.0, 5.0, (4, 33)).astype(dtype)  # c - v stays above 0.4: no sign for rounding to flip

    def build(i):
        steps = [dml.exp(i["x"], scale_bias=(0.5, -0.25))]
        steps.append(dml.pow(steps[-1], 1.5))
        steps.append(steps[-1] - 1.2)
        steps.append(dml.activation_leaky_relu(steps[-1], alpha=0.3))
        steps.append(steps[-1] * steps[-1])
        steps.append(dml.subtract(i["c"], steps[-1]))
        steps.append(dml.divide(i["c"], steps[-1]))
        steps.append(dml.activation_tanh(steps[-1]))
        return steps[-1], steps[:-1]

    X, C = x.astype(np.float64), c.astype(np.float64)
    v = np.exp(0.5 * X - 0.25) ** 1.5 - 1.2
    v = np.where(v >= 0, v, 0.3 * v) ** 2
    check_chain(device, build, {"x": x, "c": c}, np.tanh(C / (C - v)))


def test_long_chains_are_cut_at_the_bounds(device):
    """Twelve steps make two chains (at most eight steps each); a sum of six inputs makes two (four inputs each)."""
    x = RNG.standard_normal((3, 50)).astype(np.float32)

    def build_long(i):
        v, kept = i["x"], []
        for k in range(12):
            v = dml.activation_tanh(v) if k % 2 else v * 1.1
            kept.append(v)
        return v, kept[:-1]

    want = x.astype(np.float64)
    for k in range(12):
        want = np.tanh(want) if k % 2 else want * 1.1
    check_chain(device, build_long, {"x": x}, want, chains=2)

    feeds = {f"x{k}": RNG.standard_normal((3, 50)).astype(np.float32) for k in range(6)}

    def build_sum(i):
        v, kept = i["x0"], []
        for k in range(1, 6):
            v = v + i[f"x{k}"]
            kept.append(v)
        return v, kept[:-1]

    check_chain(device, build_sum, feeds, sum(a.astype(np.float64) for a in feeds.values()), chains=2)


def test_chains_broken_by_a_second_reader_an_output_or_a_view(device):
    """An intermediate read by two nodes, one the graph returns, or one read through a view of other sizes (a
    reshape, a broadcast) stays a node of its own; what is around it may still chain."""
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    X = x.astype(np.float64)
    takes = device.kind != "directml"

    def run(outputs_of):
        g = dml.Graph(device)
        i = g.input(x.shape, np.float32, name="x")
        op = g.compile(outputs_of(i))
        return op, op({"x": x})

    # sigmoid(x) read by a multiply and an add: neither run goes past it.
    op, (u, w) = run(lambda i: [i * dml.activation_sigmoid(i), dml.activation_sigmoid(i)])  # two sigmoid nodes
    assert op._node_types.count(CHAIN) == (1 if takes else 0)  # x * sigmoid(x); the output sigmoid alone
    np.testing.assert_allclose(u, X * sigmoid(X), rtol=1e-6)

    def second_reader(i):
        s = dml.activation_sigmoid(i)
        return [i * s, s + 1.0]

    op, (u, w) = run(second_reader)
    assert CHAIN not in op._node_types, op._node_types
    np.testing.assert_allclose(u, X * sigmoid(X), rtol=1e-6)
    np.testing.assert_allclose(w, sigmoid(X) + 1, rtol=1e-6)

    def graph_output(i):
        s = dml.activation_sigmoid(i)
        return [dml.exp(i * s), s]

    op, (u, s) = run(graph_output)
    assert op._node_types.count(CHAIN) == (1 if takes else 0), op._node_types  # the multiply and the exp
    assert op._node_types.count("DML_OPERATOR_ACTIVATION_SIGMOID") == 1
    np.testing.assert_allclose(u, np.exp(X * sigmoid(X)), rtol=1e-6)

    def reshaped(i):
        return [dml.activation_relu(dml.reinterpret(dml.tanh(i), [6, 4])) * 2.0]

    op, (u,) = run(reshaped)
    assert op._node_types.count(CHAIN) == (1 if takes else 0), op._node_types  # relu and the scale, not tanh
    assert op._node_types[0] == "DML_OPERATOR_ELEMENT_WISE_TANH"
    np.testing.assert_allclose(u, 2 * np.maximum(np.tanh(X), 0).reshape(6, 4), rtol=1e-6)

    def broadcast(i):
        t = dml.tanh(dml.reinterpret(i, [1, 3, 4]))
        return [dml.exp(dml.broadcast(t, [5, 3, 4]))]

    op, (u,) = run(broadcast)
    assert CHAIN not in op._node_types, op._node_types
    np.testing.assert_allclose(u, np.broadcast_to(np.exp(np.tanh(X[:1])), (5, 3, 4)), rtol=1e-6)


def test_the_directml_executor_never_gets_the_chain(device):
    """The directml executor has no kernel for the internal operator: asked about a chain it says no, and the nodes
    stay as the graph has them."""
    if device.kind != "directml":
        pytest.skip("the directml executor's refusal (cpu and cuda take chains)")
    assert "ElementwiseChainDesc" not in device._operator_types
    g = dml.Graph(device)
    x = g.input([2, 8], np.float32, name="x")
    op = g.compile([dml.activation_relu(x * dml.activation_sigmoid(x) + 1.0)])
    assert CHAIN not in op._node_types and len(op._node_types) >= 2, op._node_types


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_chain_reading_another_runs_node(device, dtype):
    """(x + y) * (x - 1) / 2: the chain add, multiply, scale reads x - 1, a node whose one reader is in that chain;
    it stays a node of its own (a node joins one chain at most)."""
    x, y = (RNG.standard_normal((3, 24)).astype(dtype) for _ in range(2))

    def build(i):
        s, m = i["x"] + i["y"], i["x"] - 1.0
        p = s * m
        return p / 2, [s, m, p]

    X, Y = x.astype(np.float64), y.astype(np.float64)
    check_chain(device, build, {"x": x, "y": y}, (X + Y) * (X - 1) / 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_chain_starting_from_a_broadcast_or_transposed_view(device, dtype):
    """The chain's first input read through zero strides (a row broadcast down) and through swapped strides (a
    transpose), beside a packed operand: every element at its own offset."""
    row = RNG.standard_normal((1, 40)).astype(dtype)
    m = RNG.standard_normal((40, 30)).astype(dtype)
    other = RNG.standard_normal((30, 40)).astype(dtype)

    def build(i):
        b = dml.tanh(dml.broadcast(i["row"], [30, 40]))
        t = dml.tanh(dml.reinterpret(i["m"], [30, 40], [1, 30]))
        bs, ts = b * i["other"], t * i["other"]
        s, e = dml.activation_sigmoid(bs), dml.exp(ts)
        return s + e, [b, t, bs, ts, s, e]

    R, M, O = row.astype(np.float64), m.astype(np.float64), other.astype(np.float64)
    want = sigmoid(np.tanh(np.broadcast_to(R, (30, 40))) * O) + np.exp(np.tanh(M.T) * O)
    # Two chains meet at the add: the second takes it (the first's output is its operand).
    check_chain(device, build, {"row": row, "m": m, "other": other}, want, chains=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_less_common_functions_in_a_chain(device, dtype):
    """Functions the cuda kernel does not make constants for (sin, elu, mean, softsign) run through the per-element
    choice, inside 16-byte vectors and in the tail alike."""
    x, c = (RNG.standard_normal((5, 27)).astype(dtype) for _ in range(2))

    def build(i):
        s = dml.sin(i["x"], scale_bias=(2.0, 0.5))
        e = dml.activation_elu(s, alpha=0.7)
        m = dml.mean(e, i["c"])
        return dml.activation_softsign(m), [s, e, m]

    X, C = x.astype(np.float64), c.astype(np.float64)
    s = np.sin(2 * X + 0.5)
    m = (np.where(s >= 0, s, 0.7 * (np.exp(s) - 1)) + C) / 2
    check_chain(device, build, {"x": x, "c": c}, m / (1 + np.abs(m)))
