"""average_pooling, max_pooling, roi_align and roi_align_grad against NumPy references written here."""

import itertools
import math

import numpy as np
import pytest

import directml as dml

RF = dml.ReduceFunction
IM = dml.InterpolationMode


def tol(dtype):
    return dict(rtol=1e-2, atol=1e-2) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)


# --- sliding-window pooling ----------------------------------------------------------------------------------------

def np_pool(x, window, strides, start, end, dilations, out_sizes, kind, include_padding=False):
    """Max (values, first-maximum packed indices) or average over every window, by explicit loops."""
    n, c, *spatial = x.shape
    vals = np.zeros((n, c, *out_sizes), dtype=np.float64)
    idx = np.zeros((n, c, *out_sizes), dtype=np.int64)
    flat = x.reshape(n, c, -1).astype(np.float64)
    base = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * math.prod(spatial)
    for o in itertools.product(*map(range, out_sizes)):
        taps, padded = [], 0
        for j in itertools.product(*map(range, window)):
            pos = [o[i] * strides[i] + j[i] * dilations[i] - start[i] for i in range(len(o))]
            if all(-start[i] <= p < spatial[i] + end[i] for i, p in enumerate(pos)):
                padded += 1
            if all(0 <= p < spatial[i] for i, p in enumerate(pos)):
                taps.append(np.ravel_multi_index(pos, spatial))
        v = flat[:, :, taps]
        if kind == "max":
            first = np.argmax(v, axis=2)  # NumPy takes the first maximum too
            vals[(..., *o)] = np.take_along_axis(v, first[:, :, None], axis=2)[:, :, 0]
            idx[(..., *o)] = base + np.asarray(taps)[first]
        else:
            vals[(..., *o)] = v.sum(axis=2) / (padded if include_padding else len(taps))
    return vals, idx


def out_size(n, k, s, p0, p1, d, ceil=False):
    k = (k - 1) * d + 1
    return (n + p0 + p1 - k + (s - 1 if ceil else 0)) // s + 1


CASES = [  # spatial sizes, window, strides, start, end, dilations
    ((5, 7), (2, 3), (1, 2), (0, 1), (1, 0), (1, 1)),
    ((6, 5), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1)),
    ((7, 6), (2, 2), (1, 1), (0, 0), (0, 0), (2, 3)),
    ((4, 5, 6), (2, 2, 3), (2, 1, 2), (1, 0, 1), (0, 1, 1), (1, 2, 1)),
    ((13, 13), (13, 13), (1, 1), (0, 0), (0, 0), (1, 1)),  # global: a window a plane
    ((3, 4, 7), (3, 4, 7), (2, 2, 2), (0, 0, 0), (0, 0, 0), (1, 1, 1)),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("include_padding", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_average_pooling(run, rng, case, include_padding, dtype):
    spatial, window, strides, start, end, dil = case
    x = rng.standard_normal((2, 3, *spatial)).astype(dtype)
    (y,) = run(lambda a: dml.average_pooling(a, strides=strides, window_size=window, start_padding=start,
                                             end_padding=end, include_padding=include_padding, dilations=dil), x)
    outs = [out_size(*t) for t in zip(spatial, window, strides, start, end, dil)]
    ref, _ = np_pool(x, window, strides, start, end, dil, outs, "avg", include_padding)
    assert y.dtype == dtype and y.shape == ref.shape
    np.testing.assert_allclose(y.astype(np.float64), ref, **tol(dtype))


def test_global_average_pooling_of_planes_not_packed(run, rng):
    # The windows cover whole planes of a view whose rows are not packed (every other row of a 5 x 9 plane), so the
    # sums run row by row, not over a packed plane.
    x = rng.standard_normal((2, 3, 10, 9)).astype(np.float32)
    (y,) = run(lambda a: dml.average_pooling(dml.reinterpret(a, [2, 3, 5, 9], [270, 90, 18, 1]), strides=[1, 1],
                                             window_size=[5, 9], start_padding=[0, 0], end_padding=[0, 0]), x)
    np.testing.assert_allclose(y[:, :, 0, 0], x[:, :, ::2].mean(axis=(2, 3)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("spatial", [(1, 1), (3, 5), (4, 4), (1, 17), (13, 13), (7, 9, 5), (56, 56)])
def test_global_average_pooling_of_packed_planes(run, rng, spatial):
    # A sum a packed plane: planes of one vector, less, more, a masked last one and many; 70 channels of 2 images
    # run in more than one task (64 planes a task) and step from one image to the next. An offset of 1000 with
    # small deviations checks the sums against a float64 reference to float32 rounding.
    x = (1000 + rng.standard_normal((2, 70, *spatial))).astype(np.float32)
    (y,) = run(lambda a: dml.average_pooling(a, strides=[1] * len(spatial), window_size=list(spatial),
                                             start_padding=[0] * len(spatial), end_padding=[0] * len(spatial)), x)
    want = x.astype(np.float64).mean(axis=tuple(range(2, x.ndim)), keepdims=True)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=0)


@pytest.mark.parametrize("include_padding", [False, True])
def test_average_pooling_ceil_output_sizes(run, rng, directml_differs, include_padding):
    # Rounding up adds a window that runs past the end padding: its taps there are in no divisor.
    if include_padding:
        directml_differs("with include_padding, a rounded-up window's taps past the end padding count in the divisor")
    x = rng.standard_normal((1, 2, 7, 9)).astype(np.float32)
    args = dict(window=(3, 2), strides=(2, 3), start=(1, 1), end=(0, 0), dilations=(1, 1))
    floors = [out_size(7, 3, 2, 1, 0, 1), out_size(9, 2, 3, 1, 0, 1)]
    ceils = [out_size(7, 3, 2, 1, 0, 1, True), out_size(9, 2, 3, 1, 0, 1, True)]
    assert ceils != floors
    (y,) = run(lambda a: dml.average_pooling(a, strides=args["strides"], window_size=args["window"],
                                             start_padding=args["start"], end_padding=args["end"],
                                             include_padding=include_padding, output_sizes=[1, 2, *ceils]), x)
    ref, _ = np_pool(x, args["window"], args["strides"], args["start"], args["end"], args["dilations"], ceils,
                     "avg", include_padding)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64])
def test_max_pooling(run, rng, case, dtype):
    spatial, window, strides, start, end, dil = case
    x = rng.integers(0, 4, size=(2, 3, *spatial)).astype(dtype)  # few values: ties, the first index wins
    r = run(lambda a: dml.max_pooling(a, window_size=window, strides=strides, start_padding=start, end_padding=end,
                                      dilations=dil, output_indices=True), x)
    values, indices = r
    outs = [out_size(*t) for t in zip(spatial, window, strides, start, end, dil)]
    ref_v, ref_i = np_pool(x, window, strides, start, end, dil, outs, "max")
    assert values.dtype == dtype and indices.dtype == np.uint32
    np.testing.assert_array_equal(values, ref_v.astype(dtype))
    np.testing.assert_array_equal(indices, ref_i)


def test_max_pooling_negative_values_beat_padding_and_uint64_indices(run, rng):
    x = -rng.uniform(1, 2, size=(1, 2, 3, 4)).astype(np.float32)  # all negative: padding must not win
    values, indices = run(lambda a: dml.max_pooling(a, window_size=[3, 3], start_padding=[1, 1], end_padding=[1, 1],
                                                    output_indices=True, output_dtype=np.uint64), x)
    ref_v, ref_i = np_pool(x, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (3, 4), "max")
    assert indices.dtype == np.uint64
    np.testing.assert_array_equal(values, ref_v.astype(np.float32))
    np.testing.assert_array_equal(indices, ref_i)


def test_max_pooling_ignores_nan_unless_the_window_is_all_nan(device, run):
    x = np.array([[[[np.nan, 1, 2], [5, np.nan, 0], [np.nan, np.nan, 7]]]], dtype=np.float32)
    values, indices = run(lambda a: dml.max_pooling(a, window_size=[2, 1], output_indices=True), x)
    # DirectML gives an all-NaN window the lowest float, where it starts (docs/operators.md)
    all_nan = np.finfo(np.float32).min if device.kind == "directml" else np.nan
    np.testing.assert_array_equal(values[0, 0], [[5, 1, 2], [5, all_nan, 7]])
    np.testing.assert_array_equal(indices[0, 0], [[3, 1, 2], [3, 4, 8]])


def test_max_pooling_defaults_and_missing_indices(device, rng):
    g = dml.Graph(device)
    a = g.input([1, 1, 4, 5])
    out = dml.max_pooling(a, window_size=[2, 2])
    assert isinstance(out, dml.MaxPoolingOutputs) and out.indices is None
    assert out.values.shape == (1, 1, 3, 4)  # strides 1, no padding, no dilation
    x = rng.standard_normal((1, 1, 4, 5)).astype(np.float32)
    (y,) = g.compile([out.values])({a: x})
    ref, _ = np_pool(x, (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), (3, 4), "max")
    np.testing.assert_array_equal(y, ref.astype(np.float32))


def test_max_pooling_ceil_output_sizes(run, rng):
    x = rng.standard_normal((1, 1, 5, 5)).astype(np.float32)
    values, indices = run(lambda a: dml.max_pooling(a, window_size=[2, 2], strides=[2, 2], output_indices=True,
                                                    output_sizes=[1, 1, 3, 3]), x)
    ref_v, ref_i = np_pool(x, (2, 2), (2, 2), (0, 0), (0, 0), (1, 1), (3, 3), "max")
    np.testing.assert_array_equal(values, ref_v.astype(np.float32))
    np.testing.assert_array_equal(indices, ref_i)


WIDE_CASES = [  # window, strides, start, end, dilations, ceil: rows wide enough for vectors of windows
    ((3, 3), (2, 2), (0, 0), (0, 0), (1, 1), True),
    ((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), False),
    ((2, 3), (1, 2), (0, 1), (0, 2), (2, 2), False),
    ((3, 3), (3, 3), (1, 1), (0, 0), (1, 1), True),
    ((2, 2), (2, 2), (0, 0), (0, 0), (1, 1), False),
    ((3, 2), (2, 1), (1, 0), (1, 0), (1, 1), True),
    ((2, 5), (1, 1), (0, 2), (0, 2), (1, 1), False),
]


def check_max_pooling_values(device, run, x, window, strides, start, end, dil, ceil):
    """max_pooling's values of x (NaN where it has some) against the reference: NaN loses to any number, an all-NaN
    window gives NaN (DirectML: the lowest float), and ties between 0 and -0 keep the first in scan order."""
    outs = [out_size(*t, ceil) for t in zip(x.shape[2:], window, strides, start, end, dil)]
    (y,) = run(lambda a: dml.max_pooling(a, window_size=window, strides=strides, start_padding=start,
                                         end_padding=end, dilations=dil, output_sizes=[*x.shape[:2], *outs]).values, x)
    nan = np.isnan(x)
    ref, _ = np_pool(np.where(nan, -np.inf, x), window, strides, start, end, dil, outs, "max")
    all_nan = np_pool(nan.astype(np.float32), window, strides, start, end, dil, outs, "avg")[0] == 1
    assert all_nan.any() and not all_nan.all()
    ref[all_nan] = np.finfo(np.float32).min if device.kind == "directml" else np.nan
    np.testing.assert_array_equal(y, ref.astype(np.float32))
    np.testing.assert_array_equal(np.signbit(y), np.signbit(ref))


@pytest.mark.parametrize("case", WIDE_CASES)
@pytest.mark.parametrize("width", [13, 45, 80])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_max_pooling_values_over_wide_rows(device, run, rng, case, width, dtype):
    # Values only, rows of 13, 45 and 80: windows inside the input run in vectors of 8 (16 on AVX-512, the last one
    # masked), rows whose windows reach every input row they could in one call, 2 and 3 taps of stride 1 or 2 in
    # kernels of their own on AVX-512, an input row two output rows share read once. The other windows, and every
    # float16 one, are gathered in blocks of 8, 4, 2 and 1 outputs (a stride of 3: rows of 5, 15 and 27).
    x = rng.choice(np.array([-1.0, -0.0, 0.0, 1.0], dtype), size=(1, 3, 9, width))
    x[0, 0, :, 1::5] = np.nan
    x[0, 1, 1:6, 2:12] = np.nan
    check_max_pooling_values(device, run, x, *case)


def test_max_pooling_values_over_wide_rows_in_depth(device, run, rng):
    # A 3-D window over rows of 40: each output row's windows reach input rows of two depths (none shared between
    # output rows), the first and last depths padded.
    x = rng.choice(np.array([-1.0, -0.0, 0.0, 1.0], np.float32), size=(1, 2, 4, 7, 40))
    x[0, 0, :, :, 1::5] = np.nan
    x[0, 1, 1:3, 1:6, 2:12] = np.nan
    check_max_pooling_values(device, run, x, (2, 3, 3), (1, 2, 2), (1, 1, 0), (1, 0, 1), (1, 1, 1), False)


def test_pooling_strided_broadcast_and_noncontiguous_inputs(device, rng):
    g = dml.Graph(device)
    base = g.input([1, 2, 6, 8])
    view = dml.reinterpret(base, [1, 2, 3, 4], [96, 48, 16, 2])  # every other row and column
    chan = dml.broadcast(g.input([1, 1, 3, 4], name="c"), [2, 3, 3, 4])
    outs = [dml.average_pooling(view, strides=[1, 1], window_size=[2, 2], start_padding=[0, 0], end_padding=[0, 0],
                                include_padding=False),
            *dml.max_pooling(view, window_size=[2, 3], output_indices=True),
            dml.max_pooling(chan, window_size=[3, 2]).values]
    op = g.compile(outs)
    b = rng.standard_normal((1, 2, 6, 8)).astype(np.float32)
    c = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)[:, :, :, ::1]
    avg, mx, mi, mc = op({base: b, "c": c})
    v = b[:, :, ::2, ::2]
    # rtol: directml's average is a float32 rounding or two from the float64 reference (1.3e-6 seen on lavapipe)
    np.testing.assert_allclose(avg, np_pool(v, (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), (2, 3), "avg")[0], rtol=1e-5)
    ref_v, ref_i = np_pool(v, (2, 3), (1, 1), (0, 0), (0, 0), (1, 1), (2, 2), "max")
    np.testing.assert_array_equal(mx, ref_v.astype(np.float32))
    np.testing.assert_array_equal(mi, ref_i)  # indices count in the view's logical (packed) layout
    ref_c, _ = np_pool(np.broadcast_to(c, (2, 3, 3, 4)), (3, 2), (1, 1), (0, 0), (0, 0), (1, 1), (1, 3), "max")
    np.testing.assert_array_equal(mc, ref_c.astype(np.float32))
    # A non-contiguous NumPy array is read by its strides.
    nc = rng.standard_normal((1, 2, 5, 10)).astype(np.float32)[:, :, :, ::2]
    g2 = dml.Graph(device)
    a = g2.input(nc.shape)
    (y,) = g2.compile([dml.max_pooling(a, window_size=[2, 2]).values])({a: nc})
    np.testing.assert_array_equal(y, np_pool(nc, (2, 2), (1, 1), (0, 0), (0, 0), (1, 1), (4, 4), "max")[0])


def test_pooling_errors(device):
    g = dml.Graph(device)
    x = g.input([1, 1, 4, 4])
    avg = dict(strides=[1, 1], start_padding=[0, 0], end_padding=[0, 0], include_padding=False)
    with pytest.raises(ValueError, match=r"^[^:]+: the window \(5 elements.*larger than the padded input \(4\)"):
        dml.max_pooling(x, window_size=[5, 2])
    with pytest.raises(ValueError, match=r"the window \(7 elements with its dilation\) is larger than the padded input \(6\)"):
        dml.max_pooling(x, window_size=[2, 4], dilations=[1, 2], start_padding=[1, 1], end_padding=[1, 1])
    with pytest.raises(ValueError, match="^[^:]+: the window"):
        dml.average_pooling(x, window_size=[2, 5], **avg)
    with pytest.raises(ValueError, match="window_size needs 2 values"):
        dml.max_pooling(x, window_size=[])
    with pytest.raises(ValueError, match="window_size needs 2 values"):
        dml.max_pooling(x, window_size=[2, 2, 2])
    with pytest.raises(ValueError, match="strides needs 2 values"):
        dml.max_pooling(x, window_size=[2, 2], strides=[1])
    with pytest.raises(ValueError, match="strides must be positive"):
        dml.max_pooling(x, window_size=[2, 2], strides=[0, 1])
    with pytest.raises(ValueError, match="dilations must be positive"):
        dml.average_pooling(x, window_size=[2, 2], dilations=[1, 0], **avg)
    with pytest.raises(ValueError, match="covers padding only"):
        dml.max_pooling(x, window_size=[2, 2], start_padding=[2, 0])
    with pytest.raises(ValueError, match="covers padding only"):
        dml.average_pooling(x, window_size=[2, 2], strides=[1, 1], start_padding=[2, 0], end_padding=[0, 0],
                            include_padding=False)
    with pytest.raises(ValueError, match=r"output_sizes \[1, 1, 2, 2\] do not fit; expected \[1, 1, 3, 3\]"):
        dml.max_pooling(x, window_size=[2, 2], output_sizes=[1, 1, 2, 2])
    with pytest.raises(ValueError, match="output_dtype must be UINT32 or UINT64"):
        dml.max_pooling(x, window_size=[2, 2], output_indices=True, output_dtype=np.int32)
    with pytest.raises(ValueError, match="input must have 4 to 5 dimensions"):
        dml.max_pooling(g.input([1, 4, 4]), window_size=[2])
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.average_pooling(g.input([1, 1, 4, 4], np.int32), window_size=[2, 2], **avg)
    with pytest.raises(ValueError, match="^[^:]+: input has type FLOAT64"):
        dml.max_pooling(g.input([1, 1, 4, 4], np.float64), window_size=[2, 2])
    with pytest.raises(TypeError, match="window_size"):
        dml.average_pooling(x, strides=[2, 2])  # the window is the one thing without a default


# --- ROI align -----------------------------------------------------------------------------------------------------

def axis_coordinates(c1, c2, scale, out, p):
    """Samples per output element and every sample's input coordinate along one axis."""
    begin, size = c1 * scale, (c2 - c1) * scale
    want = math.ceil(size / out) if math.isfinite(size) else 0
    samples = min(max(want, p["min"]), p["max"])
    total = samples * out
    i = np.arange(total, dtype=np.float64)
    if p["align"]:
        coords = begin + i * size / (total - 1) if total > 1 else np.full(total, begin)
    else:
        coords = begin + (i - p["out_off"]) * size / total
    return samples, coords - p["in_off"], (scale * (1 - (i - (0 if p["align"] else p["out_off"])) /
                                                    ((total - 1 if p["align"] else total) or 1)))


def taps(c, size, mode):
    """(inside, lo, hi, weight of hi, moves) of one coordinate, per the documented rules."""
    if not (-1 <= c <= size):
        return False, 0, 0, 0.0, False
    if mode == IM.NEAREST_NEIGHBOR:
        i = min(max(math.ceil(c - 0.5), 0), size - 1)
        return True, i, i, 0.0, False
    if c <= 0:
        return True, 0, 0, 0.0, False
    lo = math.floor(c)
    if lo >= size - 1:
        return True, size - 1, size - 1, 0.0, False
    return True, lo, lo + 1, c - lo, True


def np_roi_align(x, rois, batch, p, oob, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, oh, ow))
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sy, ys, _ = axis_coordinates(y1, y2, p["sy"], oh, p)
        sx, xs, _ = axis_coordinates(x1, x2, p["sx"], ow, p)
        for oy, ox in itertools.product(range(oh), range(ow)):
            vals = []
            for cy in ys[oy * sy:(oy + 1) * sy]:
                for cx in xs[ox * sx:(ox + 1) * sx]:
                    iy, y0, y1_, wy, _ = taps(cy, h, p["mode"])
                    ix, x0, x1_, wx, _ = taps(cx, w, p["mode"])
                    if not (iy and ix and batch[r] < n):
                        vals.append(np.full(c, oob))
                        continue
                    img = x[batch[r]].astype(np.float64)
                    vals.append((1 - wy) * ((1 - wx) * img[:, y0, x0] + wx * img[:, y0, x1_]) +
                                wy * ((1 - wx) * img[:, y1_, x0] + wx * img[:, y1_, x1_]))
            vals = np.array(vals)
            out[r, :, oy, ox] = vals.max(axis=0) if p["reduction"] == RF.MAX else vals.mean(axis=0)
    return out


def params(reduction=RF.AVERAGE, mode=IM.LINEAR, sx=1.0, sy=1.0, in_off=0.5, out_off=-0.5, mn=1, mx=2**32 - 1,
           align=False):
    return dict(reduction=reduction, mode=mode, sx=sx, sy=sy, in_off=in_off, out_off=out_off, min=mn, max=mx,
                align=align)


def roi_kwargs(p):
    return dict(reduction_function=p["reduction"], interpolation_mode=p["mode"], spatial_scale_x=p["sx"],
                spatial_scale_y=p["sy"], input_pixel_offset=p["in_off"], output_pixel_offset=p["out_off"],
                minimum_samples_per_output=p["min"], maximum_samples_per_output=p["max"],
                align_regions_to_corners=p["align"])


@pytest.mark.parametrize("corner", [np.inf, 1e30])
def test_roi_align_huge_region_takes_bounded_time(device, run, corner):
    # An infinite region asks for the minimum of samples (all out of bounds) rather than up to 2^64 of them; a
    # huge finite one is held to maximum_samples_per_output. Either must finish at once.
    if device.kind == "directml" and np.isinf(corner):
        pytest.skip("DirectML samples an infinite region maximum_samples_per_output (2^32 - 1) times per dimension: "
                    "it does not finish (docs/operators.md, roi_align)")
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    rois = np.array([[0, 0, corner, corner]], np.float32)
    p = params(mx=2**32 - 1 if np.isinf(corner) else 64)
    (y,) = run(lambda a, r, b: dml.roi_align(a, r, b, out_of_bounds_input_value=-7.0, output_height=1,
                                             output_width=1, **roi_kwargs(p)), x, rois, np.zeros(1, np.uint32))
    assert y.shape == (1, 1, 1, 1) and np.isfinite(y).all()


# docs/operators.md, "On the directml executor"
ROI_ALIGN_DIFFERS = ("regions partly outside the image, inverted or empty, and align_regions_to_corners, sample "
                     "otherwise (ONNX-style regions match)")
ROI_ALIGN_GRAD_FAILS = "CompileGraph of ROI_ALIGN_GRAD fails on lavapipe (E_FAIL, E_INVALIDARG)"


DOC_IMAGE = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
DOC_ROIS = np.array([[0, 0, 2, 2], [2, 0, 4, 2], [0, 2, 2, 4], [2, 2, 4, 4]], dtype=np.float32)


def test_roi_align_and_grad_doc_example(run, directml_differs):
    directml_differs(ROI_ALIGN_GRAD_FAILS)
    # DML_ROI_ALIGN_GRAD_OPERATOR_DESC's example: nearest neighbor, 1.5x wide and 0.5x high, four crops.
    p = params(mode=IM.NEAREST_NEIGHBOR, mx=1)
    batch = np.zeros(4, np.uint32)
    dy = np.arange(1, 13, dtype=np.float32).reshape(4, 1, 1, 3)
    y, dx = run(lambda a, r, b, g: (
        dml.roi_align(a, r, b, out_of_bounds_input_value=0.0, output_height=1, output_width=3, **roi_kwargs(p)),
        dml.roi_align_grad(None, g, r, b, batch_size=1, image_height=4, image_width=4,
                           compute_output_gradient=True, compute_output_roi_gradient=False,
                           **roi_kwargs(p)).output_gradient), DOC_IMAGE, DOC_ROIS, batch, dy)
    np.testing.assert_array_equal(y[:, 0, 0], [[1, 1, 2], [3, 3, 4], [9, 9, 10], [11, 11, 12]])
    np.testing.assert_array_equal(dx[0, 0], [[3, 3, 9, 6], [0, 0, 0, 0], [15, 9, 21, 12], [0, 0, 0, 0]])


def onnx_roi_align(x, rois, batch, oh, ow, scale, ratio, mode):
    """The ONNX RoiAlign (half_pixel) reference: what ONNX Runtime maps onto ROI_ALIGN1 with offsets 0.5/-0.5."""
    n, c, h, w = x.shape
    out = np.zeros((len(rois), c, oh, ow))
    for r, roi in enumerate(rois.astype(np.float64)):
        sw, sh, ew, eh = roi * scale - 0.5
        bin_h, bin_w = (eh - sh) / oh, (ew - sw) / ow
        gh = ratio or math.ceil((eh - sh) / oh)
        gw = ratio or math.ceil((ew - sw) / ow)
        for ph, pw in itertools.product(range(oh), range(ow)):
            acc = []
            for iy, ix in itertools.product(range(gh), range(gw)):
                yy = sh + ph * bin_h + (iy + 0.5) * bin_h / gh
                xx = sw + pw * bin_w + (ix + 0.5) * bin_w / gw
                if yy < -1 or yy > h or xx < -1 or xx > w:
                    acc.append(np.zeros(c))
                    continue
                yy, xx = max(yy, 0), max(xx, 0)
                y0, x0 = int(yy), int(xx)
                y1 = x1 = None
                if y0 >= h - 1:
                    y0 = y1 = h - 1
                    yy = y0
                else:
                    y1 = y0 + 1
                if x0 >= w - 1:
                    x0 = x1 = w - 1
                    xx = x0
                else:
                    x1 = x0 + 1
                ly, lx = yy - y0, xx - x0
                img = x[batch[r]].astype(np.float64)
                acc.append((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1] +
                           ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])
            out[r, :, ph, pw] = np.mean(acc, axis=0) if mode == "avg" else np.max(acc, axis=0)
    return out


@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_onnx_roialign(run, rng, ratio):
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    rois = np.array([[0.5, 0.3, 5.2, 4.9], [1.0, 1.0, 3.0, 6.5], [-0.5, 2.0, 7.5, 3.0]], dtype=np.float32)
    batch = np.array([1, 0, 1], np.uint32)
    p = params(sx=1.0, sy=1.0, mn=ratio or 1, mx=ratio or 2**32 - 1)
    (y,) = run(lambda a, r, b: dml.roi_align(a, r, b, out_of_bounds_input_value=0.0, output_height=3, output_width=2,
                                             **roi_kwargs(p)), x, rois, batch)
    np.testing.assert_allclose(y, onnx_roi_align(x, rois, batch, 3, 2, 1.0, ratio, "avg"), rtol=1e-5, atol=1e-5)


ROI_MODES = [
    params(),
    params(reduction=RF.MAX),
    params(mode=IM.NEAREST_NEIGHBOR),
    params(reduction=RF.MAX, mode=IM.NEAREST_NEIGHBOR, mn=2, mx=3),
    params(sx=0.5, sy=0.25, in_off=0.0, out_off=0.0, mn=2, mx=2),
    params(align=True, mn=1, mx=3),
    params(reduction=RF.MAX, align=True, sx=2.0, mn=3, mx=3),
]


@pytest.mark.parametrize("p", ROI_MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_roi_align(run, rng, directml_differs, p, dtype):
    directml_differs(ROI_ALIGN_DIFFERS)
    x = rng.standard_normal((2, 3, 6, 8)).astype(dtype)
    # Inside, partly outside, empty, inverted (mirrored) and far-outside regions.
    rois = np.array([[1.0, 0.5, 6.5, 4.5], [-2.0, 3.0, 4.0, 9.0], [3.0, 3.0, 3.0, 3.0], [6.0, 5.0, 1.0, 0.5],
                     [20.0, 20.0, 30.0, 24.0]], dtype=dtype)
    batch = np.array([0, 1, 1, 0, 1], np.uint64)
    (y,) = run(lambda a, r, b: dml.roi_align(a, r, b, out_of_bounds_input_value=-3.0, output_height=3,
                                             output_width=4, **roi_kwargs(p)), x, rois, batch)
    assert y.dtype == dtype and y.shape == (5, 3, 3, 4)
    ref = np_roi_align(x, rois, batch, p, -3.0, 3, 4)
    np.testing.assert_allclose(y.astype(np.float64), ref, **(tol(dtype) if dtype == np.float16 else dict(rtol=1e-5, atol=1e-5)))


def test_roi_align_strided_operands_and_bad_batch_index(device, rng, directml_differs):
    directml_differs(ROI_ALIGN_DIFFERS)
    g = dml.Graph(device)
    x = g.input([1, 2, 5, 5])
    rois_big = g.input([1, 2, 8], name="rois")            # 4-D-style roi [1, num_rois, 4] read with a stride
    roi_view = dml.reinterpret(rois_big, [1, 2, 4], [16, 8, 2])
    batch = g.input([1, 1, 1, 2], dml.TensorDataType.UINT32, name="batch")
    p = params(mn=2, mx=2)
    y = dml.roi_align(dml.broadcast(dml.reinterpret(x, [1, 1, 5, 5], None), [1, 2, 5, 5]), roi_view, batch,
                      out_of_bounds_input_value=9.0, output_height=2, output_width=2, **roi_kwargs(p))
    a = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    r = np.zeros((1, 2, 8), np.float32)
    r[0, :, ::2] = [[0.5, 1.0, 4.0, 3.5], [1.0, 0.0, 2.0, 5.0]]
    (out,) = g.compile([y])({x: a, "rois": r, "batch": np.array([[[[0, 5]]]], np.uint32)})
    img = np.broadcast_to(a[:, :1], (1, 2, 5, 5))
    ref = np_roi_align(img, r[0, :1, ::2], np.array([0]), p, 9.0, 2, 2)
    np.testing.assert_allclose(out[:1], ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[1], 9.0)  # batch index 5 of 1: no input is read, out-of-bounds value


def np_roi_align_grad(x, dy, rois, batch, p, n, h, w):
    """Output and ROI gradients: each sample's share of dy flows through the interpolation weights, and through the
    bilinear image gradient times d coordinate / d corner."""
    c = dy.shape[1]
    dx = np.zeros((n, c, h, w))
    droi = np.zeros((len(rois), 4))
    oh, ow = dy.shape[2:]
    for r, (x1, y1, x2, y2) in enumerate(rois.astype(np.float64)):
        sy, ys, dys = axis_coordinates(y1, y2, p["sy"], oh, p)
        sx, xs, dxs = axis_coordinates(x1, x2, p["sx"], ow, p)
        img = x[batch[r]].astype(np.float64) if x is not None else None
        for ch, oy, ox in itertools.product(range(c), range(oh), range(ow)):
            samples = []
            for iy in range(oy * sy, (oy + 1) * sy):
                for ix in range(ox * sx, (ox + 1) * sx):
                    ty, tx = taps(ys[iy], h, p["mode"]), taps(xs[ix], w, p["mode"])
                    if ty[0] and tx[0]:
                        samples.append((iy, ix, ty, tx))
            g = float(dy[r, ch, oy, ox])
            if p["reduction"] == RF.MAX:
                def value(s):
                    (_, y0, y1_, wy, _), (_, x0, x1_, wx, _) = s[2], s[3]
                    return ((1 - wy) * ((1 - wx) * img[ch, y0, x0] + wx * img[ch, y0, x1_]) +
                            wy * ((1 - wx) * img[ch, y1_, x0] + wx * img[ch, y1_, x1_]))
                chosen = [(max(samples, key=value), g)] if samples else []  # max() keeps the first maximum
            else:
                chosen = [(s, g / (sy * sx)) for s in samples]
            for (iy, ix, ty, tx), wgt in chosen:
                (_, y0, y1_, wy, _), (_, x0, x1_, wx, _) = ty, tx
                for yy, wyy in ((y0, 1 - wy), (y1_, wy)):
                    for xx, wxx in ((x0, 1 - wx), (x1_, wx)):
                        dx[batch[r], ch, yy, xx] += wgt * wyy * wxx
                if img is not None:
                    _, ly0, ly1, lwy, ymoves = taps(ys[iy], h, IM.LINEAR)
                    _, lx0, lx1, lwx, xmoves = taps(xs[ix], w, IM.LINEAR)
                    tl, tr, bl, br = img[ch, ly0, lx0], img[ch, ly0, lx1], img[ch, ly1, lx0], img[ch, ly1, lx1]
                    gx = ((1 - lwy) * (tr - tl) + lwy * (br - bl)) if xmoves else 0.0
                    gy = ((1 - lwx) * (bl - tl) + lwx * (br - tr)) if ymoves else 0.0
                    droi[r] += wgt * np.array([gx * dxs[ix], gy * dys[iy], gx * (p["sx"] - dxs[ix]),
                                               gy * (p["sy"] - dys[iy])])
    return dx, droi


GRAD_MODES = [params(mn=2, mx=2), params(reduction=RF.MAX, mn=2, mx=2), params(mode=IM.NEAREST_NEIGHBOR),
              params(align=True, sx=0.5, mn=2, mx=3), params(in_off=0.0, out_off=0.0, reduction=RF.MAX, mn=1, mx=4)]


@pytest.mark.parametrize("p", GRAD_MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_roi_align_grad(run, rng, p, dtype, directml_differs):
    directml_differs(ROI_ALIGN_GRAD_FAILS)
    x = rng.standard_normal((2, 2, 5, 6)).astype(dtype)
    rois = np.array([[0.7, 0.4, 4.3, 3.9], [1.2, 0.9, 3.1, 4.2], [5.5, 4.0, 1.5, 0.6]], dtype=dtype)
    batch = np.array([1, 0, 1], np.uint32)
    dy = rng.standard_normal((3, 2, 2, 3)).astype(dtype)
    dx, droi = run(lambda a, g, r, b: dml.roi_align_grad(a, g, r, b, batch_size=2, image_height=5, image_width=6,
                                                         compute_output_gradient=True, compute_output_roi_gradient=True,
                                                         **roi_kwargs(p)), x, dy, rois, batch)
    ref_dx, ref_droi = np_roi_align_grad(x, dy, rois, batch, p, 2, 5, 6)
    t = dict(rtol=3e-2, atol=3e-2) if dtype == np.float16 else dict(rtol=1e-4, atol=1e-5)
    assert dx.dtype == dtype and dx.shape == (2, 2, 5, 6) and droi.shape == rois.shape
    np.testing.assert_allclose(dx.astype(np.float64), ref_dx, **t)
    np.testing.assert_allclose(droi.astype(np.float64), ref_droi, **t)


@pytest.mark.parametrize("p", [params(mn=2, mx=2), params(reduction=RF.MAX, mn=2, mx=2), params(align=True, mn=2, mx=2)])
def test_roi_align_grad_is_the_derivative_of_roi_align(run, rng, p, directml_differs):
    directml_differs(ROI_ALIGN_GRAD_FAILS)
    # Linear interpolation: the gradients are the exact derivatives of roi_align (finite differences of the reference).
    x = rng.standard_normal((1, 2, 5, 6))
    rois = np.array([[0.7, 0.4, 4.3, 3.9], [1.2, 0.9, 3.1, 4.2]])
    batch = np.array([0, 0], np.uint32)
    dy = rng.standard_normal((2, 2, 2, 3))
    f = lambda xx, rr: (np_roi_align(xx, rr, batch, p, 0.0, 2, 3) * dy).sum()
    eps = 1e-6
    num_dx = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        num_dx[i] = (f(x + d, rois) - f(x - d, rois)) / (2 * eps)
    num_droi = np.zeros_like(rois)
    for i in np.ndindex(*rois.shape):
        d = np.zeros_like(rois)
        d[i] = eps
        num_droi[i] = (f(x, rois + d) - f(x, rois - d)) / (2 * eps)
    dx, droi = run(lambda a, g, r, b: dml.roi_align_grad(a, g, r, b, batch_size=1, image_height=5, image_width=6,
                                                         compute_output_gradient=True, compute_output_roi_gradient=True,
                                                         **roi_kwargs(p)),
                   x.astype(np.float32), dy.astype(np.float32), rois.astype(np.float32), batch)
    np.testing.assert_allclose(dx, num_dx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(droi, num_droi, rtol=1e-3, atol=1e-4)


def test_roi_align_grad_optional_outputs(device, rng, directml_differs):
    directml_differs(ROI_ALIGN_GRAD_FAILS)
    g = dml.Graph(device)
    dy = g.input([2, 1, 2, 2])
    rois = g.input([2, 4], name="rois")
    batch = g.input([2], dml.TensorDataType.UINT32, name="batch")
    x = g.input([1, 1, 4, 4], name="x")
    p = params(mn=1, mx=1)
    only_dx = dml.roi_align_grad(None, dy, rois, batch, batch_size=1, image_height=4, image_width=4,
                                 compute_output_gradient=True, compute_output_roi_gradient=False, **roi_kwargs(p))
    only_roi = dml.roi_align_grad(x, dy, rois, batch, batch_size=1, image_height=4, image_width=4,
                                  compute_output_gradient=False, compute_output_roi_gradient=True, **roi_kwargs(p))
    assert isinstance(only_dx, dml.RoiAlignGradOutputs)
    assert only_dx.output_roi_gradient is None and only_dx.output_gradient.shape == (1, 1, 4, 4)
    assert only_roi.output_gradient is None and only_roi.output_roi_gradient.shape == (2, 4)
    a = rng.standard_normal((1, 1, 4, 4)).astype(np.float32)
    d = rng.standard_normal((2, 1, 2, 2)).astype(np.float32)
    r = np.array([[0.5, 0.5, 3.0, 2.5], [1.0, 0.2, 2.2, 3.3]], np.float32)
    b = np.array([0, 7], np.uint32)  # batch index 7 of 1: that region contributes nothing
    out_dx, out_roi = g.compile([only_dx.output_gradient, only_roi.output_roi_gradient])(
        {dy: d, "rois": r, "batch": b, "x": a})
    ref_dx, ref_roi = np_roi_align_grad(a, d[:1], r[:1], b[:1], p, 1, 4, 4)
    np.testing.assert_allclose(out_dx, ref_dx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out_roi[0], ref_roi[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(out_roi[1], 0)


def test_roi_align_errors(device):
    g = dml.Graph(device)
    x, rois = g.input([1, 2, 4, 4]), g.input([3, 4])
    batch = g.input([3], dml.TensorDataType.UINT32)
    kw = roi_kwargs(params())
    fwd = dict(out_of_bounds_input_value=0.0, output_height=2, output_width=2)
    with pytest.raises(ValueError, match="^[^:]+: reduction_function must be AVERAGE or MAX"):
        dml.roi_align(x, rois, batch, **fwd, **{**kw, "reduction_function": RF.SUM})
    with pytest.raises(ValueError, match=r"roi must be \[num_rois, 4\]"):
        dml.roi_align(x, g.input([3, 5]), batch, **fwd, **kw)
    with pytest.raises(ValueError, match=r"roi must be \[num_rois, 4\]"):
        dml.roi_align(x, g.input([2, 3, 4]), batch, **fwd, **kw)
    with pytest.raises(ValueError, match="roi has type FLOAT16"):
        dml.roi_align(x, g.input([3, 4], np.float16), batch, **fwd, **kw)
    with pytest.raises(ValueError, match=r"batch_indices must be \[3\]"):
        dml.roi_align(x, rois, g.input([2], dml.TensorDataType.UINT32), **fwd, **kw)
    with pytest.raises(ValueError, match="batch_indices has type INT32"):
        dml.roi_align(x, rois, g.input([3], np.int32), **fwd, **kw)
    with pytest.raises(ValueError, match="minimum_samples_per_output"):
        dml.roi_align(x, rois, batch, **fwd, **{**kw, "minimum_samples_per_output": 0})
    with pytest.raises(ValueError, match="minimum_samples_per_output"):
        dml.roi_align(x, rois, batch, **fwd, **{**kw, "minimum_samples_per_output": 3, "maximum_samples_per_output": 2})
    with pytest.raises(ValueError, match="output_height and output_width must be positive"):
        dml.roi_align(x, rois, batch, **{**fwd, "output_width": 0}, **kw)
    with pytest.raises(ValueError, match="input must have 4 dimensions"):
        dml.roi_align(g.input([1, 1, 2, 4, 4]), rois, batch, **fwd, **kw)
    dy = g.input([3, 2, 2, 2])
    grad = dict(batch_size=1, image_height=4, image_width=4)
    with pytest.raises(ValueError, match="^[^:]+: compute_output_gradient or compute_output_roi_gradient"):
        dml.roi_align_grad(x, dy, rois, batch, **grad, compute_output_gradient=False, compute_output_roi_gradient=False, **kw)
    with pytest.raises(ValueError, match="input .* is needed for the roi gradient and for MAX"):
        dml.roi_align_grad(None, dy, rois, batch, **grad, compute_output_gradient=True, compute_output_roi_gradient=True, **kw)
    with pytest.raises(ValueError, match="input .* is needed"):
        dml.roi_align_grad(None, dy, rois, batch, **grad, compute_output_gradient=True, compute_output_roi_gradient=False,
                           **{**kw, "reduction_function": RF.MAX})
    with pytest.raises(ValueError, match=r"input must be FLOAT32\[2, 2, 4, 4\]"):
        dml.roi_align_grad(x, dy, rois, batch, **{**grad, "batch_size": 2}, compute_output_gradient=True,
                           compute_output_roi_gradient=False, **kw)
    with pytest.raises(ValueError, match="one row per roi"):
        dml.roi_align_grad(x, g.input([2, 2, 2, 2]), rois, batch, **grad, compute_output_gradient=True,
                           compute_output_roi_gradient=False, **kw)
    with pytest.raises(ValueError, match="batch_indices has type UINT64"):
        dml.roi_align_grad(x, dy, rois, g.input([3], np.uint64), **grad, compute_output_gradient=True,
                           compute_output_roi_gradient=False, **kw)
