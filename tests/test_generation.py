"""fill_value_constant / fill_value_sequence, random_generator (Philox4x32-10), quantize_linear /
dequantize_linear, quantize / dequantize and constant_data against NumPy references."""

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(5)
ALL_TYPES = [np.float32, np.float16, np.float64, np.uint32, np.uint16, np.uint8, np.int32, np.int16, np.int8,
             np.uint64, np.int64]


@pytest.fixture
def graph(device):
    return dml.Graph(device)


def run(graph, outputs, feeds=None):
    return graph.compile(list(outputs))(feeds or {})


# --- fill ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_fill_value_constant(graph, dtype):
    value = {np.uint64: 2**64 - 3, np.int64: -(2**62) - 1, np.uint8: 255, np.int8: -128}.get(
        dtype, -2.75 if np.dtype(dtype).kind == "f" else 77)
    y = dml.fill_value_constant(graph, sizes=[2, 1, 3], dtype=dtype, value=value)
    assert y.shape == (2, 1, 3) and y.dtype == dtype
    (got,) = run(graph, [y])
    np.testing.assert_array_equal(got, np.full((2, 1, 3), value, dtype))


def test_fill_value_constant_takes_tensor_data_types(graph):
    y = dml.fill_value_constant(graph, sizes=[4], dtype=dml.TensorDataType.INT16, value=-300)
    (got,) = run(graph, [y])
    assert got.dtype == np.int16 and (got == -300).all()


@pytest.mark.parametrize("dtype,start,delta", [
    (np.float32, -1.5, 0.25), (np.float16, 2.0, -0.125), (np.float64, 1e10, 1e-3),
    (np.int32, -7, 3), (np.int8, 120, 3), (np.uint8, 250, 3), (np.uint16, 5, 65535), (np.int64, -(2**40), 2**35),
    (np.uint64, 2**63, 2**62),
])
def test_fill_value_sequence(graph, dtype, start, delta):
    y = dml.fill_value_sequence(graph, sizes=[2, 3, 2], dtype=dtype, value_start=start, value_delta=delta)
    (got,) = run(graph, [y])
    assert got.dtype == dtype and got.shape == (2, 3, 2)
    i = np.arange(12).reshape(2, 3, 2)
    if np.dtype(dtype).kind == "f":
        want = (np.float64(dtype(start)) + i * np.float64(dtype(delta))).astype(dtype)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3 if dtype == np.float16 else 1e-12)
    else:
        size = np.dtype(dtype).itemsize  # integer sequences wrap around in the element type
        want = np.array([(start + k * delta) % 2 ** (8 * size) for k in range(12)], np.uint64)
        np.testing.assert_array_equal(got.ravel(), want.astype(f"u{size}").view(dtype))


def test_fill_value_sequence_steps_unsigned_down(graph):
    # DirectML's example: a UINT8 sequence from 10 by -2 (the delta wraps as two's complement)
    y = dml.fill_value_sequence(graph, sizes=[1, 1, 2, 2], dtype=np.uint8, value_start=10, value_delta=-2)
    z = dml.fill_value_constant(graph, sizes=[2], dtype=np.uint16, value=-1)
    got, ones = run(graph, [y, z])
    np.testing.assert_array_equal(got, [[[[10, 8], [6, 4]]]])
    np.testing.assert_array_equal(ones, [65535, 65535])


def test_fill_errors(graph):
    with pytest.raises(ValueError, match="out of range for UINT8"):
        dml.fill_value_constant(graph, sizes=[1], dtype=np.uint8, value=256)
    with pytest.raises(ValueError, match="out of range for INT8"):
        dml.fill_value_sequence(graph, sizes=[1], dtype=np.int8, value_start=0, value_delta=-129)
    with pytest.raises(ValueError, match="out of range for UINT8"):
        dml.fill_value_constant(graph, sizes=[1], dtype=np.uint8, value=-129)
    with pytest.raises(ValueError, match="out of range for UINT64"):
        dml.fill_value_constant(graph, sizes=[1], dtype=np.uint64, value=2**64)
    with pytest.raises(ValueError, match="out of range for INT64"):
        dml.fill_value_constant(graph, sizes=[1], dtype=np.int64, value=2**63)
    with pytest.raises(TypeError, match="must be an int for INT32"):
        dml.fill_value_constant(graph, sizes=[1], dtype=np.int32, value=1.5)
    with pytest.raises(TypeError, match="must be a real number"):
        dml.fill_value_constant(graph, sizes=[1], dtype=np.float32, value="x")
    with pytest.raises(ValueError, match="sizes must be positive|positive"):
        dml.fill_value_constant(graph, sizes=[0], dtype=np.float32, value=1)
    with pytest.raises(TypeError):
        dml.fill_value_constant(graph, [2], np.float32, 1.0)  # keyword-only
    with pytest.raises(TypeError):
        dml.fill_value_constant(None, sizes=[2], dtype=np.float32, value=1.0)


# --- random_generator ---------------------------------------------------------------------------------------------

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox4x32_10(counters, key):
    """NumPy Philox4x32-10 (Salmon et al., SC11) of each row of counters [n, 4] (word 0 least significant)."""
    c = [counters[:, i].astype(np.uint64) for i in range(4)]
    k0, k1 = np.uint64(key[0]), np.uint64(key[1])
    mask = np.uint64(0xFFFFFFFF)
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(W0)) & mask, (k1 + np.uint64(W1)) & mask
        p0, p1 = np.uint64(M0) * c[0], np.uint64(M1) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask, ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask,
             p0 & mask]
    return np.stack(c, axis=1).astype(np.uint32)


def counter_words(value):
    value %= 2**128
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(4)]


def philox_stream(state, count):
    counter = sum(int(state[i]) << (32 * i) for i in range(4))
    blocks = np.array([counter_words(counter + j) for j in range((count + 3) // 4)], dtype=np.uint64)
    return philox4x32_10(blocks, state[4:6]).ravel()[:count]


def test_philox_known_answer(graph):
    # Random123's known-answer vectors for philox4x32_10
    s = graph.input([1, 1, 1, 6], np.uint32)
    r = dml.random_generator(s, output_sizes=[1, 1, 1, 4])
    op = graph.compile([r.values])
    (zero,) = op({s: np.zeros(6, np.uint32)})
    np.testing.assert_array_equal(zero.ravel(), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8])
    (ones,) = op({s: np.full(6, 0xFFFFFFFF, np.uint32)})
    np.testing.assert_array_equal(ones.ravel(), [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD])
    pi = np.array([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0], np.uint32)
    (digits,) = op({s: pi})
    np.testing.assert_array_equal(digits.ravel(), [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1])
    np.testing.assert_array_equal(philox_stream(pi, 4), digits.ravel())


@pytest.mark.parametrize("sizes", [[1, 1, 1, 1], [1, 1, 3, 7], [2, 3, 4, 5]])
def test_random_generator_values_and_state(graph, sizes):
    # the counter's low words are about to carry into the higher ones
    state = np.array([0xFFFFFFFE, 0xFFFFFFFF, 0x12345678, 7, 0xDEADBEEF, 42], np.uint32)
    s = graph.input([1, 1, 1, 6], np.uint32)
    r = dml.random_generator(s, output_sizes=sizes)
    assert r.values.dtype == np.uint32 and r.values.shape == tuple(sizes) and r.state.shape == (1, 1, 1, 6)
    values, new_state = run(graph, [r.values, r.state], {s: state})
    count = int(np.prod(sizes))
    np.testing.assert_array_equal(values.ravel(), philox_stream(state, count))
    counter = sum(int(state[i]) << (32 * i) for i in range(4)) + (count + 3) // 4
    np.testing.assert_array_equal(new_state.ravel(), counter_words(counter) + [0xDEADBEEF, 42])


def test_random_generator_is_deterministic_and_chains(graph):
    # 8 values at once equal 4 then 4 with the state passed on; the same state gives the same values
    s = graph.input([1, 1, 1, 6], np.uint32)
    eight = dml.random_generator(s, output_sizes=[1, 1, 2, 4]).values
    first = dml.random_generator(s, output_sizes=[1, 1, 1, 4])
    second = dml.random_generator(first.state, output_sizes=[1, 1, 1, 4], output_state=False)
    assert second.state is None
    state = RNG.integers(0, 2**32, 6, dtype=np.uint64).astype(np.uint32)
    op = graph.compile([eight, first.values, second.values])
    a, b, c = op({s: state})
    a2, _, _ = op({s: state})
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(a.ravel(), np.concatenate([b.ravel(), c.ravel()]))
    other = state.copy()
    other[4] ^= 1  # another key, other numbers
    assert (op({s: other})[0] != a).mean() > 0.9


def test_random_generator_reads_a_strided_state(graph):
    buf = np.arange(12, dtype=np.uint32) * 1000
    e = graph.input([1, 1, 1, 12], np.uint32)
    r = dml.random_generator(dml.reinterpret(e, [1, 1, 1, 6], [0, 0, 0, 2]), output_sizes=[1, 1, 1, 6],
                             type=dml.RandomGeneratorType.PHILOX_4X32_10)
    values, state = run(graph, [r.values, r.state], {e: buf})
    np.testing.assert_array_equal(values.ravel(), philox_stream(buf[::2], 6))
    np.testing.assert_array_equal(state.ravel(), [2, 2000, 4000, 6000, 8000, 10000])


def test_random_generator_errors(graph):
    with pytest.raises(ValueError, match="input_state has type INT32"):
        dml.random_generator(graph.input([1, 1, 1, 6], np.int32), output_sizes=[1, 1, 1, 4])
    with pytest.raises(ValueError, match=r"state has sizes \[1, 1, 1, 6\]"):
        dml.random_generator(graph.input([1, 1, 6], np.uint32), output_sizes=[1, 1, 1, 4])
    with pytest.raises(ValueError, match="output_sizes must have 4 dimensions"):
        dml.random_generator(graph.input([1, 1, 1, 6], np.uint32), output_sizes=[4])


# --- linear quantization ------------------------------------------------------------------------------------------


def quantize_ref(x, scale, zero, dtype):
    info = np.iinfo(dtype)
    q = np.round(x.astype(np.float32) / scale.astype(np.float32)) + zero.astype(np.float32)
    return np.clip(q, info.min, info.max).astype(dtype)


@pytest.mark.parametrize("in_type", [np.float32, np.float16, np.int32])
@pytest.mark.parametrize("zero_type", [np.uint8, np.int8, None])
def test_quantize_linear(graph, in_type, zero_type):
    shape = (2, 3, 5)
    x = (RNG.uniform(-300, 300, shape) if in_type != np.int32 else RNG.integers(-900, 900, shape)).astype(in_type)
    x.flat[:4] = [0.5, 1.5, 2.5, -2.5] if in_type != np.int32 else [1, 3, 5, -5]  # ties round to even
    scale_type = np.float32 if in_type == np.int32 else in_type
    scale = np.full(shape, 1.0 if in_type != np.int32 else 2.0, scale_type)
    scale[1] = 3.0
    zero = RNG.integers(-20, 20, shape).astype(zero_type) if zero_type else np.zeros(shape, np.int8)
    ex, es = graph.input(shape, in_type), graph.input(shape, scale_type)
    ez = graph.input(shape, zero_type) if zero_type else None
    y = dml.quantize_linear(ex, es, ez)
    out_type = zero_type or np.uint8
    assert y.dtype == out_type
    (got,) = run(graph, [y], {ex: x, es: scale, **({ez: zero} if ez else {})})
    np.testing.assert_array_equal(got, quantize_ref(x, scale, zero, out_type))


def test_quantize_linear_broadcast_parameters_and_output_dtype(graph):
    x = RNG.uniform(-40, 40, (4, 6)).astype(np.float32)
    scale, zero = np.float32([[0.5]]), np.int8([[3]])
    ex, es, ez = graph.input(x.shape), graph.input([1, 1]), graph.input([1, 1], np.int8)
    y = dml.quantize_linear(ex, dml.broadcast(es, [4, 6]), dml.broadcast(ez, [4, 6]), output_dtype=np.int8)
    y8 = dml.quantize_linear(ex, dml.broadcast(es, [4, 6]), output_dtype=dml.TensorDataType.INT8)
    got, got8 = run(graph, [y, y8], {ex: x, es: scale, ez: zero})
    np.testing.assert_array_equal(got, quantize_ref(x, np.broadcast_to(scale, x.shape), np.broadcast_to(zero, x.shape), np.int8))
    np.testing.assert_array_equal(got8, quantize_ref(x, np.broadcast_to(scale, x.shape), np.zeros(x.shape), np.int8))


def test_quantize_linear_nan_and_infinity_saturate(graph):
    x = np.float32([np.nan, np.inf, -np.inf, 1e30])
    ex, es = graph.input([4]), graph.input([4])
    (got,) = run(graph, [dml.quantize_linear(ex, es, output_dtype=np.int8)], {ex: x, es: np.ones(4, np.float32)})
    nan_gives = 0 if graph.device.kind == "directml" else -128  # DirectML: NaN quantizes to 0, as cast converts it
    np.testing.assert_array_equal(got, [nan_gives, 127, -128, 127])


@pytest.mark.parametrize("in_type", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
@pytest.mark.parametrize("scale_type", [np.float32, np.float16])
def test_dequantize_linear(graph, in_type, scale_type):
    info = np.iinfo(in_type)
    shape = (3, 4)
    x = RNG.integers(max(info.min, -2000), min(info.max, 2000), shape, endpoint=True).astype(in_type)
    zero = RNG.integers(max(info.min, -50), min(info.max, 50), shape, endpoint=True).astype(in_type)
    scale = RNG.uniform(0.01, 0.1, shape).astype(scale_type)
    ex, es, ez = graph.input(shape, in_type), graph.input(shape, scale_type), graph.input(shape, in_type)
    y = dml.dequantize_linear(ex, es, ez)
    y0 = dml.dequantize_linear(ex, es)
    assert y.dtype == scale_type
    got, got0 = run(graph, [y, y0], {ex: x, es: scale, ez: zero})
    want = ((x.astype(np.int64) - zero).astype(np.float32) * scale.astype(np.float32)).astype(scale_type)
    want0 = (x.astype(np.float32) * scale.astype(np.float32)).astype(scale_type)
    if graph.device.kind == "directml" and scale_type == np.float16:
        # a device may round float32 to float16 toward zero (lavapipe does; Vulkan allows it): one ulp
        np.testing.assert_array_max_ulp(got, want, maxulp=1)
        np.testing.assert_array_max_ulp(got0, want0, maxulp=1)
    else:
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got0, want0)


def test_linear_quantization_errors(graph):
    x, s = graph.input([2, 3]), graph.input([2, 3])
    with pytest.raises(ValueError, match="scale has sizes .1, 3. but the input has .2, 3."):
        dml.quantize_linear(x, graph.input([1, 3]))
    with pytest.raises(ValueError, match="needs a FLOAT32 scale, got FLOAT16"):
        dml.quantize_linear(x, graph.input([2, 3], np.float16))
    with pytest.raises(ValueError, match="input has type INT8"):
        dml.quantize_linear(graph.input([2, 3], np.int8), s)
    with pytest.raises(ValueError, match="zero_point has type INT32"):
        dml.quantize_linear(x, s, graph.input([2, 3], np.int32))
    with pytest.raises(ValueError, match="output type UINT8 differs"):
        dml.quantize_linear(x, s, graph.input([2, 3], np.int8), output_dtype=np.uint8)
    with pytest.raises(ValueError, match="INT8 or UINT8"):
        dml.quantize_linear(x, s, output_dtype=np.int16)
    with pytest.raises(ValueError, match="input has type FLOAT32"):
        dml.dequantize_linear(x, s)
    with pytest.raises(ValueError, match="zero point must have the input's type INT8"):
        dml.dequantize_linear(graph.input([2, 3], np.int8), s, graph.input([2, 3], np.uint8))


# --- block-wise quantization --------------------------------------------------------------------------------------


def expand(p, shape):
    """A block parameter [.., s, ..] repeated to the input's shape."""
    for axis, (n, k) in enumerate(zip(shape, p.shape)):
        p = np.repeat(p, n // k, axis=axis)
    return p


@pytest.mark.parametrize("param_shape", [(1, 1), (4, 1), (1, 6), (2, 3), (4, 6)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_quantize_dequantize_blocks(graph, param_shape, dtype):
    shape = (4, 6)
    x = RNG.uniform(-30, 30, shape).astype(dtype)
    scale = RNG.uniform(0.1, 0.5, param_shape).astype(dtype)
    zero = RNG.integers(-10, 10, param_shape).astype(np.int8)
    ex, es, ez = graph.input(shape, dtype), graph.input(param_shape, dtype), graph.input(param_shape, np.int8)
    q = dml.quantize(ex, es, ez)
    d = dml.dequantize(q, es, ez)
    q_plain = dml.quantize(ex, es)
    assert q.dtype == np.int8 and d.dtype == dtype and q_plain.dtype == np.uint8
    got_q, got_d, got_plain = run(graph, [q, d, q_plain], {ex: x, es: scale, ez: zero})
    full_s, full_z = expand(scale, shape), expand(zero, shape)
    want_q = quantize_ref(x, full_s, full_z, np.int8)
    np.testing.assert_array_equal(got_q, want_q)
    np.testing.assert_array_equal(got_plain, quantize_ref(x, full_s, np.zeros(shape), np.uint8))
    want_d = ((want_q.astype(np.int64) - full_z).astype(np.float32) * full_s.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(got_d, want_d)


def test_block_quantization_errors(graph):
    x = graph.input([4, 6])
    with pytest.raises(ValueError, match="must have the input's rank and sizes that divide"):
        dml.quantize(x, graph.input([4, 4]))
    with pytest.raises(ValueError, match="must have the input's rank"):
        dml.quantize(x, graph.input([6]))
    with pytest.raises(ValueError, match=r"zero_point has sizes \[1, 1\] but scale has \[2, 3\]"):
        dml.quantize(x, graph.input([2, 3]), graph.input([1, 1], np.uint8))
    with pytest.raises(ValueError, match="input has type INT32"):
        dml.dequantize(graph.input([4, 6], np.int32), graph.input([1, 1]))
    with pytest.raises(ValueError, match="scale has type INT8"):
        dml.dequantize(graph.input([4, 6], np.int8), graph.input([1, 1], np.int8))


# --- constant_data ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint64])
def test_constant_data(graph, dtype):
    data = np.arange(12).reshape(3, 4).astype(dtype)
    c = dml.constant_data(graph, data)
    assert c.shape == (3, 4) and c.dtype == dtype
    op = graph.compile([c])
    data[:] = 0  # the node holds its own copy
    (got,) = op()
    np.testing.assert_array_equal(got, np.arange(12).reshape(3, 4).astype(dtype))


def test_constant_data_converts_and_feeds_an_operator(graph):
    w = dml.constant_data(graph, [1.0, 2.0, 3.0, 4.0], np.float32, sizes=[1, 1, 2, 2])
    x = graph.input([1, 1, 1, 2])
    (got,) = run(graph, [dml.gemm(x, w)], {x: np.float32([[[[1, 1]]]])})
    np.testing.assert_array_equal(got.ravel(), [4, 6])
    strided = np.arange(20, dtype=np.int32).reshape(4, 5)[::2, 1::2]  # a non-contiguous array
    (s,) = run(graph, [dml.constant_data(graph, strided)])
    np.testing.assert_array_equal(s, strided)


def test_constant_data_errors(graph):
    with pytest.raises(ValueError, match="astype"):
        dml.constant_data(graph, np.float32([1.5]), np.int32)
    with pytest.raises(ValueError):
        dml.constant_data(graph, np.zeros(5, np.float32), sizes=[2, 3])
