"""gemm, matrix_multiply_integer and quantized_linear_matrix_multiply against NumPy references."""

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(7)
TOL = {np.float32: 1e-5, np.float16: 2e-2, np.float64: 1e-12}


def run(graph, outputs, feeds=None):
    return graph.compile(list(outputs))(feeds or {})


def rand(shape, dtype=np.float32):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def close(got, want, dtype):
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@pytest.fixture
def graph(device):
    return dml.Graph(device)


# --- gemm ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("with_c", [False, True])
def test_gemm_transposes_alpha_beta(graph, dtype, trans_a, trans_b, with_c):
    M, K, N = 5, 7, 3
    a = rand((2, 3, K, M) if trans_a else (2, 3, M, K), dtype)
    b = rand((2, 3, N, K) if trans_b else (2, 3, K, N), dtype)
    c = rand((2, 3, M, N), dtype)
    ea, eb = graph.input(a.shape, dtype), graph.input(b.shape, dtype)
    ec = graph.input(c.shape, dtype) if with_c else None
    T = dml.MatrixTransform
    y = dml.gemm(ea, eb, ec, trans_a=T.TRANSPOSE if trans_a else T.NONE, trans_b=T.TRANSPOSE if trans_b else T.NONE,
                 alpha=0.75, beta=-1.5)
    assert y.shape == (2, 3, M, N) and y.dtype == dtype
    feeds = {ea: a, eb: b, **({ec: c} if with_c else {})}
    (got,) = run(graph, [y], feeds)
    A = a.astype(np.float64).swapaxes(2, 3) if trans_a else a.astype(np.float64)
    B = b.astype(np.float64).swapaxes(2, 3) if trans_b else b.astype(np.float64)
    want = 0.75 * (A @ B) + (-1.5 * c.astype(np.float64) if with_c else 0)
    assert got.dtype == dtype
    close(got, want, dtype)


def test_gemm_defaults_alpha_beta_one(graph):
    a, b, c = rand((1, 1, 4, 6)), rand((1, 1, 6, 2)), rand((1, 1, 4, 2))
    ea, eb, ec = graph.input(a.shape), graph.input(b.shape), graph.input(c.shape)
    (got,) = run(graph, [dml.gemm(ea, eb, ec)], {ea: a, eb: b, ec: c})
    close(got, a.astype(np.float64) @ b + c, np.float32)


FUSED = [
    (dml.FusedActivation.relu(), lambda x: np.maximum(x, 0)),
    (dml.FusedActivation.leaky_relu(0.1), lambda x: np.where(x >= 0, x, 0.1 * x)),
    (dml.FusedActivation.sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (dml.FusedActivation.tanh(), np.tanh),
    (dml.FusedActivation.linear(2.0, -0.5), lambda x: 2 * x - 0.5),
    (dml.FusedActivation.elu(0.5), lambda x: np.where(x >= 0, x, 0.5 * (np.exp(x) - 1))),
]


@pytest.mark.parametrize("fused,ref", FUSED, ids=lambda v: getattr(v, "function", ""))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gemm_fused_activation(graph, fused, ref, dtype):
    a, b, c = rand((1, 2, 3, 5), dtype), rand((1, 2, 5, 4), dtype), rand((1, 2, 3, 4), dtype)
    ea, eb, ec = graph.input(a.shape, dtype), graph.input(b.shape, dtype), graph.input(c.shape, dtype)
    (got,) = run(graph, [dml.gemm(ea, eb, ec, beta=0.5, fused_activation=fused)], {ea: a, eb: b, ec: c})
    close(got, ref(a.astype(np.float64) @ b + 0.5 * c.astype(np.float64)), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gemm_transposed_views_and_broadcast_c(graph, dtype):
    # a and b arrive as transposed views of their buffers (column-major and fully strided), c as a row broadcast
    M, K, N = 6, 4, 5
    a_t = rand((1, 1, K, M), dtype)
    b_big = rand((1, 1, 2 * N, K + 3), dtype)  # b is b_big[..., ::2, :K] read transposed
    c_row = rand((1, 1, 1, N), dtype)
    ea_t, eb_big, ec = graph.input(a_t.shape, dtype), graph.input(b_big.shape, dtype), graph.input(c_row.shape, dtype)
    a_view = dml.reinterpret(ea_t, [1, 1, M, K], [M * K, M * K, 1, M])
    b_view = dml.reinterpret(eb_big, [1, 1, K, N], [0, 0, 1, 2 * (K + 3)])
    c_view = dml.broadcast(ec, [1, 1, M, N])
    assert c_view.strides[2] == 0
    (got,) = run(graph, [dml.gemm(a_view, b_view, c_view)], {ea_t: a_t, eb_big: b_big, ec: c_row})
    A = a_t[0, 0].T.astype(np.float64)
    B = b_big[0, 0, ::2, :K].T.astype(np.float64)
    close(got[0, 0], A @ B + c_row[0, 0].astype(np.float64), dtype)


def test_gemm_broadcast_batch_and_column_c(graph):
    # a is shared by every batch entry (zero batch stride); c is one column broadcast across the output's columns
    a, b, c = rand((1, 1, 3, 4)), rand((2, 3, 4, 5)), rand((1, 1, 3, 1))
    ea, eb, ec = graph.input(a.shape), graph.input(b.shape), graph.input(c.shape)
    y = dml.gemm(dml.broadcast(ea, [2, 3, 3, 4]), eb, dml.broadcast(ec, [2, 3, 3, 5]))
    (got,) = run(graph, [y], {ea: a, eb: b, ec: c})
    close(got, a.astype(np.float64) @ b + c, np.float32)


def test_gemm_non_contiguous_numpy_inputs(graph):
    big = rand((1, 1, 8, 6))
    a = big[:, :, ::2, 1:5]  # a strided NumPy view, converted at dispatch
    b = np.asfortranarray(rand((1, 1, 4, 3)))
    ea, eb = graph.input([1, 1, 4, 4]), graph.input([1, 1, 4, 3])
    (got,) = run(graph, [dml.gemm(ea, eb)], {ea: a, eb: b})
    close(got, a.astype(np.float64) @ b, np.float32)


def test_gemm_float16_accumulates_wider_than_float16(graph):
    # 4096 ones of 1.0 sum to 4096 exactly only if the sum is not rounded to float16 along the way
    a, b = np.ones((1, 1, 1, 4096), np.float16), np.ones((1, 1, 4096, 1), np.float16)
    ea, eb = graph.input(a.shape, np.float16), graph.input(b.shape, np.float16)
    (got,) = run(graph, [dml.gemm(ea, eb, alpha=1 / 64)], {ea: a, eb: b})
    assert got.item() == 64.0


@pytest.mark.parametrize("trans_a", [False, True])
def test_gemm_float16_widens_and_narrows_exactly(graph, trans_a):
    # A @ I, scaled by 1 and by 1/2: float16 in, float out of the sum, float16 back, bit for bit. The values span
    # subnormals (halving an odd multiple of 2^-24 is a tie, rounded to even) and the largest float16; the
    # rows are longer than a vector of 8 and a has both layouts, so that the conversions of whole vectors are tried.
    M, K = 21, 40
    bits = RNG.integers(0, 0x7C00, (M, K), dtype=np.uint16) | (RNG.integers(0, 2, (M, K), dtype=np.uint16) << 15)
    bits[0, :8] = [0x0001, 0x0003, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x8000]
    a = bits.view(np.float16)
    eye = np.eye(K, dtype=np.float16)[None, None]
    stored = np.ascontiguousarray(a.T if trans_a else a)[None, None]
    ea, eb = graph.input(stored.shape, np.float16), graph.input(eye.shape, np.float16)
    T = dml.MatrixTransform.TRANSPOSE if trans_a else dml.MatrixTransform.NONE
    got = run(graph, [dml.gemm(ea, eb, trans_a=T), dml.gemm(ea, eb, trans_a=T, alpha=0.5)], {ea: stored, eb: eye})
    halved = (a.astype(np.float32) * np.float32(0.5)).astype(np.float16)
    def bits_of(x):  # the sign of a zero sum depends on the order of its terms
        return np.where(x == 0, 0, x.view(np.uint16)).tolist()

    for g, want in zip(got, [a, halved]):
        assert bits_of(g[0, 0]) == bits_of(want)


# float16 and float32 products large enough for the cpu executor's AMX path (kernels/amx_gemm.h) where the processor
# has it; the same tests check the BLAS path elsewhere and under DIRECTML_CPU_ISA caps. Shapes: K of 1 and not a
# multiple of 16, M and N not multiples of 32 (the tiles' padding), rows in several blocks.
# The last six are large enough for float32's tiles too (amx_gemm_pays<float>): rows in one block and in two, K
# not a multiple of 16, columns past one block of 1024; the last two on two threads as well (512 rows or more), a
# block of B split between them and row blocks shared out.
LARGE_PRODUCTS = [(2048, 1, 1024), (16, 300, 200), (37, 300, 45), (67, 300, 109), (64, 300, 128), (100, 17, 1300),
                  (257, 257, 33), (600, 160, 96), (600, 50, 9), (130, 513, 70), (1, 4096, 4096),
                  (67, 1000, 259), (300, 190, 300), (130, 1030, 150), (70, 230, 1100), (512, 200, 170), (600, 130, 300)]
# Each type's unit roundoff, and the bound on a sum's error (either type) as a share of its terms' magnitudes: float's
# own accumulation errs by about 1e-7 of it. A product of pieces left out errs by more: lo times lo (2^-16 of each
# product) for float16, a1 b1 or a0 b2 (2^-16 to 2^-18) for float32 where K is small.
UNIT = {np.float16: 2.0**-11, np.float32: 2.0**-24}
SUM_BOUND = 1e-6
# Half the type's smallest subnormal: a result's rounding near zero.
FLOOR = {np.float16: 2.0**-25, np.float32: 2.0**-150}


@pytest.fixture(params=[1, 2], ids=["threads1", "threads2"])
def tile_graph(request, device):
    """A graph on the device under test; on the cpu executor, on one thread and on two (the tiles' row blocks split,
    and float32 takes the tiles on two threads only from 512 rows): the default device has as many threads as the
    machine has cores, which would leave one thread's rule untested on most machines."""
    if device.kind != "cpu":
        if request.param != 1:
            pytest.skip("threads are the cpu executor's")
        return dml.Graph(device)
    return dml.Graph(dml.Device("cpu", threads=request.param))


def operand(shape, trans, dtype):
    """A random operand of these logical sizes as stored (transposed if asked), and the matrix it holds."""
    x = rand((*shape[:2], shape[3], shape[2]) if trans else shape, dtype)
    return x, (x.swapaxes(2, 3) if trans else x).astype(np.float64)


def assert_tile_product(got, want, magnitude, dtype):
    """got: the rounding to dtype of a float sum whose error against want (exact) is at most SUM_BOUND of the sum of
    the terms' magnitudes."""
    bound = UNIT[dtype] * np.abs(want) * 1.001 + SUM_BOUND * magnitude + FLOOR[dtype]
    err = np.abs(got.astype(np.float64) - want)
    worst = np.unravel_index(np.argmax(err / bound), err.shape)
    assert (err <= bound).all(), f"error {err[worst]:.3g} at {worst}: {err[worst] / bound[worst]:.2f} times the bound"


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("M,K,N", LARGE_PRODUCTS)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_large_products(tile_graph, dtype, M, K, N, trans_a, trans_b):
    # A B - C with C = A B rounded to dtype: what is left (about one rounding of A B) shows the sum's own error.
    (a, A), (b, B) = operand((1, 1, M, K), trans_a, dtype), operand((1, 1, K, N), trans_b, dtype)
    c = (A @ B).astype(dtype)
    ea, eb, ec = (tile_graph.input(x.shape, dtype) for x in (a, b, c))
    T = dml.MatrixTransform
    y = dml.gemm(ea, eb, ec, trans_a=T.TRANSPOSE if trans_a else T.NONE, trans_b=T.TRANSPOSE if trans_b else T.NONE,
                 beta=-1.0)
    (got,) = run(tile_graph, [y], {ea: a, eb: b, ec: c})
    assert_tile_product(got, A @ B - c, np.abs(A) @ np.abs(B) + np.abs(c), dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("relu", [False, True])
def test_gemm_large_batched_alpha_beta(tile_graph, dtype, relu):
    # batches with a broadcast b, a transposed view of a, alpha and beta on a broadcast c row, a fused relu
    (a, A), (b, B) = operand((2, 3, 70, 600), True, dtype), operand((1, 1, 600, 420), False, dtype)
    c = rand((1, 1, 1, 420), dtype)
    ea, eb, ec = (tile_graph.input(x.shape, dtype) for x in (a, b, c))
    y = dml.gemm(ea, dml.broadcast(eb, [2, 3, 600, 420]), dml.broadcast(ec, [2, 3, 70, 420]),
                 trans_a=dml.MatrixTransform.TRANSPOSE, alpha=0.75, beta=-1.5,
                 fused_activation=dml.FusedActivation.relu() if relu else dml.FusedActivation.none())
    (got,) = run(tile_graph, [y], {ea: a, eb: b, ec: c})
    want = 0.75 * (A @ B) - 1.5 * c.astype(np.float64)
    magnitude = 0.75 * np.abs(A) @ np.abs(B) + 1.5 * np.abs(c.astype(np.float64))
    assert_tile_product(got, np.maximum(want, 0) if relu else want, magnitude, dtype)


EXTREMES = ["subnormal", "overflow", "inf_a", "nan_b", "inf_times_zero", "opposite_infs"]


@pytest.mark.parametrize("dtype,case", [(np.float16, c) for c in EXTREMES] +
                         [(np.float32, c) for c in EXTREMES + ["tiny_among_normal", "near_max"]])
def test_gemm_large_extremes(tile_graph, dtype, case):
    # Values at the type's ends, and infinities and NaN as float arithmetic makes them (inf times 0 is NaN, inf - inf
    # too): the tiles' pieces cannot carry an infinity, a float that rounds to bfloat16's infinity or a float below
    # 2^-50 (its pieces' products would be flushed), so such products take the BLAS path instead.
    M, K, N = 100, 400, 420
    a, b = rand((1, 1, M, K), dtype), rand((1, 1, K, N), dtype)
    # float16 sums in float, past any product's range; float32's products stay finite (1.5e19 squared), and with one
    # sign the overflowing columns' sums overflow whatever their order (the other columns keep both signs: a sum of
    # one sign errs by up to K roundings, more than the bound allows).
    big = dtype(6e4) if dtype == np.float16 else dtype(1.5e19)
    if case == "subnormal":  # most of a subnormal, most products below the type's range
        a *= dtype(2.0**-14) if dtype == np.float16 else dtype(2.0**-126)
    elif case == "overflow":
        a = (a if dtype == np.float16 else np.abs(a)) * big
        b[0, 0, :, ::2] = (b if dtype == np.float16 else np.abs(b))[0, 0, :, ::2] * big  # sums far past the largest
    elif case == "inf_a":
        a[0, 0, 3, 7], a[0, 0, 40, 0] = np.inf, -np.inf
    elif case == "nan_b":
        b[0, 0, 5, 9] = np.nan
    elif case == "inf_times_zero":
        a[0, 0, 10, 20], b[0, 0, 20, :40] = np.inf, 0
    elif case == "opposite_infs":
        a[0, 0, 1, 2], a[0, 0, 1, 3], b[0, 0, 2, 4], b[0, 0, 3, 4] = np.inf, np.inf, 1, -1
    elif case == "tiny_among_normal":  # a row of A and a column of B of magnitudes 2^-60 to 2^-59 (none nearer
        # zero): their products' pieces fall below float's range
        a[0, 0, 7] = dtype(2.0**-60) * (1 + np.abs(a[0, 0, 7]))
        b[0, 0, :, 9] = dtype(2.0**-60) * (1 + np.abs(b[0, 0, :, 9]))
    else:  # a row near float's largest, whose bfloat16 rounding is infinity; the products and sums are finite
        a[0, 0, 4, :] = np.float32(3.4e38)
        b *= np.float32(2.0**-20)
    ea, eb = tile_graph.input(a.shape, dtype), tile_graph.input(b.shape, dtype)
    (got,) = run(tile_graph, [dml.gemm(ea, eb)], {ea: a, eb: b})
    A, B = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        want = A @ B
        rounded = want.astype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(rounded))
    np.testing.assert_array_equal(np.sign(got[np.isinf(got)]), np.sign(rounded[np.isinf(rounded)]))
    finite = np.isfinite(rounded)
    with np.errstate(invalid="ignore", over="ignore"):
        magnitude = np.abs(A) @ np.abs(B)
    # Where a row of the result is tiny, the bound is on its own terms' sizes: float's subnormals count.
    assert_tile_product(got[finite], want[finite], magnitude[finite], dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_gemm_large_falls_back_after_rows_stored(dtype):
    # One thread and rows in three blocks of the tiles' schedule: the first block's rows are stored before a value the
    # pieces cannot carry turns up in the last block's rows of A, and the whole product is then computed again; C,
    # read by both, must be what it was.
    g = dml.Graph(dml.Device("cpu", threads=1))
    M, K, N = 600, 200, 300
    a, b, c = rand((1, 1, M, K), dtype), rand((1, 1, K, N), dtype), rand((1, 1, M, N), dtype)
    a[0, 0, 590, 3] = np.inf
    ea, eb, ec = (g.input(x.shape, dtype) for x in (a, b, c))
    (got,) = run(g, [dml.gemm(ea, eb, ec, alpha=0.5, beta=2.0)], {ea: a, eb: b, ec: c})
    A, B, C = (x.astype(np.float64) for x in (a, b, c))
    with np.errstate(invalid="ignore"):
        want = 0.5 * (A @ B) + 2.0 * C
    assert np.isinf(got[0, 0, 590]).all()
    rows = np.arange(M) != 590
    with np.errstate(invalid="ignore"):
        magnitude = 0.5 * np.abs(A) @ np.abs(B) + 2.0 * np.abs(C)
    assert_tile_product(got[0, 0, rows], want[0, 0, rows], magnitude[0, 0, rows], dtype)


def test_gemm_errors(graph):
    a, b = graph.input([1, 1, 3, 4]), graph.input([1, 1, 4, 5])
    with pytest.raises(ValueError, match="inner dimensions differ"):
        dml.gemm(a, graph.input([1, 1, 3, 5]))
    with pytest.raises(ValueError, match="batch and channel sizes differ"):
        dml.gemm(a, graph.input([2, 1, 4, 5]))
    with pytest.raises(ValueError, match="must have 4 dimensions"):
        dml.gemm(graph.input([3, 4]), b)
    with pytest.raises(ValueError, match="element types differ"):
        dml.gemm(a, graph.input([1, 1, 4, 5], np.float16))
    with pytest.raises(ValueError, match="allowed: FLOAT32"):
        dml.gemm(graph.input([1, 1, 3, 4], np.int32), graph.input([1, 1, 4, 5], np.int32))
    with pytest.raises(ValueError, match=r"c has sizes \[1, 1, 1, 5\].*broadcast c explicitly"):
        dml.gemm(a, b, graph.input([1, 1, 1, 5]))
    with pytest.raises(ValueError, match="c has type FLOAT16"):
        dml.gemm(a, b, graph.input([1, 1, 3, 5], np.float16))
    other = dml.Graph(graph.device)
    with pytest.raises(ValueError, match="different graphs"):
        dml.gemm(a, other.input([1, 1, 4, 5]))
    with pytest.raises(TypeError):
        dml.gemm(a, b, 1.0)


# --- integer products ---------------------------------------------------------------------------------------------


def randint(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def integer_product(a, b, za=0, zb=0):
    return (a.astype(np.int64) - np.asarray(za, np.int64)) @ (b.astype(np.int64) - np.asarray(zb, np.int64))


@pytest.mark.parametrize("ta,tb", [(np.int8, np.int8), (np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.uint8)])
@pytest.mark.parametrize("zero_points", ["none", "tensor", "row_column"])
def test_matrix_multiply_integer(graph, ta, tb, zero_points):
    M, K, N = 4, 9, 3
    a, b = randint((2, 1, M, K), ta), randint((2, 1, K, N), tb)
    ea, eb = graph.input(a.shape, ta), graph.input(b.shape, tb)
    feeds, za, zb, eza, ezb = {ea: a, eb: b}, 0, 0, None, None
    if zero_points != "none":
        za = randint((1, 1, M, 1) if zero_points == "row_column" else (1, 1, 1, 1), ta)
        zb = randint((1, 1, 1, N) if zero_points == "row_column" else (1, 1, 1, 1), tb)
        eza, ezb = graph.input(za.shape, ta), graph.input(zb.shape, tb)
        feeds.update({eza: za, ezb: zb})
    y = dml.matrix_multiply_integer(ea, eb, eza, ezb)
    assert y.dtype == np.int32 and y.shape == (2, 1, M, N)
    (got,) = run(graph, [y], feeds)
    np.testing.assert_array_equal(got, integer_product(a, b, za, zb))


def test_matrix_multiply_integer_strided_a_and_wraps(graph):
    # a read transposed from its buffer; sums past INT32 wrap around as a 32-bit accumulator does
    a_t = np.full((1, 1, 140000, 2), -128, np.int8)
    b = np.full((1, 1, 140000, 1), -128, np.int8)
    ea_t, eb = graph.input(a_t.shape, np.int8), graph.input(b.shape, np.int8)
    a_view = dml.reinterpret(ea_t, [1, 1, 2, 140000], [0, 0, 1, 2])
    (got,) = run(graph, [dml.matrix_multiply_integer(a_view, eb)], {ea_t: a_t, eb: b})
    exact = 140000 * 128 * 128
    assert exact > 2**31
    np.testing.assert_array_equal(got.ravel(), [np.int64(exact).astype(np.int32)] * 2)


def quantize_ref(real, scale, zero, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.round(real / scale) + zero, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("out_type", [np.uint8, np.int8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantized_linear_matrix_multiply(graph, out_type, per_axis):
    M, K, N = 3, 6, 4
    a, b = randint((1, 2, M, K), np.uint8), randint((1, 2, K, N), np.int8)
    a_scale = RNG.uniform(0.01, 0.05, (1, 1, M, 1) if per_axis else (1, 1, 1, 1)).astype(np.float32)
    b_scale = RNG.uniform(0.01, 0.05, (1, 1, 1, N) if per_axis else (1, 1, 1, 1)).astype(np.float32)
    za, zb = randint(a_scale.shape, np.uint8), randint(b_scale.shape, np.int8)
    acc = integer_product(a, b, za, zb).astype(np.float64)
    real = acc * (a_scale.astype(np.float64) * b_scale.astype(np.float64))
    # An output scale that maps the results over about +-100 steps, so that few saturate whatever the data.
    y_scale = (np.abs(real).max() / 100 * RNG.uniform(0.8, 1.2, (1, 1, M, 1) if per_axis else (1, 1, 1, 1)))
    y_scale = y_scale.astype(np.float32)
    zy = (RNG.integers(-20, 20, y_scale.shape) + (128 if out_type == np.uint8 else 0)).astype(out_type)
    arrays = [a, a_scale, b, b_scale, y_scale, za, zb, zy]
    inputs = [graph.input(x.shape, x.dtype) for x in arrays]
    y = dml.quantized_linear_matrix_multiply(*inputs)
    assert y.dtype == out_type
    (got,) = run(graph, [y], dict(zip(inputs, arrays)))
    want = quantize_ref(real, y_scale.astype(np.float64), zy.astype(np.float64), out_type)
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got)) > 3  # the data exercises more than saturation


def test_quantized_linear_matrix_multiply_without_zero_points(graph):
    a, b = randint((1, 1, 2, 5), np.int8), randint((1, 1, 5, 3), np.int8)
    s = np.float32([[[[0.02]]]])
    ea, eb, es = graph.input(a.shape, np.int8), graph.input(b.shape, np.int8), graph.input(s.shape)
    y = dml.quantized_linear_matrix_multiply(ea, es, eb, es, es, output_dtype=np.int8)
    assert y.dtype == np.int8
    (got,) = run(graph, [y], {ea: a, eb: b, es: s})
    scale = np.float64(s.item())
    real = integer_product(a, b).astype(np.float64) * (scale * scale)
    np.testing.assert_array_equal(got, quantize_ref(real, scale, 0.0, np.int8))
    assert dml.quantized_linear_matrix_multiply(ea, es, eb, es, es).dtype == np.uint8  # the default


def test_integer_product_errors(graph):
    a, b = graph.input([1, 1, 2, 3], np.int8), graph.input([1, 1, 3, 4], np.uint8)
    s = graph.input([1, 1, 1, 1])
    with pytest.raises(ValueError, match="a has type FLOAT32"):
        dml.matrix_multiply_integer(graph.input([1, 1, 2, 3]), b)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        dml.matrix_multiply_integer(a, graph.input([1, 1, 4, 4], np.int8))
    with pytest.raises(ValueError, match="a_zero_point has type UINT8"):
        dml.matrix_multiply_integer(a, b, graph.input([1, 1, 1, 1], np.uint8))
    with pytest.raises(ValueError, match=r"b_zero_point has sizes \[1, 1, 3, 1\]"):
        dml.matrix_multiply_integer(a, b, None, graph.input([1, 1, 3, 1], np.uint8))
    with pytest.raises(ValueError, match="a_scale has type FLOAT16"):
        dml.quantized_linear_matrix_multiply(a, graph.input([1, 1, 1, 1], np.float16), b, s, s)
    with pytest.raises(ValueError, match="output type INT8 differs"):
        dml.quantized_linear_matrix_multiply(a, s, b, s, s, output_zero_point=graph.input([1, 1, 1, 1], np.uint8),
                                             output_dtype=np.int8)
    with pytest.raises(ValueError, match="INT8 or UINT8"):
        dml.quantized_linear_matrix_multiply(a, s, b, s, s, output_dtype=np.int32)
