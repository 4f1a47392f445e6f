"""Batch normalization (inference, training, gradients), mean variance and local response normalization vs NumPy."""

import math

import numpy as np
import pytest

import directml as dml

FA = dml.FusedActivation
ACTIVATIONS = {  # fused activation -> NumPy reference
    "none": (FA.none(), lambda v: v),
    "relu": (FA.relu(), lambda v: np.maximum(v, 0)),
    "leaky_relu": (FA.leaky_relu(0.2), lambda v: np.where(v >= 0, v, 0.2 * v)),
    "sigmoid": (FA.sigmoid(), lambda v: 1 / (1 + np.exp(-v))),
}


def close(actual, expected, dtype, f32=1e-5):
    t = dict(rtol=2e-2, atol=2e-2) if dtype == np.float16 else dict(rtol=f32, atol=f32)
    assert actual.dtype == dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual.astype(np.float64), expected, **t)


def stats_shape(shape, kept):
    """The shape of a per-`kept`-dimension tensor: 1 elsewhere."""
    return tuple(s if d in kept else 1 for d, s in enumerate(shape))


def reduced_axes(shape, stats):
    return tuple(d for d in range(len(shape)) if stats[d] == 1)


# --- batch_normalization -------------------------------------------------------------------------------------------

# (2, 3, 96, 96): channels of 18432 elements, more than one team of the cuda executor holds: two passes.
BN_SHAPES = [((2, 3, 4, 5), (1,)), ((2, 3, 4, 5), (1, 2)), ((4, 3), (1,)), ((3,), (0,)), ((2, 3, 2, 3, 2), (1, 4)),
             ((2, 3, 96, 96), (1,)), ((2, 3, 4, 5), (0, 1, 2, 3))]


@pytest.mark.parametrize("shape, kept", BN_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("act", ["none", "relu", "sigmoid"])
def test_batch_normalization(run, rng, shape, kept, dtype, act):
    ps = stats_shape(shape, kept)
    x = rng.standard_normal(shape).astype(dtype)
    mean, scale, bias = (rng.standard_normal(ps).astype(dtype) for _ in range(3))
    var = rng.uniform(0.5, 2.0, ps).astype(dtype)
    fused, f = ACTIVATIONS[act]
    (y,) = run(lambda *a: dml.batch_normalization(*a, spatial=True, epsilon=1e-3, fused_activation=fused),
               x, mean, var, scale, bias)
    xs = [v.astype(np.float64) for v in (x, mean, var, scale, bias)]
    close(y, f(xs[3] * (xs[0] - xs[1]) / np.sqrt(xs[2] + 1e-3) + xs[4]), dtype)


def test_batch_normalization_mixed_broadcasts_spatial_false_and_views(device, rng):
    # Each statistic broadcasts on its own; `spatial` has no effect; inputs may be strided or broadcast views.
    g = dml.Graph(device)
    x = g.input([2, 3, 8])
    view = dml.reinterpret(x, [2, 3, 4], [24, 8, 2])  # every other element of the last axis
    mean = dml.broadcast(g.input([1, 3, 1], name="m"), [1, 3, 4])
    var, scale, bias = g.input([1, 1, 4], name="v"), g.input([2, 1, 1], name="s"), g.input([1, 3, 4], name="b")
    ys = [dml.batch_normalization(view, mean, var, scale, bias, spatial=s, epsilon=0.0) for s in (True, False)]
    a = rng.standard_normal((2, 3, 8)).astype(np.float32)
    feeds = {"m": rng.standard_normal((1, 3, 1)), "v": rng.uniform(1, 2, (1, 1, 4)), "s": rng.standard_normal((2, 1, 1)),
             "b": rng.standard_normal((1, 3, 4))}
    feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
    y0, y1 = g.compile(ys)({x: a, **feeds})
    v = a[:, :, ::2].astype(np.float64)
    ref = feeds["s"] * (v - feeds["m"]) / np.sqrt(feeds["v"]) + feeds["b"]
    np.testing.assert_allclose(y0, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y0, y1)


# --- batch_normalization_training ----------------------------------------------------------------------------------

def np_bn_training(x, scale, bias, eps, add=None):
    axes = reduced_axes(x.shape, scale.shape)
    x = x.astype(np.float64)
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    y = scale * (x - mean) / np.sqrt(var + eps) + bias + (0 if add is None else add)
    return y, mean, var


@pytest.mark.parametrize("shape, kept", BN_SHAPES[:-1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("fused_add", [False, True])
def test_batch_normalization_training(run, rng, shape, kept, dtype, fused_add):
    ps = stats_shape(shape, kept)
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    scale, bias = rng.standard_normal(ps).astype(dtype), rng.standard_normal(ps).astype(dtype)
    arrays = [x, scale, bias] + ([rng.standard_normal(shape).astype(dtype)] if fused_add else [])
    out = run(lambda *a: dml.batch_normalization_training(*a, epsilon=1e-4, fused_activation=FA.leaky_relu(0.2)),
              *arrays)
    y, mean, var = np_bn_training(*(a.astype(np.float64) for a in arrays[:3]), 1e-4,
                                  arrays[3].astype(np.float64) if fused_add else None)
    close(out[0], ACTIVATIONS["leaky_relu"][1](y), dtype)
    close(out[1], mean, dtype)
    close(out[2], var, dtype)


def test_batch_normalization_training_outputs_and_defaults(device):
    g = dml.Graph(device)
    x, s, b = g.input([4, 3]), g.input([1, 3]), g.input([1, 3])
    out = dml.batch_normalization_training(x, s, b, epsilon=1e-5)
    assert isinstance(out, dml.BatchNormalizationTrainingOutputs)
    assert out.output.shape == (4, 3) and out.mean.shape == (1, 3) and out.variance.shape == (1, 3)


# --- gradients -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, kept", BN_SHAPES[:-1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_batch_normalization_grad(run, rng, shape, kept, dtype):
    ps = stats_shape(shape, kept)
    x, dy = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    mean, scale = rng.standard_normal(ps).astype(dtype), rng.standard_normal(ps).astype(dtype)
    var = rng.uniform(0.5, 2, ps).astype(dtype)
    out = run(lambda *a: dml.batch_normalization_grad(*a, epsilon=1e-3), x, dy, mean, var, scale)
    assert out[0].shape == shape and out[1].shape == ps
    X, DY, M, V, S = (a.astype(np.float64) for a in (x, dy, mean, var, scale))
    axes = reduced_axes(shape, ps)
    inv = 1 / np.sqrt(V + 1e-3)
    close(out[0], DY * S * inv, dtype)
    close(out[1], (DY * (X - M) * inv).sum(axis=axes, keepdims=True), dtype, 1e-4)
    close(out[2], DY.sum(axis=axes, keepdims=True), dtype, 1e-4)


@pytest.mark.parametrize("shape, kept", [((3, 2, 3), (1,)), ((4, 3), (1,)), ((2, 2, 3), (1, 2))])
def test_batch_normalization_training_grad_is_the_derivative(run, rng, shape, kept):
    # With the batch's own mean and variance, the training gradient is the exact derivative of the training forward.
    ps = stats_shape(shape, kept)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    scale, bias, eps = rng.standard_normal(ps), rng.standard_normal(ps), 1e-2
    loss = lambda xx: (np_bn_training(xx, scale, bias, eps)[0] * dy).sum()
    num = np.zeros(shape)
    for i in np.ndindex(*shape):
        d = np.zeros(shape)
        d[i] = 1e-6
        num[i] = (loss(x + d) - loss(x - d)) / 2e-6
    _, mean, var = np_bn_training(x, scale, bias, eps)
    out = run(lambda *a: dml.batch_normalization_training_grad(*a, epsilon=eps),
              *(a.astype(np.float32) for a in (x, dy, mean, var, scale)))
    axes = reduced_axes(shape, ps)
    assert len(out) == 3
    np.testing.assert_allclose(out[0], num, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(out[1], (dy * (x - mean) / np.sqrt(var + eps)).sum(axis=axes, keepdims=True), rtol=1e-4)
    np.testing.assert_allclose(out[2], dy.sum(axis=axes, keepdims=True), rtol=1e-4, atol=1e-5)


def test_batch_normalization_training_grad_float16_and_namedtuple(device, rng):
    g = dml.Graph(device)
    ins = [g.input(s, np.float16) for s in ([4, 3], [4, 3], [1, 3], [1, 3], [1, 3])]
    out = dml.batch_normalization_training_grad(*ins, epsilon=1e-3)
    assert isinstance(out, dml.BatchNormalizationGradOutputs) and out.gradient.dtype == np.float16
    x, dy, scale = (rng.standard_normal(s) for s in ((4, 3), (4, 3), (1, 3)))
    mean, var = x.mean(axis=0, keepdims=True), x.var(axis=0, keepdims=True)
    dx, ds, db = g.compile(list(out))(dict(zip(ins, (a.astype(np.float16) for a in (x, dy, mean, var, scale)))))
    inv = 1 / np.sqrt(var + 1e-3)
    xc = x - mean
    ref = scale * inv * (dy - dy.mean(axis=0) - xc * (dy * xc).mean(axis=0) / (var + 1e-3))
    np.testing.assert_allclose(dx.astype(np.float64), ref, rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(db.astype(np.float64), dy.sum(axis=0, keepdims=True), rtol=2e-2, atol=2e-2)


# --- mean_variance_normalization -----------------------------------------------------------------------------------

MVN_CASES = [((2, 3, 4, 5), [2, 3]), ((2, 3, 4, 5), [1, 2, 3]), ((2, 3, 4, 5), [0]), ((5,), [0]), ((3, 4), [1]),
             ((2, 3, 2, 2, 3), [0, 2, 4])]


@pytest.mark.parametrize("shape, axes", MVN_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("normalize_variance", [True, False])
@pytest.mark.parametrize("normalize_mean", [True, False])  # False: RMS normalization (MVN2's UseMean)
@pytest.mark.parametrize("with_scale, with_bias", [(True, True), (False, False), (True, False), (False, True)])
def test_mean_variance_normalization(run, rng, shape, axes, dtype, normalize_variance, normalize_mean, with_scale,
                                     with_bias):
    x = (rng.standard_normal(shape) * 3 + 2).astype(dtype)
    ps = tuple(1 if d in axes else s for d, s in enumerate(shape))  # per group; a broadcast parameter
    scale = rng.standard_normal(ps).astype(dtype) if with_scale else None
    bias = rng.standard_normal(shape).astype(dtype) if with_bias else None  # a full-size one
    arrays = [a for a in (x, scale, bias) if a is not None]

    def build(*ins):
        it = iter(ins[1:])
        s = next(it) if with_scale else None
        b = next(it) if with_bias else None
        return dml.mean_variance_normalization(ins[0], s, b, axes=axes, normalize_variance=normalize_variance,
                                               normalize_mean=normalize_mean, epsilon=1e-5,
                                               fused_activation=FA.relu())

    (y,) = run(build, *arrays)
    X = x.astype(np.float64)
    ax = tuple(axes)
    c = X - X.mean(axis=ax, keepdims=True) if normalize_mean else X
    if normalize_variance:
        c = c / np.sqrt((c * c).mean(axis=ax, keepdims=True) + 1e-5)  # without the mean: the mean square
    ref = c * (scale if with_scale else 1) + (bias if with_bias else 0)
    close(y, np.maximum(ref, 0), dtype, 1e-4)


def test_mean_variance_normalization_keyword_scale_and_views(device, rng):
    g = dml.Graph(device)
    x = g.input([3, 10])
    view = dml.reinterpret(x, [3, 5], [10, 2])
    b = dml.broadcast(g.input([5], name="b"), [3, 5])
    y = dml.mean_variance_normalization(view, bias=b, axes=[1], normalize_variance=True, epsilon=0.0)
    a = rng.standard_normal((3, 10)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    (out,) = g.compile([y])({x: a, "b": bias})
    v = a[:, ::2].astype(np.float64)
    np.testing.assert_allclose(out, (v - v.mean(1, keepdims=True)) / v.std(1, keepdims=True) + bias, rtol=1e-4,
                               atol=1e-5)


# Layer normalization over the last axis, its scale and bias one vector every row shares (as transformers have it):
# on the cuda executor, a block per row. Rows of 4096 and 8192 float16 elements (two and four vectors a thread), 640
# (threads left idle) and 40 (a warp); 42 (no whole vectors) and a scale per row take the general kernel. Relu is
# fused by the builder, swish folded in by compile.
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(3, 5, 4096), (2, 8192), (6, 640), (9, 40), (4, 42)])
@pytest.mark.parametrize("operands", ["scale_bias", "scale", "bias", "per_row_scale"])
@pytest.mark.parametrize("act", ["none", "relu", "swish"])
def test_layer_norm_rows(device, rng, dtype, shape, operands, act):
    c = shape[-1]
    x = (rng.standard_normal(shape) * (1 + np.arange(c) % 3) + np.arange(shape[0]).reshape(-1, *[1] * (len(shape) - 1)))
    x = x.astype(dtype)
    shared = (1,) * (len(shape) - 1) + (c,)
    scale_shape = shape[:-1] + (1,) if operands == "per_row_scale" else shared
    scale = (rng.standard_normal(scale_shape) + 1).astype(dtype) if "scale" in operands else None
    bias = rng.standard_normal(shared).astype(dtype) if "bias" in operands else None
    g = dml.Graph(device)
    xi = g.input(shape, dtype)
    y = dml.mean_variance_normalization(xi, None if scale is None else g.input(scale.shape, dtype, name="s"),
                                        None if bias is None else g.input(bias.shape, dtype, name="b"),
                                        axes=[len(shape) - 1], normalize_variance=True, epsilon=1e-5,
                                        fused_activation=FA.relu() if act == "relu" else FA.none())
    if act == "swish":
        y = dml.activation_swish(y)
    feeds = {xi: x, **({"s": scale} if scale is not None else {}), **({"b": bias} if bias is not None else {})}
    (got,) = g.compile([y])(feeds)
    X = x.astype(np.float64)
    ref = (X - X.mean(-1, keepdims=True)) / np.sqrt(X.var(-1, keepdims=True) + 1e-5)
    ref = ref * (1 if scale is None else scale) + (0 if bias is None else bias)
    close(got, {"none": ref, "relu": np.maximum(ref, 0), "swish": silu(ref)}[act], dtype, 1e-4)


@pytest.mark.parametrize("shape, axes, dtype, operand_shape", [
    ((2, 8, 4096), [2], np.float16, (1, 1, 4096)),  # LLM rows (cuda: a block per row)
    ((2, 32, 10, 64, 64), [2, 3, 4], np.float16, (1, 32, 10, 1, 1)),  # groups of 40960 (cuda: cut into chunks)
    ((3, 5, 99, 101), [1, 2, 3], np.float32, (1, 5, 1, 1)),  # odd rows: no vectors
])
def test_mean_variance_normalization_without_the_mean(run, rng, shape, axes, dtype, operand_shape):
    """normalize_mean=False (RMS normalization): x * scale / sqrt(mean(x^2) + epsilon) + bias, on each executor's
    paths for rows, long groups and odd sizes; inputs with a large mean, where subtracting it would differ."""
    x = (rng.standard_normal(shape) + 3).astype(dtype)
    scale = rng.uniform(0.5, 1.5, operand_shape).astype(dtype)
    bias = rng.standard_normal(operand_shape).astype(dtype)
    (y,) = run(lambda v, s, b: dml.mean_variance_normalization(v, s, b, axes=axes, normalize_variance=True,
                                                               normalize_mean=False, epsilon=1e-5), x, scale, bias)
    X = x.astype(np.float64)
    ref = X / np.sqrt((X * X).mean(axis=tuple(axes), keepdims=True) + 1e-5) * scale + bias
    close(y, ref, dtype, 1e-4)


def np_group_norm(x, groups, eps=1e-5):
    n, c, h, w = x.shape
    v = x.astype(np.float64).reshape(n, groups, -1)
    return ((v - v.mean(2, keepdims=True)) / np.sqrt(v.var(2, keepdims=True) + eps)).reshape(n, c, h, w)


def silu(v):
    return v / (1 + np.exp(-v))


# Compile folds an activation into the normalization before it where nothing else reads the normalization's output
# (here through a reinterpreted view, as GroupNorm is spelled); results must not change whichever way it goes.
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", ["folds", "output_is_read_twice", "normalization_is_an_output", "already_fused",
                                  "activation_is_an_output"])
def test_activation_after_group_norm(device, rng, dtype, case):
    n, c, h, w, groups = 2, 8, 3, 5, 4
    a = (rng.standard_normal((n, c, h, w)) * 2 + 1).astype(dtype)
    g = dml.Graph(device)
    x = g.input(a.shape, dtype)
    grouped = dml.reinterpret(x, [n, groups, c // groups, h, w])
    fused = FA.relu() if case == "already_fused" else FA.none()
    norm = dml.mean_variance_normalization(grouped, axes=[2, 3, 4], normalize_variance=True, epsilon=1e-5,
                                           fused_activation=fused)
    norm = dml.reinterpret(norm, [n, c, h, w])
    act = dml.activation_swish(norm)
    outputs = {"folds": [act * 2.0], "output_is_read_twice": [act + norm], "normalization_is_an_output": [act, norm],
               "already_fused": [act * 2.0], "activation_is_an_output": [act, act + 1.0]}[case]
    got = g.compile(outputs)({x: a})
    ref_norm = np_group_norm(a, groups)
    if case == "already_fused":
        ref_norm = np.maximum(ref_norm, 0)
    ref_act = silu(ref_norm)
    want = {"folds": [ref_act * 2], "output_is_read_twice": [ref_act + ref_norm],
            "normalization_is_an_output": [ref_act, ref_norm], "already_fused": [ref_act * 2],
            "activation_is_an_output": [ref_act, ref_act + 1]}[case]
    assert len(got) == len(want)
    for y, r in zip(got, want):
        close(y, r, dtype, 1e-4)


# Groups too large for one team of the cuda executor take two passes over chunks, their partials combined per group
# between them (three launches). The chunks are whole pieces of a channel's image (its run) where they can be: an
# image cut into one chunk or into two or three, several images a group each a chunk; a single group, and 320 groups
# of two 96 x 128 images (more blocks than an H200 holds at once). Else (an image of 8 * 2053 elements, 16 x 16
# images, an image no whole number of 16-byte vectors) chunks that cross images, taken by the general kernel. A group of
# 2^19 elements has 256 chunks or more, whose partials a whole block combines (a warp combines fewer).
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape, groups", [((1, 8, 128, 128), 2), ((1, 4, 96, 256), 2), ((2, 20, 64, 64), 2),
                                           ((1, 40, 32, 32), 2), ((1, 4, 128, 128), 1), ((1, 640, 96, 128), 320),
                                           ((1, 2, 8, 2053), 1), ((1, 160, 16, 16), 2), ((1, 2, 129, 129), 1),
                                           ((1, 8, 256, 256), 1)])
def test_group_norm_large_groups(device, rng, shape, groups, dtype):
    n, c, h, w = shape
    # Each channel its own mean and spread: a chunk normalized by another group's statistics shows.
    shift = np.arange(c).reshape(1, c, 1, 1) % 5
    a = (rng.standard_normal(shape) * (1 + shift) + 2 * shift).astype(dtype)
    scale, bias = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    g = dml.Graph(device)
    x = g.input(a.shape, dtype)
    per_channel = [1, groups, c // groups, 1, 1]
    norm = dml.mean_variance_normalization(dml.reinterpret(x, [n, groups, c // groups, h, w]),
                                           g.constant(scale.reshape(per_channel)), g.constant(bias.reshape(per_channel)),
                                           axes=[2, 3, 4], normalize_variance=True, epsilon=1e-5)
    (y,) = g.compile([dml.activation_swish(dml.reinterpret(norm, [n, c, h, w]))])({x: a})
    ref = np_group_norm(a, groups) * scale.reshape(1, c, 1, 1).astype(np.float64) + bias.reshape(1, c, 1, 1)
    close(y, silu(ref), dtype, 1e-4)


# Activations DirectML cannot fuse fold too (both executors apply any in fused position), with their parameters.
FOLDED = {
    "swish_scaled": (lambda v: dml.activation_swish(v, sigmoid_input_scale=1.7), lambda v: v / (1 + np.exp(-1.7 * v))),
    "gelu": (dml.activation_gelu, lambda v: v * 0.5 * (1 + np.vectorize(math.erf)(v / math.sqrt(2)))),
    "hard_swish": (lambda v: dml.activation_hard_swish(v, alpha=0.2, beta=0.4),
                   lambda v: v * np.clip(0.2 * v + 0.4, 0, 1)),
    "leaky_relu": (lambda v: dml.activation_leaky_relu(v, alpha=0.3), lambda v: np.where(v >= 0, v, 0.3 * v)),
}


@pytest.mark.parametrize("name", sorted(FOLDED))
def test_any_activation_after_layer_norm(run, rng, name):
    build, ref = FOLDED[name]
    x = (rng.standard_normal((3, 7, 24)) * 2 + 1).astype(np.float32)
    (y,) = run(lambda v: build(dml.mean_variance_normalization(v, axes=[2], normalize_variance=True, epsilon=1e-5)),
               x)
    X = x.astype(np.float64)
    close(y, ref((X - X.mean(2, keepdims=True)) / np.sqrt(X.var(2, keepdims=True) + 1e-5)), np.float32, 1e-4)


def test_layer_norm_that_is_an_output_keeps_its_values(run, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)

    def build(v):
        norm = dml.mean_variance_normalization(v, axes=[1], normalize_variance=True, epsilon=1e-5)
        return [dml.activation_swish(norm) * 2.0, norm]

    y, n = run(build, x)
    X = x.astype(np.float64)
    ref = (X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-5)
    close(n, ref, np.float32, 1e-4)
    close(y, 2 * ref / (1 + np.exp(-ref)), np.float32, 1e-4)


def test_activation_on_a_strided_view_of_a_normalization_does_not_fold(run, rng):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    norm = lambda v: dml.mean_variance_normalization(v, axes=[1], normalize_variance=True, epsilon=1e-5)  # noqa: E731
    (y,) = run(lambda v: dml.activation_swish(dml.reinterpret(norm(v), [6, 4], [1, 6])) * 2.0, x)  # transposed
    X = x.astype(np.float64)
    n = ((X - X.mean(1, keepdims=True)) / np.sqrt(X.var(1, keepdims=True) + 1e-5)).T
    close(y, 2 * n / (1 + np.exp(-n)), np.float32, 1e-4)


# --- local_response_normalization ----------------------------------------------------------------------------------

def np_lrn(x, cross_channel, size, alpha, beta, bias):
    x = x.astype(np.float64)
    n, c, h, w = x.shape
    lo, hi = (size - 1) // 2, size // 2
    sq = np.zeros_like(x)
    for i in range(c if cross_channel else h):
        for j in range(1 if cross_channel else w):
            if cross_channel:
                sq[:, i] = (x[:, max(0, i - lo):i + hi + 1] ** 2).sum(axis=1)
            else:
                sq[:, :, i, j] = (x[:, :, max(0, i - lo):i + hi + 1, max(0, j - lo):j + hi + 1] ** 2).sum(axis=(2, 3))
    return x / (bias + alpha / size * sq) ** beta


@pytest.mark.parametrize("cross_channel", [True, False])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_local_response_normalization(run, rng, cross_channel, size, dtype):
    x = (rng.standard_normal((2, 5, 4, 3)) * 2).astype(dtype)
    (y,) = run(lambda a: dml.local_response_normalization(a, cross_channel=cross_channel, local_size=size, alpha=0.3,
                                                          beta=0.75, bias=1.5), x)
    close(y, np_lrn(x, cross_channel, size, 0.3, 0.75, 1.5), dtype)


def test_local_response_normalization_strided_input(device, rng):
    g = dml.Graph(device)
    x = g.input([1, 3, 4, 4])
    view = dml.reinterpret(x, [1, 3, 4, 2], [48, 16, 4, 2])
    y = dml.local_response_normalization(view, cross_channel=True, local_size=3, alpha=1e-1, beta=0.5, bias=1.0)
    a = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    (out,) = g.compile([y])({x: a})
    np.testing.assert_allclose(out, np_lrn(a[..., ::2], True, 3, 1e-1, 0.5, 1.0), rtol=1e-5)


# --- errors --------------------------------------------------------------------------------------------------------

def test_normalization_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3, 4, 5])
    c = g.input([1, 3, 1, 1])
    with pytest.raises(ValueError, match=r"^[^:]+: mean FLOAT32\[1, 2, 1, 1\] must have the type and rank"):
        dml.batch_normalization(x, g.input([1, 2, 1, 1]), c, c, c, spatial=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="variance FLOAT32\\[3\\] must have the type and rank"):
        dml.batch_normalization(x, c, g.input([3]), c, c, spatial=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="bias FLOAT16"):
        dml.batch_normalization(x, c, c, c, g.input([1, 3, 1, 1], np.float16), spatial=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.batch_normalization(*(g.input([1, 3], np.int32) for _ in range(5)), spatial=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: input has type FLOAT64"):
        dml.batch_normalization(*(g.input([1, 3], np.float64) for _ in range(5)), spatial=True, epsilon=1e-5)
    with pytest.raises(TypeError):
        dml.batch_normalization(x, c, c, c, c, epsilon=1e-5)  # DirectMLX has no default for spatial
    with pytest.raises(ValueError, match="^[^:]+: bias .* must match scale"):
        dml.batch_normalization_training(x, c, g.input([1, 3, 4, 1]), epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: fused_add .* must match input"):
        dml.batch_normalization_training(x, c, c, g.input([2, 3, 4, 1]), epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: input_gradient .* must match input"):
        dml.batch_normalization_grad(x, g.input([2, 3, 4, 4]), c, c, c, epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: variance .* must match mean"):
        dml.batch_normalization_training_grad(x, x, c, g.input([1, 3, 4, 1]), c, epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: axes must name at least one axis"):
        dml.mean_variance_normalization(x, axes=[], normalize_variance=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="axis 4 is out of range"):
        dml.mean_variance_normalization(x, axes=[1, 4], normalize_variance=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="repeat an axis"):
        dml.mean_variance_normalization(x, axes=[2, 2], normalize_variance=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="^[^:]+: scale"):
        dml.mean_variance_normalization(x, g.input([3, 1, 1]), axes=[2, 3], normalize_variance=True, epsilon=1e-5)
    with pytest.raises(ValueError, match="local_size must be at least 1"):
        dml.local_response_normalization(x, cross_channel=True, local_size=0, alpha=1e-4, beta=0.75, bias=1.0)
    with pytest.raises(ValueError, match="^[^:]+: input must have 4 dimensions"):
        dml.local_response_normalization(g.input([2, 3, 4]), cross_channel=True, local_size=3, alpha=1e-4, beta=0.75,
                                         bias=1.0)
    other = dml.Graph(device)
    with pytest.raises(ValueError, match="different graphs"):
        dml.batch_normalization(x, c, c, c, other.input([1, 3, 1, 1]), spatial=True, epsilon=1e-5)
