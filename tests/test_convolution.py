"""convolution (forward and backward, both modes, 1-D to 3-D), convolution_integer and
quantized_linear_convolution against NumPy reference convolutions written here."""

import itertools

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(11)
TOL = {np.float32: 1e-5, np.float16: 2e-2, np.float64: 1e-12}
Mode, Direction = dml.ConvolutionMode, dml.ConvolutionDirection


@pytest.fixture
def graph(device):
    return dml.Graph(device)


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def close(got, want, dtype):
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


def flipped(w):
    return w[(slice(None), slice(None)) + (slice(None, None, -1),) * (w.ndim - 2)]


def conv_forward_ref(x, w, strides, dilations, start, end, groups):
    """Cross-correlation of x [N, C, ...] with w [M, C / groups, k...]."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(start, end)))
    ks = w.shape[2:]
    out = [(xp.shape[2 + i] - ((ks[i] - 1) * dilations[i] + 1)) // strides[i] + 1 for i in range(nd)]
    n, c, m = x.shape[0], x.shape[1], w.shape[0]
    gi, go = c // groups, m // groups
    y = np.zeros((n, m, *out))
    for k in itertools.product(*map(range, ks)):
        window = tuple(slice(k[i] * dilations[i], k[i] * dilations[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                       for i in range(nd))
        xs = xp[(slice(None), slice(None)) + window]
        for g in range(groups):
            taps = w[(slice(g * go, (g + 1) * go), slice(None)) + k]
            y[:, g * go:(g + 1) * go] += np.einsum("nc...,mc->nm...", xs[:, g * gi:(g + 1) * gi], taps)
    return y


def conv_backward_ref(x, w, strides, dilations, start, out_spatial, groups):
    """Transposed convolution of x [N, C, ...] with w [C, M / groups, k...]: each input element scatters its
    products into the output at i * stride + k * dilation - start."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    n, c, go = x.shape[0], x.shape[1], w.shape[1]
    gi, ins, ks = c // groups, x.shape[2:], w.shape[2:]
    full = [(ins[i] - 1) * strides[i] + (ks[i] - 1) * dilations[i] + 1 for i in range(nd)]
    yf = np.zeros((n, go * groups, *full))
    for k in itertools.product(*map(range, ks)):
        window = tuple(slice(k[i] * dilations[i], k[i] * dilations[i] + strides[i] * (ins[i] - 1) + 1, strides[i])
                       for i in range(nd))
        for g in range(groups):
            taps = w[(slice(g * gi, (g + 1) * gi), slice(None)) + k]
            yf[(slice(None), slice(g * go, (g + 1) * go)) + window] += np.einsum(
                "nc...,cm->nm...", x[:, g * gi:(g + 1) * gi], taps)
    y = np.zeros((n, go * groups, *out_spatial))
    src = tuple(slice(min(start[i], full[i]), min(full[i], start[i] + out_spatial[i])) for i in range(nd))
    dst = tuple(slice(0, s.stop - s.start) for s in src)
    y[(slice(None), slice(None)) + dst] = yf[(slice(None), slice(None)) + src]
    return y


def run(graph, outputs, feeds):
    return graph.compile(list(outputs))(feeds)


# --- forward ------------------------------------------------------------------------------------------------------

FORWARD_CASES = [
    # spatial, kernel, strides, dilations, start, end, groups, in_channels, out_channels
    ((9,), (3,), (2,), (1,), (1,), (0,), 1, 3, 4),
    ((7,), (2,), (1,), (3,), (0,), (2,), 3, 3, 6),
    ((6, 5), (3, 2), (1, 2), (1, 1), (1, 0), (1, 1), 1, 2, 3),
    ((7, 6), (3, 3), (2, 1), (2, 1), (2, 1), (0, 1), 2, 4, 6),
    ((5, 5), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 4, 4, 4),  # depthwise
    ((6, 6), (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1, 5, 3),  # pointwise
    ((4, 5, 4), (2, 3, 2), (1, 2, 1), (1, 1, 2), (0, 1, 1), (1, 0, 0), 1, 2, 3),
    ((9, 8), (3, 3), (2, 2), (2, 1), (2, 0), (1, 2), 6, 6, 6),  # depthwise, strided and dilated
    ((40, 37), (5, 5), (1, 1), (1, 1), (2, 2), (2, 2), 1, 64, 3),  # columns in several tiles, split mid-row
]


@pytest.mark.parametrize("case", FORWARD_CASES, ids=lambda c: f"{len(c[0])}d-g{c[6]}")
@pytest.mark.parametrize("mode", [Mode.CROSS_CORRELATION, Mode.CONVOLUTION])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_forward(graph, case, mode, dtype):
    sp, ks, strides, dil, start, end, groups, c, m = case
    x, w, b = rand((2, c, *sp), dtype), rand((m, c // groups, *ks), dtype), rand((1, m) + (1,) * len(sp), dtype)
    ex, ew, eb = graph.input(x.shape, dtype), graph.input(w.shape, dtype), graph.input(b.shape, dtype)
    y = dml.convolution(ex, ew, eb, mode=mode, strides=list(strides), dilations=list(dil), start_padding=list(start),
                        end_padding=list(end), group_count=groups)
    ref_w = flipped(w) if mode == Mode.CONVOLUTION else w
    want = conv_forward_ref(x, ref_w, strides, dil, start, end, groups) + b.astype(np.float64)
    assert y.shape == want.shape and y.dtype == dtype
    (got,) = run(graph, [y], {ex: x, ew: w, eb: b})
    close(got, want, dtype)


def test_forward_defaults_and_output_sizes(graph):
    x, w = rand((1, 2, 5, 6)), rand((3, 2, 2, 3))
    ex, ew = graph.input(x.shape), graph.input(w.shape)
    y = dml.convolution(ex, ew)
    assert y.shape == (1, 3, 4, 4)
    assert dml.convolution(ex, ew, output_sizes=[1, 3, 4, 4]).shape == (1, 3, 4, 4)
    (got,) = run(graph, [y], {ex: x, ew: w})
    close(got, conv_forward_ref(x, w, (1, 1), (1, 1), (0, 0), (0, 0), 1), np.float32)


@pytest.mark.parametrize("fused,ref", [
    (dml.FusedActivation.relu(), lambda v: np.maximum(v, 0)),
    (dml.FusedActivation.leaky_relu(0.2), lambda v: np.where(v >= 0, v, 0.2 * v)),
    (dml.FusedActivation.sigmoid(), lambda v: 1 / (1 + np.exp(-v))),
], ids=["relu", "leaky_relu", "sigmoid"])
@pytest.mark.parametrize("direction", [Direction.FORWARD, Direction.BACKWARD])
def test_fused_activation_after_bias(graph, fused, ref, direction):
    x, w, b = rand((1, 3, 4, 4)), rand((3, 3, 3, 3)), rand((1, 3, 1, 1))
    ex, ew, eb = graph.input(x.shape), graph.input(w.shape), graph.input(b.shape)
    y = dml.convolution(ex, ew, eb, direction=direction, start_padding=[1, 1], end_padding=[1, 1],
                        fused_activation=fused)
    if direction == Direction.FORWARD:
        base = conv_forward_ref(x, w, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    else:
        base = conv_backward_ref(x, w, (1, 1), (1, 1), (1, 1), (4, 4), 1)
    (got,) = run(graph, [y], {ex: x, ew: w, eb: b})
    close(got, ref(base + b), np.float32)


def test_strided_views_nhwc_input_and_strided_filter_and_bias(graph):
    # the input is stored NHWC, the filter is every other filter of a larger buffer, the bias every third value
    n, h, wd, c, m = 2, 5, 4, 3, 2
    x_nhwc = rand((n, h, wd, c))
    w_big = rand((2 * m, c, 3, 3))
    b_big = rand((1, 3 * m, 1, 1))
    ex, ew, eb = graph.input(x_nhwc.shape), graph.input(w_big.shape), graph.input(b_big.shape)
    xv = dml.reinterpret(ex, [n, c, h, wd], [h * wd * c, 1, wd * c, c])
    wv = dml.reinterpret(ew, [m, c, 3, 3], [2 * c * 9, 9, 3, 1])
    bv = dml.reinterpret(eb, [1, m, 1, 1], [0, 3, 0, 0])
    y = dml.convolution(xv, wv, bv, start_padding=[1, 1], end_padding=[1, 1])
    (got,) = run(graph, [y], {ex: x_nhwc, ew: w_big, eb: b_big})
    x = x_nhwc.transpose(0, 3, 1, 2)
    want = conv_forward_ref(x, w_big[::2], (1, 1), (1, 1), (1, 1), (1, 1), 1) + b_big[:, ::3]
    close(got, want, np.float32)


def test_broadcast_input_batch(graph):
    # one image broadcast over a batch of 3 (zero batch stride) gives three equal results
    x, w = rand((1, 2, 4, 4)), rand((2, 2, 2, 2))
    ex, ew = graph.input(x.shape), graph.input(w.shape)
    (got,) = run(graph, [dml.convolution(dml.broadcast(ex, [3, 2, 4, 4]), ew)], {ex: x, ew: w})
    want = conv_forward_ref(x, w, (1, 1), (1, 1), (0, 0), (0, 0), 1)
    for i in range(3):
        close(got[i:i + 1], want, np.float32)


# --- Winograd F(2x2, 3x3), F(4x4, 3x3) and F(2x2, 5x5) ----------------------------------------------------------
# The CPU executor runs float32 3x3 and 5x5 convolutions of stride and dilation 1 (one group) by Winograd where they
# have 16 input channels or more and 49 tiles of 2x2 outputs or more, 5x5 ones 16 output channels and 512 channel
# pairs too, 3x3 ones with both output sides 20 or more and at most 16384 channel pairs by tiles of 4x4 outputs
# (convolution.cpp, winograd_outputs), on AVX2 or AVX-512. The "3x3" and "5x5" cases meet that for 2x2 tiles (their
# 3x3 outputs under 20 a side, a 5x5 filter's padding one more a side) and the "3x3-4x4" ones for 4x4 tiles, with
# odd sizes (a last tile partly outside the output in both directions), tile rows split between blocks, output
# channels that pad a register tile and padding unlike on each side.

WRNG = np.random.default_rng(13)  # its own stream: the tests after these draw what they drew before


def wrand(shape):
    return WRNG.uniform(-1, 1, shape).astype(np.float32)


WINOGRAD_CASES = [
    # spatial, start, end, batch, in_channels, out_channels
    ((27, 29), (1, 1), (1, 1), 2, 32, 19),
    ((40, 45), (1, 0), (0, 2), 1, 33, 17),
    ((31, 30), (0, 2), (2, 1), 2, 40, 20),
    ((30, 33), (0, 0), (0, 0), 1, 48, 64),
    ((13, 13), (1, 1), (1, 1), 2, 16, 32),  # several tile rows a group of 16 tiles
]
# 3x3 ones for 2x2 tiles: under 20 outputs a side (and 49 tiles of 2x2 or more)
WINOGRAD_CASES_2X2 = [
    ((19, 17), (1, 1), (1, 1), 2, 32, 19),
    ((21, 16), (1, 0), (0, 2), 1, 33, 17),
    ((15, 18), (0, 2), (2, 1), 2, 40, 20),
    ((14, 21), (0, 0), (0, 0), 1, 48, 64),
    ((13, 13), (1, 1), (1, 1), 2, 16, 32),
]
# and for 4x4 tiles: sides 20 or more, a last tile 1, 2 or 3 outputs inside in each direction
WINOGRAD_CASES_4X4 = WINOGRAD_CASES[:4] + [((22, 21), (1, 1), (1, 1), 2, 16, 32)]
WINOGRAD_SIZES = [(3, WINOGRAD_CASES_2X2), (3, WINOGRAD_CASES_4X4), (5, WINOGRAD_CASES)]
WINOGRAD_IDS = ["3x3", "3x3-4x4", "5x5"]


def winograd_padding(start, end, k):
    return tuple(p + (k - 3) // 2 for p in start), tuple(p + (k - 3) // 2 for p in end)


@pytest.mark.parametrize("k,case", [(k, c) for k, cases in WINOGRAD_SIZES for c in cases],
                         ids=[f"{i}-" + "x".join(map(str, c[0])) for i, (_, cases) in zip(WINOGRAD_IDS, WINOGRAD_SIZES)
                              for c in cases])
@pytest.mark.parametrize("fused,ref", [
    (None, lambda v: v),
    (dml.FusedActivation.relu(), lambda v: np.maximum(v, 0)),
    (dml.FusedActivation.sigmoid(), lambda v: 1 / (1 + np.exp(-v))),
], ids=["none", "relu", "sigmoid"])
@pytest.mark.parametrize("constant", [True, False], ids=["weights", "bound"])
def test_winograd(graph, k, case, fused, ref, constant):
    sp, start, end, n, c, m = case
    start, end = winograd_padding(start, end, k)
    x, w, b = wrand((n, c, *sp)), wrand((m, c, k, k)), wrand((1, m, 1, 1))
    ex = graph.input(x.shape)
    ew = graph.constant(w) if constant else graph.input(w.shape)
    eb = graph.constant(b) if constant else None  # bias with the weights, none with the filter bound at dispatch
    y = dml.convolution(ex, ew, eb, start_padding=list(start), end_padding=list(end),
                        **({"fused_activation": fused} if fused else {}))
    feeds = {ex: x} if constant else {ex: x, ew: w}
    (got,) = run(graph, [y], feeds)
    want = conv_forward_ref(x, w, (1, 1), (1, 1), start, end, 1) + (b if constant else 0)
    assert got.shape == want.shape
    # the sums' error passes through the activation (a sigmoid's slope at most 1/4): the tolerance from their size
    tol = TOL[np.float32]
    np.testing.assert_allclose(got, ref(want), rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("k,h,wd", [(3, 17, 19), (3, 29, 27), (5, 29, 27)], ids=WINOGRAD_IDS)
@pytest.mark.parametrize("mode", [Mode.CROSS_CORRELATION, Mode.CONVOLUTION])
def test_winograd_strided_input_views(graph, k, h, wd, mode):
    # NHWC storage (columns C apart) and the corner of wider, taller images (rows and planes with gaps)
    n, c, m, p = 2, 32, 16, k // 2
    x_nhwc, x_big = wrand((n, h, wd, c)), wrand((n, c, h + 3, wd + 5))
    w, b = wrand((m, c, k, k)), wrand((1, m, 1, 1))
    ea, ebig = graph.input(x_nhwc.shape), graph.input(x_big.shape)
    nhwc = dml.reinterpret(ea, [n, c, h, wd], [h * wd * c, 1, wd * c, c])
    crop = dml.reinterpret(ebig, [n, c, h, wd], [c * (h + 3) * (wd + 5), (h + 3) * (wd + 5), wd + 5, 1])
    conv = lambda v: dml.convolution(v, graph.constant(w), graph.constant(b), mode=mode, start_padding=[p, p],
                                     end_padding=[p, p])
    got_nhwc, got_crop = run(graph, [conv(nhwc), conv(crop)], {ea: x_nhwc, ebig: x_big})
    ref_w = flipped(w) if mode == Mode.CONVOLUTION else w
    for got, x in ((got_nhwc, x_nhwc.transpose(0, 3, 1, 2)), (got_crop, x_big[:, :, :h, :wd])):
        close(got, conv_forward_ref(x, ref_w, (1, 1), (1, 1), (p, p), (p, p), 1) + b, np.float32)


@pytest.mark.parametrize("k,hw", [(3, 19), (3, 41), (5, 41)], ids=WINOGRAD_IDS)
@pytest.mark.parametrize("threads", [1, 2])
def test_winograd_threads(device, k, hw, threads):
    # the blocks of a batch of two images shared between the threads, each its own workspace part
    if device.kind != "cpu":
        pytest.skip("the cpu executor's threads")
    dev = dml.Device("cpu", threads=threads)
    n, c, m, p = 2, 24, 24, k // 2
    x, w, b = wrand((n, c, hw, hw)), wrand((m, c, k, k)), wrand((1, m, 1, 1))
    graph = dml.Graph(dev)
    ex = graph.input(x.shape)
    y = dml.convolution(ex, graph.constant(w), graph.constant(b), start_padding=[p, p], end_padding=[p, p],
                        fused_activation=dml.FusedActivation.relu())
    (got,) = run(graph, [y], {ex: x})
    close(got, np.maximum(conv_forward_ref(x, w, (1, 1), (1, 1), (p, p), (p, p), 1) + b, 0), np.float32)


@pytest.mark.parametrize("k,hw,bound", [(3, 19, 1e-6), (3, 56, 3e-6), (5, 56, 3e-6)], ids=WINOGRAD_IDS)
def test_winograd_accuracy(graph, k, hw, bound):
    # superres's 64 -> 64 layer at 56x56 (at 19x19 for 2x2 tiles of 3x3) on realistic magnitudes (He-scaled weights,
    # inputs after a relu): the worst error against float64 within a few float32 roundings of the largest output (the
    # direct kernel's is 6e-7 for 3x3 and 1.0e-6 for 5x5 at 56x56; F(2x2, 3x3)'s 2.8e-7, F(4x4, 3x3)'s 2.1e-6 and
    # F(2x2, 5x5)'s 1.6e-6: the larger transforms' larger coefficients)
    rng = np.random.default_rng(5)
    c, m, p = 64, 64, k // 2
    x = np.maximum(rng.standard_normal((1, c, hw, hw)), 0).astype(np.float32)
    w = (rng.standard_normal((m, c, k, k)) * np.sqrt(2 / (k * k * c))).astype(np.float32)
    ex = graph.input(x.shape)
    (got,) = run(graph, [dml.convolution(ex, graph.constant(w), start_padding=[p, p], end_padding=[p, p])], {ex: x})
    want = conv_forward_ref(x, w, (1, 1), (1, 1), (p, p), (p, p), 1)
    assert np.abs(got - want).max() / np.abs(want).max() < bound


# --- backward (transposed) ----------------------------------------------------------------------------------------

BACKWARD_CASES = [
    # spatial, kernel, strides, dilations, start, end, output_padding, groups, in_channels, out_channels
    ((4,), (3,), (2,), (1,), (1,), (1,), (1,), 1, 2, 3),
    ((3, 4), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), (1, 0), 1, 3, 2),
    ((4, 3), (2, 3), (1, 3), (2, 1), (0, 2), (1, 0), (0, 2), 2, 4, 6),
    ((3, 3), (3, 3), (1, 1), (1, 1), (0, 0), (0, 0), (0, 0), 3, 3, 3),  # depthwise
    ((2, 3, 2), (2, 2, 3), (2, 1, 2), (1, 2, 1), (1, 0, 1), (0, 1, 1), (1, 0, 0), 1, 2, 2),
]


@pytest.mark.parametrize("case", BACKWARD_CASES, ids=lambda c: f"{len(c[0])}d-g{c[7]}")
@pytest.mark.parametrize("mode", [Mode.CROSS_CORRELATION, Mode.CONVOLUTION])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_backward(graph, case, mode, dtype):
    sp, ks, strides, dil, start, end, out_pad, groups, c, m = case
    x, w, b = rand((2, c, *sp), dtype), rand((c, m // groups, *ks), dtype), rand((1, m) + (1,) * len(sp), dtype)
    ex, ew, eb = graph.input(x.shape, dtype), graph.input(w.shape, dtype), graph.input(b.shape, dtype)
    y = dml.convolution(ex, ew, eb, mode=mode, direction=Direction.BACKWARD, strides=list(strides),
                        dilations=list(dil), start_padding=list(start), end_padding=list(end),
                        output_padding=list(out_pad), group_count=groups)
    out_sp = tuple((sp[i] - 1) * strides[i] + (ks[i] - 1) * dil[i] + 1 - start[i] - end[i] + out_pad[i]
                   for i in range(len(sp)))
    assert y.shape == (2, m, *out_sp)
    ref_w = flipped(w) if mode == Mode.CONVOLUTION else w
    want = conv_backward_ref(x, ref_w, strides, dil, start, out_sp, groups) + b.astype(np.float64)
    (got,) = run(graph, [y], {ex: x, ew: w, eb: b})
    close(got, want, dtype)


@pytest.mark.parametrize("mode", [Mode.CROSS_CORRELATION, Mode.CONVOLUTION])
@pytest.mark.parametrize("groups", [1, 2])
def test_backward_is_the_adjoint_of_forward(graph, mode, groups):
    # <forward(x, w), y> == <x, backward(y, w)> with the same filter array: that is what BACKWARD means
    c, m, strides, dil, start, end = 4, 6, [2, 1], [1, 2], [1, 2], [0, 1]
    x, w = rand((2, c, 7, 6), np.float64), rand((m, c // groups, 3, 2), np.float64)
    ex, ew = graph.input(x.shape, np.float64), graph.input(w.shape, np.float64)
    fwd = dml.convolution(ex, ew, mode=mode, strides=strides, dilations=dil, start_padding=start, end_padding=end,
                          group_count=groups)
    y = rand(fwd.shape, np.float64)
    ey = graph.input(y.shape, np.float64)
    bwd = dml.convolution(ey, ew, mode=mode, direction=Direction.BACKWARD, strides=strides, dilations=dil,
                          start_padding=start, end_padding=end, group_count=groups, output_sizes=list(x.shape))
    f, b = run(graph, [fwd, bwd], {ex: x, ew: w, ey: y})
    assert np.isclose(np.vdot(f, y), np.vdot(x, b), rtol=1e-12)


def test_backward_output_sizes_pick_within_the_stride(graph):
    x, w = rand((1, 2, 3, 3)), rand((2, 3, 3, 3))
    ex, ew = graph.input(x.shape), graph.input(w.shape)
    base = dml.convolution(ex, ew, direction=Direction.BACKWARD, strides=[3, 2], start_padding=[1, 1],
                           end_padding=[1, 1])
    assert base.shape == (1, 3, 7, 5)
    sized = dml.convolution(ex, ew, direction=Direction.BACKWARD, strides=[3, 2], start_padding=[1, 1],
                            end_padding=[1, 1], output_sizes=[1, 3, 9, 6])
    (got,) = run(graph, [sized], {ex: x, ew: w})
    close(got, conv_backward_ref(x, w, (3, 2), (1, 1), (1, 1), (9, 6), 1), np.float32)
    with pytest.raises(ValueError, match=r"output size 10 in spatial dimension 0 is outside \[7, 10\)"):
        dml.convolution(ex, ew, direction=Direction.BACKWARD, strides=[3, 2], start_padding=[1, 1],
                        end_padding=[1, 1], output_sizes=[1, 3, 10, 5])
    with pytest.raises(ValueError, match="contradict output_padding"):
        dml.convolution(ex, ew, direction=Direction.BACKWARD, strides=[3, 2], start_padding=[1, 1],
                        end_padding=[1, 1], output_padding=[1, 0], output_sizes=[1, 3, 9, 5])


def test_convolution_errors(graph):
    x, w = graph.input([1, 4, 5, 5]), graph.input([2, 4, 3, 3])
    conv = dml.convolution
    with pytest.raises(ValueError, match="must have the input's rank"):
        conv(x, graph.input([2, 4, 3]))
    with pytest.raises(ValueError, match="must have 3 to 5 dimensions"):
        conv(graph.input([4, 5]), graph.input([2, 4]))
    with pytest.raises(ValueError, match="element types differ"):
        conv(x, graph.input([2, 4, 3, 3], np.float16))
    with pytest.raises(ValueError, match="allowed: FLOAT32"):
        conv(graph.input([1, 4, 5, 5], np.int8), graph.input([2, 4, 3, 3], np.int8))
    with pytest.raises(ValueError, match="group_count 3 does not divide"):
        conv(x, w, group_count=3)
    with pytest.raises(ValueError, match="does not fit input"):
        conv(x, w, group_count=2)
    with pytest.raises(ValueError, match="larger than the padded input"):
        conv(x, w, dilations=[3, 1])
    with pytest.raises(ValueError, match="strides must be positive"):
        conv(x, w, strides=[0, 1])
    with pytest.raises(ValueError, match="strides needs 2 values"):
        conv(x, w, strides=[1])
    with pytest.raises(ValueError, match="output_padding applies to BACKWARD"):
        conv(x, w, output_padding=[1, 0])
    with pytest.raises(ValueError, match="output_padding applies to BACKWARD"):
        conv(x, graph.input([4, 2, 3, 3]), direction=Direction.BACKWARD, strides=[2, 2], output_padding=[2, 0])
    with pytest.raises(ValueError, match="differ from the computed"):
        conv(x, w, output_sizes=[1, 2, 4, 4])
    with pytest.raises(ValueError, match="needs 4 .the input's channels. in dimension 0"):
        conv(x, w, direction=Direction.BACKWARD)
    with pytest.raises(ValueError, match="padding leaves no output"):
        conv(graph.input([1, 4, 1, 1]), graph.input([4, 2, 1, 1]), direction=Direction.BACKWARD,
             start_padding=[1, 0])
    with pytest.raises(ValueError, match=r"bias must be FLOAT32\[1, 2, 1, 1\]"):
        conv(x, w, graph.input([1, 2, 1]))
    with pytest.raises(ValueError, match="bias must be"):
        conv(x, w, graph.input([1, 2, 1, 1], np.float16))


# --- integer convolutions -----------------------------------------------------------------------------------------


def randint(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def integer_conv_ref(x, w, xz, wz, strides, start, end, groups):
    xs = x.astype(np.int64) - np.asarray(xz, np.int64)
    ws = w.astype(np.int64) - np.asarray(wz, np.int64).reshape(-1, 1, 1, 1)
    # exact: every value stays far below 2^53 in float64
    return np.rint(conv_forward_ref(xs, ws, strides, (1, 1), start, end, groups)).astype(np.int64)


@pytest.mark.parametrize("tx,tw", [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8)])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("groups", [1, 2])
def test_convolution_integer(graph, tx, tw, per_channel, groups):
    c, m = 4, 6
    x, w = randint((2, c, 5, 6), tx), randint((m, c // groups, 3, 2), tw)
    xz = randint((1, 1, 1, 1), tx)
    wz = randint((1, m, 1, 1) if per_channel else (1, 1, 1, 1), tw)
    ex, ew, exz, ewz = (graph.input(a.shape, a.dtype) for a in (x, w, xz, wz))
    y = dml.convolution_integer(ex, ew, exz, ewz, strides=[1, 2], start_padding=[1, 0], end_padding=[0, 1],
                                group_count=groups)
    assert y.dtype == np.int32 and y.shape == (2, m, 4, 3)
    again = dml.convolution_integer(ex, ew, exz, ewz, strides=[1, 2], start_padding=[1, 0], end_padding=[0, 1],
                                    group_count=groups, output_sizes=[2, m, 4, 3])  # DirectMLX's parameter, restated
    assert again.shape == y.shape
    (got,) = run(graph, [y], {ex: x, ew: w, exz: xz, ewz: wz})
    np.testing.assert_array_equal(got, integer_conv_ref(x, w, xz.item(), wz.ravel() if per_channel else wz.item(),
                                                        (1, 2), (1, 0), (0, 1), groups))


def test_convolution_integer_without_zero_points_strided_input(graph):
    x_big, w = randint((1, 2, 6, 10), np.int8), randint((3, 2, 2, 2), np.int8)
    ex, ew = graph.input(x_big.shape, np.int8), graph.input(w.shape, np.int8)
    xv = dml.reinterpret(ex, [1, 2, 6, 5], [120, 60, 10, 2])  # every other column
    (got,) = run(graph, [dml.convolution_integer(xv, ew)], {ex: x_big, ew: w})
    np.testing.assert_array_equal(got, integer_conv_ref(x_big[..., ::2], w, 0, 0, (1, 1), (0, 0), (0, 0), 1))


@pytest.mark.parametrize("out_type", [np.uint8, np.int8])
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_linear_convolution(graph, out_type, per_channel):
    c, m = 3, 4
    x, w = randint((1, c, 5, 5), np.uint8), randint((m, c, 3, 3), np.int8)
    xs, ys = np.float32([[[[0.02]]]]), np.float32([[[[0.3]]]])
    ws = RNG.uniform(0.005, 0.02, (1, m, 1, 1) if per_channel else (1, 1, 1, 1)).astype(np.float32)
    xz, wz, yz = randint((1, 1, 1, 1), np.uint8), randint(ws.shape, np.int8), randint((1, 1, 1, 1), out_type)
    bias = RNG.integers(-5000, 5000, (1, m, 1, 1)).astype(np.int32)
    arrays = [x, xs, w, ws, ys, xz, wz, bias, yz]
    inputs = [graph.input(a.shape, a.dtype) for a in arrays]
    y = dml.quantized_linear_convolution(*inputs, start_padding=[1, 1], end_padding=[1, 1], output_sizes=[1, m, 5, 5])
    assert y.dtype == out_type and y.shape == (1, m, 5, 5)
    (got,) = run(graph, [y], dict(zip(inputs, arrays)))
    acc = integer_conv_ref(x, w, xz.item(), wz.ravel() if per_channel else wz.item(), (1, 1), (1, 1), (1, 1), 1)
    real = (acc + bias.astype(np.int64)).astype(np.float64) * (np.float64(xs.item()) * ws.astype(np.float64))
    info = np.iinfo(out_type)
    want = np.clip(np.round(real / np.float64(ys.item())) + yz.item(), info.min, info.max).astype(out_type)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 5


def test_integer_convolution_errors(graph):
    x, w = graph.input([1, 2, 4, 4], np.uint8), graph.input([3, 2, 2, 2], np.int8)
    s = graph.input([1, 1, 1, 1])
    with pytest.raises(ValueError, match="input has type FLOAT32"):
        dml.convolution_integer(graph.input([1, 2, 4, 4]), w)
    with pytest.raises(ValueError, match="must have 4 dimensions"):
        dml.convolution_integer(graph.input([1, 2, 4], np.uint8), graph.input([3, 2, 2], np.int8))
    with pytest.raises(ValueError, match="input_zero_point has type INT8"):
        dml.convolution_integer(x, w, graph.input([1, 1, 1, 1], np.int8))
    with pytest.raises(ValueError, match=r"filter_zero_point has sizes \[1, 2, 1, 1\]"):
        dml.convolution_integer(x, w, None, graph.input([1, 2, 1, 1], np.int8))
    with pytest.raises(ValueError, match="input_zero_point has sizes"):
        dml.convolution_integer(x, w, graph.input([1, 2, 1, 1], np.uint8))
    with pytest.raises(ValueError, match=r"^convolution_integer\(\): output_sizes \[1, 3, 4, 4\] differ from the "
                                         r"computed \[1, 3, 3, 3\]"):
        dml.convolution_integer(x, w, output_sizes=[1, 3, 4, 4])
    with pytest.raises(ValueError, match=r"^quantized_linear_convolution\(\): output_sizes \[1, 3, 3\] differ"):
        dml.quantized_linear_convolution(x, s, w, s, s, output_sizes=[1, 3, 3])
    with pytest.raises(ValueError, match="bias has type FLOAT32; allowed: INT32"):
        dml.quantized_linear_convolution(x, s, w, s, s, bias=graph.input([1, 3, 1, 1]))
    with pytest.raises(ValueError, match=r"bias must be INT32\[1, 3, 1, 1\]"):
        dml.quantized_linear_convolution(x, s, w, s, s, bias=graph.input([1, 3, 1], np.int32))
    with pytest.raises(ValueError, match="filter_scale has sizes"):
        dml.quantized_linear_convolution(x, s, w, graph.input([1, 2, 1, 1]), s)
    with pytest.raises(ValueError, match="output type UINT8 differs"):
        dml.quantized_linear_convolution(x, s, w, s, s, output_zero_point=graph.input([1, 1, 1, 1], np.int8),
                                         output_dtype=np.uint8)
