"""Activation operators and FusedActivation against NumPy references: every activation at float32 and float16
(relu and parameterized relu also at the signed integer types), their parameters and defaults, softmax /
log-softmax / hardmax over axes, strided and broadcast inputs, and the error paths."""

import math

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(11)
FLOATS = [np.float32, np.float16]
SIGNED = [np.int8, np.int16, np.int32]
SELU_ALPHA, SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


def run(device, build, *arrays):
    graph = dml.Graph(device)
    inputs = [graph.input(list(a.shape), a.dtype) for a in arrays]
    out = build(*inputs)
    single = isinstance(out, dml.Expression)
    results = graph.compile([out] if single else list(out))(dict(zip(inputs, arrays)))
    return results[0] if single else results


def tol(dtype):
    return dict(rtol=3e-3, atol=3e-3) if np.dtype(dtype) == np.float16 else dict(rtol=2e-6, atol=2e-7)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


erf = np.vectorize(math.erf)

# name: (NumPy reference taking x and the keyword parameters, default parameters, other parameters to try)
ACTIVATIONS = {
    "identity": (lambda x: x, {}, None),
    "relu": (lambda x: np.maximum(x, 0), {}, None),
    "sigmoid": (sigmoid, {}, None),
    "tanh": (np.tanh, {}, None),
    "softsign": (lambda x: x / (1 + np.abs(x)), {}, None),
    "gelu": (lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), {}, None),
    "leaky_relu": (lambda x, alpha: np.where(x >= 0, x, alpha * x), {"alpha": 0.01}, {"alpha": 0.3}),
    "elu": (lambda x, alpha: np.where(x >= 0, x, alpha * (np.exp(x) - 1)), {"alpha": 1.0}, {"alpha": 0.5}),
    "celu": (lambda x, alpha: np.maximum(0, x) + np.minimum(0, alpha * (np.exp(x / alpha) - 1)), {"alpha": 1.0},
             {"alpha": 2.0}),
    "hard_sigmoid": (lambda x, alpha, beta: np.clip(alpha * x + beta, 0, 1), {"alpha": 0.2, "beta": 0.5},
                     {"alpha": 0.5, "beta": 0.1}),
    "linear": (lambda x, alpha, beta: alpha * x + beta, None, {"alpha": -1.5, "beta": 0.25}),
    "parametric_softplus": (lambda x, alpha, beta: alpha * np.log1p(np.exp(beta * x)), None,
                            {"alpha": 0.7, "beta": 1.3}),
    "scaled_elu": (lambda x, alpha, gamma: gamma * np.where(x > 0, x, alpha * (np.exp(x) - 1)),
                   {"alpha": SELU_ALPHA, "gamma": SELU_GAMMA}, {"alpha": 1.0, "gamma": 2.0}),
    "scaled_tanh": (lambda x, alpha, beta: alpha * np.tanh(beta * x), {"alpha": 1.0, "beta": 0.5},
                    {"alpha": 2.0, "beta": 1.5}),
    "softplus": (lambda x, steepness: np.log1p(np.exp(steepness * x)) / steepness, {"steepness": 1.0},
                 {"steepness": 2.5}),
    "thresholded_relu": (lambda x, alpha: np.where(x > alpha, x, 0), {"alpha": 1.0}, {"alpha": -0.5}),
    "shrink": (lambda x, bias, threshold: np.where(x < -threshold, x + bias, np.where(x > threshold, x - bias, 0)),
               {"bias": 0.0, "threshold": 0.5}, {"bias": 0.2, "threshold": 1.0}),
    "swish": (lambda x, sigmoid_input_scale: x * sigmoid(sigmoid_input_scale * x), {"sigmoid_input_scale": 1.0},
              {"sigmoid_input_scale": 1.702}),
    "hard_swish": (lambda x, alpha, beta: x * np.clip(alpha * x + beta, 0, 1), {"alpha": 1 / 6, "beta": 0.5},
                   {"alpha": 0.25, "beta": 0.3}),
}


def cases():
    for name, (_, default, other) in sorted(ACTIVATIONS.items()):
        for params in [default, other]:
            if params is not None:
                yield name, params, params is default


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,params,is_default", list(cases()))
def test_activation(device, name, params, is_default, dtype):
    ref = ACTIVATIONS[name][0]
    x = RNG.uniform(-4, 4, (3, 7)).astype(dtype)
    x[0, :4] = [0, -0.5, 0.5, 1.0]  # the kinks of relu, shrink and thresholded relu
    fn = getattr(dml, "activation_" + name)
    y = run(device, lambda a: fn(a) if is_default else fn(a, **params), x)
    assert y.dtype == dtype and y.shape == x.shape
    np.testing.assert_allclose(y.astype(np.float64), ref(x.astype(np.float64), **params), **tol(dtype))


@pytest.mark.parametrize("shape", [(5,), (2, 3, 5), (1, 2, 1, 3, 5), (2, 1, 1, 1, 1, 1, 1, 3)])
def test_activation_odd_shapes_and_non_contiguous(device, shape):
    big = RNG.standard_normal(tuple(2 * s for s in shape)).astype(np.float32)
    x = big[(slice(1, None, 2),) * len(shape)]
    np.testing.assert_allclose(run(device, dml.activation_sigmoid, x), sigmoid(x.astype(np.float64)), rtol=2e-6)


def test_activation_on_strided_and_broadcast_views(device):
    graph = dml.Graph(device)
    a = graph.input([4, 3])
    row = graph.input([1, 3])
    op = graph.compile([dml.activation_elu(dml.reinterpret(a, [3, 4], [1, 3]), alpha=0.5),
                        dml.activation_relu(dml.broadcast(row, [4, 3]))])
    x, r = RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal((1, 3)).astype(np.float32)
    elu, relu = op({a: x, row: r})
    np.testing.assert_allclose(elu, np.where(x.T >= 0, x.T, 0.5 * (np.exp(x.T) - 1)), rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(relu, np.maximum(np.broadcast_to(r, (4, 3)), 0))


@pytest.mark.parametrize("dtype", SIGNED)
def test_relu_signed_integers(device, dtype):
    x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (3, 5), endpoint=True, dtype=dtype)
    np.testing.assert_array_equal(run(device, dml.activation_relu, x), np.maximum(x, 0))


@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float64])
def test_relu_rejects_other_types(device, dtype):
    graph = dml.Graph(device)
    with pytest.raises(ValueError, match=r"^activation_relu\(\): input has type .*\(DML_OPERATOR_ACTIVATION_RELU\)$"):
        dml.activation_relu(graph.input([2], dtype))


@pytest.mark.parametrize("name", ["sigmoid", "gelu", "elu", "swish", "softmax", "hardmax"])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_float_activations_reject_other_types(device, name, dtype):
    graph = dml.Graph(device)
    with pytest.raises(ValueError, match=rf"^activation_{name}\(\): input has type \w+; allowed: FLOAT32, FLOAT16 \(DML_OPERATOR_ACTIVATION_\w+\)$"):
        getattr(dml, "activation_" + name)(graph.input([2, 2], dtype))


# --- parameterized relu -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS + SIGNED)
def test_parameterized_relu(device, dtype):
    if np.dtype(dtype).kind == "f":
        x, slope = RNG.uniform(-3, 3, (2, 3, 5)).astype(dtype), RNG.uniform(-1, 1, (2, 3, 5)).astype(dtype)
        expected = np.where(x >= 0, x, slope.astype(np.float64) * x)
        np.testing.assert_allclose(run(device, dml.activation_parameterized_relu, x, slope), expected, **tol(dtype))
    else:
        x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (2, 3, 5), endpoint=True, dtype=dtype)
        slope = RNG.integers(-5, 5, (2, 3, 5)).astype(dtype)
        with np.errstate(over="ignore"):
            expected = np.where(x >= 0, x, slope * x)  # integer products wrap
        np.testing.assert_array_equal(run(device, dml.activation_parameterized_relu, x, slope), expected)


def test_parameterized_relu_broadcast_slope(device):
    graph = dml.Graph(device)
    x = graph.input([2, 4, 3, 3])
    slope = graph.input([1, 4, 1, 1])  # one slope per channel, broadcast with zero strides
    op = graph.compile([dml.activation_parameterized_relu(x, dml.broadcast(slope, x.shape))])
    xv, sv = RNG.standard_normal((2, 4, 3, 3)).astype(np.float32), RNG.uniform(0, 1, (1, 4, 1, 1)).astype(np.float32)
    np.testing.assert_allclose(op({x: xv, slope: sv})[0], np.where(xv >= 0, xv, sv * xv), rtol=1e-6)


def test_parameterized_relu_errors(device):
    graph = dml.Graph(device)
    x = graph.input([2, 3])
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ: \[2, 3\] and \[1, 3\]"):
        dml.activation_parameterized_relu(x, graph.input([1, 3]))
    with pytest.raises(ValueError, match="^[^:]+: the element types differ: FLOAT32 and FLOAT16"):
        dml.activation_parameterized_relu(x, graph.input([2, 3], np.float16))
    with pytest.raises(ValueError, match="^[^:]+: input has type UINT8"):
        u = graph.input([2], np.uint8)
        dml.activation_parameterized_relu(u, u)


# --- softmax, log-softmax, hardmax --------------------------------------------------------------------------------

def softmax(x, axes):
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def hardmax(x, axes):
    """1 at the first maximum (row-major within the axes), else 0."""
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    flat = moved.reshape(moved.shape[: x.ndim - len(axes)] + (-1,))
    one_hot = np.zeros_like(flat)
    np.put_along_axis(one_hot, flat.argmax(axis=-1)[..., None], 1, axis=-1)
    return np.moveaxis(one_hot.reshape(moved.shape), range(x.ndim - len(axes), x.ndim), axes)


SOFTMAXES = {
    "softmax": softmax,
    "log_softmax": lambda x, axes: np.log(softmax(x, axes)),
    "hardmax": hardmax,
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(SOFTMAXES))
@pytest.mark.parametrize("axes", [None, [0], [1], [2], [0, 2], [2, 1, 0]])
def test_softmax_family(device, name, axes, dtype):
    x = RNG.uniform(-3, 3, (2, 3, 5)).astype(dtype)
    fn = getattr(dml, "activation_" + name)
    y = run(device, lambda a: fn(a) if axes is None else fn(a, axes=axes), x)
    ref_axes = (2,) if axes is None else tuple(sorted(axes))  # default: the last axis, as DirectMLX's SOFTMAX
    np.testing.assert_allclose(y.astype(np.float64), SOFTMAXES[name](x.astype(np.float64), ref_axes), **tol(dtype))


def test_hardmax_picks_the_first_maximum(device):
    x = np.array([[1, 3, 3, 2], [5, 5, 5, 5]], np.float32)
    np.testing.assert_array_equal(run(device, dml.activation_hardmax, x), [[0, 1, 0, 0], [1, 0, 0, 0]])


def test_softmax_is_stable_and_handles_strided_input(device):
    graph = dml.Graph(device)
    a = graph.input([3, 4])
    view = dml.reinterpret(a, [4, 3], [1, 4])  # the transpose
    op = graph.compile([dml.activation_softmax(view), dml.activation_log_softmax(view, axes=[0])])
    x = (RNG.standard_normal((3, 4)) * 100 + 1000).astype(np.float32)  # exp would overflow without the max shift
    s, ls = op({a: x})
    np.testing.assert_allclose(s, softmax(x.T.astype(np.float64), (1,)), rtol=1e-5, atol=1e-30)
    np.testing.assert_allclose(ls, np.log(softmax(x.T.astype(np.float64), (0,))), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("offset", [1e8, -1e8])
@pytest.mark.parametrize("axis", [0, 1])
def test_log_softmax_keeps_its_precision_far_from_zero(device, offset, axis):
    # x - max is exact near the max, and log(sum) of order 1 must survive: added to a max of 1e8 first (float32's
    # spacing there is 8) it would vanish, and the largest element's output read 0 instead of -log(sum).
    x = (offset - 8 * RNG.integers(0, 3, (20, 20))).astype(np.float32)  # 20: a whole 16-lane vector and a tail
    ls = run(device, lambda a: dml.activation_log_softmax(a, axes=[axis]), x)
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(axis=axis, keepdims=True)
    want = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(ls, want, rtol=1e-6, atol=1e-6)


def test_softmax_errors(device):
    graph = dml.Graph(device)
    x = graph.input([2, 3])
    with pytest.raises(ValueError, match="^[^:]+: axis 2 is out of range for a 2-D tensor"):
        dml.activation_softmax(x, axes=[2])
    with pytest.raises(ValueError, match=r"^[^:]+: axes \[1, 1\] repeat an axis"):
        dml.activation_log_softmax(x, axes=[1, 1])
    with pytest.raises(ValueError, match="^[^:]+: axes must not be empty"):
        dml.activation_hardmax(x, axes=[])


# --- FusedActivation ----------------------------------------------------------------------------------------------

FUSED = {
    "elu": {"alpha": 1.0}, "hard_sigmoid": {"alpha": 0.2, "beta": 0.5}, "identity": {}, "leaky_relu": {"alpha": 0.01},
    "linear": None, "parametric_softplus": None, "relu": {}, "scaled_elu": {"alpha": SELU_ALPHA, "gamma": SELU_GAMMA},
    "scaled_tanh": {"alpha": 1.0, "beta": 0.5}, "sigmoid": {}, "softplus": {"steepness": 1.0}, "softsign": {},
    "tanh": {}, "thresholded_relu": {"alpha": 1.0}, "shrink": {"bias": 0.0, "threshold": 0.5}, "celu": {"alpha": 1.0},
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(FUSED))
def test_add_with_each_fused_activation(device, name, dtype):
    params = FUSED[name] if FUSED[name] is not None else ACTIVATIONS[name][2]
    fused = getattr(dml.FusedActivation, name)(**params)
    a, b = RNG.uniform(-2, 2, (3, 5)).astype(dtype), RNG.uniform(-2, 2, (3, 5)).astype(dtype)
    y = run(device, lambda x, z: dml.add(x, z, fused_activation=fused), a, b)
    s = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float64)
    np.testing.assert_allclose(y.astype(np.float64), ACTIVATIONS[name][0](s, **params), **tol(dtype))


def test_fused_activation_factories_and_defaults():
    assert dml.FusedActivation.none() == dml.FusedActivation.none()
    assert repr(dml.FusedActivation.none()) == "FusedActivation.none()"
    lr = dml.FusedActivation.leaky_relu()
    assert (lr.function, lr.alpha) == ("LEAKY_RELU", pytest.approx(0.01))
    se = dml.FusedActivation.scaled_elu()
    assert (se.alpha, se.beta) == (pytest.approx(SELU_ALPHA), pytest.approx(SELU_GAMMA))
    sh = dml.FusedActivation.shrink(bias=0.1)
    assert (sh.function, sh.alpha, sh.beta) == ("SHRINK", pytest.approx(0.1), pytest.approx(0.5))
    assert dml.FusedActivation.relu() != dml.FusedActivation.sigmoid()
    with pytest.raises(TypeError):
        dml.FusedActivation.linear()  # alpha and beta have no default in DirectMLX
    # DirectML fuses only the activations of its list: gelu and swish are operators, not fused activations
    for name in ["gelu", "swish", "hard_swish"]:
        assert not hasattr(dml.FusedActivation, name)


def test_add_without_fusion_is_plain_add(device):
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(run(device, lambda x: dml.add(x, x), a), a + a)
    graph = dml.Graph(device)
    i = graph.input([2], np.int32)
    with pytest.raises(ValueError, match=r"^add\(\): a fused activation needs a float tensor.*\(DML_OPERATOR_ELEMENT_WISE_ADD1\)"):
        dml.add(i, i, fused_activation=dml.FusedActivation.sigmoid())
