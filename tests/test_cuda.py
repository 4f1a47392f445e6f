"""The cuda executor against the cpu executor: the same random graphs built on Device("cpu") and
Device("cuda"), run, and compared; then Buffers staying on the GPU, DLPack hand-over to PyTorch and CuPy, graph
replay, out-of-memory and library errors.

Every test but the first needs a CUDA device and skips without one, saying so.
"""

import os
import subprocess
import tempfile
import sys

import numpy as np
import pytest

import directml as dml

HAVE_CUDA = "cuda" in dml.available_device_kinds()
NO_CUDA = "no CUDA device: the cuda executor is not built here, or no GPU / driver is present"

FLOATS = [np.float32, np.float16, np.float64]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
ALL = FLOATS + SIGNED + UNSIGNED


def test_without_a_device_cuda_raises_device_error():
    if HAVE_CUDA:
        pytest.skip("a CUDA device is present")
    with pytest.raises(dml.DeviceError) as info:
        dml.Device("cuda")
    assert info.value.code  # NOT_BUILT, or CUDA's name for what is missing (cudaErrorNoDevice, ...)
    if "DIRECTML_DEVICE" not in os.environ:
        assert dml.Device().kind == "cpu"


@pytest.fixture(scope="module")
def cuda():
    if not HAVE_CUDA:
        pytest.skip(NO_CUDA)
    return dml.Device("cuda")


@pytest.fixture(scope="module")
def cpu():
    return dml.Device("cpu")


def tolerance(dtype):
    return {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11}.get(np.dtype(dtype), 0)


def run(device, build, feeds):
    """build(graph) -> list of outputs, compiled for `device` and called with `feeds`."""
    graph = dml.Graph(device)
    outputs = build(graph)
    return graph.compile(outputs)(feeds)


def compare(cuda, cpu, build, feeds, rtol=None, atol=None):
    """Runs on both devices; the results agree within the dtype's tolerance (exactly for integers)."""
    try:
        expected = run(cpu, build, feeds)
    except ValueError as e:  # the builder refuses this combination: nothing to compare
        pytest.skip(f"the builder refuses it: {e}")
    got = run(cuda, build, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        if np.issubdtype(e.dtype, np.floating):
            tol = tolerance(e.dtype)
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol if rtol is not None else tol,
                                       atol=atol if atol is not None else tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, e)
    return got


def rand(shape, dtype, low=-3.0, high=3.0, seed=0):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True)
        return values.astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


# --- element-wise --------------------------------------------------------------------------------------------

UNARY_DOMAINS = {
    "acos": (-0.9, 0.9), "asin": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.1, 3.0), "log": (0.1, 3.0),
    "sqrt": (0.1, 3.0), "recip": (0.2, 3.0), "tan": (-1.2, 1.2),
}
UNARY = ["identity", "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp",
         "floor", "log", "recip", "sin", "sinh", "sqrt", "tan", "tanh", "negate"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", UNARY)
def test_unary_float(cuda, cpu, name, dtype):
    x = rand([2, 3, 5, 7], dtype, *UNARY_DOMAINS.get(name, (-3.0, 3.0)))
    fn = getattr(dml, name)
    compare(cuda, cpu, lambda g: [fn(g.input(x.shape, dtype, name="x"))], {"x": x})


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_scale_bias_and_sign(cuda, cpu, dtype):
    x = rand([3, 1, 4, 9], dtype)
    x.flat[::5] = 0
    compare(cuda, cpu, lambda g: [dml.exp(g.input(x.shape, dtype, name="x"), scale_bias=dml.ScaleBias(0.5, -0.25)),
                                  dml.sign(g.input(x.shape, dtype, name="y"))], {"x": x, "y": x})


@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("name", ["abs", "negate", "sign", "identity"])
def test_unary_integers(cuda, cpu, name, dtype):
    x = rand([4, 33], dtype)
    x.flat[0], x.flat[1] = np.iinfo(dtype).min, 0  # abs and negate of the minimum wrap
    fn = getattr(dml, name)
    compare(cuda, cpu, lambda g: [fn(g.input(x.shape, dtype, name="x"))], {"x": x})


BINARY = ["add", "subtract", "multiply", "divide", "max", "min", "modulus_floor", "modulus_truncate"]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", BINARY)
def test_binary(cuda, cpu, name, dtype):
    a = rand([2, 3, 4, 5], dtype, seed=1)
    b = rand([2, 3, 4, 5], dtype, seed=2)
    if np.issubdtype(dtype, np.integer):
        b.flat[:3] = [0, 1, 0]  # division and modulus by zero give 0
        if np.issubdtype(dtype, np.signedinteger):
            a.flat[3], b.flat[3] = np.iinfo(dtype).min, -1  # wraps
    else:
        b[np.abs(b) < 0.1] = 0.5
    fn = getattr(dml, name)
    compare(cuda, cpu, lambda g: [fn(g.input(a.shape, dtype, name="a"), g.input(b.shape, dtype, name="b"))],
            {"a": a, "b": b})


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.uint8])
def test_binary_broadcast_and_strided_views(cuda, cpu, dtype):
    a = rand([3, 4, 5], dtype, seed=3)
    b = rand([4, 1], dtype, seed=4)

    def build(g):
        x = g.input(a.shape, dtype, name="a")
        y = g.input(b.shape, dtype, name="b")
        xt = dml.reinterpret(x, [5, 4, 3], [1, 5, 20])  # a transposed view
        yb = dml.broadcast(dml.reinterpret(y, [1, 4, 1], [4, 1, 1]), [5, 4, 3])  # zero strides
        return [dml.multiply(xt, yb), dml.add(xt, xt)]

    compare(cuda, cpu, build, {"a": a, "b": b})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["relu", "sigmoid", "leaky_relu", "softplus"])
def test_add_fused_activation(cuda, cpu, act, dtype):
    a, b = rand([2, 2, 3, 17], dtype, seed=5), rand([2, 2, 3, 17], dtype, seed=6)
    f = getattr(dml.FusedActivation, act)()
    compare(cuda, cpu, lambda g: [dml.add(g.input(a.shape, dtype, name="a"), g.input(b.shape, dtype, name="b"),
                                          fused_activation=f)], {"a": a, "b": b})


@pytest.mark.parametrize("dtype", ALL)
def test_clip(cuda, cpu, dtype):
    x = rand([5, 13], dtype)
    outputs = lambda g: [dml.clip(g.input(x.shape, dtype, name="x"), min=-2.5, max=1e30)]  # noqa: E731
    compare(cuda, cpu, outputs, {"x": x})
    if np.issubdtype(dtype, np.floating):
        compare(cuda, cpu, lambda g: [dml.clip(g.input(x.shape, dtype, name="x"), min=-1, max=1,
                                               scale_bias=dml.ScaleBias(2, 0.5))], {"x": x})


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("count", [1, 7, 4096, 100003])  # in 16-byte vectors, with a tail of 0 to 7 elements
def test_packed_maps(cuda, cpu, count, dtype):
    """Element-wise maps over packed operands move 16-byte vectors (map.cuh); the elements past the last whole
    vector take the scalar tail."""
    a, b = rand([count], dtype, seed=1), rand([count], dtype, seed=2)

    def build(g):
        x, y = g.input(a.shape, dtype, name="a"), g.input(b.shape, dtype, name="b")
        return [dml.add(x, y, fused_activation=dml.FusedActivation.relu()), dml.multiply(x, y),
                dml.activation_swish(x), dml.activation_parameterized_relu(x, y),
                dml.clip(x, min=-1, max=2), dml.sqrt(dml.abs(x))]

    compare(cuda, cpu, build, {"a": a, "b": b})


CAST_VALUES = [-1e20, -3e9, -65536.5, -300.7, -129.5, -128.0, -1.5, -0.4, 0.0, 0.6, 1.5, 127.9, 255.5, 65535.7,
               2147483520.0, 3e9, 1e19, 1e20, np.inf, -np.inf, np.nan]


def cast_source(dtype):
    if np.issubdtype(dtype, np.floating):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.array(CAST_VALUES, dtype=np.float64).astype(dtype)
    info = np.iinfo(dtype)
    values = [info.min, info.min + 1, -1, 0, 1, 127, 128, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**53 + 1,
              info.max - 1, info.max]
    return np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)


@pytest.mark.parametrize("to", ALL)
@pytest.mark.parametrize("source", ALL)
def test_cast(cuda, cpu, source, to):
    x = cast_source(source)
    compare(cuda, cpu, lambda g: [dml.cast(g.input(x.shape, source, name="x"), dtype=to)], {"x": x},
            rtol=0, atol=0)


# --- activations --------------------------------------------------------------------------------------------

ACTIVATIONS = [
    ("activation_identity", {}), ("activation_relu", {}), ("activation_sigmoid", {}), ("activation_tanh", {}),
    ("activation_softsign", {}), ("activation_gelu", {}), ("activation_leaky_relu", {"alpha": 0.1}),
    ("activation_elu", {"alpha": 0.7}), ("activation_celu", {"alpha": 1.3}),
    ("activation_hard_sigmoid", {"alpha": 0.3, "beta": 0.4}), ("activation_linear", {"alpha": 1.5, "beta": -0.5}),
    ("activation_parametric_softplus", {"alpha": 0.8, "beta": 1.2}), ("activation_scaled_elu", {}),
    ("activation_scaled_tanh", {"alpha": 1.1, "beta": 0.6}), ("activation_softplus", {"steepness": 2.0}),
    ("activation_thresholded_relu", {"alpha": 0.5}), ("activation_shrink", {"bias": 0.2, "threshold": 0.7}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,params", ACTIVATIONS)
def test_activation(cuda, cpu, name, params, dtype):
    x = rand([2, 3, 4, 11], dtype)
    fn = getattr(dml, name)
    compare(cuda, cpu, lambda g: [fn(g.input(x.shape, dtype, name="x"), **params)], {"x": x})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axes", [None, [1], [1, 3], [0, 1, 2, 3]])
@pytest.mark.parametrize("name", ["activation_softmax", "activation_log_softmax", "activation_hardmax"])
def test_softmax(cuda, cpu, name, axes, dtype):
    x = rand([2, 5, 3, 7], dtype, -4, 4)
    if name == "activation_hardmax":
        x = np.round(x).astype(dtype)  # ties: the first maximum wins
    fn = getattr(dml, name)
    compare(cuda, cpu, lambda g: [fn(g.input(x.shape, dtype, name="x"), axes=axes)], {"x": x})


@pytest.mark.parametrize("inner", [3000, 70000])  # block-sized teams, several passes per thread
def test_softmax_large_groups_and_strided(cuda, cpu, inner):
    x = rand([2, inner], np.float32, -10, 10)

    def build(g):
        v = g.input(x.shape, np.float32, name="x")
        return [dml.activation_softmax(dml.reinterpret(v, [inner, 2], [1, inner]), axes=[0]),
                dml.activation_log_softmax(v, axes=[1])]

    compare(cuda, cpu, build, {"x": x}, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("width", [8, 640, 1000, 4096, 8192, 40000])
def test_softmax_rows_held_in_registers(cuda, cpu, width, dtype):
    """Softmax and log-softmax hold each row in registers: warps, blocks of up to 1024 threads moving vectors, and
    rows too long for one block in chunks (40000), or element by element (1000 is no whole number of vectors). A
    row of -inf, one with an element far above the rest, and one whose first half is -inf (whole chunks masked)."""
    x = rand([4, width], dtype, -8, 8)
    x[1] = -np.inf
    x[2, width // 3] = 60
    x[3, : width // 2] = -np.inf

    def build(g):
        v = g.input(x.shape, dtype, name="x")
        return [dml.activation_softmax(v, axes=[1]), dml.activation_log_softmax(v, axes=[1])]

    compare(cuda, cpu, build, {"x": x}, rtol=tolerance(dtype) * 10, atol=tolerance(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("width", [64, 640, 4096, 8192, 20000])
def test_layer_norm_widths(cuda, cpu, width, dtype):
    """Layer norm rows from one warp through blocks of 64 to 1024 threads to chunks, with scale, bias and an
    activation."""
    x = rand([4, width], dtype, -2, 2)
    scale, bias = rand([1, width], dtype, seed=1), rand([1, width], dtype, seed=2)

    def build(g):
        y = dml.mean_variance_normalization(g.input(x.shape, dtype, name="x"), g.constant(scale), g.constant(bias),
                                            axes=[1], normalize_variance=True, epsilon=1e-5)
        return [dml.activation_gelu(y)]  # folds into the normalization at compile

    tol = 2e-2 if dtype == np.float16 else 1e-4
    compare(cuda, cpu, build, {"x": x}, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape, axes, param_shape", [([4, 8192], [1], [1, 8192]), ([2, 40000], [1], [1, 40000]),
                                                      ([1, 2, 4, 128, 128], [2, 3, 4], [1, 2, 4, 1, 1])])
def test_normalization_groups_at_addresses_without_vectors(cuda, cpu, shape, axes, param_shape, dtype):
    """Groups planned for 16-byte vectors, on an input one element off a vector boundary (a torch view bound in
    place): they run element by element, cut for the teams that move elements. Layer norm rows of 8192 (one block
    of 512 threads moving vectors), rows of 40000 and group norm on 128 x 128 images (chunks of runs)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA: no device tensor to bind in place")
    x = rand(shape, dtype, -2, 2)
    scale, bias = rand(param_shape, dtype, seed=1), rand(param_shape, dtype, seed=2)

    def build(g):
        y = dml.mean_variance_normalization(g.input(shape, dtype, name="x"), g.constant(scale), g.constant(bias),
                                            axes=axes, normalize_variance=True, epsilon=1e-5)
        return [dml.activation_swish(y)]  # folds into the normalization at compile

    (want,) = run(cpu, build, {"x": x})
    stored = torch.zeros(x.size + 1, dtype=getattr(torch, np.dtype(dtype).name), device="cuda")
    stored[1:] = torch.from_numpy(x.ravel()).cuda()
    view = stored[1:].view(*shape)
    assert view.data_ptr() % 16 != 0
    torch.cuda.synchronize()
    (got,) = run(cuda, build, {"x": dml.Buffer.from_dlpack(cuda, view)})
    tol = 2e-2 if dtype == np.float16 else 1e-4
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


# --- reduce -------------------------------------------------------------------------------------------------

REDUCE = ["ARGMAX", "ARGMIN", "AVERAGE", "L1", "L2", "LOG_SUM", "LOG_SUM_EXP", "MAX", "MIN", "MULTIPLY", "SUM",
          "SUM_SQUARE"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.uint8, np.int64, np.uint32])
@pytest.mark.parametrize("axes", [None, [3], [0, 2], [1]])
@pytest.mark.parametrize("function", REDUCE)
def test_reduce(cuda, cpu, function, axes, dtype):
    low, high = (0.5, 1.5) if function in ("MULTIPLY", "LOG_SUM") else (-3, 3)
    x = rand([2, 3, 4, 6], dtype, low, high)
    if function in ("ARGMAX", "ARGMIN"):
        x = np.round(x).astype(dtype)  # ties: the first index wins
    f = getattr(dml.ReduceFunction, function)
    rtol = 1e-2 if dtype == np.float16 else (1e-5 if dtype == np.float32 else None)
    compare(cuda, cpu, lambda g: [dml.reduce(g.input(x.shape, dtype, name="x"), function=f, axes=axes)], {"x": x},
            rtol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])  # DirectML reduces no FLOAT64
def test_reduce_max_min_and_arg_skip_nan(cuda, dtype):
    # As a GPU's max / min: NaN never wins, wherever it stands, unless every element is NaN (then index 0).
    nan = np.nan
    x = np.array([[nan, 1, 3, nan], [1, nan, -3, 3], [nan, nan, nan, nan]], dtype=dtype)
    g = dml.Graph(cuda)
    a = g.input(x.shape, dtype, name="x")
    rf = dml.ReduceFunction
    mx, mn, amx, amn = g.compile([dml.reduce(a, function=f, axes=[1]) for f in (rf.MAX, rf.MIN, rf.ARGMAX, rf.ARGMIN)])(
        {"x": x})
    np.testing.assert_array_equal(mx[:, 0], [3, 3, nan])
    np.testing.assert_array_equal(mn[:, 0], [1, -3, nan])
    np.testing.assert_array_equal(amx[:, 0], [2, 3, 0])
    np.testing.assert_array_equal(amn[:, 0], [1, 2, 0])


@pytest.mark.parametrize("index_type", [np.uint32, np.int32, np.uint64, np.int64])
def test_argmax_index_types_and_large_groups(cuda, cpu, index_type):
    x = np.round(rand([3, 5000], np.float32, -50, 50))
    compare(cuda, cpu, lambda g: [dml.reduce(g.input(x.shape, np.float32, name="x"), function=dml.ReduceFunction.ARGMAX,
                                             axes=[1], output_dtype=index_type),
                                  dml.reduce(g.input(x.shape, np.float32, name="y"), function=dml.ReduceFunction.SUM,
                                             axes=[1])], {"x": x, "y": x}, rtol=1e-5, atol=1e-3)


# --- gemm ---------------------------------------------------------------------------------------------------

def gemm_case(cuda, cpu, dtype, shape, ta=False, tb=False, c=None, alpha=1.0, beta=1.0, act=None, views=None):
    """shape = (b0, b1, M, K, N); c: None, 'full', 'row' (a broadcast bias row), 'column' or 'scalar'."""
    b0, b1, m, k, n = shape
    a = rand([b0, b1, k, m] if ta else [b0, b1, m, k], dtype, -1, 1, seed=7)
    b = rand([b0, b1, n, k] if tb else [b0, b1, k, n], dtype, -1, 1, seed=8)
    feeds = {"a": a, "b": b}
    cshape = {"full": [b0, b1, m, n], "row": [1, 1, 1, n], "column": [1, 1, m, 1], "scalar": [1, 1, 1, 1]}.get(c)
    if c:
        feeds["c"] = rand(cshape, dtype, -1, 1, seed=9)

    def build(g):
        x, y = g.input(a.shape, dtype, name="a"), g.input(b.shape, dtype, name="b")
        if views:
            x, y = views(x, y)
        cc = dml.broadcast(g.input(cshape, dtype, name="c"), [b0, b1, m, n]) if c else None
        f = getattr(dml.FusedActivation, act)() if act else dml.FusedActivation.none()
        return [dml.gemm(x, y, cc, trans_a=dml.MatrixTransform.TRANSPOSE if ta else dml.MatrixTransform.NONE,
                         trans_b=dml.MatrixTransform.TRANSPOSE if tb else dml.MatrixTransform.NONE, alpha=alpha,
                         beta=beta, fused_activation=f)]

    tol = {np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-10}[dtype]
    return compare(cuda, cpu, build, feeds, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shape", [(1, 1, 5, 7, 3), (2, 3, 17, 9, 11), (1, 1, 64, 40, 48)])
def test_gemm_transposes(cuda, cpu, dtype, ta, tb, shape):
    gemm_case(cuda, cpu, dtype, shape, ta, tb)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("c", ["full", "row", "column", "scalar"])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, -2.0), (1.5, 0.0)])
def test_gemm_c(cuda, cpu, dtype, c, alpha, beta):
    gemm_case(cuda, cpu, dtype, (2, 2, 12, 8, 10), c=c, alpha=alpha, beta=beta)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", ["relu", "sigmoid", "identity"])
@pytest.mark.parametrize("c", [None, "row", "full"])
def test_gemm_fused_activation(cuda, cpu, dtype, act, c):
    gemm_case(cuda, cpu, dtype, (1, 2, 16, 24, 8), c=c, act=act)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gemm_strided_and_broadcast_operands(cuda, cpu, dtype):
    # a: a transposed view of [N, M, K] data; b: one [K, N] matrix broadcast over the batches.
    def transposed(x, y):
        xt = dml.reinterpret(x, [2, 3, 6, 5], [90, 30, 1, 6])  # column-major matrices
        yb = dml.broadcast(dml.reinterpret(y, [1, 1, 5, 7], [0, 0, 7, 1]), [2, 3, 5, 7])
        return xt, yb

    gemm_case(cuda, cpu, dtype, (2, 3, 6, 5, 7), views=transposed)

    def unmergeable(x, y):  # a broadcast over dimension 0 only: the batches cannot merge
        xs = dml.broadcast(dml.reinterpret(x, [1, 3, 6, 5], [0, 30, 5, 1]), [2, 3, 6, 5])
        ys = dml.reinterpret(y, [2, 3, 5, 7], [105, 35, 1, 5])  # column-major
        return xs, ys

    gemm_case(cuda, cpu, dtype, (2, 3, 6, 5, 7), views=unmergeable)

    def rows_broadcast(x, y):  # zero row stride: packed into the workspace first
        xb = dml.broadcast(dml.reinterpret(x, [2, 3, 1, 5], [30, 10, 0, 1]), [2, 3, 6, 5])
        return xb, y

    gemm_case(cuda, cpu, dtype, (2, 3, 6, 5, 7), views=rows_broadcast)


# One output row or column (M == 1 or N == 1): the matrix-vector kernels (kernels/matrix_vector.cu). Sizes around
# their choices: W's terms contiguous (a warp a sum) or its rows contiguous along the outputs (a thread a few sums),
# 16-byte vectors where the strides allow and scalars where not (rows of 300 float16 are 600 bytes), K split over
# blocks where the sums are few (one sum, 17 sums a batch entry), K and J not whole vectors, K under a warp's share.
MATRIX_VECTOR = [(1, 1, 1, 4096, 296), (1, 1, 1, 1030, 300), (1, 1, 300, 1030, 1), (1, 1, 304, 520, 1),
                 (1, 1, 1, 5, 37), (1, 1, 1, 5000, 1), (1, 1, 1, 4100, 1), (2, 3, 1, 260, 17)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("shape", MATRIX_VECTOR)
def test_gemm_matrix_vector(cuda, cpu, dtype, ta, tb, shape):
    gemm_case(cuda, cpu, dtype, shape, ta, tb)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("c", ["full", "row", "column", "scalar"])
@pytest.mark.parametrize("shape", [(2, 2, 1, 300, 40), (2, 2, 40, 300, 1)])
def test_gemm_matrix_vector_c_and_activation(cuda, cpu, dtype, c, shape):
    gemm_case(cuda, cpu, dtype, shape, c=c, alpha=0.5, beta=-2.0, act="sigmoid")
    gemm_case(cuda, cpu, dtype, shape, tb=True, c=c, alpha=1.5, beta=0.0, act="relu")  # beta 0: C not read


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gemm_matrix_vector_views(cuda, cpu, dtype):
    # v broadcast over batch dimension 0; W's rows K + 1 apart (no 16-byte vectors: the scalar loads), or its rows
    # along the outputs 304 apart holding 300 (vectors, and a last one of 4 or 2 outputs loaded one at a time).
    K, N = 300, 40
    a = rand([1, 3, 1, K], dtype, -1, 1, seed=1)
    b = rand([2, 3, N, K + 1], dtype, -1, 1, seed=2)
    b2 = rand([1, 1, K, 304], dtype, -1, 1, seed=3)

    def build(g):
        xa = g.input(a.shape, dtype, name="a")
        x = dml.broadcast(xa, [2, 3, 1, K])
        y = dml.reinterpret(g.input(b.shape, dtype, name="b"), [2, 3, N, K], [3 * N * (K + 1), N * (K + 1), K + 1, 1])
        y2 = dml.reinterpret(g.input(b2.shape, dtype, name="b2"), [1, 1, K, 300], [0, 0, 304, 1])
        return [dml.gemm(x, y, trans_b=dml.MatrixTransform.TRANSPOSE),
                dml.gemm(dml.reinterpret(xa, [1, 1, 1, K], [0, 0, 0, 1]), y2)]

    tol = {np.float16: 1e-2, np.float32: 1e-4}[dtype]
    got = compare(cuda, cpu, build, {"a": a, "b": b, "b2": b2}, rtol=tol, atol=tol)
    again = run(cuda, build, {"a": a, "b": b, "b2": b2})  # the splits add in a fixed order: the same bits
    for g, h in zip(got, again):
        assert g.tobytes() == h.tobytes()


# --- convolution --------------------------------------------------------------------------------------------

def conv_case(cuda, cpu, dtype, x_shape, w_shape, bias=False, act=None, x_view=None, **kw):
    x = rand(x_shape, dtype, -1, 1, seed=10)
    w = rand(w_shape, dtype, -1, 1, seed=11)
    feeds = {"x": x, "w": w}
    backward = kw.get("direction") == dml.ConvolutionDirection.BACKWARD
    out_channels = w_shape[1] * kw.get("group_count", 1) if backward else w_shape[0]
    bshape = [1, out_channels] + [1] * (len(x_shape) - 2)
    if bias:
        feeds["bias"] = rand(bshape, dtype, -1, 1, seed=12)

    def build(g):
        xx = g.input(x.shape, dtype, name="x")
        if x_view:
            xx = x_view(xx)
        f = getattr(dml.FusedActivation, act)() if act else dml.FusedActivation.none()
        b = g.input(bshape, dtype, name="bias") if bias else None
        return [dml.convolution(xx, g.input(w.shape, dtype, name="w"), b, fused_activation=f, **kw)]

    tol = {np.float16: 1e-2, np.float32: 1e-4, np.float64: 1e-10}[dtype]
    compare(cuda, cpu, build, feeds, rtol=tol, atol=tol)


CONV_2D = [
    # (x, w, keywords): the first ones take the im2col + GEMM route (8 or more output channels per group)
    ([2, 4, 9, 8], [16, 4, 3, 3], {"start_padding": [1, 1], "end_padding": [1, 1]}),
    ([1, 8, 11, 10], [16, 4, 3, 2], {"group_count": 2, "strides": [2, 1], "dilations": [1, 2]}),
    ([2, 6, 7, 7], [12, 6, 3, 3],
     {"mode": dml.ConvolutionMode.CONVOLUTION, "start_padding": [2, 0], "end_padding": [0, 1]}),
    ([2, 16, 5, 6], [24, 16, 1, 1], {}),  # 1x1: no im2col
    ([2, 6, 9, 8], [5, 6, 3, 3], {"start_padding": [1, 1], "end_padding": [1, 1]}),  # direct
    ([1, 8, 9, 9], [8, 1, 3, 3], {"group_count": 8, "start_padding": [1, 1], "end_padding": [1, 1]}),  # depthwise
    ([1, 3, 8, 8], [4, 3, 2, 2], {"mode": dml.ConvolutionMode.CONVOLUTION, "strides": [2, 2]}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(CONV_2D)))
def test_convolution_2d(cuda, cpu, dtype, case):
    x, w, kw = CONV_2D[case]
    conv_case(cuda, cpu, dtype, x, w, **kw)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", [None, "relu", "sigmoid"])
@pytest.mark.parametrize("route", ["gemm", "direct"])
def test_convolution_bias_activation(cuda, cpu, dtype, act, route):
    w = [16, 4, 3, 3] if route == "gemm" else [3, 4, 3, 3]
    conv_case(cuda, cpu, dtype, [2, 4, 6, 7], w, bias=True, act=act, start_padding=[1, 1], end_padding=[1, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_convolution_1d_3d_and_strided_input(cuda, cpu, dtype):
    conv_case(cuda, cpu, dtype, [2, 4, 20], [10, 4, 3], strides=[2], start_padding=[1], end_padding=[2])
    conv_case(cuda, cpu, dtype, [1, 2, 5, 6, 4], [8, 2, 3, 3, 2], start_padding=[1, 1, 0], end_padding=[1, 0, 1])
    conv_case(cuda, cpu, dtype, [2, 8, 5, 6], [16, 8, 3, 3],
              x_view=lambda x: dml.reinterpret(x, [2, 8, 5, 6], [240, 1, 48, 8]))  # channels-last data
    conv_case(cuda, cpu, dtype, [2, 8, 5, 6], [16, 8, 1, 1],
              x_view=lambda x: dml.reinterpret(x, [2, 8, 5, 6], [240, 1, 48, 8]))  # 1x1 of a strided input


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_convolution_large_spatial(cuda, cpu, dtype):
    # Enough output positions that each im2col thread steps over several, carrying between coordinates.
    conv_case(cuda, cpu, dtype, [1, 4, 70, 66], [8, 4, 3, 3], start_padding=[1, 1], end_padding=[1, 1])
    conv_case(cuda, cpu, dtype, [1, 2, 12, 20, 24], [8, 2, 3, 3, 3], start_padding=[1, 1, 1], end_padding=[1, 1, 1],
              mode=dml.ConvolutionMode.CONVOLUTION)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", [
    {"strides": [2, 2]},
    {"strides": [2, 1], "start_padding": [1, 0], "end_padding": [0, 1], "output_padding": [1, 0]},
    {"group_count": 2, "dilations": [2, 1], "mode": dml.ConvolutionMode.CONVOLUTION},
])
def test_convolution_backward(cuda, cpu, dtype, kw):
    # Backward filters are [in_channels, out_channels / groups, k...].
    conv_case(cuda, cpu, dtype, [2, 4, 5, 4], [4, 3, 3, 3], bias=True, direction=dml.ConvolutionDirection.BACKWARD, **kw)


# --- data movement ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.int64])
def test_slice_join_split(cuda, cpu, dtype):
    x = rand([3, 8, 9], dtype)
    y = rand([3, 2, 9], dtype, seed=1)

    def build(g):
        a, b = g.input(x.shape, dtype, name="x"), g.input(y.shape, dtype, name="y")
        s = dml.slice(a, input_window_offsets=[1, 1, 0], input_window_sizes=[2, 6, 9],
                      input_window_strides=[1, -2, 3])
        j = dml.join([a, b, dml.reinterpret(b, [3, 2, 9], [1, 27, 3])], axis=1)
        p, q = dml.split(j, axis=2, output_axis_sizes=[4, 5])
        return [s, j, p, q]

    compare(cuda, cpu, build, {"x": x, "y": y})


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.float64])
def test_strided_copies_in_vectors(cuda, cpu, dtype):
    """Copies whose innermost runs are whole, aligned 16-byte vectors on both sides move vectors: a join along
    channels, a slice of whole rows, and (no vectors) a slice whose rows start off a vector boundary."""
    x = rand([2, 3, 4, 32], dtype)
    y = rand([2, 5, 4, 32], dtype, seed=1)

    def build(g):
        a, b = g.input(x.shape, dtype, name="x"), g.input(y.shape, dtype, name="y")
        return [dml.join([a, b], axis=1),
                dml.slice(b, input_window_offsets=[0, 1, 0, 0], input_window_sizes=[2, 3, 4, 32],
                          input_window_strides=[1, 2, 1, 1]),
                dml.slice(b, input_window_offsets=[0, 0, 0, 1], input_window_sizes=[2, 5, 4, 16],
                          input_window_strides=[1, 1, 1, 1])]

    compare(cuda, cpu, build, {"x": x, "y": y})


def test_outputs_that_are_views_or_inputs(cuda, cpu):
    x = rand([4, 6], np.float32)

    def build(g):
        a = g.input(x.shape, np.float32, name="x")
        e = dml.exp(a)
        return [a, dml.reinterpret(e, [6, 4], [1, 6]), e, e]

    compare(cuda, cpu, build, {"x": x})


def test_a_chain_of_nodes_reuses_the_arena(cuda, cpu):
    x = rand([64, 64], np.float32, -1, 1)

    def build(g):
        v = g.input(x.shape, np.float32, name="x")
        for i in range(20):
            v = dml.tanh(v * 1.1) + v if i % 2 else dml.activation_relu(v) - 0.1
        return [v]

    compare(cuda, cpu, build, {"x": x}, rtol=1e-4, atol=1e-5)
    g = dml.Graph(cuda)
    op = g.compile(build(g))
    assert 0 < op.temporary_size <= 3 * 64 * 64 * 4 + 1024  # a few live values, not one per node


# --- the executor: graphs, buffers, DLPack, errors ----------------------------------------------------------

@pytest.mark.parametrize("graphs", ["1", "0"])
def test_dispatches_replay_with_new_data(cuda, cpu, monkeypatch, graphs):
    monkeypatch.setenv("DIRECTML_CUDA_GRAPHS", graphs)  # read when a plan is compiled

    def build(g):
        a, b = g.input([1, 1, 32, 16], name="a"), g.input([1, 1, 16, 8], name="b")
        return [dml.activation_softmax(dml.gemm(a, b, fused_activation=dml.FusedActivation.relu())), dml.exp(b)]

    gc, gg = dml.Graph(cpu), dml.Graph(cuda)
    op_cpu, op_cuda = gc.compile(build(gc)), gg.compile(build(gg))
    kept = []
    for i in range(6):
        feeds = {"a": rand([1, 1, 32, 16], np.float32, seed=20 + i), "b": rand([1, 1, 16, 8], np.float32, seed=40 + i)}
        expected = op_cpu(feeds)
        got = op_cuda(feeds, readback=i % 3 != 2)
        if i % 3 == 2:  # keep these outputs alive: the next dispatch gets other addresses
            kept.append(got)
            got = [o.numpy() for o in got]
        for g_, e in zip(got, expected):
            np.testing.assert_allclose(g_, e, rtol=1e-5, atol=1e-6)
    assert all(isinstance(o, dml.Buffer) for k in kept for o in k)


def test_buffers_stay_on_the_gpu_and_bind_in_place(cuda):
    x = rand([2, 3, 4, 5], np.float32)
    g = dml.Graph(cuda)
    a = g.input(x.shape, name="a")
    op = g.compile([dml.exp(a)])
    (buf,) = op({"a": x}, readback=False)
    assert isinstance(buf, dml.Buffer) and buf.device.kind == "cuda"
    assert buf.__dlpack_device__() == (2, 0)
    np.testing.assert_allclose(buf.numpy(), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(buf), np.exp(x), rtol=1e-6)
    (again,) = op({"a": buf}, readback=False)  # a Buffer binds where an array would, without a host trip
    np.testing.assert_allclose(again.numpy(), np.exp(np.exp(x)), rtol=1e-5)
    uploaded = dml.Buffer(cuda, x.astype(np.float16))
    g16 = dml.Graph(cuda)
    h = g16.input(x.shape, np.float16, name="h")
    (out,) = g16.compile([h * 2.0])({"h": uploaded})
    np.testing.assert_array_equal(out, x.astype(np.float16) * np.float16(2))
    with pytest.raises(ValueError, match="different device"):
        op({"a": dml.Buffer(dml.Device("cpu"), x)})


def test_constants_and_owned_inputs_live_on_the_gpu(cuda):
    w = rand([1, 1, 8, 4], np.float32, seed=3)
    g = dml.Graph(cuda)
    x = g.input([1, 1, 5, 8], name="x")
    b = g.input([1, 1, 5, 4], name="b", owned=True)
    op = g.compile([dml.gemm(x, g.constant(w), b)])
    xv, bv = rand([1, 1, 5, 8], np.float32, seed=4), rand([1, 1, 5, 4], np.float32, seed=5)
    op.initialize({"b": bv})
    (y,) = op({"x": xv})
    np.testing.assert_allclose(y, xv[0, 0] @ w[0, 0] + bv, rtol=1e-5, atol=1e-5)


def test_dlpack_hands_cuda_memory_to_torch_without_a_copy(cuda):
    torch = pytest.importorskip("torch")
    x = rand([3, 7], np.float32)
    g = dml.Graph(cuda)
    (buf,) = g.compile([dml.identity(g.input(x.shape, name="x"))])({"x": x}, readback=False)
    t = torch.from_dlpack(buf)
    assert t.device.type == "cuda" and t.device.index == 0
    assert torch.from_dlpack(buf).data_ptr() == t.data_ptr()  # both views of the buffer's own memory
    np.testing.assert_array_equal(t.cpu().numpy(), x)
    t.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(buf.numpy(), 2 * x)  # torch wrote into the Buffer: no copy was made
    del buf
    np.testing.assert_array_equal(t.cpu().numpy(), 2 * x)  # the tensor keeps the memory alive


def test_dlpack_to_cupy(cuda):
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    x = rand([5, 4], np.float16)
    g = dml.Graph(cuda)
    (buf,) = g.compile([dml.identity(g.input(x.shape, np.float16, name="x"))])({"x": x}, readback=False)
    c = cp.from_dlpack(buf)
    assert c.data.ptr == torch.from_dlpack(buf).data_ptr()
    np.testing.assert_array_equal(cp.asnumpy(c), x)


def test_out_of_memory_names_the_bytes_and_leaves_the_device_usable(cuda):
    g = dml.Graph(cuda)
    x = g.input([1], name="x")
    shape = [1000, 1000, 1000, 500]  # 5e11 float32 elements: 2 TB, more than any GPU holds
    op = g.compile([dml.identity(dml.broadcast(x, shape))])
    with pytest.raises(dml.OutOfDeviceMemory) as info:
        op({"x": np.ones(1, np.float32)})
    assert info.value.bytes == 2 * 10**12
    assert str(2 * 10**12) in str(info.value) and info.value.code == "cudaErrorMemoryAllocation"
    assert isinstance(info.value, dml.DeviceError) and isinstance(info.value, MemoryError)
    small = dml.Graph(cuda)
    (y,) = small.compile([dml.exp(small.input([3], name="x"))])({"x": np.zeros(3, np.float32)})
    np.testing.assert_array_equal(y, np.ones(3, np.float32))


def test_device_errors(cuda):
    with pytest.raises(dml.DeviceError) as info:
        dml.Device("cuda", 99)
    assert info.value.code == "cudaErrorInvalidDevice"
    assert cuda.kind == "cuda" and cuda.name  # e.g. "NVIDIA H200"
    assert dml.Device().kind == os.environ.get("DIRECTML_DEVICE", "cuda")


def test_cublaslt_fill_for_initcheck_changes_no_result(cuda):
    # DIRECTML_CUBLASLT_FILL (cublaslt.h; read once a process) NaN-fills cuBLASLt's workspace and outputs before each
    # product, for compute-sanitizer's initcheck: every result is still the product's, and nothing beside an output
    # is overwritten (attention's per-head products write every H-th run of a row: the fill must skip the others).
    code = """
import numpy as np, directml as dml
d, rng = dml.Device("cuda"), np.random.default_rng(0)
a, b, c = (rng.uniform(-1, 1, s).astype(np.float16) for s in ([2, 3, 70, 130], [2, 3, 130, 50], [2, 3, 70, 50]))
q, k, v = (rng.uniform(-1, 1, [1, 16, 64]).astype(np.float32) for _ in range(3))
g = dml.Graph(d)
ea, eb, ec = (g.input(x.shape, np.float16, name=n) for x, n in ((a, "a"), (b, "b"), (c, "c")))
eq, ek, ev = (g.input(x.shape, np.float32, name=n) for x, n in ((q, "q"), (k, "k"), (v, "v")))
sdpa = dml.multihead_attention(query=eq, key=ek, value=ev, scale=0.125, head_count=4)[0]
y, o = g.compile([dml.gemm(ea, eb, ec, alpha=0.5, beta=2.0), sdpa])({"a": a, "b": b, "c": c, "q": q, "k": k, "v": v})
want = 0.5 * (a.astype(np.float64) @ b) + 2.0 * c
assert np.abs(y - want).max() < 0.05, np.abs(y - want).max()
s = np.einsum("bthd,bshd->bhts", q.reshape(1, 16, 4, 16), k.reshape(1, 16, 4, 16)) * 0.125
p = np.exp(s - s.max(-1, keepdims=True))
ref = np.einsum("bhts,bshd->bthd", p / p.sum(-1, keepdims=True), v.reshape(1, 16, 4, 16)).reshape(1, 16, 64)
assert np.abs(o.reshape(ref.shape) - ref).max() < 1e-4, np.abs(o.reshape(ref.shape) - ref).max()
print("SAME")
"""
    # cuDNN hidden: attention then runs as two cuBLASLt products and a softmax of ours.
    env = {**os.environ, "DIRECTML_CUBLASLT_FILL": "1", "DIRECTML_CUDNN_PATH": "/nonexistent"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         cwd=tempfile.gettempdir())
    assert out.returncode == 0 and "SAME" in out.stdout, out.stderr


def test_missing_cublaslt_fails_gemm_at_compile_only(cuda):
    # A separate process: cuBLASLt is opened once per process, and here it is already open.
    code = """
import numpy as np, directml as dml
d = dml.Device("cuda")
g = dml.Graph(d)
a = g.input([1, 1, 4, 4], name="a")
(y,) = g.compile([dml.exp(a)])({"a": np.zeros([1, 1, 4, 4], np.float32)})
assert (y == 1).all()
try:
    g.compile([dml.gemm(a, a)])
except dml.DeviceError as e:
    print("CODE", e.code, e)
"""
    env = {**os.environ, "DIRECTML_CUBLASLT_PATH": "/nonexistent/libcublasLt.so.13"}
    # Run outside the checkout, whose source directml/ (no built module) would shadow the installed package.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                         cwd=tempfile.gettempdir())
    assert out.returncode == 0, out.stderr
    assert "CODE CUBLASLT_NOT_FOUND" in out.stdout and "/nonexistent/libcublasLt.so.13" in out.stdout
