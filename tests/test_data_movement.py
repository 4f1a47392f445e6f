"""Data movement operators (slice, slice_grad, join, split, padding, tile, space/depth, reverse_subsequences)
against NumPy references, on every dtype, strided and broadcast inputs, and their error paths."""

import numpy as np
import pytest

import directml as dml

ALL_DTYPES = [np.float32, np.float16, np.float64, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
              np.uint64, np.int64]
rng = np.random.default_rng(1234)


def data(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    lo = 0 if dtype.kind == "u" else -100
    return rng.integers(lo, 100, size=shape).astype(dtype)


def run(device, build, *arrays):
    """Builds build(*inputs) on a graph with one input per array, runs it, returns the output(s)."""
    g = dml.Graph(device)
    xs = [g.input(list(np.shape(a)), np.asarray(a).dtype) for a in arrays]
    out = build(*xs)
    many = isinstance(out, (list, tuple))
    results = g.compile(list(out) if many else [out])(dict(zip(xs, arrays)))
    return results if many else results[0]


def strided_view(base, sizes, strides):
    """A NumPy view of a flat array through DirectML element strides: the reference for dml.reinterpret."""
    return np.lib.stride_tricks.as_strided(base, sizes, [s * base.itemsize for s in strides])


def np_slice(x, offsets, sizes, strides):
    index = []
    for off, size, step in zip(offsets, sizes, strides):
        if step > 0:
            index.append(slice(off, off + size, step))
        else:
            index.append(slice(off + size - 1, off - 1 if off > 0 else None, step))
    return x[tuple(index)]


# --- slice ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_slice_every_dtype_negative_strides(device, dtype):
    x = data((3, 5, 7), dtype)
    args = dict(input_window_offsets=[1, 0, 2], input_window_sizes=[2, 5, 5], input_window_strides=[-1, 2, -3])
    y = run(device, lambda a: dml.slice(a, **args), x)
    np.testing.assert_array_equal(y, np_slice(x, [1, 0, 2], [2, 5, 5], [-1, 2, -3]))
    assert y.dtype == np.dtype(dtype) and y.shape == (2, 3, 2)


def test_slice_doc_examples(device):
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    pos = run(device, lambda a: dml.slice(a, input_window_offsets=[0, 0, 0, 1], input_window_sizes=[1, 1, 4, 3],
                                  input_window_strides=[1, 1, 2, 2]), x)
    neg = run(device, lambda a: dml.slice(a, input_window_offsets=[0, 0, 0, 1], input_window_sizes=[1, 1, 4, 3],
                                  input_window_strides=[1, 1, -2, 2]), x)
    np.testing.assert_array_equal(pos[0, 0], [[2, 4], [10, 12]])
    np.testing.assert_array_equal(neg[0, 0], [[14, 16], [6, 8]])


def test_slice_of_strided_and_broadcast_inputs(device):
    base = data((40,), np.int16)
    g = dml.Graph(device)
    b = g.input([40], np.int16)
    view = dml.reinterpret(b, [3, 4], [9, 2])  # rows 9 apart, every other element
    y1 = dml.slice(view, input_window_offsets=[0, 1], input_window_sizes=[3, 3], input_window_strides=[-2, 1])
    row = g.input([1, 4], np.int16)
    y2 = dml.slice(dml.broadcast(row, [5, 4]), input_window_offsets=[1, 0], input_window_sizes=[4, 4],
                   input_window_strides=[3, -1])
    r = data((1, 4), np.int16)
    o1, o2 = g.compile([y1, y2])({b: base, row: r})
    np.testing.assert_array_equal(o1, np_slice(strided_view(base, (3, 4), (9, 2)), [0, 1], [3, 3], [-2, 1]))
    np.testing.assert_array_equal(o2, np_slice(np.broadcast_to(r, (5, 4)), [1, 0], [4, 4], [3, -1]))


def test_slice_non_contiguous_numpy_input(device):
    big = data((6, 10), np.float32)
    x = big[::2, 1::3]  # a non-contiguous array handed to dispatch
    y = run(device, lambda a: dml.slice(a, input_window_offsets=[0, 0], input_window_sizes=[3, 3],
                                input_window_strides=[1, -1]), x)
    np.testing.assert_array_equal(y, x[:, ::-1])


@pytest.mark.parametrize("kwargs, match", [
    (dict(input_window_offsets=[0, 0], input_window_sizes=[2, 2], input_window_strides=[1, 0]),
     "strides must not be zero"),
    (dict(input_window_offsets=[0, 3], input_window_sizes=[2, 2], input_window_strides=[1, 1]), "exceeds its size 4"),
    (dict(input_window_offsets=[0], input_window_sizes=[2, 2], input_window_strides=[1, 1]), "one value per dimension"),
    (dict(input_window_offsets=[0, 0], input_window_sizes=[0, 2], input_window_strides=[1, 1]), "must be positive"),
])
def test_slice_errors(device, kwargs, match):
    g = dml.Graph(device)
    x = g.input([3, 4])
    with pytest.raises(ValueError, match=r"^slice\(\): .*" + match):
        dml.slice(x, **kwargs)


# --- slice_grad -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_slice_grad_places_the_gradient(device, dtype):
    offsets, sizes, strides = [1, 0, 2], [3, 4, 5], [2, -3, -2]
    dy = data((2, 2, 3), dtype)
    dx = run(device, lambda a: dml.slice_grad(a, output_gradient_sizes=[5, 4, 8], input_window_offsets=offsets,
                                      input_window_sizes=sizes, input_window_strides=strides), dy)
    want = np.zeros((5, 4, 8), dtype)
    np_slice(want, offsets, sizes, strides)[...] = dy  # a view: writes through
    np.testing.assert_array_equal(dx, want)


def test_slice_grad_doc_example_and_smaller_gradient(device):
    dy = np.array([[1, 3], [9, 11]], np.float32)
    dx = run(device, lambda a: dml.slice_grad(a, output_gradient_sizes=[4, 4], input_window_offsets=[0, 0],
                                      input_window_sizes=[4, 4], input_window_strides=[2, 2]), dy)
    np.testing.assert_array_equal(dx, [[1, 0, 3, 0], [0, 0, 0, 0], [9, 0, 11, 0], [0, 0, 0, 0]])
    # The gradient may cover fewer elements than the window yields (as SLICE1's output may).
    small = run(device, lambda a: dml.slice_grad(a, output_gradient_sizes=[6], input_window_offsets=[1],
                                         input_window_sizes=[5], input_window_strides=[-1]), np.array([7, 8], np.int32))
    np.testing.assert_array_equal(small, [0, 0, 0, 0, 8, 7])


def test_slice_grad_broadcast_gradient(device):
    g = dml.Graph(device)
    s = g.input([1, 1], np.float32)
    dx = dml.slice_grad(dml.broadcast(s, [2, 3]), output_gradient_sizes=[3, 3], input_window_offsets=[0, 0],
                        input_window_sizes=[3, 3], input_window_strides=[2, 1])
    out, = g.compile([dx])({s: np.array([[4.0]], np.float32)})
    np.testing.assert_array_equal(out, [[4, 4, 4], [0, 0, 0], [4, 4, 4]])


def test_slice_grad_errors(device):
    g = dml.Graph(device)
    dy = g.input([2, 3])
    ok = dict(input_window_offsets=[0, 0], input_window_sizes=[4, 3], input_window_strides=[2, 1])
    with pytest.raises(ValueError, match="^[^:]+: .*strides must not be zero"):
        dml.slice_grad(dy, output_gradient_sizes=[4, 3], **{**ok, "input_window_strides": [0, 1]})
    with pytest.raises(ValueError, match="^[^:]+: .*exceeds its size 3"):
        dml.slice_grad(dy, output_gradient_sizes=[3, 3], **ok)
    with pytest.raises(ValueError, match="^[^:]+: input_gradient .* larger than the window yields"):
        dml.slice_grad(dy, output_gradient_sizes=[4, 3], **{**ok, "input_window_strides": [4, 1]})
    with pytest.raises(ValueError, match="^[^:]+: output_gradient_sizes needs one value per dimension"):
        dml.slice_grad(dy, output_gradient_sizes=[4, 3, 1], **ok)


# --- join / split ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_join_and_split_roundtrip(device, dtype):
    a, b, c = data((2, 1, 3), dtype), data((2, 4, 3), dtype), data((2, 2, 3), dtype)
    joined = run(device, lambda x, y, z: dml.join([x, y, z], axis=1), a, b, c)
    np.testing.assert_array_equal(joined, np.concatenate([a, b, c], axis=1))
    parts = run(device, lambda x: dml.split(x, axis=1, output_axis_sizes=[1, 4, 2]), joined)
    for got, want in zip(parts, [a, b, c]):
        np.testing.assert_array_equal(got, want)


def test_join_of_strided_and_broadcast_inputs(device):
    g = dml.Graph(device)
    base = g.input([12], np.int32)
    t = dml.reinterpret(base, [3, 2], [1, 3])  # the transpose of a 2x3 matrix
    r = g.input([1, 1], np.int32)
    y = dml.join([t, dml.broadcast(r, [3, 1])], axis=1)
    b = np.arange(12, dtype=np.int32)
    out, = g.compile([y])({base: b, r: np.array([[-5]], np.int32)})
    np.testing.assert_array_equal(out, np.concatenate([b[:6].reshape(2, 3).T, np.full((3, 1), -5)], axis=1))


def test_split_of_strided_input_last_axis(device):
    g = dml.Graph(device)
    base = g.input([20], np.float16)
    v = dml.reinterpret(base, [2, 5], [10, 2])
    p = dml.split(v, axis=1, output_axis_sizes=[2, 3])
    b = data((20,), np.float16)
    o1, o2 = g.compile(p)({base: b})
    ref = strided_view(b, (2, 5), (10, 2))
    np.testing.assert_array_equal(o1, ref[:, :2])
    np.testing.assert_array_equal(o2, ref[:, 2:])


def test_join_split_errors(device):
    g = dml.Graph(device)
    a, b = g.input([2, 3]), g.input([2, 4])
    with pytest.raises(ValueError, match="^[^:]+: input 1 .* outside axis 0"):
        dml.join([a, b], axis=0)
    with pytest.raises(ValueError, match="^[^:]+: axis 2 is out of range"):
        dml.join([a, b], axis=2)
    with pytest.raises(ValueError, match="^[^:]+: the element types differ"):
        dml.join([a, g.input([2, 3], np.float16)], axis=0)
    with pytest.raises(ValueError, match="^[^:]+: needs at least one input"):
        dml.join([], axis=0)
    with pytest.raises(ValueError, match="^[^:]+: output_axis_sizes .* sum to 3, not the input's 4"):
        dml.split(b, axis=1, output_axis_sizes=[1, 2])
    with pytest.raises(ValueError, match="^[^:]+: output_axis_sizes must be positive"):
        dml.split(b, axis=1, output_axis_sizes=[4, 0])
    with pytest.raises(ValueError, match="^[^:]+: axis 5 is out of range"):
        dml.split(b, axis=5, output_axis_sizes=[4])


# --- padding --------------------------------------------------------------------------------------------------

NP_PAD_MODE = {dml.PaddingMode.EDGE: "edge", dml.PaddingMode.REFLECTION: "reflect",
               dml.PaddingMode.SYMMETRIC: "symmetric", dml.PaddingMode.WRAP: "wrap"}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("mode", list(NP_PAD_MODE) + [dml.PaddingMode.CONSTANT])
def test_padding_every_mode_and_dtype(device, mode, dtype):
    # Paddings wider than the input too: REFLECTION, SYMMETRIC and WRAP fold periodically, as np.pad does.
    x = data((2, 3, 4), dtype)
    start, end = [1, 0, 7], [0, 5, 2]
    value = 7 if np.dtype(dtype).kind in "iu" else -1.5
    y = run(device, lambda a: dml.padding(a, padding_mode=mode, padding_value=value, start_padding=start, end_padding=end), x)
    widths = list(zip(start, end))
    if mode == dml.PaddingMode.CONSTANT:
        want = np.pad(x, widths, constant_values=np.array(value).astype(dtype))
    else:
        want = np.pad(x, widths, mode=NP_PAD_MODE[mode])
    np.testing.assert_array_equal(y, want)
    assert y.dtype == np.dtype(dtype)


def test_padding_doc_examples(device):
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]], np.float32).reshape(1, 1, 4, 4)
    pad = dict(padding_value=9, start_padding=[0, 0, 1, 2], end_padding=[0, 0, 3, 4])
    refl = run(device, lambda a: dml.padding(a, padding_mode=dml.PaddingMode.REFLECTION, **pad), x)
    sym = run(device, lambda a: dml.padding(a, padding_mode=dml.PaddingMode.SYMMETRIC, **pad), x)
    np.testing.assert_array_equal(refl[0, 0, :2], [[7, 6, 5, 6, 7, 8, 7, 6, 5, 6], [3, 2, 1, 2, 3, 4, 3, 2, 1, 2]])
    np.testing.assert_array_equal(sym[0, 0, 5:], [[6, 5, 5, 6, 7, 8, 8, 7, 6, 5], [2, 1, 1, 2, 3, 4, 4, 3, 2, 1],
                                                  [6, 5, 5, 6, 7, 8, 8, 7, 6, 5]])


def test_padding_size_one_dimension_and_zero_padding(device):
    x = data((1, 3), np.float32)
    for mode in NP_PAD_MODE:
        y = run(device, lambda a: dml.padding(a, padding_mode=mode, padding_value=0, start_padding=[2, 0],
                                      end_padding=[3, 0]), x)
        np.testing.assert_array_equal(y, np.repeat(x, 6, axis=0))
    same = run(device, lambda a: dml.padding(a, padding_mode=dml.PaddingMode.CONSTANT, padding_value=0,
                                     start_padding=[0, 0], end_padding=[0, 0]), x)
    np.testing.assert_array_equal(same, x)


def test_padding_of_strided_and_broadcast_inputs(device):
    g = dml.Graph(device)
    base = g.input([30], np.uint8)
    v = dml.reinterpret(base, [3, 4], [1, 6])
    row = g.input([1, 3], np.int64)
    y1 = dml.padding(v, padding_mode=dml.PaddingMode.SYMMETRIC, padding_value=0, start_padding=[4, 1],
                     end_padding=[2, 5])
    y2 = dml.padding(dml.broadcast(row, [2, 3]), padding_mode=dml.PaddingMode.CONSTANT,
                     padding_value=-(2 ** 40), start_padding=[1, 1], end_padding=[0, 2])
    b, r = data((30,), np.uint8), np.array([[1, 2, 3]], np.int64)
    o1, o2 = g.compile([y1, y2])({base: b, row: r})
    np.testing.assert_array_equal(o1, np.pad(strided_view(b, (3, 4), (1, 6)), [(4, 2), (1, 5)], mode="symmetric"))
    np.testing.assert_array_equal(o2, np.pad(np.broadcast_to(r, (2, 3)), [(1, 0), (1, 2)],
                                             constant_values=-(2 ** 40)))


def test_padding_errors(device):
    g = dml.Graph(device)
    x, u8 = g.input([2, 3]), g.input([2, 3], np.uint8)
    ok = dict(padding_mode=dml.PaddingMode.CONSTANT, padding_value=0, start_padding=[1, 1], end_padding=[1, 1])
    with pytest.raises(ValueError, match="^[^:]+: start_padding needs one value per dimension"):
        dml.padding(x, **{**ok, "start_padding": [1]})
    with pytest.raises(ValueError, match="^[^:]+: end_padding needs one value per dimension"):
        dml.padding(x, **{**ok, "end_padding": [1, 1, 1]})
    for bad in (1.5, 256, -1, float("nan")):
        with pytest.raises(ValueError, match="^[^:]+: padding_value .* not a value of the tensor's type UINT8"):
            dml.padding(u8, **{**ok, "padding_value": bad})
    with pytest.raises(ValueError, match="^[^:]+: the output size .* exceeds 32 bits"):
        dml.padding(x, **{**ok, "end_padding": [1, 2 ** 32 - 2]})
    # Outside CONSTANT the value is ignored, as DirectML ignores it.
    dml.padding(u8, **{**ok, "padding_mode": dml.PaddingMode.EDGE, "padding_value": 0.5})


# --- tile -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tile(device, dtype):
    x = data((2, 1, 3), dtype)
    y = run(device, lambda a: dml.tile(a, repeats=[2, 3, 1]), x)
    np.testing.assert_array_equal(y, np.tile(x, (2, 3, 1)))


def test_tile_strided_and_broadcast(device):
    g = dml.Graph(device)
    base = g.input([10], np.float32)
    t = dml.tile(dml.reinterpret(base, [2, 3], [1, 3]), repeats=[2, 2])
    s = g.input([1], np.float32)
    bt = dml.tile(dml.broadcast(s, [2, 2]), repeats=[1, 3])
    b = data((10,), np.float32)
    o1, o2 = g.compile([t, bt])({base: b, s: np.array([2.5], np.float32)})
    np.testing.assert_array_equal(o1, np.tile(strided_view(b, (2, 3), (1, 3)), (2, 2)))
    np.testing.assert_array_equal(o2, np.full((2, 6), 2.5, np.float32))


def test_tile_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3])
    with pytest.raises(ValueError, match="^[^:]+: repeats needs one value per dimension"):
        dml.tile(x, repeats=[2])
    with pytest.raises(ValueError, match="^[^:]+: repeats must be positive"):
        dml.tile(x, repeats=[1, 0])
    with pytest.raises(ValueError, match="^[^:]+: the output size .* exceeds 32 bits"):
        dml.tile(x, repeats=[1, 2 ** 31])


# --- space_to_depth / depth_to_space --------------------------------------------------------------------------

def np_space_to_depth(x, b, order):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b)
    axes = (0, 3, 5, 1, 2, 4) if order == dml.DepthSpaceOrder.DEPTH_COLUMN_ROW else (0, 1, 3, 5, 2, 4)
    return t.transpose(axes).reshape(n, c * b * b, h // b, w // b)


def np_depth_to_space(x, b, order):
    n, c, h, w = x.shape
    if order == dml.DepthSpaceOrder.DEPTH_COLUMN_ROW:
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


ORDERS = [dml.DepthSpaceOrder.DEPTH_COLUMN_ROW, dml.DepthSpaceOrder.COLUMN_ROW_DEPTH]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("order", ORDERS)
def test_space_to_depth_and_back(device, order, dtype):
    x = data((2, 3, 6, 9), dtype)
    d = run(device, lambda a: dml.space_to_depth(a, block_size=3, order=order), x)
    np.testing.assert_array_equal(d, np_space_to_depth(x, 3, order))
    s = run(device, lambda a: dml.depth_to_space(a, block_size=3, order=order), d)
    np.testing.assert_array_equal(s, x)
    z = data((1, 8, 2, 3), dtype)
    np.testing.assert_array_equal(run(device, lambda a: dml.depth_to_space(a, block_size=2, order=order), z),
                                  np_depth_to_space(z, 2, order))


def test_space_to_depth_doc_examples_and_default_order(device):
    want = np.array([0, 1, 2, 3, 4, 5, 9, 10, 11, 12, 13, 14, 18, 19, 20, 21, 22, 23, 27, 28, 29, 30, 31, 32,
                     36, 37, 38, 39, 40, 41, 45, 46, 47, 48, 49, 50, 54, 55, 56, 57, 58, 59, 63, 64, 65, 66, 67, 68],
                    np.uint32).reshape(1, 8, 2, 3)
    dcr = np.array([[[0, 18, 1, 19, 2, 20], [36, 54, 37, 55, 38, 56], [3, 21, 4, 22, 5, 23], [39, 57, 40, 58, 41, 59]],
                    [[9, 27, 10, 28, 11, 29], [45, 63, 46, 64, 47, 65], [12, 30, 13, 31, 14, 32],
                     [48, 66, 49, 67, 50, 68]]], np.uint32).reshape(1, 2, 4, 6)
    crd = np.array([[[0, 9, 1, 10, 2, 11], [18, 27, 19, 28, 20, 29], [3, 12, 4, 13, 5, 14], [21, 30, 22, 31, 23, 32]],
                    [[36, 45, 37, 46, 38, 47], [54, 63, 55, 64, 56, 65], [39, 48, 40, 49, 41, 50],
                     [57, 66, 58, 67, 59, 68]]], np.uint32).reshape(1, 2, 4, 6)
    np.testing.assert_array_equal(run(device, lambda a: dml.space_to_depth(a, block_size=2), dcr), want)
    np.testing.assert_array_equal(
        run(device, lambda a: dml.space_to_depth(a, block_size=2, order=dml.DepthSpaceOrder.COLUMN_ROW_DEPTH), crd), want)
    np.testing.assert_array_equal(run(device, lambda a: dml.depth_to_space(a, block_size=2), want), dcr)


def test_depth_space_strided_input(device):
    g = dml.Graph(device)
    base = g.input([2, 4, 4, 4], np.float16)
    nhwc = dml.reinterpret(base, [2, 4, 4, 4], [64, 1, 16, 4])  # channels last
    y = dml.space_to_depth(nhwc, block_size=2, order=dml.DepthSpaceOrder.COLUMN_ROW_DEPTH)
    b = data((2, 4, 4, 4), np.float16)
    out, = g.compile([y])({base: b})
    want = np_space_to_depth(b.transpose(0, 3, 1, 2), 2, dml.DepthSpaceOrder.COLUMN_ROW_DEPTH)
    np.testing.assert_array_equal(out, want)


def test_depth_space_errors(device):
    g = dml.Graph(device)
    x = g.input([1, 4, 6, 4])
    with pytest.raises(ValueError, match="^[^:]+: the input's height and width .* multiples of block_size 4"):
        dml.space_to_depth(x, block_size=4)
    with pytest.raises(ValueError, match="^[^:]+: the input's channel count 4 must be a multiple"):
        dml.depth_to_space(x, block_size=3)
    with pytest.raises(ValueError, match="^[^:]+: block_size must be positive"):
        dml.space_to_depth(x, block_size=0)
    with pytest.raises(ValueError, match="^[^:]+: input must have 4 dimensions"):
        dml.depth_to_space(g.input([4, 6, 4]), block_size=2)


# --- reverse_subsequences -------------------------------------------------------------------------------------

def np_reverse_subsequences(x, lengths, axis):
    out = x.copy()
    xm, om, lm = np.moveaxis(x, axis, -1), np.moveaxis(out, axis, -1), np.moveaxis(lengths, axis, -1)[..., 0]
    for idx in np.ndindex(lm.shape):
        n = min(int(lm[idx]), xm.shape[-1])
        om[idx][:n] = xm[idx][:n][::-1]
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("length_type", [np.uint32, np.uint64])
def test_reverse_subsequences(device, dtype, length_type):
    x = data((3, 5, 2), dtype)
    lengths = np.array([[0, 1], [5, 3], [9, 2 ** 31]], length_type).reshape(3, 1, 2)  # beyond the axis: clamped
    y = run(device, lambda a, l: dml.reverse_subsequences(a, l, axis=1), x, lengths)
    # DirectML reverses a length past the axis otherwise (docs/operators.md): rows within it only
    compared = slice(2) if device.kind == "directml" else slice(None)
    np.testing.assert_array_equal(y[compared], np_reverse_subsequences(x, lengths, 1)[compared])


def test_reverse_subsequences_doc_examples(device):
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    reverse = lambda axis: lambda a, l: dml.reverse_subsequences(a, l, axis=axis)
    y3 = run(device, reverse(3), x, np.array([2, 4, 3], np.uint32).reshape(1, 1, 3, 1))
    y2 = run(device, reverse(2), x, np.array([2, 3, 1, 0], np.uint32).reshape(1, 1, 1, 4))
    np.testing.assert_array_equal(y3[0, 0], [[2, 1, 3, 4], [8, 7, 6, 5], [11, 10, 9, 12]])
    np.testing.assert_array_equal(y2[0, 0], [[5, 10, 3, 4], [1, 6, 7, 8], [9, 2, 11, 12]])


def test_reverse_subsequences_strided_and_broadcast(device):
    g = dml.Graph(device)
    base = g.input([12], np.int8)
    v = dml.reinterpret(base, [4, 3], [1, 4])
    n = g.input([1, 1], np.uint32)
    y = dml.reverse_subsequences(v, dml.broadcast(n, [1, 3]), axis=0)
    b = data((12,), np.int8)
    out, = g.compile([y])({base: b, n: np.array([[3]], np.uint32)})
    np.testing.assert_array_equal(out, np_reverse_subsequences(strided_view(b, (4, 3), (1, 4)), np.full((1, 3), 3), 0))


def test_reverse_subsequences_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3])
    with pytest.raises(ValueError, match="^[^:]+: sequence_lengths must have sizes \\[2, 1\\]"):
        dml.reverse_subsequences(x, g.input([2, 3], np.uint32), axis=1)
    with pytest.raises(ValueError, match="^[^:]+: sequence_lengths has type INT32"):
        dml.reverse_subsequences(x, g.input([2, 1], np.int32), axis=1)
    with pytest.raises(ValueError, match="^[^:]+: axis 2 is out of range"):
        dml.reverse_subsequences(x, g.input([2, 1], np.uint32), axis=2)
