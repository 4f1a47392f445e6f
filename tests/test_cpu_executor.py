"""What is particular to the cpu executor: its thread count (DIRECTML_NUM_THREADS, dml.Device(threads=)), a
convolution's bounded scratch memory, a pointwise one reading strided planes in place, strided ones split by
phases of the stride, max pooling by bands of output rows, softmax rows on each instruction set, weights packed
at initialize that follow a re-initialize, and large blocks advised to use huge pages."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

import directml as dml
from fresh_python import python

CONVOLVE = """
import numpy as np, directml as dml
g = dml.Graph(dml.Device("cpu"))
x = g.input([1, 8, 30, 30], name="x")
y = dml.convolution(x, g.constant(np.ones((4, 8, 3, 3), np.float32)), start_padding=[1, 1], end_padding=[1, 1])
print(float(g.compile([y])({"x": np.ones((1, 8, 30, 30), np.float32)})[0][0, 0, 10, 10]))
"""


@pytest.mark.parametrize("threads", ["1", "3"])
def test_thread_count_from_the_environment(threads, tmp_path):
    done = python(CONVOLVE, tmp_path, DIRECTML_NUM_THREADS=threads)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "72.0"  # 8 channels x 9 taps of ones


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_thread_count_from_the_environment_must_be_a_positive_integer(value, tmp_path):
    done = python(CONVOLVE, tmp_path, DIRECTML_NUM_THREADS=value)
    assert done.returncode != 0
    assert f"DIRECTML_NUM_THREADS must be a positive integer, got '{value}'" in done.stderr


def test_convolution_scratch_memory_does_not_grow_with_the_image():
    # The columns of a whole 512x512 image for a 9x9 filter over 32 channels would take 2.7 GB.
    g = dml.Graph(dml.Device("cpu"))
    x = g.input([1, 32, 512, 512], name="x")
    y = dml.convolution(x, g.constant(np.zeros((3, 32, 9, 9), np.float32)), start_padding=[4, 4], end_padding=[4, 4])
    op = g.compile([y])
    assert op.temporary_size < 16 * 2**20


def test_owned_filter_is_packed_again_when_re_initialized():
    rng = np.random.default_rng(3)
    g = dml.Graph(dml.Device("cpu"))
    x = g.input([1, 2, 5, 5], name="x")
    w = g.input([3, 2, 3, 3], name="w", owned=True)
    op = g.compile([dml.convolution(x, w, mode=dml.ConvolutionMode.CONVOLUTION)])
    data = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    for _ in range(2):
        filters = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
        op.initialize({"w": filters})
        (got,) = op({"x": data})
        flipped = filters[:, :, ::-1, ::-1]  # convolution mode flips the filter
        want = np.einsum("cij,mcij->m", data[0, :, 1:4, 1:4], flipped)
        np.testing.assert_allclose(got[0, :, 1, 1], want, rtol=1e-5, atol=1e-5)


def check_on_isa(code, isa, tmp_path, **env):
    """Runs `code`, which prints "ok" once its checks pass, in a fresh interpreter on the instruction set `isa`
    (DIRECTML_CPU_ISA; "native": what the processor has)."""
    if isa != "native":
        env["DIRECTML_CPU_ISA"] = isa
    done = python(code, tmp_path, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@pytest.mark.parametrize("out_channels", [16, 20, 3])
@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_pointwise_convolution_reads_channel_slices_in_place(out_channels, isa, tmp_path):
    # A 1x1 convolution reads its input's planes where they lie: here every other channel of a larger tensor (the
    # planes 126 floats apart, 63 positions each, so the last vector of a plane is partial), 600 channels (more than
    # one chunk of the kernel's), a batch of two, bias and relu fused; each instruction set's tiles.
    code = f"""
import numpy as np, directml as dml
rng = np.random.default_rng(5)
g = dml.Graph(dml.Device("cpu"))
x = g.input([2, 1200, 7, 9], name="x")
view = dml.reinterpret(x, [2, 600, 7, 9], [1200 * 63, 126, 9, 1])
w = rng.standard_normal(({out_channels}, 600, 1, 1)).astype(np.float32)
b = rng.standard_normal((1, {out_channels}, 1, 1)).astype(np.float32)
y = dml.convolution(view, g.constant(w), g.constant(b), fused_activation=dml.FusedActivation.relu())
data = rng.standard_normal((2, 1200, 7, 9)).astype(np.float32)
(got,) = g.compile([y])({{"x": data}})
want = np.maximum(np.einsum("nchw,mc->nmhw", data[:, ::2].astype(np.float64), w[:, :, 0, 0]) + b, 0)
np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
print("ok")
"""
    check_on_isa(code, isa, tmp_path)


# Runs each case (input shape, out channels, kernel, strides, dilations, start and end padding, groups) as a float
# convolution with bias and a fused activation (relu unless named) against NumPy in float64 (reference_nets.conv2d,
# which shares no code with the executor).
CONVOLUTIONS = """
import numpy as np, directml as dml
from reference_nets import conv2d
rng = np.random.default_rng(11)
cases = {cases}
fused, act = {activation}
for shape, m, k, s, d, start, end, groups in cases:
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((m, shape[1] // groups, *k)).astype(np.float32)
    b = rng.standard_normal((1, m, 1, 1)).astype(np.float32)
    g = dml.Graph(dml.Device("cpu"))
    ex = g.input(shape, name="x")
    y = dml.convolution(ex, g.constant(w), g.constant(b), strides=list(s), dilations=list(d), start_padding=list(start),
                        end_padding=list(end), group_count=groups, fused_activation=fused)
    (got,) = g.compile([y])({"x": x})
    want = act(conv2d(x.astype(np.float64), w.astype(np.float64), b[0, :, 0, 0].astype(np.float64), stride=s,
                      pad=(start[0], start[1], end[0], end[1]), dilation=d, groups=groups))
    # Winograd's error is a fraction of the largest output (its transforms mix outputs of every size): F(4x4, 3x3)'s
    # worst is 1.7e-6 of it on 64 -> 64 of 28x28 here, whose outputs reach 100
    atol = max(1e-4, 3e-6 * np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol, err_msg=str(shape))
print("ok")
"""


RELU = "dml.FusedActivation.relu(), lambda t: np.maximum(t, 0)"


def check_convolutions(cases, isa, tmp_path, activation=RELU):
    code = CONVOLUTIONS.replace("{cases}", repr(cases)).replace("{activation}", activation)
    check_on_isa(code, isa, tmp_path, PYTHONPATH=str(Path(__file__).parent))  # reference_nets


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_strided_convolutions_by_phases(isa, tmp_path):
    # Strided convolutions whose taps read every phase of the stride run the direct kernel on the input split by
    # phases: strides 2 and 3, asymmetric padding, dilation, groups, bands of rows (and a strided depthwise one,
    # which keeps its loop over rows).
    check_convolutions([((1, 3, 224, 224), 64, (3, 3), (2, 2), (1, 1), (0, 0), (0, 0), 1),  # bands of rows
                        ((2, 5, 37, 41), 7, (3, 3), (2, 2), (1, 1), (1, 0), (2, 1), 1),
                        ((1, 4, 30, 29), 6, (5, 5), (3, 3), (1, 1), (2, 2), (2, 2), 2),
                        ((1, 8, 33, 35), 8, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 8),  # depthwise: not by phases
                        ((1, 3, 20, 21), 4, (2, 2), (2, 2), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 3, 25, 26), 5, (3, 3), (2, 2), (3, 3), (3, 1), (3, 1), 1)], isa, tmp_path)


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_depthwise_convolutions_of_stride_1(isa, tmp_path):
    # Depthwise layers of stride 1: 3x3 ones of column dilation 1 run AVX2's row kernel (DirectKernel::
    # depthwise_3x3_rows; rows of 112 and 7 columns, vectors of 32, 16 and 8 outputs and masked edges, a batch of
    # two), the others the direct kernel's depthwise tile, which sums even and odd taps apart: odd and even tap
    # counts (4, 25, 3, 1 with padding), dilation, bands of rows over a large image.
    check_convolutions([((1, 32, 112, 112), 32, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 32),
                        ((1, 6, 17, 19), 6, (2, 2), (1, 1), (1, 1), (1, 0), (0, 1), 6),
                        ((1, 5, 23, 21), 5, (5, 5), (1, 1), (1, 1), (2, 2), (2, 2), 5),
                        ((1, 7, 9, 7), 7, (1, 3), (1, 1), (1, 1), (0, 1), (0, 1), 7),
                        ((1, 4, 11, 13), 4, (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), 4),
                        ((1, 9, 20, 18), 9, (3, 3), (1, 1), (2, 2), (2, 2), (2, 2), 9),
                        ((1, 9, 40, 90), 9, (3, 3), (1, 1), (2, 1), (2, 1), (2, 1), 9),
                        ((1, 3, 9, 61), 3, (3, 3), (1, 1), (1, 1), (0, 0), (2, 12), 3),
                        ((1, 3, 12, 27), 3, (3, 3), (2, 1), (1, 1), (1, 10), (2, 1), 3),
                        ((2, 16, 7, 7), 16, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 16)], isa, tmp_path)


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_depthwise_convolutions_of_stride_2(isa, tmp_path):
    # Depthwise 3x3 layers of column stride 2 run a row kernel on AVX2 (DirectKernel::depthwise_3x3_rows): rows
    # of vectors and edges (112 and 35 columns, padding 0, 1 and 2 on either side), rows too short for a vector,
    # a row stride of 1 and of 3, the top and bottom rows in the padding, and a batch of two; dilated rows and 5x5
    # filters keep the loop over taps.
    check_convolutions([((1, 96, 112, 112), 96, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 96),
                        ((1, 5, 33, 35), 5, (3, 3), (2, 2), (1, 1), (0, 0), (0, 0), 5),
                        ((1, 4, 21, 35), 4, (3, 3), (1, 2), (1, 1), (2, 2), (1, 2), 4),
                        ((1, 3, 9, 7), 3, (3, 3), (3, 2), (1, 1), (1, 0), (2, 1), 3),
                        ((2, 8, 30, 40), 8, (3, 3), (2, 2), (1, 1), (0, 1), (1, 0), 8),
                        ((1, 6, 19, 37), 6, (3, 3), (2, 2), (2, 1), (2, 1), (2, 1), 6),
                        ((1, 6, 19, 37), 6, (3, 3), (2, 2), (1, 2), (2, 2), (2, 2), 6),
                        ((1, 6, 19, 37), 6, (5, 5), (2, 2), (1, 1), (2, 2), (2, 2), 6)], isa, tmp_path)


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_wide_convolutions(isa, tmp_path):
    # Layers of 64 output channels or a multiple, 512 channel-taps or more and 784 positions or more run AVX2's
    # lanes tile (convolution.cpp): 28x28 (the last of its 24-position items partial), several chunks of input
    # channels, 128 output channels over 31x29, stride 2, dilation 2 and a 5x5 filter, groups of 64 channels.
    check_convolutions([((1, 64, 28, 28), 64, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
                        ((1, 96, 31, 29), 128, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
                        ((1, 64, 57, 57), 64, (3, 3), (2, 2), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 64, 34, 30), 64, (3, 3), (1, 1), (2, 2), (1, 2), (1, 0), 1),
                        ((1, 32, 30, 30), 64, (5, 5), (1, 1), (1, 1), (2, 2), (2, 2), 1),
                        ((1, 128, 28, 28), 128, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 2)], isa, tmp_path)


@pytest.mark.parametrize("activation", ["dml.FusedActivation.none(), lambda t: t",
                                        "dml.FusedActivation.identity(), lambda t: t", RELU,
                                        "dml.FusedActivation.sigmoid(), lambda t: 1 / (1 + np.exp(-t))"])
@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_convolutions_stored_from_registers(activation, isa, tmp_path):
    # With AVX-512, float convolutions with no activation or relu store their sums from the registers, a vector's
    # padded columns dropped (the others finish through a tile): rows of 5 and 7 columns (a vector spans several),
    # 20 output channels (a partial block), 100 input channels (two chunks), bands of rows whose last is partial,
    # stride 2, and pointwise ones in place whose last vector is partial.
    check_convolutions([((1, 3, 5, 5), 20, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
                        ((1, 100, 7, 7), 12, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
                        ((1, 16, 150, 37), 24, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
                        ((1, 5, 31, 33), 9, (3, 3), (2, 2), (1, 1), (1, 0), (0, 1), 1),
                        ((1, 40, 13, 13), 20, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 7, 9, 10), 33, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1)], isa, tmp_path, activation)


@pytest.mark.parametrize("activation", ["dml.FusedActivation.none(), lambda t: t", RELU,
                                        "dml.FusedActivation.leaky_relu(0.1), lambda t: np.where(t >= 0, t, 0.1 * t)",
                                        "dml.FusedActivation.sigmoid(), lambda t: 1 / (1 + np.exp(-t))"])
@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_pointwise_gemm(activation, isa, tmp_path):
    # On AVX2, 1x1 layers of 16 positions or more run the pointwise GEMM (pointwise_gemm.h; 6 channels x 16
    # positions a tile, depth slices of 256), bias and relu in the registers, other activations a pass after:
    # squeezenet's last layer (two depth slices, more channels than positions: blocks of channels split between the
    # threads, the image copied in panels, a partial last one), 64 of 55x55 from 16 (blocks of positions split, the
    # image read in place but for its partial last panel, a batch of two), three depth slices with 7 channels and 20
    # positions (partial panels both ways), one channel of 17 positions from 3, exactly one panel of 16 positions,
    # groups of 2 and 4, groups of more channels than their 16 positions, and 96 channels of 7x7 (copied in panels,
    # the last one position: a one-vector tile). The last panels of 1, 4 and 1 positions run one-vector tiles too.
    check_convolutions([((1, 512, 13, 13), 1000, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((2, 16, 55, 55), 64, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 600, 5, 4), 7, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 3, 17, 1), 1, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 40, 4, 4), 13, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((2, 12, 9, 9), 8, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 2),
                        ((1, 36, 7, 5), 20, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 4),
                        ((2, 8, 4, 4), 40, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 2),
                        ((1, 64, 7, 7), 96, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1)], isa, tmp_path, activation)


@pytest.mark.parametrize("isa", ["native", "avx2"])
def test_convolutions_gathering_whole_rows(isa, tmp_path):
    # Where a band's rows lie one after the other in the input and in its gathered planes (stride 1, no padded
    # columns), they are gathered as one run (pad_band): pointwise layers of 512 output channels or more (copied to
    # aligned planes), a batch of 2, a 13x13 image (planes not on whole vectors), and on AVX2 (no tap masks, so
    # gathered) a 3x1 filter whose padded rows above and below the image are zeros between the runs.
    check_convolutions([((1, 24, 13, 13), 512, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((2, 9, 11, 7), 520, (1, 1), (1, 1), (1, 1), (0, 0), (0, 0), 1),
                        ((1, 6, 12, 10), 16, (3, 1), (1, 1), (1, 1), (1, 0), (2, 0), 1),
                        ((1, 20, 9, 16), 8, (5, 1), (1, 1), (2, 1), (4, 0), (4, 0), 1)], isa, tmp_path)


@pytest.mark.parametrize("dilation", [1, 2])
def test_max_pooling_planes_of_several_bands(dilation):
    # Max pooling without indices runs bands of output rows of a plane a work item: a 3x3, stride-2 pool of
    # 301x300 planes takes several, with NaN (which loses to any number) across their borders; against NumPy.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 301, 300)).astype(np.float32)
    x[0, 1, 10:140:3, 50:90:2] = np.nan
    g = dml.Graph(dml.Device("cpu"))
    ex = g.input(x.shape, name="x")
    reach = 2 * dilation + 1
    sizes = [(n + 2 - reach) // 2 + 1 for n in x.shape[2:]]
    y = dml.max_pooling(ex, window_size=[3, 3], strides=[2, 2], dilations=[dilation] * 2, start_padding=[1, 1],
                        end_padding=[1, 1], output_sizes=[2, 3, *sizes]).values
    (got,) = g.compile([y])({"x": x})
    padded = np.pad(np.where(np.isnan(x), -np.inf, x), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (reach, reach), axis=(2, 3))
    want = windows[:, :, ::2, ::2, ::dilation, ::dilation].max(axis=(4, 5))[:, :, :sizes[0], :sizes[1]]
    np.testing.assert_array_equal(got, want)


SOFTMAX_ROWS = """
import numpy as np, directml as dml
rng = np.random.default_rng(3)
for n in (1, 15, 16, 17, 1000):
    x = rng.standard_normal((6, n)).astype(np.float32) * 30
    x[1, 0] = -np.inf  # an exponential of 0
    x[2, -1] = 200.0  # the largest far above the rest
    x[3], x[3, 0] = -1e30, 0.0  # every exponential below the float range but the largest's
    x[4, n // 2] = np.nan  # a NaN row stays NaN
    x[5] = np.inf if n > 1 else x[5]  # inf - inf
    g = dml.Graph(dml.Device("cpu"))
    e = g.input(list(x.shape), name="x")
    soft, log = g.compile([dml.activation_softmax(e, axes=[1]), dml.activation_log_softmax(e, axes=[1])])({"x": x})
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        shifted = x64 - x64.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(soft, np.exp(shifted - lse), rtol=1e-5, atol=1e-7, err_msg=str(n))
    np.testing.assert_allclose(log[~np.isinf(log)], (shifted - lse)[~np.isinf(log)], rtol=1e-5, atol=1e-4)
    assert np.array_equal(np.isinf(log), np.isinf(shifted - lse))
print("ok")
"""


@pytest.mark.parametrize("isa", ["native", "avx2", "generic"])
def test_softmax_rows_on_each_instruction_set(isa, tmp_path):
    # Softmax and log-softmax over packed rows take an AVX-512 loop where the processor has it (exp by vscalefps,
    # the last vector masked), the per-width vector loops otherwise: row lengths around a vector of 16, an
    # exponential of 0, rows whose exponentials leave the float range, NaN and infinite rows; against NumPy.
    check_on_isa(SOFTMAX_ROWS, isa, tmp_path)


MAX_POOL_ROWS = """
import numpy as np, directml as dml
rng = np.random.default_rng(4)
for k, s, pad, width in [(3, 2, 0, 8), (3, 2, 0, 9), (3, 2, 1, 23), (3, 2, 0, 70), (2, 2, 0, 17), (3, 1, 1, 8),
                         (3, 1, 0, 70), (2, 1, 0, 31), (1, 2, 0, 12)]:
    cols = (width - 1) * s + k - 2 * pad
    x = rng.choice(np.array([-1.0, -0.0, 0.0, 1.0], np.float32), size=(1, 2, 2 * k + 3, cols))
    x[0, 0, :, 1::5] = np.nan
    x[0, 1, 1:k + 2, 2:2 + 2 * k] = np.nan  # some windows all NaN
    rows = (x.shape[2] + 2 * pad - k) // s + 1
    g = dml.Graph(dml.Device("cpu"))
    e = g.input(list(x.shape), name="x")
    y = dml.max_pooling(e, window_size=[k, k], strides=[s, s], start_padding=[pad, pad], end_padding=[pad, pad],
                        output_sizes=[1, 2, rows, width]).values
    (got,) = g.compile([y])({"x": x})
    # the scan's rule: the first largest in row-major tap order (-0 before 0), NaN only where every tap is
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=np.nan)
    want = np.full(got.shape, -np.inf, np.float32)
    every_nan = np.ones(got.shape, bool)
    for ty in range(k):
        for tx in range(k):
            v = padded[:, :, ty:ty + s * rows:s, tx:tx + s * width:s]
            want = np.where(v > want, v, want)
            every_nan &= np.isnan(v)
    want[every_nan] = np.nan
    assert every_nan.any(), (k, s, width)
    np.testing.assert_array_equal(got, want, err_msg=str((k, s, pad, width)))
    assert np.array_equal(np.signbit(got), np.signbit(want)), (k, s, pad, width)
print("ok")
"""


@pytest.mark.parametrize("isa", ["native", "avx2", "generic"])
def test_max_pooling_rows_on_each_instruction_set(isa, tmp_path):
    # Max pooling's windows inside a float row run in vectors: AVX-512's masked blocks of 16, AVX2's blocks of 8 (the
    # last overlapping the one before) for 2 and 3 taps of stride 1 or 2, the generic loop otherwise. Rows of exactly
    # one AVX2 block and one past it, rows that keep a shared input row's maxima and rows too long to (70 outputs),
    # padded columns, ties of -0 and 0, NaN and all-NaN windows; against NumPy in the scan's order.
    check_on_isa(MAX_POOL_ROWS, isa, tmp_path)


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_device_thread_count(threads):
    device = dml.Device("cpu", threads=threads)
    g = dml.Graph(device)
    x = g.input([1, 8, 30, 30], name="x")
    y = dml.convolution(x, g.constant(np.ones((4, 8, 3, 3), np.float32)), start_padding=[1, 1], end_padding=[1, 1])
    (got,) = g.compile([y])({"x": np.ones((1, 8, 30, 30), np.float32)})
    assert got[0, :, 1:-1, 1:-1].min() == got[0, :, 1:-1, 1:-1].max() == 72  # 8 channels x 9 taps of ones
    assert got[0, 0, 0, 0] == 32  # a corner sees 2 x 2 taps


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_threads_run_every_item_once(threads):
    # The pool gives each thread a range of a loop's items, and a thread done with its own helps the others from the
    # back of theirs (more threads than cores make that the rule): every item runs, and runs once. The 1x1 layer of
    # 1100 input channels adds each chunk of its channels to the sums the chunks before it left, so an item run twice
    # shows; the others cover loops of few items (a 3x3 of 5x5), Winograd blocks and a softmax row an item.
    rng = np.random.default_rng(5)
    g = dml.Graph(dml.Device("cpu", threads=threads))
    x = g.input([1, 1100, 13, 13], name="x")
    w1 = (rng.standard_normal((40, 1100, 1, 1)) / 30).astype(np.float32)
    w3 = (rng.standard_normal((24, 40, 3, 3)) / 10).astype(np.float32)
    w5 = (rng.standard_normal((8, 24, 3, 3)) / 10).astype(np.float32)
    y1 = dml.convolution(x, g.constant(w1))
    y3 = dml.convolution(y1, g.constant(w3), start_padding=[1, 1], end_padding=[1, 1])
    small = dml.convolution(dml.max_pooling(y3, window_size=[3, 3], strides=[3, 3]).values, g.constant(w5),
                            start_padding=[1, 1], end_padding=[1, 1])
    soft = dml.activation_softmax(y3, axes=[3])
    op = g.compile([y3, small, soft])
    data = rng.standard_normal((1, 1100, 13, 13)).astype(np.float32)

    def conv3(v, w):  # 3x3, padding 1, float64
        p = np.pad(v.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        h, wd = v.shape[2:]
        return sum(np.einsum("nchw,mc->nmhw", p[:, :, i:i + h, j:j + wd], w[:, :, i, j]) for i in range(3)
                   for j in range(3))

    want3 = conv3(np.einsum("nchw,mc->nmhw", data.astype(np.float64), w1[:, :, 0, 0]), w3)
    pooled = want3[:, :, :12, :12].reshape(1, 24, 4, 3, 4, 3).max(axis=(3, 5))
    e = np.exp(want3 - want3.max(axis=3, keepdims=True))
    for _ in range(10):
        got3, got_small, got_soft = op({"x": data})
        np.testing.assert_allclose(got3, want3, rtol=1e-4, atol=1e-4 * np.abs(want3).max())
        np.testing.assert_allclose(got_small, conv3(pooled, w5), rtol=1e-4, atol=1e-4 * np.abs(want3).max())
        np.testing.assert_allclose(got_soft, e / e.sum(axis=3, keepdims=True), rtol=1e-4, atol=1e-6)


MOVES_OFF = """
import json, os, time, numpy as np, directml as dml
processors = sorted(os.sched_getaffinity(0))
others = set(os.listdir("/proc/self/task"))
g = dml.Graph(dml.Device("cpu", threads=2))
(worker,) = map(int, set(os.listdir("/proc/self/task")) - others)  # its pool of two threads: one worker
x = g.input([1024, 1000], name="x")
op = g.compile([dml.activation_softmax(x)])
data = np.random.default_rng(0).standard_normal((1024, 1000)).astype(np.float32)
op({"x": data})
with open(f"/proc/self/task/{worker}/comm") as f:
    assert f.read().strip() == "directml cpu"  # named, for top -H and debuggers
first = processors[0]
os.sched_setaffinity(0, {first})  # the calling thread
os.sched_setaffinity(worker, {first})  # and the worker, on one processor
e = np.exp(data - data.max(axis=1, keepdims=True))
until = time.monotonic() + 10
while os.sched_getaffinity(worker) == {first} and time.monotonic() < until:
    (got,) = op({"x": data})
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
print(json.dumps([sorted(os.sched_getaffinity(worker)), processors]))
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two processors to run on")
def test_a_worker_on_the_callers_processor_moves_off_it(tmp_path):
    # A worker woken on the processor of the thread that dispatched (as a guest kernel that packs threads puts it
    # after an idle spell) would run only while the caller waits: it moves to the other processors it was created
    # with. Forced here by pinning both threads to one processor; the worker then leaves it, the results unchanged.
    done = python(MOVES_OFF, tmp_path)
    assert done.returncode == 0, done.stderr
    moved, processors = json.loads(done.stdout)
    assert moved == processors[1:]


@pytest.mark.parametrize("threads", [0, 1025])
def test_device_thread_count_out_of_range(threads):
    with pytest.raises(ValueError, match=f"threads must be between 1 and 1024, got {threads}"):
        dml.Device("cpu", threads=threads)


def test_device_thread_count_is_a_keyword():
    with pytest.raises(TypeError):
        dml.Device("cpu", 0, 2)


def test_join_inputs_are_written_in_place():
    # A branch read only by a join (along an axis with nothing before it) is written by its producer straight
    # into its slice of the joined output: the join's output is the one intermediate left.
    rng = np.random.default_rng(5)
    data = rng.standard_normal((1, 16, 4, 4)).astype(np.float32)  # 1 KiB a branch
    g = dml.Graph(dml.Device("cpu"))
    x = g.input(data.shape, name="x")
    op = g.compile([dml.tanh(dml.join([dml.abs(x), dml.exp(x)], axis=1))])
    assert op.temporary_size == 2048  # the join's output; abs's and exp's 1 KiB each live inside it
    np.testing.assert_allclose(op({"x": data})[0], np.tanh(np.concatenate([abs(data), np.exp(data)], 1)), rtol=1e-6)
    # The join's output a graph output: the branches go into the caller's buffer, at their offsets.
    g = dml.Graph(dml.Device("cpu"))
    x = g.input(data.shape, name="x")
    op = g.compile([dml.join([dml.abs(x), dml.exp(x)], axis=1)])
    assert op.temporary_size == 0
    np.testing.assert_allclose(op({"x": data})[0], np.concatenate([abs(data), np.exp(data)], 1), rtol=1e-6)


@pytest.mark.parametrize("case", ["read twice", "twice in the join", "batch of 2", "nested", "unaligned slice",
                                  "viewed"])
def test_join_inputs_that_stay_apart_or_nest(case):
    # Branches the plan must not place in the join's output (another reader, a second slice, slices that are
    # not contiguous, an offset off the 64-byte blocks, read through a view) and joins placed in joins: the
    # results are the same either way.
    rng = np.random.default_rng(6)
    shape = {"batch of 2": (2, 16, 4, 4), "unaligned slice": (1, 3, 1, 5)}.get(case, (1, 16, 4, 4))
    data = rng.standard_normal(shape).astype(np.float32)
    g = dml.Graph(dml.Device("cpu"))
    x = g.input(data.shape, name="x")
    a, b = dml.abs(x), dml.exp(x)
    na, nb = abs(data), np.exp(data)
    if case == "read twice":
        outs, want = [dml.join([a, b], axis=1), dml.tanh(a)], [np.concatenate([na, nb], 1), np.tanh(na)]
    elif case == "twice in the join":
        outs, want = [dml.tanh(dml.join([a, b, a], axis=1))], [np.tanh(np.concatenate([na, nb, na], 1))]
    elif case == "nested":
        inner = dml.join([a, b], axis=1)
        outs = [dml.join([inner, dml.tanh(x)], axis=1)]
        want = [np.concatenate([na, nb, np.tanh(data)], 1)]
    elif case == "viewed":  # a read through a view of its own shape: each channel transposed
        transposed = dml.reinterpret(a, [1, 16, 4, 4], [256, 16, 1, 4])
        outs, want = [dml.join([transposed, b], axis=1)], [np.concatenate([na.transpose(0, 1, 3, 2), nb], 1)]
    else:
        outs, want = [dml.tanh(dml.join([a, b], axis=1))], [np.tanh(np.concatenate([na, nb], 1))]
    op = g.compile(outs)
    if case == "nested":  # both joins' inputs placed in the caller's buffer
        assert op.temporary_size == 0
    got = op({"x": data})
    for r, w in zip(got, want):
        np.testing.assert_allclose(r, w, rtol=1e-6)


@pytest.mark.parametrize("n", [(4 << 20) // 4 - 1, (4 << 20) // 4, (16 << 20) // 4 + 3])
def test_outputs_from_4_mib_on_asked_for_huge_pages_hold_every_value(n):
    # From 4 MiB a block is advised to use huge pages (Linux); just below, at, and past it (not a whole page):
    # every element written and read back, the last one included, on both threads.
    g = dml.Graph(dml.Device("cpu", threads=2))
    x, y = g.input([1, 1, 1, n], name="x"), g.input([1, 1, 1, n], name="y")
    op = g.compile([dml.add(x, y, fused_activation=dml.FusedActivation.relu())])
    rng = np.random.default_rng(n)
    X, Y = rng.standard_normal((1, 1, 1, n), np.float32), rng.standard_normal((1, 1, 1, n), np.float32)
    for _ in range(2):  # the second call's output may reuse the first's freed block
        out, = op({"x": X, "y": Y})
        np.testing.assert_array_equal(out, np.maximum(X + Y, 0))
