"""reduce (every DML_REDUCE_FUNCTION), cumulative_summation/product, top_k and non_zero_coordinates against NumPy."""

import numpy as np
import pytest

import directml as dml

RF = dml.ReduceFunction
AD = dml.AxisDirection


def tol(dtype):
    return dict(rtol=2e-2, atol=2e-2) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)


# --- reduce --------------------------------------------------------------------------------------------------------

def np_reduce(x, f, axes):
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    x64 = x.astype(np.float64)
    kd = dict(axis=axes, keepdims=True)
    return {
        RF.SUM: lambda: x64.sum(**kd), RF.AVERAGE: lambda: x64.mean(**kd), RF.L1: lambda: np.abs(x64).sum(**kd),
        RF.L2: lambda: np.sqrt((x64 * x64).sum(**kd)), RF.LOG_SUM: lambda: np.log(x64.sum(**kd)),
        RF.LOG_SUM_EXP: lambda: np.log(np.exp(x64).sum(**kd)), RF.MAX: lambda: x64.max(**kd),
        RF.MIN: lambda: x64.min(**kd), RF.MULTIPLY: lambda: x64.prod(**kd), RF.SUM_SQUARE: lambda: (x64 * x64).sum(**kd),
    }[f]()


def np_arg(x, axes, largest):
    """Index of the first extreme within the reduced axes, read row-major (DirectML's ARGMAX/ARGMIN)."""
    axes = list(range(x.ndim)) if axes is None else sorted(axes)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + axes).reshape([x.shape[d] for d in kept] + [-1])
    idx = (np.argmax if largest else np.argmin)(moved, axis=-1)
    shape = [1 if d in axes else x.shape[d] for d in range(x.ndim)]
    return idx.reshape(shape)


FLOAT_FUNCS = [RF.SUM, RF.AVERAGE, RF.L1, RF.L2, RF.LOG_SUM, RF.LOG_SUM_EXP, RF.MAX, RF.MIN, RF.MULTIPLY, RF.SUM_SQUARE]
AXES = [None, [0], [2], [1, 2], [0, 2], [0, 1, 2]]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("f", FLOAT_FUNCS)
@pytest.mark.parametrize("axes", AXES)
def test_reduce_float(run, rng, f, axes, dtype):
    x = rng.uniform(0.5, 1.5, size=(3, 4, 5)).astype(dtype)  # positive, near 1: LOG_SUM and MULTIPLY stay sane
    if f not in (RF.LOG_SUM, RF.MULTIPLY):
        x[0, 1, 2] = -0.75  # a negative value where the function allows it
    (y,) = run(lambda a: dml.reduce(a, function=f, axes=axes), x)
    ref = np_reduce(x, f, axes)
    assert y.dtype == dtype and y.shape == ref.shape
    np.testing.assert_allclose(y.astype(np.float64), ref, **tol(dtype))


@pytest.mark.parametrize("f", [RF.SUM, RF.MULTIPLY, RF.L1, RF.SUM_SQUARE, RF.MAX, RF.MIN])
@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64])
def test_reduce_integer(run, rng, f, dtype):
    x = rng.integers(0 if np.dtype(dtype).kind == "u" else -4, 5, size=(2, 3, 4)).astype(dtype)
    (y,) = run(lambda a: dml.reduce(a, function=f, axes=[1, 2]), x)
    kd = dict(axis=(1, 2), keepdims=True, dtype=dtype)
    ref = {RF.SUM: lambda: x.sum(**kd), RF.MULTIPLY: lambda: x.prod(**kd), RF.L1: lambda: np.abs(x).sum(**kd),
           RF.SUM_SQUARE: lambda: (x * x).sum(**kd), RF.MAX: lambda: x.max(axis=(1, 2), keepdims=True),
           RF.MIN: lambda: x.min(axis=(1, 2), keepdims=True)}[f]()
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, ref)


def test_reduce_integer_sum_wraps_like_the_element_type(run):
    x = np.array([[2**31 - 1, 5, 2**31 - 2]], dtype=np.int32)
    (y,) = run(lambda a: dml.reduce(a, function=RF.SUM, axes=[1]), x)
    np.testing.assert_array_equal(y, x.sum(axis=1, keepdims=True, dtype=np.int32))
    big = np.array([[2**62, 2**62, 2**62]], dtype=np.int64)  # overflows int64: wraps, never undefined
    (y,) = run(lambda a: dml.reduce(a, function=RF.SUM, axes=[1]), big)
    np.testing.assert_array_equal(y, big.sum(axis=1, keepdims=True, dtype=np.int64))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint64, np.float16])
@pytest.mark.parametrize("f", [RF.MAX, RF.MIN])
def test_reduce_max_min_small_types(run, rng, f, dtype):
    x = rng.integers(0, 100, size=(3, 5)).astype(dtype)
    (y,) = run(lambda a: dml.reduce(a, function=f, axes=[0]), x)
    np.testing.assert_array_equal(y, (x.max if f == RF.MAX else x.min)(axis=0, keepdims=True))


@pytest.mark.parametrize("f", [RF.ARGMAX, RF.ARGMIN])
@pytest.mark.parametrize("axes", AXES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.int64])
def test_argmax_argmin(run, rng, f, axes, dtype):
    x = rng.integers(0, 4, size=(3, 4, 5)).astype(dtype)  # few distinct values: many ties (the first wins)
    (y,) = run(lambda a: dml.reduce(a, function=f, axes=axes), x)
    assert y.dtype == np.uint32  # DirectMLX's default
    np.testing.assert_array_equal(y, np_arg(x, axes, f == RF.ARGMAX))


@pytest.mark.parametrize("out", [np.uint32, np.int32, np.uint64, np.int64, dml.TensorDataType.INT64])
def test_argmax_output_dtype(run, out):
    x = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)  # DML_ARGMAX_OPERATOR_DESC's example
    ys = run(lambda a: [dml.reduce(a, function=RF.ARGMAX, axes=[0], output_dtype=out),
                        dml.reduce(a, function=RF.ARGMAX, axes=[1], output_dtype=out),
                        dml.reduce(a, function=RF.ARGMAX, output_dtype=out)], x)
    assert all(y.dtype == np.dtype(np.int64 if out is dml.TensorDataType.INT64 else out) for y in ys)
    np.testing.assert_array_equal(ys[0], [[1, 2, 1]])
    np.testing.assert_array_equal(ys[1], [[2], [2], [1]])
    np.testing.assert_array_equal(ys[2], [[7]])


def test_argmax_tie_takes_the_first_index(run):
    x = np.array([3, 2, 1, 2, 3], dtype=np.float32)
    ys = run(lambda a: [dml.reduce(a, function=RF.ARGMAX), dml.reduce(a, function=RF.ARGMIN)], x)
    assert ys[0][0] == 0 and ys[1][0] == 2


def test_max_min_and_arg_ignore_nan_unless_all_nan(device, run):
    # As a GPU's max/min: NaN never wins, wherever it stands, unless every element is NaN.
    nan = np.nan
    x = np.array([[nan, 1, 3, nan], [1, nan, -3, 3], [nan, nan, nan, nan]], dtype=np.float32)
    mx, mn, amx, amn = run(lambda a: [dml.reduce(a, function=f, axes=[1]) for f in (RF.MAX, RF.MIN, RF.ARGMAX, RF.ARGMIN)], x)
    if device.kind == "directml":  # docs/operators.md: all NaN gives -inf / inf, and a leading NaN's index wins
        want = [3, 3, -np.inf], [1, -3, np.inf], [0, 3, 0], [0, 2, 0]
    else:
        want = [3, 3, nan], [1, -3, nan], [2, 3, 0], [1, 2, 0]
    for got, expected in zip((mx, mn, amx, amn), want):
        np.testing.assert_array_equal(got[:, 0], expected)


def test_reduce_strided_broadcast_and_noncontiguous_inputs(run, device, rng):
    base = rng.standard_normal((4, 6)).astype(np.float32)
    g = dml.Graph(device)
    x = g.input(base.shape)
    view = dml.reinterpret(x, [3, 2], [6, 2])         # rows 0..2, every other of the first 4 columns
    wide = dml.broadcast(g.input([1, 3], name="b"), [4, 3])
    ys = g.compile([dml.reduce(view, function=RF.SUM, axes=[0]),
                    dml.reduce(wide, function=RF.MAX, axes=[0]),
                    dml.reduce(view, function=RF.ARGMIN, axes=[1])])
    b = np.array([[1.0, -2.0, 3.0]], dtype=np.float32)
    out = ys({x: base[:, ::1], "b": b})
    expect_view = base[:3, 0:4:2]
    np.testing.assert_allclose(out[0], expect_view.sum(axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(out[1], b)
    np.testing.assert_array_equal(out[2], np.argmin(expect_view, axis=1)[:, None])
    # A non-contiguous NumPy array handed in is read by its strides.
    nc = rng.standard_normal((5, 8)).astype(np.float32)[:, ::2]
    (y,) = run(lambda a: dml.reduce(a, function=RF.SUM, axes=[1]), np.ascontiguousarray(nc))
    g2 = dml.Graph(device)
    a = g2.input(nc.shape)
    (y2,) = g2.compile([dml.reduce(a, function=RF.SUM, axes=[1])])({a: nc})
    np.testing.assert_allclose(y2, y)


def test_reduce_defaults_reduce_every_axis(run, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    ys = run(lambda a: [dml.reduce(a, function=RF.SUM), dml.reduce(a, function=RF.SUM, axes=[])], x)
    for y in ys:
        assert y.shape == (1, 1)
        np.testing.assert_allclose(y, [[x.sum()]], rtol=1e-5)


@pytest.mark.parametrize("f, dtype", [(RF.AVERAGE, np.int32), (RF.L2, np.uint32), (RF.LOG_SUM_EXP, np.int64),
                                      (RF.SUM, np.int8), (RF.MULTIPLY, np.uint16), (RF.L1, np.int16),
                                      (RF.MAX, np.float64), (RF.ARGMAX, np.float64), (RF.SUM, np.float64)])
def test_reduce_rejects_types_directml_does_not_support(device, f, dtype):
    g = dml.Graph(device)
    with pytest.raises(ValueError, match=r"^reduce\(\): input has type"):
        dml.reduce(g.input([2, 3], dtype), function=f)


def test_reduce_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3, 4])
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        dml.reduce(x, function=RF.SUM, axes=[3])
    with pytest.raises(ValueError, match="repeat an axis"):
        dml.reduce(x, function=RF.SUM, axes=[1, 1])
    with pytest.raises(ValueError, match="output_dtype must be"):
        dml.reduce(x, function=RF.ARGMAX, output_dtype=np.float32)
    with pytest.raises(ValueError, match="output_dtype must be"):
        dml.reduce(x, function=RF.ARGMIN, output_dtype=np.int16)


# --- cumulative_summation / cumulative_product ----------------------------------------------------------------------

def np_cumulative(x, axis, decreasing, exclusive, product):
    x = np.flip(x, axis) if decreasing else x
    op = np.cumprod if product else np.cumsum
    y = op(x, axis=axis, dtype=x.dtype)
    if exclusive:
        first = np.ones_like(np.take(y, [0], axis=axis)) if product else np.zeros_like(np.take(y, [0], axis=axis))
        y = np.concatenate([first, np.take(y, range(x.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(y, axis) if decreasing else y


DOC_INPUT = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], dtype=np.float32)


def test_cumulative_summation_doc_examples(run):
    ys = run(lambda a: [dml.cumulative_summation(a, axis=3, axis_direction=AD.INCREASING, has_exclusive_sum=False),
                        dml.cumulative_summation(a, axis=3, axis_direction=AD.INCREASING, has_exclusive_sum=True),
                        dml.cumulative_summation(a, axis=3, axis_direction=AD.DECREASING, has_exclusive_sum=False),
                        dml.cumulative_summation(a, axis=2, axis_direction=AD.INCREASING, has_exclusive_sum=False)],
             DOC_INPUT)
    np.testing.assert_array_equal(ys[0][0, 0], [[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]])
    np.testing.assert_array_equal(ys[1][0, 0], [[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]])
    np.testing.assert_array_equal(ys[2][0, 0], [[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]])
    np.testing.assert_array_equal(ys[3][0, 0], [[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]])


def test_cumulative_product_doc_examples(run):
    ys = run(lambda a: [dml.cumulative_product(a, axis=3, axis_direction=AD.INCREASING, has_exclusive_product=True),
                        dml.cumulative_product(a, axis=3, axis_direction=AD.DECREASING, has_exclusive_product=False)],
             DOC_INPUT)
    np.testing.assert_array_equal(ys[0][0, 0], [[1, 2, 2, 6], [1, 3, 24, 168], [1, 9, 54, 108]])
    np.testing.assert_array_equal(ys[1][0, 0], [[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]])


@pytest.mark.parametrize("product", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("direction", [AD.INCREASING, AD.DECREASING])
@pytest.mark.parametrize("exclusive", [False, True])
def test_cumulative(run, rng, product, dtype, axis, direction, exclusive):
    x = (rng.integers(1, 3, size=(3, 4, 5)) if product else rng.integers(0, 9, size=(3, 4, 5))).astype(dtype)
    f = dml.cumulative_product if product else dml.cumulative_summation
    kw = {"has_exclusive_product" if product else "has_exclusive_sum": exclusive}
    (y,) = run(lambda a: f(a, axis=axis, axis_direction=direction, **kw), x)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.astype(np.float64),
                               np_cumulative(x, axis, direction == AD.DECREASING, exclusive, product).astype(np.float64),
                               rtol=2e-3 if dtype == np.float16 else 1e-6)


def test_cumulative_strided_and_broadcast_input(device):
    g = dml.Graph(device)
    x = g.input([1, 4])
    b = dml.broadcast(x, [3, 4])
    t = dml.reinterpret(x, [4], [1])
    ys = g.compile([dml.cumulative_summation(b, axis=0, axis_direction=AD.INCREASING, has_exclusive_sum=False),
                    dml.cumulative_product(t, axis=0, axis_direction=AD.DECREASING, has_exclusive_product=True)])
    a = np.array([[1, 2, 3, 4]], dtype=np.float32)
    y0, y1 = ys({x: a})
    np.testing.assert_array_equal(y0, np.cumsum(np.repeat(a, 3, axis=0), axis=0))
    np.testing.assert_array_equal(y1, [24, 12, 4, 1])


def test_cumulative_errors(device):
    g = dml.Graph(device)
    with pytest.raises(ValueError, match=r"^cumulative_summation\(\): axis 2 is out of range.*\(DML_OPERATOR_CUMULATIVE_SUMMATION\)"):
        dml.cumulative_summation(g.input([2, 3]), axis=2, axis_direction=AD.INCREASING, has_exclusive_sum=False)
    with pytest.raises(ValueError, match=r"^cumulative_product\(\): input has type INT8"):
        dml.cumulative_product(g.input([2, 3], np.int8), axis=0, axis_direction=AD.INCREASING,
                               has_exclusive_product=False)
    with pytest.raises(TypeError, match="axis"):
        dml.cumulative_summation(g.input([2, 3]))  # the axis is the one thing without a default


# --- top_k ---------------------------------------------------------------------------------------------------------

def np_top_k(x, axis, k, largest):
    key = -x.astype(np.float64) if largest else x.astype(np.float64)
    order = np.argsort(key, axis=axis, kind="stable")  # ties keep ascending index
    idx = np.take(order, range(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx


TOPK_DOC = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], dtype=np.float32)
TOPK_TIES = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], dtype=np.float32)


def test_top_k_doc_examples(run):
    r = run(lambda a: [*dml.top_k(a, axis=3, k=2, axis_direction=AD.DECREASING),
                       *dml.top_k(a, axis=2, k=2, axis_direction=AD.DECREASING)], TOPK_DOC)
    np.testing.assert_array_equal(r[0][0, 0], [[11, 10], [9, 8], [7, 6]])
    np.testing.assert_array_equal(r[1][0, 0], [[3, 2], [2, 3], [3, 2]])
    np.testing.assert_array_equal(r[2][0, 0], [[4, 5, 10, 11], [3, 2, 9, 8]])  # k replaces axis 2's size
    np.testing.assert_array_equal(r[3][0, 0], [[2, 2, 0, 0], [1, 1, 1, 1]])
    r = run(lambda a: [*dml.top_k(a, axis=3, k=3, axis_direction=AD.DECREASING),
                       *dml.top_k(a, axis=3, k=3, axis_direction=AD.INCREASING)], TOPK_TIES)
    np.testing.assert_array_equal(r[0][0, 0], [[3, 2, 2], [5, 5, 4], [6, 6, 6]])
    np.testing.assert_array_equal(r[1][0, 0], [[3, 1, 2], [2, 3, 1], [0, 1, 2]])
    np.testing.assert_array_equal(r[2][0, 0], [[1, 2, 2], [3, 4, 5], [6, 6, 6]])
    np.testing.assert_array_equal(r[3][0, 0], [[0, 1, 2], [0, 1, 2], [0, 1, 2]])
    assert r[1].dtype == np.uint32


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("direction", [AD.INCREASING, AD.DECREASING])
def test_top_k(run, rng, dtype, axis, direction):
    x = rng.integers(0, 6, size=(4, 5, 6)).astype(dtype)  # plenty of ties
    k = x.shape[axis] - 1
    values, indices = run(lambda a: dml.top_k(a, axis=axis, k=k, axis_direction=direction), x)
    ref_v, ref_i = np_top_k(x, axis, k, direction == AD.DECREASING)
    assert values.dtype == dtype and values.shape == ref_v.shape
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)


def test_top_k_full_sort_uint64_indices_and_strided_input(device, rng):
    base = rng.standard_normal((3, 8)).astype(np.float32)
    g = dml.Graph(device)
    x = g.input(base.shape)
    view = dml.reinterpret(x, [3, 4], [8, 2])
    out = dml.top_k(view, axis=1, k=4, axis_direction=AD.DECREASING, output_dtype=np.uint64)
    assert out.indices.dtype == np.uint64
    values, indices = g.compile(list(out))({x: base})
    ref_v, ref_i = np_top_k(base[:, ::2], 1, 4, True)
    np.testing.assert_array_equal(values, ref_v)
    np.testing.assert_array_equal(indices, ref_i)


def test_top_k_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3, 4])
    with pytest.raises(ValueError, match=r"^top_k\(\): k must be in \[1, 3\]"):
        dml.top_k(x, axis=1, k=4, axis_direction=AD.DECREASING)  # k > the axis size, even if the last axis fits it
    with pytest.raises(ValueError, match="k must be in"):
        dml.top_k(x, axis=2, k=0, axis_direction=AD.DECREASING)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        dml.top_k(x, axis=3, k=1, axis_direction=AD.DECREASING)
    with pytest.raises(ValueError, match="output_dtype must be UINT32, UINT64"):
        dml.top_k(x, axis=2, k=1, axis_direction=AD.DECREASING, output_dtype=np.int32)
    with pytest.raises(ValueError, match="input has type FLOAT64"):
        dml.top_k(g.input([4], np.float64), axis=0, k=1, axis_direction=AD.DECREASING)


# --- non_zero_coordinates ------------------------------------------------------------------------------------------

def test_non_zero_coordinates_doc_example(run):
    x = np.array([[[[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]]]], dtype=np.float32)
    out = run(lambda a: dml.non_zero_coordinates(a), x)
    count, coords = out
    assert count.dtype == np.uint32 and count.shape == (1,) and count[0] == 4
    assert coords.dtype == np.uint32 and coords.shape == (8, 4)
    np.testing.assert_array_equal(coords[:4], [[0, 0, 0, 0], [0, 0, 0, 3], [0, 0, 1, 1], [0, 0, 1, 3]])
    np.testing.assert_array_equal(coords[4:], 0)  # undefined in DirectML; zero here


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
def test_non_zero_coordinates(run, rng, dtype):
    x = (rng.integers(0, 3, size=(2, 3, 5)) * rng.integers(0, 2, size=(2, 3, 5))).astype(dtype)
    count, coords = run(lambda a: dml.non_zero_coordinates(a), x)
    ref = np.argwhere(x)
    assert count[0] == len(ref)
    np.testing.assert_array_equal(coords[: len(ref)], ref)


def test_non_zero_coordinates_strided_and_errors(device):
    g = dml.Graph(device)
    x = g.input([4, 4])
    out = dml.non_zero_coordinates(dml.reinterpret(x, [2, 2], [1, 4]))  # a transposed corner
    a = np.zeros((4, 4), np.float32)
    a[0, 1] = 7  # element (1, 0) of the view
    count, coords = g.compile(list(out))({x: a})
    assert count[0] == 1
    np.testing.assert_array_equal(coords[0], [1, 0])
    with pytest.raises(ValueError, match=r"^non_zero_coordinates\(\): input has type INT64"):
        dml.non_zero_coordinates(g.input([3], np.int64))
