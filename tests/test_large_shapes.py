"""Operators on shapes large enough to reach the kernels' size-dependent paths (the CUDA kernels switch from warps to
blocks, to vectors, to multi-pass sorts and scans as groups and lines grow), each against a float64 NumPy reference."""

import numpy as np
import pytest

import directml as dml

FA = dml.FusedActivation
AD = dml.AxisDirection
PM = dml.PaddingMode


def close(actual, expected, dtype, f32=1e-4, atol=None):
    """float16 to 1e-2, float32 to `f32` relative and `atol` absolute (`f32` too by default; may be an array)."""
    rtol, atol = (1e-2, 1e-2) if dtype == np.float16 else (f32, f32 if atol is None else atol)
    assert actual.dtype == dtype and actual.shape == expected.shape
    err = np.abs(actual.astype(np.float64) - expected)
    bad = ~(err <= atol + rtol * np.abs(expected))  # NaN fails too
    assert not bad.any(), f"{bad.sum()} of {bad.size} differ; first at {np.argwhere(bad)[0]}: " \
        f"{actual[tuple(np.argwhere(bad)[0])]} vs {expected[tuple(np.argwhere(bad)[0])]}"


# --- mean_variance_normalization -----------------------------------------------------------------------------------

MVN_CASES = [  # shape, axes, dtype, scale shape, bias shape, normalize_variance, fused relu
    ((1, 2, 256, 256), [2, 3], np.float32, (1, 2, 1, 1), (1, 2, 1, 1), True, False),
    ((1, 2, 256, 256), [2, 3], np.float16, None, None, True, False),
    ((1, 2, 256, 256), [1, 2, 3], np.float32, None, None, True, True),
    ((1, 2, 256, 256), [1, 2, 3], np.float16, (1, 1, 256, 256), None, True, False),
    # group norm: 32 groups of 10 channels, 40960 elements each; per-channel scale and bias. (CUDA: groups of more
    # than 16384 elements are cut into chunks and take two passes.)
    ((2, 32, 10, 64, 64), [2, 3, 4], np.float16, (1, 32, 10, 1, 1), (1, 32, 10, 1, 1), True, False),
    ((2, 32, 16, 16), [2, 3], np.float16, (1, 32, 1, 1), (1, 32, 1, 1), True, False),  # float16 vectors
    ((2, 32, 16, 16), [2, 3], np.float16, None, None, False, False),
    ((64, 640), [1], np.float16, (1, 640), (1, 640), True, False),  # layer norms
    ((8, 77, 768), [2], np.float16, (1, 1, 768), (1, 1, 768), True, True),
    ((8, 77, 768), [2], np.float32, None, (8, 77, 768), True, False),
    ((3, 5, 99, 101), [1, 2, 3], np.float32, (1, 5, 1, 1), None, True, False),  # odd rows: no vectors
    ((40, 3, 1000), [0, 2], np.float16, None, (1, 3, 1), True, False),  # the group spans an outer axis
    ((4, 16384), [1], np.float16, (1, 16384), None, True, False),  # the largest group one team holds whole
    ((2, 16385), [1], np.float32, None, None, True, False),  # one more element
]


@pytest.mark.parametrize("shape, axes, dtype, scale_shape, bias_shape, normalize_variance, relu", MVN_CASES,
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, (tuple, list)) else None)
def test_mean_variance_normalization_large(run, shape, axes, dtype, scale_shape, bias_shape, normalize_variance,
                                           relu):
    rng = np.random.default_rng(101)
    x = (rng.standard_normal(shape, np.float32) * 3 + 2).astype(dtype)  # an offset mean: centering matters
    scale = rng.uniform(0.5, 1.5, scale_shape).astype(dtype) if scale_shape else None
    bias = rng.standard_normal(bias_shape).astype(dtype) if bias_shape else None
    arrays = [a for a in (x, scale, bias) if a is not None]

    def build(*ins):
        it = iter(ins[1:])
        s = next(it) if scale is not None else None
        b = next(it) if bias is not None else None
        return dml.mean_variance_normalization(ins[0], s, b, axes=axes, normalize_variance=normalize_variance,
                                               epsilon=1e-5, fused_activation=FA.relu() if relu else FA.none())

    (y,) = run(build, *arrays)
    X, ax = x.astype(np.float64), tuple(axes)
    ref = X - X.mean(axis=ax, keepdims=True)
    if normalize_variance:
        ref /= np.sqrt(X.var(axis=ax, keepdims=True) + 1e-5)
    if scale is not None:
        ref = ref * scale
    if bias is not None:
        ref = ref + bias
    close(y, np.maximum(ref, 0) if relu else ref, dtype)


# --- batch normalization: training and gradients -------------------------------------------------------------------

BN_SHAPE, BN_STATS, BN_AXES, BN_EPS = (8, 4, 64, 64), (1, 4, 1, 1), (0, 2, 3), 1e-3


def sum_close(actual, terms):
    """A float32 sum of many terms: to 1e-4 relative, and absolutely to 1e-6 of the terms' absolute sum."""
    ref = terms.sum(axis=BN_AXES, keepdims=True)
    atol = 1e-6 * np.abs(terms).sum(axis=BN_AXES, keepdims=True)
    assert actual.dtype == np.float32 and actual.shape == ref.shape
    assert np.all(np.abs(actual - ref) <= atol + 1e-4 * np.abs(ref)), (actual, ref)


def bn_data(rng):
    x = (rng.standard_normal(BN_SHAPE) * 2 + 3).astype(np.float32)
    dy = rng.standard_normal(BN_SHAPE).astype(np.float32)
    scale = rng.uniform(0.5, 2, BN_STATS).astype(np.float32)
    return x, dy, scale


def test_batch_normalization_training_large(run):
    rng = np.random.default_rng(201)
    x, _, scale = bn_data(rng)
    bias = rng.standard_normal(BN_STATS).astype(np.float32)
    y, mean, var = run(lambda *a: dml.batch_normalization_training(*a, epsilon=BN_EPS), x, scale, bias)
    X = x.astype(np.float64)
    m, v = X.mean(axis=BN_AXES, keepdims=True), X.var(axis=BN_AXES, keepdims=True)
    close(mean, m, np.float32)
    close(var, v, np.float32)
    close(y, scale * (X - m) / np.sqrt(v + BN_EPS) + bias, np.float32)


def test_batch_normalization_grad_large(run):
    rng = np.random.default_rng(202)
    x, dy, scale = bn_data(rng)
    mean = rng.uniform(2.5, 3.5, BN_STATS).astype(np.float32)
    var = rng.uniform(3, 5, BN_STATS).astype(np.float32)
    dx, dscale, dbias = run(lambda *a: dml.batch_normalization_grad(*a, epsilon=BN_EPS), x, dy, mean, var, scale)
    X, DY, M, V = (a.astype(np.float64) for a in (x, dy, mean, var))
    inv = 1 / np.sqrt(V + BN_EPS)
    close(dx, DY * scale * inv, np.float32)
    sum_close(dscale, DY * (X - M) * inv)
    sum_close(dbias, DY)


def test_batch_normalization_training_grad_large(run):
    rng = np.random.default_rng(203)
    x, dy, scale = bn_data(rng)
    X = x.astype(np.float64)
    mean = X.mean(axis=BN_AXES, keepdims=True).astype(np.float32)  # the batch's own statistics
    var = X.var(axis=BN_AXES, keepdims=True).astype(np.float32)
    dx, dscale, dbias = run(lambda *a: dml.batch_normalization_training_grad(*a, epsilon=BN_EPS),
                            x, dy, mean, var, scale)
    DY, M, V = (a.astype(np.float64) for a in (dy, mean, var))
    inv, xc = 1 / np.sqrt(V + BN_EPS), X - M
    kd = dict(axis=BN_AXES, keepdims=True)
    close(dx, scale * inv * (DY - DY.mean(**kd) - xc * (DY * xc).mean(**kd) / (V + BN_EPS)), np.float32)
    sum_close(dscale, DY * xc * inv)
    sum_close(dbias, DY)


# --- top_k ---------------------------------------------------------------------------------------------------------

def np_top_k(x, axis, k, largest):
    """The CPU kernel's order: NaN above every number (NaNs equal), -0 equal to +0, ties by ascending index."""
    isnan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
    v = np.where(isnan, 0, x).astype(np.float64)  # -0 and +0 compare equal here too
    nan = isnan.astype(np.int8)
    keys = (-v, -nan) if largest else (v, nan)  # np.lexsort: the last key is the primary one; stable
    idx = np.take(np.lexsort(keys, axis=axis), range(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx


def top_k_data(rng, shape, axis, dtype):
    """Values from a small set (many ties), and per line a few extremes: NaN, infinities and -0.0 or the type's
    bounds."""
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    lines = np.moveaxis(x, axis, -1).reshape(-1, shape[axis])  # a view or a copy: rebuilt below
    n = shape[axis]
    if np.dtype(dtype).kind == "f":
        specials = [np.nan, np.nan, np.nan, np.inf, -np.inf] + [-0.0] * 20
    else:
        info = np.iinfo(dtype)
        specials = [info.max, info.max, info.min, info.min, info.min + 1]
    for line in lines:
        line[rng.choice(n, len(specials), replace=False)] = specials
    moved = lines.reshape(np.moveaxis(x, axis, -1).shape)
    return np.ascontiguousarray(np.moveaxis(moved, -1, axis))


@pytest.mark.parametrize("shape, axis", [((3, 5000), 1), ((5000, 2), 0), ((2, 70000), 1)])
@pytest.mark.parametrize("k", [7, 3000])
@pytest.mark.parametrize("direction", [AD.DECREASING, AD.INCREASING])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_top_k_long_lines(run, directml_differs, shape, axis, k, direction, dtype):
    if dtype == np.float32:
        directml_differs("top_k ranks the NaNs of a line elsewhere on the H200's driver than on lavapipe")
    rng = np.random.default_rng(301)
    x = top_k_data(rng, shape, axis, dtype)
    values, indices = run(lambda a: dml.top_k(a, axis=axis, k=k, axis_direction=direction), x)
    ref_v, ref_i = np_top_k(x, axis, k, direction == AD.DECREASING)
    assert values.dtype == dtype and indices.dtype == np.uint32 and values.shape == ref_v.shape
    np.testing.assert_array_equal(indices, ref_i)
    np.testing.assert_array_equal(values, ref_v)  # NaN matches NaN
    if dtype == np.float32 and direction == AD.DECREASING:  # the NaNs come first (3 per line)
        assert np.isnan(np.take(values, range(3), axis=axis)).all()


# --- non_zero_coordinates ------------------------------------------------------------------------------------------

def check_non_zero(count, coords, expect):
    ref = np.argwhere(expect)
    assert count.shape == (1,) and count[0] == len(ref)
    assert coords.dtype == np.uint32 and coords.shape == (expect.size, expect.ndim)
    np.testing.assert_array_equal(coords[: len(ref)], ref)
    assert not coords[len(ref):].any()  # rows past the count: undefined in DirectML, zero here


def test_non_zero_coordinates_million_uint8(run):
    rng = np.random.default_rng(401)
    x = (rng.random((1000, 1000)) < 0.3).astype(np.uint8) * rng.integers(1, 256, (1000, 1000)).astype(np.uint8)
    count, coords = run(lambda a: dml.non_zero_coordinates(a), x)
    check_non_zero(count, coords, x)


def test_non_zero_coordinates_million_float32_signed_zero_and_nan(run):
    rng = np.random.default_rng(402)
    x = np.where(rng.random((7, 300, 500)) < 0.3, rng.standard_normal((7, 300, 500)), 0).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = -0.0  # zero
    x[rng.random(x.shape) < 0.01] = np.nan  # not zero
    count, coords = run(lambda a: dml.non_zero_coordinates(a), x)
    check_non_zero(count, coords, np.isnan(x) | (x != 0))


def test_non_zero_coordinates_million_strided_view(device):
    rng = np.random.default_rng(403)
    base = (rng.random((1000, 1000)) < 0.3).astype(np.uint8)
    g = dml.Graph(device)
    x = g.input([1000, 1000], np.uint8)
    view = dml.reinterpret(x, [1000, 500], [1, 2000])  # every other row, transposed
    count, coords = g.compile(list(dml.non_zero_coordinates(view)))({x: base})
    check_non_zero(count, coords, base[::2].T)


# --- cumulative_summation / cumulative_product ---------------------------------------------------------------------

def np_cumulative(x, axis, decreasing, exclusive, product):
    x = np.flip(x, axis) if decreasing else x
    y = (np.cumprod if product else np.cumsum)(x, axis=axis, dtype=x.dtype)  # integers wrap as the type does
    if exclusive:
        first = (np.ones_like if product else np.zeros_like)(np.take(y, [0], axis=axis))
        y = np.concatenate([first, np.take(y, range(x.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(y, axis) if decreasing else y


@pytest.mark.parametrize("shape, axis", [((3, 5000), 1), ((2100, 3), 0)])
@pytest.mark.parametrize("product", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("direction", [AD.INCREASING, AD.DECREASING])
@pytest.mark.parametrize("exclusive", [False, True])
def test_cumulative_long_axis(run, shape, axis, product, dtype, direction, exclusive):
    rng = np.random.default_rng(501)
    if dtype == np.int32:  # full-range values: sums and (odd, never reaching 0) products wrap
        x = rng.integers(-2**31, 2**31, shape).astype(np.int32) | (1 if product else 0)
    elif product:
        x = rng.uniform(0.995, 1.005, shape).astype(np.float32)  # products stay near 1
    else:
        x = (rng.standard_normal(shape) + 0.1).astype(np.float32)
    f = dml.cumulative_product if product else dml.cumulative_summation
    kw = {"has_exclusive_product" if product else "has_exclusive_sum": exclusive}
    (y,) = run(lambda a: f(a, axis=axis, axis_direction=direction, **kw), x)
    args = (axis, direction == AD.DECREASING, exclusive, product)
    assert y.dtype == dtype and y.shape == shape
    if dtype == np.int32:
        np.testing.assert_array_equal(y, np_cumulative(x, *args))
    else:  # a sum to 1e-5 of the running magnitude (sum of absolute values); a product to 1e-4 relative
        magnitude = np_cumulative(np.abs(x.astype(np.float64)), *args)
        close(y, np_cumulative(x.astype(np.float64), *args), np.float32, atol=0 if product else 1e-5 * magnitude)


# --- matrix_multiply_integer / quantized_linear_matrix_multiply ----------------------------------------------------

def randint(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def integer_product(a, b, za, zb):
    return (a.astype(np.int64) - za.astype(np.int64)) @ (b.astype(np.int64) - zb.astype(np.int64))


def transposed_input(g, a, transposed):
    """An input holding `a` (..., M, K): packed, or as a view of a (..., K, M) buffer. Returns (input, expr, feed)."""
    if not transposed:
        e = g.input(a.shape, a.dtype)
        return e, e, a
    buf = np.ascontiguousarray(a.swapaxes(-1, -2))
    e = g.input(buf.shape, a.dtype)
    b0, b1, m, k = a.shape
    return e, dml.reinterpret(e, list(a.shape), [b1 * m * k, m * k, 1, m]), buf


@pytest.mark.parametrize("m, n, k", [(70, 45, 100), (33, 97, 257)])
@pytest.mark.parametrize("ta, tb", [(np.uint8, np.int8), (np.int8, np.uint8), (np.uint8, np.uint8),
                                    (np.int8, np.int8)])
@pytest.mark.parametrize("transposed_a", [False, True])
def test_matrix_multiply_integer_tile_edges(device, m, n, k, ta, tb, transposed_a):
    rng = np.random.default_rng(601)
    a, b = randint(rng, (2, 1, m, k), ta), randint(rng, (2, 1, k, n), tb)
    za, zb = randint(rng, (1, 1, m, 1), ta), randint(rng, (1, 1, 1, n), tb)  # per row of a, per column of b
    g = dml.Graph(device)
    ea, va, fa = transposed_input(g, a, transposed_a)
    eb, eza, ezb = (g.input(t.shape, t.dtype) for t in (b, za, zb))
    (got,) = g.compile([dml.matrix_multiply_integer(va, eb, eza, ezb)])({ea: fa, eb: b, eza: za, ezb: zb})
    assert got.dtype == np.int32 and got.shape == (2, 1, m, n)
    np.testing.assert_array_equal(got, integer_product(a, b, za, zb))


def quantize_ref(real, scale, zero, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.round(real / scale) + zero, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("m, n, k", [(70, 45, 100), (33, 97, 257)])
@pytest.mark.parametrize("out_type", [np.uint8, np.int8])
@pytest.mark.parametrize("transposed_a", [False, True])
def test_quantized_linear_matrix_multiply_tile_edges(device, m, n, k, out_type, transposed_a):
    rng = np.random.default_rng(602)
    a, b = randint(rng, (1, 2, m, k), np.uint8), randint(rng, (1, 2, k, n), np.int8)
    a_scale = rng.uniform(0.01, 0.05, (1, 1, m, 1)).astype(np.float32)
    b_scale = rng.uniform(0.01, 0.05, (1, 1, 1, n)).astype(np.float32)
    za, zb = randint(rng, a_scale.shape, np.uint8), randint(rng, b_scale.shape, np.int8)
    real = integer_product(a, b, za, zb) * (a_scale.astype(np.float64) * b_scale.astype(np.float64))
    # Per-row output scales that map each row over about +-100 steps: few results saturate.
    y_scale = (np.abs(real).max(axis=(0, 1, 3), keepdims=True) / 100 * rng.uniform(0.8, 1.2, (1, 1, m, 1)))
    y_scale = y_scale.astype(np.float32)
    zy = (rng.integers(-20, 20, y_scale.shape) + (128 if out_type == np.uint8 else 0)).astype(out_type)
    g = dml.Graph(device)
    ea, va, fa = transposed_input(g, a, transposed_a)
    rest = [a_scale, b, b_scale, y_scale, za, zb, zy]
    es = [g.input(t.shape, t.dtype) for t in rest]
    y = dml.quantized_linear_matrix_multiply(va, *es, output_dtype=out_type)
    (got,) = g.compile([y])({ea: fa, **dict(zip(es, rest))})
    assert got.dtype == out_type and got.shape == (1, 2, m, n)
    np.testing.assert_array_equal(got, quantize_ref(real, y_scale.astype(np.float64), zy.astype(np.float64),
                                                    out_type))
    assert len(np.unique(got)) > 100  # the data exercises more than saturation


# --- padding and tile ----------------------------------------------------------------------------------------------

NP_PAD_MODE = {PM.REFLECTION: "reflect", PM.SYMMETRIC: "symmetric", PM.EDGE: "edge", PM.WRAP: "wrap"}
PAD_CASES = [  # the builder bounds only the output's size: paddings span many periods of the input
    ((2, 5, 7), (5, 13, 30), (6, 2, 41)),
    ((3, 64, 100), (1, 200, 333), (4, 150, 250)),
    ((1, 2, 3), (3, 9, 0), (0, 8, 500)),  # sizes 1 and 2: REFLECTION's degenerate periods
]


@pytest.mark.parametrize("shape, start, end", PAD_CASES)
@pytest.mark.parametrize("mode", list(NP_PAD_MODE))
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_padding_many_periods(run, shape, start, end, mode, dtype):
    rng = np.random.default_rng(701)
    x = rng.integers(-100, 100, shape).astype(dtype)
    (y,) = run(lambda a: dml.padding(a, padding_mode=mode, padding_value=0, start_padding=list(start),
                                     end_padding=list(end)), x)
    np.testing.assert_array_equal(y, np.pad(x, list(zip(start, end)), mode=NP_PAD_MODE[mode]))
    assert y.dtype == dtype


@pytest.mark.parametrize("shape, repeats", [((2, 3, 5), (3, 300, 70)), ((1, 4, 1), (65537, 1, 3)),
                                            ((7, 1, 3), (1, 1000, 50))])
@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_tile_large_repeats(run, shape, repeats, dtype):
    rng = np.random.default_rng(702)
    x = rng.integers(-1000, 1000, shape).astype(dtype)
    (y,) = run(lambda a: dml.tile(a, repeats=list(repeats)), x)
    np.testing.assert_array_equal(y, np.tile(x, repeats))


# --- pooling -------------------------------------------------------------------------------------------------------

def np_pool2d(x, window, strides, start, end, kind, include_padding=False):
    """Max (values, first-maximum packed indices) or average of 2-D windows, one window tap at a time."""
    n, c, h, w = x.shape
    oh, ow = ((s + p0 + p1 - k) // st + 1 for s, p0, p1, k, st in zip((h, w), start, end, window, strides))
    oy, ox = np.arange(oh)[:, None] * strides[0] - start[0], np.arange(ow)[None, :] * strides[1] - start[1]
    plane = (np.arange(n)[:, None, None, None] * c + np.arange(c)[None, :, None, None]) * (h * w)
    x64 = x.astype(np.float64)
    vals, idx, valid = [], [], []
    for ky in range(window[0]):
        for kx in range(window[1]):  # row-major over the window: argmax's first maximum is DirectML's
            r, q = oy + ky, ox + kx
            ok = (0 <= r) & (r < h) & (0 <= q) & (q < w)
            rc, qc = np.clip(r, 0, h - 1), np.clip(q, 0, w - 1)
            vals.append(np.where(ok, x64[:, :, rc, qc], -np.inf if kind == "max" else 0.0))
            idx.append(plane + rc * w + qc)
            valid.append(np.broadcast_to(ok, (oh, ow)))
    vals, idx = np.stack(vals), np.stack(idx)
    if kind == "max":
        first = np.argmax(vals, axis=0)[None]
        return np.take_along_axis(vals, first, 0)[0], np.take_along_axis(np.broadcast_to(idx, vals.shape), first, 0)[0]
    count = window[0] * window[1] if include_padding else np.stack(valid).sum(axis=0)
    return vals.sum(axis=0) / count


POOL_PADS = [((1, 1), (1, 1)), ((0, 1), (2, 0))]


@pytest.mark.parametrize("start, end", POOL_PADS)
@pytest.mark.parametrize("include_padding", [False, True])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_average_pooling_large(run, start, end, include_padding, dtype):
    rng = np.random.default_rng(801)
    x = rng.standard_normal((2, 16, 65, 65)).astype(dtype)
    (y,) = run(lambda a: dml.average_pooling(a, strides=[2, 2], window_size=[3, 3], start_padding=list(start),
                                             end_padding=list(end), include_padding=include_padding), x)
    close(y, np_pool2d(x, (3, 3), (2, 2), start, end, "avg", include_padding), dtype)


@pytest.mark.parametrize("start, end", POOL_PADS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_max_pooling_large_with_indices(run, start, end, dtype):
    rng = np.random.default_rng(802)
    x = (rng.integers(-6, 3, (2, 16, 65, 65)) / 2).astype(dtype)  # few values, mostly negative: ties, and padding
    values, indices = run(lambda a: dml.max_pooling(a, window_size=[3, 3], strides=[2, 2], start_padding=list(start),
                                                    end_padding=list(end), output_indices=True), x)
    ref_v, ref_i = np_pool2d(x, (3, 3), (2, 2), start, end, "max")
    assert values.dtype == dtype and indices.dtype == np.uint32 and values.shape == ref_v.shape
    np.testing.assert_array_equal(values, ref_v.astype(dtype))
    np.testing.assert_array_equal(indices, ref_i)
