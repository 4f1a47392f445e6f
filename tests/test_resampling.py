"""Resampling operators (upsample_2d, resample, resample_grad, value_scale_2d) against NumPy references built
from DirectML's coordinate mapping as dense per-dimension weight matrices, plus the docs' examples, strided and
broadcast inputs, and the builders' error paths."""

import numpy as np
import pytest

import directml as dml

NN, LINEAR = dml.InterpolationMode.NEAREST_NEIGHBOR, dml.InterpolationMode.LINEAR
UP, DOWN = dml.AxisDirection.INCREASING, dml.AxisDirection.DECREASING
TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float16: dict(rtol=1e-2, atol=1e-2)}
rng = np.random.default_rng(99)


def run(device, build, *arrays):
    g = dml.Graph(device)
    xs = [g.input(list(np.shape(a)), np.asarray(a).dtype) for a in arrays]
    out = build(*xs)
    return g.compile([out])(dict(zip(xs, arrays)))[0]


def weights(n_in, n_out, mode, rounding, scale, in_off, out_off):
    """RESAMPLE2's map of one dimension as an n_out x n_in matrix: input coordinate (o - out_off) / scale - in_off
    in float32 (DirectML's arithmetic), clamped to the edges, rounded down (DECREASING) or up (INCREASING) for nearest
    neighbour, or split between its two neighbours (linear)."""
    w = np.zeros((n_out, n_in))
    f32 = np.float32
    for o in range(n_out):
        x = np.float64((f32(o) - f32(out_off)) / f32(scale) - f32(in_off))
        if mode == NN:
            i = np.floor(x) if rounding == DOWN else np.ceil(x)
            w[o, int(np.clip(i, 0, n_in - 1))] = 1
        else:
            x0 = np.floor(x)
            f = x - x0
            w[o, int(np.clip(x0, 0, n_in - 1))] += 1 - f
            w[o, int(np.clip(x0 + 1, 0, n_in - 1))] += f
    return w


def apply(x, mats):
    """Each matrix applied along its dimension."""
    y = x.astype(np.float64)
    for d, m in enumerate(mats):
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, d, 0), axes=1), 0, d)
    return y


def np_resample(x, out_sizes, mode, rounding, scales, in_offs, out_offs):
    return apply(x, [weights(n, m, mode, rounding, s, a, b)
                     for n, m, s, a, b in zip(x.shape, out_sizes, scales, in_offs, out_offs)])


def np_resample_grad(dy, out_sizes, mode, rounding, scales, in_offs, out_offs):
    return apply(dy, [weights(n, m, mode, rounding, s, a, b).T
                      for n, m, s, a, b in zip(out_sizes, dy.shape, scales, in_offs, out_offs)])


# --- resample -------------------------------------------------------------------------------------------------

CASES = [  # input sizes, output sizes, scales, input offsets, output offsets
    ((7,), (12,), [1.7], [0.5], [-0.5]),
    ((3, 5), (2, 11), [0.6, 2.3], [0.2, 0.0], [-0.75, 0.3]),
    ((2, 4, 3), (3, 4, 8), [1.5, 1.0, 2.5], [0.5, 0.5, -1.25], [-0.5, -0.5, 2.0]),
    ((2, 3, 5, 4), (1, 3, 3, 9), [0.5, 1.0, 0.55, 2.3], [0.5, 0.5, 0.5, 0.5], [-0.5, -0.5, -0.5, -0.5]),
]
# No case maps an output to an input coordinate that is an integer only in exact arithmetic (scale 2.2 did, 5.5 / 2.2
# - 0.5): float32 division and a multiplication by the reciprocal land on either side of it, and DirectML on the H200's
# driver rounded such a coordinate the other way from lavapipe.


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode, rounding", [(NN, DOWN), (NN, UP), (LINEAR, DOWN)])
@pytest.mark.parametrize("case", CASES, ids=[f"{len(c[0])}d" for c in CASES])
def test_resample(device, directml_differs, case, mode, rounding, dtype):
    if mode == LINEAR and len(case[0]) == 3:
        directml_differs("LINEAR with output offset 2 and input offset -1.25 weighs the wrong pair of inputs")
    in_sizes, out_sizes, scales, in_offs, out_offs = case
    x = rng.standard_normal(in_sizes).astype(dtype)
    y = run(device, lambda a: dml.resample(a, output_sizes=list(out_sizes), mode=mode,
                                   rounding_direction=rounding, scales=scales, input_pixel_offsets=in_offs,
                                   output_pixel_offsets=out_offs), x)
    assert y.shape == out_sizes and y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y, np_resample(x, out_sizes, mode, rounding, scales, in_offs, out_offs), **TOL[dtype])


def test_resample_nearest_rounds_down_or_up_not_to_the_nearest(device):
    """RoundingDirection DECREASING is floor and INCREASING ceil (DML_RESAMPLE2_OPERATOR_DESC; DirectML on lavapipe
    answers the same), not round-half-down / round-half-up: input coordinates o + 0.25 and o + 0.75 alike give o
    rounding down and o + 1 rounding up."""
    x = np.arange(5, dtype=np.float32) * 10
    for frac in (0.25, 0.75):
        params = dict(output_sizes=[4], mode=NN, scales=[1.0], input_pixel_offsets=[0.0], output_pixel_offsets=[-frac])
        down = run(device, lambda a: dml.resample(a, rounding_direction=DOWN, **params), x)
        up = run(device, lambda a: dml.resample(a, rounding_direction=UP, **params), x)
        np.testing.assert_array_equal(down, [0, 10, 20, 30])
        np.testing.assert_array_equal(up, [10, 20, 30, 40])


@pytest.mark.parametrize("mode", [NN, LINEAR])
def test_resample_defaults(device, mode):
    """Empty lists: scales output/input, input offsets 0.5, output offsets -0.5; rounding INCREASING (DirectMLX's
    default)."""
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    out = (2, 3, 7, 3)
    y = run(device, lambda a: dml.resample(a, output_sizes=list(out), mode=mode), x)
    scales = [o / i for o, i in zip(out, x.shape)]
    np.testing.assert_allclose(y, np_resample(x, out, mode, UP, scales, [0.5] * 4, [-0.5] * 4), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", [NN, LINEAR])
def test_resample_grad_defaults(device, directml_differs, mode):
    """The same defaults, but rounding DECREASING: DirectMLX's ResampleGrad takes no rounding and builds
    RESAMPLE_GRAD, which rounds down (DirectML's docs' example, test_resample_and_grad_doc_example)."""
    directml_differs(RESAMPLE_GRAD_DIFFERS)
    dy = rng.standard_normal((2, 3, 7, 3)).astype(np.float32)
    in_sizes = (2, 3, 4, 5)
    dx = run(device, lambda a: dml.resample_grad(a, output_sizes=list(in_sizes), mode=mode), dy)
    scales = [o / i for o, i in zip(dy.shape, in_sizes)]
    np.testing.assert_allclose(dx, np_resample_grad(dy, in_sizes, mode, DOWN, scales, [0.5] * 4, [-0.5] * 4),
                               rtol=1e-5, atol=1e-5)


def stretched_weights(n_in, n_out, scale, in_off, out_off):
    """Antialiased LINEAR's map of a dimension scaled down: about the input coordinate x, the triangle 1 - |i - x| *
    scale (1 / scale wide each side), normalized to sum 1, each i past the edges read at the edge."""
    w = np.zeros((n_out, n_in))
    f32 = np.float32
    for o in range(n_out):
        x = float(np.clip((f32(o) - f32(out_off)) / f32(scale) - f32(in_off), -1, n_in))
        taps = {i: 1 - abs(i - x) * scale for i in range(int(np.floor(x - 1 / scale)), int(np.ceil(x + 1 / scale)) + 1)}
        total = sum(v for v in taps.values() if v > 0)
        for i, v in taps.items():
            if v > 0:
                w[o, int(np.clip(i, 0, n_in - 1))] += v / total
    return w


ANTIALIASED_CASES = [  # input sizes, output sizes, scales (empty: output / input), input offsets, output offsets
    ((30,), (7,), [], [], []),  # a filter 4.3 inputs wide each side, over both edges
    ((2, 17, 23), (2, 5, 9), [], [], []),
    ((1, 8, 20), (1, 12, 7), [], [], []),  # scaled up along one dimension (plain LINEAR there), down along the other
    ((3, 40), (3, 6), [1.0, 0.2], [0.5, 1.5], [-0.5, 0.25]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("case", ANTIALIASED_CASES, ids=[f"{c[0]}-{c[1]}" for c in ANTIALIASED_CASES])
def test_resample_antialiased_linear_stretches_the_filter(device, case, dtype):
    in_sizes, out_sizes, scales, in_offs, out_offs = case
    x = rng.standard_normal(in_sizes).astype(dtype)
    y = run(device, lambda a: dml.resample(a, output_sizes=list(out_sizes), mode=LINEAR, scales=scales,
                                           input_pixel_offsets=in_offs, output_pixel_offsets=out_offs,
                                           antialiased=True), x)
    scales = scales or [o / i for o, i in zip(out_sizes, in_sizes)]
    in_offs, out_offs = in_offs or [0.5] * len(in_sizes), out_offs or [-0.5] * len(in_sizes)
    mats = [stretched_weights(n, m, s, a, b) if s < 1 else weights(n, m, LINEAR, UP, s, a, b)
            for n, m, s, a, b in zip(in_sizes, out_sizes, scales, in_offs, out_offs)]
    np.testing.assert_allclose(y, apply(x, mats), **TOL[dtype])


def test_resample_antialiased_matches_onnx_runtime(device):
    # RESAMPLE3's Antialiased as ONNX Resize's antialias (half-pixel centres, DirectML's default offsets)
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    TensorProto, helper = onnx.TensorProto, onnx.helper

    x = rng.standard_normal((2, 3, 19, 26)).astype(np.float32)
    sizes = [2, 3, 6, 31]
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear", antialias=1,
                            coordinate_transformation_mode="half_pixel")
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [helper.make_tensor("sizes", TensorProto.INT64, [4], sizes)])
    # IR version 10 (opset 18's): a newer onnx writes one that an older onnxruntime refuses
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    y = run(device, lambda a: dml.resample(a, output_sizes=sizes, mode=LINEAR, antialiased=True), x)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_resample_antialiased_leaves_nearest_neighbour_alone(device):
    x = rng.standard_normal((3, 29)).astype(np.float32)
    params = dict(output_sizes=[3, 8], mode=NN)
    plain = run(device, lambda a: dml.resample(a, **params), x)
    np.testing.assert_array_equal(run(device, lambda a: dml.resample(a, antialiased=True, **params), x), plain)


def test_resample_linear_half_pixel_matches_known_values(device):
    # Bilinear upsampling by 2 over pixel centres: [0, 1] -> [0, 0.25, 0.75, 1] (the edges clamp).
    y = run(device, lambda a: dml.resample(a, output_sizes=[4], mode=LINEAR), np.array([0, 1], np.float32))
    np.testing.assert_allclose(y, [0, 0.25, 0.75, 1])


def test_resample_and_grad_doc_example(device):
    """DirectML's docs' example (RESAMPLE_GRAD's, repeated for RESAMPLE2 and RESAMPLE_GRAD1): nearest rounding down."""
    x = np.array([[1, 2], [3, 4]], np.float32)
    params = dict(output_sizes=[1, 3], mode=NN, scales=[0.5, 1.5])
    np.testing.assert_array_equal(run(device, lambda a: dml.resample(a, rounding_direction=DOWN, **params), x),
                                  [[1, 1, 2]])
    np.testing.assert_array_equal(run(device, lambda a: dml.resample(a, **params), x), [[3, 4, 4]])  # rounding up
    dy = np.array([[4, 5, 6]], np.float32)
    dx = run(device, lambda a: dml.resample_grad(a, output_sizes=[2, 2], mode=NN, scales=[0.5, 1.5]), dy)
    np.testing.assert_array_equal(dx, [[9, 6], [0, 0]])


def test_resample_clamps_far_outside_coordinates(device):
    x = np.array([1, 2, 3], np.float32)
    far = run(device, lambda a: dml.resample(a, output_sizes=[4], mode=LINEAR, scales=[1e-30],
                                     input_pixel_offsets=[0], output_pixel_offsets=[0]), x)
    np.testing.assert_array_equal(far, [1, 3, 3, 3])  # output 0 maps to input 0, the rest far beyond the end
    neg = run(device, lambda a: dml.resample(a, output_sizes=[2], mode=NN, input_pixel_offsets=[1e30]), x)
    np.testing.assert_array_equal(neg, [1, 1])


def test_resample_does_not_weigh_unused_neighbours(device, directml_differs):
    directml_differs("LINEAR weighs both neighbours, so 0 * inf and NaN reach every output")
    # Identity mapping: a NaN or inf beside an element must not leak into it through a zero weight.
    x = np.array([1, np.inf, 3, np.nan], np.float32)
    y = run(device, lambda a: dml.resample(a, output_sizes=[4], mode=LINEAR), x)
    np.testing.assert_array_equal(y, x)


def test_resample_strided_and_broadcast_inputs(device):
    g = dml.Graph(device)
    base = g.input([24])
    v = dml.reinterpret(base, [4, 3], [1, 4])
    s = g.input([1, 3])
    y1 = dml.resample(v, output_sizes=[6, 5], mode=LINEAR)
    y2 = dml.resample(dml.broadcast(s, [2, 3]), output_sizes=[3, 6], mode=NN, rounding_direction=UP)
    b = rng.standard_normal(24).astype(np.float32)
    r = rng.standard_normal((1, 3)).astype(np.float32)
    o1, o2 = g.compile([y1, y2])({base: b, s: r})
    ref1 = b[:12].reshape(3, 4).T
    np.testing.assert_allclose(o1, np_resample(ref1, (6, 5), LINEAR, DOWN, [1.5, 5 / 3], [0.5] * 2, [-0.5] * 2),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o2, np_resample(np.broadcast_to(r, (2, 3)), (3, 6), NN, UP, [1.5, 2], [0.5] * 2,
                                               [-0.5] * 2))


def test_resample_errors(device):
    g = dml.Graph(device)
    x = g.input([2, 3])
    ok = dict(output_sizes=[4, 6], mode=LINEAR)
    with pytest.raises(ValueError, match="^[^:]+: output_sizes needs one value per dimension \\(2\\)"):
        dml.resample(x, **{**ok, "output_sizes": [4]})
    with pytest.raises(ValueError, match="^[^:]+: output_sizes must be positive"):
        dml.resample(x, **{**ok, "output_sizes": [4, 0]})
    with pytest.raises(ValueError, match="^[^:]+: scales needs one value per dimension"):
        dml.resample(x, **ok, scales=[2.0])
    for bad in (0.0, -1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="^[^:]+: scales must be positive and finite"):
            dml.resample(x, **ok, scales=[2.0, bad])
    with pytest.raises(ValueError, match="^[^:]+: input_pixel_offsets must be finite"):
        dml.resample(x, **ok, input_pixel_offsets=[0.5, float("nan")])
    with pytest.raises(ValueError, match="^[^:]+: output_pixel_offsets needs one value per dimension"):
        dml.resample(x, **ok, output_pixel_offsets=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32; allowed: FLOAT32, FLOAT16"):
        dml.resample(g.input([2, 3], np.int32), **ok)
    with pytest.raises(ValueError, match="^[^:]+: input must have 1 to 4 dimensions"):
        dml.resample(g.input([1, 1, 1, 2, 3]), output_sizes=[1, 1, 1, 4, 6], mode=NN)


# --- resample_grad --------------------------------------------------------------------------------------------

RESAMPLE_GRAD_DIFFERS = "RESAMPLE_GRAD1 is not the adjoint of RESAMPLE2 at scales other than 1 (its docs say it is)"

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("mode, rounding", [(NN, DOWN), (NN, UP), (LINEAR, DOWN)])
@pytest.mark.parametrize("case", CASES, ids=[f"{len(c[0])}d" for c in CASES])
def test_resample_grad(device, directml_differs, case, mode, rounding, dtype):
    directml_differs(RESAMPLE_GRAD_DIFFERS)
    in_sizes, out_sizes, scales, in_offs, out_offs = case
    dy = rng.standard_normal(out_sizes).astype(dtype)
    dx = run(device, lambda a: dml.resample_grad(a, output_sizes=list(in_sizes), mode=mode,
                                         rounding_direction=rounding, scales=scales, input_pixel_offsets=in_offs,
                                         output_pixel_offsets=out_offs), dy)
    assert dx.shape == in_sizes
    np.testing.assert_allclose(dx, np_resample_grad(dy, in_sizes, mode, rounding, scales, in_offs, out_offs),
                               **TOL[dtype])


def test_resample_grad_is_the_adjoint_with_default_scales(device, directml_differs):
    """<resample(x), g> == <x, resample_grad(g)>, the grad's default scales (its input over its output sizes)
    being the forward's."""
    directml_differs(RESAMPLE_GRAD_DIFFERS)
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    dy = rng.standard_normal((5, 2, 8)).astype(np.float32)
    for mode, rounding in ((NN, UP), (NN, DOWN), (LINEAR, DOWN)):
        y = run(device, lambda a: dml.resample(a, output_sizes=[5, 2, 8], mode=mode, rounding_direction=rounding), x)
        dx = run(device, lambda a: dml.resample_grad(a, output_sizes=[3, 4, 5], mode=mode, rounding_direction=rounding),
                 dy)
        np.testing.assert_allclose(np.vdot(y, dy), np.vdot(x, dx), rtol=1e-4)


def test_resample_grad_errors(device):
    g = dml.Graph(device)
    dy = g.input([4, 6])
    with pytest.raises(ValueError, match="^[^:]+: output_sizes needs one value per dimension"):
        dml.resample_grad(dy, output_sizes=[2, 3, 1], mode=NN)
    with pytest.raises(ValueError, match="^[^:]+: input_gradient has type FLOAT64"):
        dml.resample_grad(g.input([4, 6], np.float64), output_sizes=[2, 3], mode=NN)


# --- upsample_2d ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 3, 2, 3)])
def test_upsample_2d_nearest_repeats(device, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    y = run(device, lambda a: dml.upsample_2d(a, scale_size=[3, 2], interpolation_mode=NN), x)
    np.testing.assert_array_equal(y, np.repeat(np.repeat(x, 3, axis=-2), 2, axis=-1))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 2, 3, 2, 3)])
def test_upsample_2d_bilinear_over_pixel_centres(device, shape, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    y = run(device, lambda a: dml.upsample_2d(a, scale_size=[2, 3], interpolation_mode=LINEAR), x)
    rank = len(shape)
    scales = [1.0] * (rank - 2) + [2.0, 3.0]
    out = shape[:-2] + (shape[-2] * 2, shape[-1] * 3)
    want = np_resample(x, out, LINEAR, DOWN, scales, [0.5] * rank, [-0.5] * rank)
    np.testing.assert_allclose(y, want, **TOL[dtype])


def test_upsample_2d_strided_input(device):
    g = dml.Graph(device)
    base = g.input([1, 2, 2, 3], np.float16)
    nhwc = dml.reinterpret(base, [1, 3, 2, 2], [12, 1, 6, 3])
    y = dml.upsample_2d(nhwc, scale_size=[2, 1], interpolation_mode=NN)
    b = rng.standard_normal((1, 2, 2, 3)).astype(np.float16)
    out, = g.compile([y])({base: b})
    np.testing.assert_array_equal(out, np.repeat(b.transpose(0, 3, 1, 2), 2, axis=2))


def test_upsample_2d_errors(device):
    g = dml.Graph(device)
    x = g.input([1, 2, 3, 4])
    with pytest.raises(ValueError, match="^[^:]+: scale_size is \\(height, width\\), got 3 values"):
        dml.upsample_2d(x, scale_size=[1, 2, 3], interpolation_mode=NN)
    with pytest.raises(ValueError, match="^[^:]+: scale_size must be positive"):
        dml.upsample_2d(x, scale_size=[0, 2], interpolation_mode=NN)
    with pytest.raises(ValueError, match="^[^:]+: input must have 4 to 5 dimensions"):
        dml.upsample_2d(g.input([2, 3, 4]), scale_size=[2, 2], interpolation_mode=NN)
    with pytest.raises(ValueError, match="^[^:]+: input has type UINT8"):
        dml.upsample_2d(g.input([1, 2, 3, 4], np.uint8), scale_size=[2, 2], interpolation_mode=NN)
    with pytest.raises(ValueError, match="^[^:]+: the output size .* exceeds 32 bits"):
        dml.upsample_2d(x, scale_size=[2 ** 31, 1], interpolation_mode=NN)


# --- value_scale_2d -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("bias", [[0.25], [1.0, -2.0, 0.5]])
def test_value_scale_2d(device, bias, dtype):
    x = rng.standard_normal((2, len(bias), 3, 5)).astype(dtype)
    y = run(device, lambda a: dml.value_scale_2d(a, scale=1.5, bias=bias), x)
    want = 1.5 * x.astype(np.float64) + np.array(bias).reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y, want, **TOL[dtype])


def test_value_scale_2d_broadcast_input(device):
    g = dml.Graph(device)
    p = g.input([1, 1, 1, 1])
    y = dml.value_scale_2d(dml.broadcast(p, [1, 3, 2, 2]), scale=-2.0, bias=[1, 2, 3])
    out, = g.compile([y])({p: np.array([[[[4.0]]]], np.float32)})
    np.testing.assert_array_equal(out, np.array([-7, -6, -5], np.float32).reshape(1, 3, 1, 1) + np.zeros((1, 3, 2, 2)))


def test_value_scale_2d_errors(device):
    g = dml.Graph(device)
    with pytest.raises(ValueError, match="^[^:]+: bias needs one value per channel, .* 1 or 3"):
        dml.value_scale_2d(g.input([1, 3, 2, 2]), scale=1.0, bias=[1.0, 2.0])
    with pytest.raises(ValueError, match="^[^:]+: bias needs one value per channel, .* has 2"):
        dml.value_scale_2d(g.input([1, 2, 2, 2]), scale=1.0, bias=[1.0, 2.0])
    with pytest.raises(ValueError, match="^[^:]+: input must have 4 dimensions"):
        dml.value_scale_2d(g.input([3, 2, 2]), scale=1.0, bias=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.value_scale_2d(g.input([1, 1, 2, 2], np.int32), scale=1.0, bias=[1.0])


def test_enums_are_scoped():
    assert {m.name for m in dml.InterpolationMode} == {"NEAREST_NEIGHBOR", "LINEAR"}
    assert not hasattr(dml, "NEAREST_NEIGHBOR") and not hasattr(dml, "LINEAR")
    assert [m.name for m in dml.PaddingMode] == ["CONSTANT", "EDGE", "REFLECTION", "SYMMETRIC", "WRAP"]
    assert {m.name for m in dml.DepthSpaceOrder} == {"DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"}
