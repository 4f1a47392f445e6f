"""Element-wise operators against NumPy references: every function, each dtype DirectML allows, strided and
broadcast (zero-stride) inputs, non-contiguous arrays, each mode, the defaults and the error paths."""

import math

import numpy as np
import pytest

import directml as dml

RNG = np.random.default_rng(7)

FLOATS = [np.float32, np.float16]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
INTS = SIGNED + UNSIGNED
NUMERIC = FLOATS + INTS  # every type but FLOAT64
ALL = NUMERIC + [np.float64]
SHAPES = [(7,), (3, 5), (2, 3, 5), (1, 2, 3, 5)]
# Where the directml executor answers otherwise, and why: docs/operators.md, "On the directml executor".
DIRECTML_INVERSE_TRIG_TOL = dict(rtol=1e-4, atol=1e-4)  # acos, asin, atan, atan_yx: the device's own approximations


def run(device, build, *arrays, dtypes=None, shapes=None):
    """Builds build(*inputs) on graph inputs of the arrays' dtypes (or `dtypes`) and shapes, binds the arrays
    (as given, so non-contiguous ones too) and returns the outputs."""
    graph = dml.Graph(device)
    dtypes = dtypes or [a.dtype for a in arrays]
    shapes = shapes or [a.shape for a in arrays]
    inputs = [graph.input(list(s), t) for s, t in zip(shapes, dtypes)]
    outputs = build(*inputs)
    single = isinstance(outputs, dml.Expression)
    op = graph.compile([outputs] if single else list(outputs))
    results = op(dict(zip(inputs, arrays)))
    return results[0] if single else results


def tol(dtype):
    return dict(rtol=3e-3, atol=3e-3) if np.dtype(dtype) == np.float16 else dict(rtol=2e-6, atol=1e-6)


def random(shape, dtype, low=-3.0, high=3.0):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return RNG.uniform(low, high, shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dtype)


def full_range(shape, dtype):
    """Integers over the whole range of the type (to exercise wrapping)."""
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


# --- unary math ---------------------------------------------------------------------------------------------------

MATH = {
    "identity": (lambda x: x, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "acos": (np.arccos, (-0.95, 0.95)),
    "acosh": (np.arccosh, (1.1, 4)),
    "asin": (np.arcsin, (-0.95, 0.95)),
    "asinh": (np.arcsinh, (-3, 3)),
    "atan": (np.arctan, (-3, 3)),
    "atanh": (np.arctanh, (-0.9, 0.9)),
    "ceil": (np.ceil, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "cosh": (np.cosh, (-3, 3)),
    "erf": (np.vectorize(math.erf), (-2, 2)),
    "exp": (np.exp, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "log": (np.log, (0.1, 5)),
    "recip": (lambda x: 1 / x, (0.5, 3)),
    "sin": (np.sin, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)),
    "sqrt": (np.sqrt, (0.0, 5)),
    "tan": (np.tan, (-1.2, 1.2)),
    "tanh": (np.tanh, (-3, 3)),
    "negate": (np.negative, (-3, 3)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(MATH))
@pytest.mark.parametrize("scale_bias", [None, (0.5, 0.25)])
def test_unary_math(device, name, dtype, scale_bias):
    ref, (low, high) = MATH[name]
    shape = (3, 5)
    if scale_bias:  # inputs chosen so that x * scale + bias lands in the function's domain
        scale, bias = scale_bias
        x = ((RNG.uniform(low, high, shape) - bias) / scale).astype(dtype)
        g = x.astype(np.float32) * np.float32(scale) + np.float32(bias)  # the kernel's float arithmetic
        sb = dml.ScaleBias(scale, bias)
    else:
        x = RNG.uniform(low, high, shape).astype(dtype)
        g, sb = x.astype(np.float32), None
    y = run(device, lambda a: getattr(dml, name)(a, scale_bias=sb), x)
    assert y.dtype == dtype and y.shape == shape
    expected = ref(g.astype(np.float64))
    inverse_trig = device.kind == "directml" and name in ("acos", "asin", "atan") and dtype == np.float32
    np.testing.assert_allclose(y.astype(np.float64), expected, **(DIRECTML_INVERSE_TRIG_TOL if inverse_trig else tol(dtype)))


@pytest.mark.parametrize("dtype", SIGNED)
@pytest.mark.parametrize("name", ["abs", "negate"])
def test_abs_negate_signed_integers_wrap(device, name, dtype):
    x = full_range((4, 5), dtype)
    x.flat[0] = np.iinfo(dtype).min  # -lowest wraps to lowest, as two's complement does
    y = run(device, lambda a: getattr(dml, name)(a), x)
    with np.errstate(over="ignore"):
        expected = np.abs(x) if name == "abs" else np.negative(x)
    if device.kind == "directml" and np.dtype(dtype).itemsize < 4:
        # DirectML leaves -lowest of 8- and 16-bit types open: lavapipe saturates both, the H200's driver wraps 16-bit
        assert y.flat[0] in (np.iinfo(dtype).min, np.iinfo(dtype).max)
        expected.flat[0] = y.flat[0]
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_sign(device, dtype):
    x = random((3, 7), dtype)
    x.flat[:2] = 0
    y = run(device, dml.sign, x)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.sign(x))


@pytest.mark.parametrize("dtype", ALL)
def test_identity_copies_every_type(device, dtype):
    x = full_range((2, 9), dtype) if np.dtype(dtype).kind in "iu" else random((2, 9), dtype)
    np.testing.assert_array_equal(run(device, dml.identity, x), x)


def test_float64_has_no_arithmetic(device):
    # DirectML's tables give FLOAT64 to the copy, cast, bitwise and IF operators only
    graph = dml.Graph(device)
    d = graph.input([3], np.float64)
    with pytest.raises(ValueError, match="^[^:]+: input has type FLOAT64; allowed: FLOAT32, FLOAT16 [(]DML_OPERATOR_ELEMENT_WISE_IDENTITY[)]$"):
        d * 2.0
    with pytest.raises(ValueError, match="^[^:]+: a has type FLOAT64"):
        d + d


@pytest.mark.parametrize("name", ["exp", "sqrt", "ceil", "tanh"])
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float64])
def test_float_math_rejects_other_types(device, name, dtype):
    graph = dml.Graph(device)
    x = graph.input([2, 2], dtype)
    with pytest.raises(ValueError, match=rf"^{name}\(\): input has type .*\(DML_OPERATOR_ELEMENT_WISE_{name.upper()}\)"):
        getattr(dml, name)(x)


def test_unary_type_errors(device):
    graph = dml.Graph(device)
    i, u = graph.input([2], np.int32), graph.input([2], np.uint32)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32; allowed: FLOAT32, FLOAT16 [(]DML_OPERATOR_ELEMENT_WISE_ABS[)]$"):
        dml.abs(i, scale_bias=dml.ScaleBias(2, 0))
    with pytest.raises(ValueError, match="^[^:]+: input has type UINT32"):
        dml.negate(u)
    with pytest.raises(ValueError, match="^[^:]+: input has type FLOAT64"):
        dml.sign(graph.input([2], np.float64))


# --- threshold, pow, round ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_threshold_float(device, dtype):
    x = random((5, 3), dtype)
    x[0, 0] = np.nan
    expected = np.maximum(x, dtype(0.5))
    nan_gives_min = device.kind == "directml"  # DirectML's max drops a NaN (Direct3D's max is IEEE maxNum)
    if nan_gives_min:
        expected[0, 0] = 0.5
    np.testing.assert_allclose(run(device, lambda a: dml.threshold(a, min=0.5), x), expected, **tol(dtype))
    expected = np.maximum(x.astype(np.float32) * 2 - 1, np.float32(-0.25))
    if nan_gives_min:
        expected[0, 0] = -0.25
    y = run(device, lambda a: dml.threshold(a, min=-0.25, scale_bias=dml.ScaleBias(2, -1)), x)
    np.testing.assert_allclose(y.astype(np.float32), expected, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_threshold_integers(device, dtype):
    x = random((4, 6), dtype)
    # max(x, min) stored in the integer type: a fractional min truncates toward zero, as DirectML holds it (2.5 -> 2,
    # -2.5 -> -2)
    np.testing.assert_array_equal(run(device, lambda a: dml.threshold(a, min=2.5), x), np.maximum(x, 2).astype(dtype))
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(run(device, lambda a: dml.threshold(a, min=-2.5), x), np.maximum(x, -2))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_threshold_integers_bound_past_the_type_saturates(device, directml_differs, dtype):
    if dtype == np.int16:
        directml_differs("a threshold past INT16's range gives -1 on the H200's driver (lavapipe saturates)")
    x = random((4, 6), dtype)
    top = np.iinfo(dtype).max
    np.testing.assert_array_equal(run(device, lambda a: dml.threshold(a, min=1e12), x), np.full_like(x, top))


def test_threshold_rejects_64_bit(device):
    graph = dml.Graph(device)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT64"):
        dml.threshold(graph.input([2], np.int64), min=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("exponent_dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_pow_float_base(device, dtype, exponent_dtype):
    x = random((3, 4), dtype, 0.2, 2.0)
    e = random((3, 4), exponent_dtype, -2, 3) if np.dtype(exponent_dtype).kind == "f" else \
        RNG.integers(0, 4, (3, 4)).astype(exponent_dtype)
    y = run(device, dml.pow, x, e)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.astype(np.float64), np.power(x.astype(np.float64), e.astype(np.float64)), **tol(dtype))
    y = run(device, lambda a, b: dml.pow(a, b, scale_bias=dml.ScaleBias(0.5, 1)), x, e)
    g = x.astype(np.float32) * 0.5 + 1
    np.testing.assert_allclose(y.astype(np.float64), np.power(g.astype(np.float64), e.astype(np.float64)), **tol(dtype))


def test_pow_negative_base_integral_exponent(device):
    x = np.array([-2.0, -2.0, -0.5, 4.0], np.float32)
    e = np.array([3.0, 2.0, -1.0, 0.5], np.float32)
    np.testing.assert_allclose(run(device, dml.pow, x, e), [-8, 4, -2, 2])
    assert np.isnan(run(device, dml.pow, np.array([-2.0], np.float32), np.array([0.5], np.float32))[0])


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_pow_integers_exact_and_wrapping(device, dtype):
    x = random((4, 5), dtype)
    e = RNG.integers(0, 12, (4, 5)).astype(np.uint8)
    with np.errstate(over="ignore"):
        expected = np.power(x, e.astype(dtype))  # NumPy's integer power wraps like ours
    if device.kind == "directml" and np.dtype(dtype).itemsize < 4:
        # DirectML raises 8- and 16-bit integers in 32 bits (wrapping) and saturates that to the type
        info, wide = np.iinfo(dtype), np.int32 if np.dtype(dtype).kind == "i" else np.uint32
        with np.errstate(over="ignore"):
            expected = np.clip(np.power(x.astype(wide), e.astype(wide)), info.min, info.max).astype(dtype)
    np.testing.assert_array_equal(run(device, dml.pow, x, e), expected)


def test_pow_integer_negative_exponent_and_float_exponent(device):
    x = np.array([2, 1, -1, -1, 0, 7, -3], np.int32)
    e = np.array([-1, -5, -3, -2, -1, 0, 3], np.int32)
    # 0^-1 is infinite: the type's max, as a float exponent's infinity converts (and as DirectML answers)
    np.testing.assert_array_equal(run(device, dml.pow, x, e), [0, 1, -1, 1, 2**31 - 1, 1, -27])
    # an integer base with a float exponent: computed in double, truncated and saturated as cast does
    x = np.array([9, 2, 10, -8], np.int16)
    e = np.array([0.5, -1.0, 6.0, 0.5], np.float32)
    np.testing.assert_array_equal(run(device, dml.pow, x, e), [3, 0, 32767, 0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_constant_pow(device, dtype):
    x = random((2, 7), dtype, 0.1, 3)
    np.testing.assert_allclose(run(device, lambda a: dml.pow(a, 2.5), x).astype(np.float64),
                               x.astype(np.float64) ** 2.5, **tol(dtype))
    y = run(device, lambda a: dml.pow(a, 3, scale_bias=dml.ScaleBias(-1, 0)), x)
    np.testing.assert_allclose(y.astype(np.float64), -(x.astype(np.float64) ** 3), **tol(dtype))


def test_pow_errors(device):
    graph = dml.Graph(device)
    f, i = graph.input([2, 3], np.float32), graph.input([2, 3], np.int32)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.pow(i, 2.0)
    with pytest.raises(ValueError, match="^[^:]+: exponent has type FLOAT64"):
        dml.pow(f, graph.input([2, 3], np.float64))
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ: \[2, 3\] and \[3, 2\]"):
        dml.pow(f, graph.input([3, 2], np.float32))
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.pow(i, i, scale_bias=dml.ScaleBias(2, 0))


ROUNDING = {
    dml.RoundingMode.HALVES_TO_NEAREST_EVEN: np.round,  # NumPy rounds halves to even
    dml.RoundingMode.TOWARD_ZERO: np.trunc,
    dml.RoundingMode.TOWARD_INFINITY: lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", list(ROUNDING))
def test_round(device, mode, dtype):
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7, 0.2], dtype)
    x = np.concatenate([halves, random((11,), dtype, -9, 9)])
    y = run(device, lambda a: dml.round(a, rounding_mode=mode), x)
    np.testing.assert_array_equal(y, ROUNDING[mode](x.astype(np.float64)).astype(dtype))


def test_round_default_is_halves_to_even(device):
    x = np.array([0.5, 1.5, 2.5, -0.5], np.float32)
    np.testing.assert_array_equal(run(device, dml.round, x), [0, 2, 2, 0])
    graph = dml.Graph(device)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.round(graph.input([2], np.int32))


# --- predicates, bit count, bit not, logical not ------------------------------------------------------------------

SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 3.0, np.nan, -0.0, 65504.0])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("out", [np.uint8, np.uint32, dml.TensorDataType.UINT32])
def test_is_nan(device, directml_differs, dtype, out):
    if dtype == np.float16 and out != np.uint8:
        directml_differs("is_nan of FLOAT16 into UINT32 answers 0 for NaN on the H200's driver (lavapipe, and UINT8 "
                         "output there, answer right)")
    x = SPECIALS.astype(dtype)
    y = run(device, lambda a: dml.is_nan(a, output_dtype=out), x)
    assert y.dtype == (np.uint32 if out in (np.uint32, dml.TensorDataType.UINT32) else np.uint8)
    np.testing.assert_array_equal(y, np.isnan(x))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", [dml.IsInfinityMode.EITHER, dml.IsInfinityMode.POSITIVE, dml.IsInfinityMode.NEGATIVE])
def test_is_infinity(device, dtype, mode):
    x = SPECIALS.astype(dtype)
    expected = {dml.IsInfinityMode.EITHER: np.isinf(x), dml.IsInfinityMode.POSITIVE: np.isposinf(x),
                dml.IsInfinityMode.NEGATIVE: np.isneginf(x)}[mode]
    y = run(device, lambda a: dml.is_infinity(a, infinity_mode=mode), x)
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, expected)


def test_predicate_defaults_and_errors(device):
    x = SPECIALS.astype(np.float32)
    assert run(device, dml.is_nan, x).dtype == np.uint8
    np.testing.assert_array_equal(run(device, dml.is_infinity, x), np.isinf(x))  # EITHER, UINT8
    graph = dml.Graph(device)
    f, i = graph.input([2], np.float32), graph.input([2], np.int32)
    with pytest.raises(ValueError, match="^[^:]+: output_dtype UINT32 is not allowed"):
        dml.is_infinity(f, output_dtype=np.uint32)
    with pytest.raises(ValueError, match="^[^:]+: output_dtype INT32 is not allowed"):
        dml.is_nan(f, output_dtype=np.int32)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.is_nan(i)


def bits(x):
    """x's stored bits as the unsigned type of its width."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def any_values(shape, dtype):
    return full_range(shape, dtype) if np.dtype(dtype).kind in "iu" else random(shape, dtype, -1e3, 1e3)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("out", [np.uint8, np.uint32])
def test_bit_count(device, dtype, out):
    x = any_values((3, 5), dtype)
    y = run(device, lambda a: dml.bit_count(a, output_dtype=out), x)
    assert y.dtype == out
    np.testing.assert_array_equal(y, np.bitwise_count(bits(x)))


@pytest.mark.parametrize("dtype", ALL)
def test_bit_not(device, dtype):
    x = any_values((2, 7), dtype)
    np.testing.assert_array_equal(bits(run(device, dml.bit_not, x)), np.invert(bits(x)))
    np.testing.assert_array_equal(bits(run(device, lambda a: ~a, x)), np.invert(bits(x)))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_logical_not(device, dtype):
    x = np.array([0, 1, 2, 255, 0], dtype)
    np.testing.assert_array_equal(run(device, dml.logical_not, x), [1, 0, 0, 0, 1])
    graph = dml.Graph(device)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.logical_not(graph.input([2], np.int32))


# --- binary -------------------------------------------------------------------------------------------------------

def trunc_div(a, b):
    q = np.abs(a.astype(np.float64)) // np.abs(b.astype(np.float64))
    return (np.sign(a.astype(np.float64)) * np.sign(b.astype(np.float64)) * q).astype(a.dtype)


ARITHMETIC = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_arithmetic(device, name, dtype):
    shape = (3, 5)
    make = any_values if np.dtype(dtype).kind in "iu" else random
    a, b = make(shape, dtype), make(shape, dtype)
    y = run(device, getattr(dml, name), a, b)
    assert y.dtype == dtype
    with np.errstate(over="ignore"):
        expected = ARITHMETIC[name](a, b)  # NumPy's integer arithmetic wraps like DirectML's
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(y, expected, **tol(dtype))
    else:
        np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_divide_and_modulus(device, dtype):
    a = random((4, 5), dtype)
    b = random((4, 5), dtype)
    b[b == 0] = 3
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(run(device, dml.divide, a, b), a / b, **tol(dtype))
        np.testing.assert_allclose(run(device, dml.modulus_floor, a, b), np.mod(a, b), **tol(dtype))
        np.testing.assert_allclose(run(device, dml.modulus_truncate, a, b), np.fmod(a, b), **tol(dtype))
    else:
        np.testing.assert_array_equal(run(device, dml.divide, a, b), trunc_div(a, b))  # C's division truncates
        np.testing.assert_array_equal(run(device, dml.modulus_floor, a, b), np.mod(a, b))
        np.testing.assert_array_equal(run(device, dml.modulus_truncate, a, b), np.fmod(a, b))


@pytest.mark.parametrize("dtype", SIGNED)
def test_signed_division_edge_cases(device, dtype):
    # Division by zero is unspecified by DirectML: we give 0. lowest / -1 wraps to lowest.
    lo = np.iinfo(dtype).min
    a, b = np.array([7, lo, lo, -7], dtype), np.array([0, -1, 1, 0], dtype)
    q, mf, mt = run(device, lambda x, z: (dml.divide(x, z), dml.modulus_floor(x, z), dml.modulus_truncate(x, z)), a, b)
    defined = slice(1, 3) if device.kind == "directml" else slice(None)  # DirectML's x / 0 is its device's
    np.testing.assert_array_equal(q[defined], np.array([0, lo, lo, 0])[defined])
    np.testing.assert_array_equal(mf[defined], np.zeros(4)[defined])
    np.testing.assert_array_equal(mt[defined], np.zeros(4)[defined])


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_unsigned_division_by_zero(device, dtype):
    a, b = np.array([7, 5], dtype), np.array([0, 2], dtype)
    q, mf, mt = run(device, lambda x, z: (dml.divide(x, z), dml.modulus_floor(x, z), dml.modulus_truncate(x, z)), a, b)
    defined = slice(1, 2) if device.kind == "directml" else slice(None)  # DirectML's x / 0 is its device's
    np.testing.assert_array_equal(q[defined], np.array([0, 2])[defined])
    np.testing.assert_array_equal(mf[defined], np.array([0, 1])[defined])
    np.testing.assert_array_equal(mt[defined], np.array([0, 1])[defined])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint32])
def test_mean_and_difference_square(device, dtype):
    make = any_values if np.dtype(dtype).kind in "iu" else random
    a, b = make((3, 7), dtype), make((3, 7), dtype)
    mean, dsq = run(device, lambda x, y: (dml.mean(x, y), dml.difference_square(x, y)), a, b)
    if np.dtype(dtype).kind == "f":
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_allclose(mean, (a64 + b64) / 2, **tol(dtype))
        np.testing.assert_allclose(dsq, (a64 - b64) ** 2, rtol=tol(dtype)["rtol"])
    else:
        s = a.astype(np.int64) + b.astype(np.int64)  # exact: no overflow; halves round toward zero
        if device.kind == "directml":  # DirectML adds in the type first: a sum past its range wraps, then halves
            s = (a + b).astype(np.int64)
        np.testing.assert_array_equal(mean, (np.sign(s) * (np.abs(s) // 2)).astype(dtype))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(dsq, (a - b) * (a - b))


@pytest.mark.parametrize("dtype", FLOATS)
def test_atan_yx(device, dtype):
    y, x = random((4, 4), dtype), random((4, 4), dtype)
    x[0, :] = [-1, 1, 0, -2]
    y[0, :] = [0, 0, 1, -0.0]
    t = DIRECTML_INVERSE_TRIG_TOL if device.kind == "directml" and dtype == np.float32 else tol(dtype)
    np.testing.assert_allclose(run(device, dml.atan_yx, y, x), np.arctan2(y.astype(np.float64), x.astype(np.float64)),
                               **t)


@pytest.mark.parametrize("name,dtypes", [("mean", "INT8"), ("difference_square", "UINT64"), ("atan_yx", "INT32"),
                                         ("add", "FLOAT64"), ("divide", "FLOAT64"), ("logical_and", "INT32"),
                                         ("bit_shift_left", "INT32")])
def test_binary_type_errors(device, name, dtypes):
    graph = dml.Graph(device)
    dtype = getattr(dml.TensorDataType, dtypes)
    a, b = graph.input([2, 2], dtype), graph.input([2, 2], dtype)
    with pytest.raises(ValueError, match=rf"^{name}\(\): a has type {dtypes}.*\(DML_OPERATOR_ELEMENT_WISE_{name.upper()}\)"):
        getattr(dml, name)(a, b)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_logical_binary(device, dtype):
    a = np.array([0, 0, 1, 1, 7, 0], dtype)
    b = np.array([0, 3, 0, 2, 9, 0], dtype)
    a_, b_ = a != 0, b != 0
    y = run(device, lambda x, z: (dml.logical_and(x, z), dml.logical_or(x, z), dml.logical_xor(x, z)), a, b)
    for got, expected in zip(y, [a_ & b_, a_ | b_, a_ ^ b_]):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ALL)
def test_bitwise_binary_on_stored_bits(device, dtype):
    a, b = any_values((3, 5), dtype), any_values((3, 5), dtype)
    ys = run(device, lambda x, z: (dml.bit_and(x, z), dml.bit_or(x, z), dml.bit_xor(x, z), x & z, x | z, x ^ z), a, b)
    expected = [bits(a) & bits(b), bits(a) | bits(b), bits(a) ^ bits(b)] * 2
    for got, want in zip(ys, expected):
        assert got.dtype == dtype
        np.testing.assert_array_equal(bits(got), want)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_bit_shifts(device, dtype):
    width = np.dtype(dtype).itemsize * 8
    a = full_range((2, 6), dtype)
    b = np.array([[0, 1, 3, width - 1, width, width + 5], [2, 7, 0, 1, 200 % width, 255]], dtype)
    left, right, op_left, op_right = run(device, lambda x, z: (dml.bit_shift_left(x, z), dml.bit_shift_right(x, z),
                                                       x << z, x >> z), a, b)
    big = b >= width  # every bit shifts out
    expected_left = np.where(big, 0, np.left_shift(a, np.where(big, 0, b))).astype(dtype)
    expected_right = np.where(big, 0, np.right_shift(a, np.where(big, 0, b))).astype(dtype)
    compared = ~big if device.kind == "directml" else np.full(b.shape, True)  # DirectML: amounts below the width
    for got, want in [(left, expected_left), (op_left, expected_left), (right, expected_right),
                      (op_right, expected_right)]:
        np.testing.assert_array_equal(got[compared], want[compared])


# --- comparisons and where ----------------------------------------------------------------------------------------

COMPARISONS = {
    "equals": np.equal,
    "greater_than": np.greater,
    "greater_than_or_equal": np.greater_equal,
    "less_than": np.less,
    "less_than_or_equal": np.less_equal,
}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons(device, name, dtype):
    a = random((4, 5), dtype, -3, 3)
    b = a.copy()
    b[1:] = random((3, 5), dtype, -3, 3)  # row 0 equal
    if np.dtype(dtype).kind == "f":
        a[2, 0] = np.nan  # NaN compares false, except for nothing
    y8, y32 = run(device, lambda x, z: (getattr(dml, name)(x, z), getattr(dml, name)(x, z, output_dtype=np.uint32)), a, b)
    assert y8.dtype == np.uint8 and y32.dtype == np.uint32
    np.testing.assert_array_equal(y8, COMPARISONS[name](a, b))
    np.testing.assert_array_equal(y32, COMPARISONS[name](a, b))


def test_comparison_errors(device):
    graph = dml.Graph(device)
    a, b = graph.input([2, 3], np.float32), graph.input([2, 3], np.float16)
    with pytest.raises(ValueError, match="^[^:]+: the element types differ"):
        dml.greater_than(a, b)
    with pytest.raises(ValueError, match="^[^:]+: output_dtype INT32 is not allowed"):
        dml.equals(a, a, output_dtype=np.int32)
    with pytest.raises(ValueError, match="^[^:]+: a has type FLOAT64"):
        d = graph.input([2], np.float64)
        dml.less_than(d, d)
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ: \[2, 3\] and \[3\]"):
        dml.less_than_or_equal(a, graph.input([3], np.float32))


def test_comparison_operators_are_not_overloaded(device):
    graph = dml.Graph(device)
    a, b = graph.input([2]), graph.input([2])
    assert (a == a) is True and (a == b) is False and a != b  # identity, as the spec says
    with pytest.raises(TypeError):
        a < b


@pytest.mark.parametrize("dtype", ALL)
def test_where(device, dtype):
    cond = RNG.integers(0, 3, (3, 5)).astype(np.uint8)  # any nonzero byte selects a
    a, b = any_values((3, 5), dtype), any_values((3, 5), dtype)
    y = run(device, dml.where, cond, a, b)
    assert y.dtype == dtype and dml.if_ is dml.where  # DirectMLX's If under its snake-cased name too
    np.testing.assert_array_equal(bits(y), bits(np.where(cond != 0, a, b)))


def test_where_broadcast_condition_and_errors(device):
    graph = dml.Graph(device)
    cond = graph.input([1, 5], np.uint8)
    a, b = graph.input([3, 5]), graph.input([3, 5])
    op = graph.compile([dml.where(dml.broadcast(cond, [3, 5]), a, b)])
    c, x, z = np.array([[1, 0, 1, 0, 1]], np.uint8), RNG.standard_normal((3, 5)), RNG.standard_normal((3, 5))
    np.testing.assert_allclose(op({cond: c, a: x, b: z})[0], np.where(c != 0, x, z).astype(np.float32))
    with pytest.raises(ValueError, match="^[^:]+: condition has type INT32"):
        dml.where(graph.input([3, 5], np.int32), a, b)
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ: \[1, 5\] and \[3, 5\]"):
        dml.where(cond, a, b)
    with pytest.raises(ValueError, match="^[^:]+: the element types differ"):
        dml.where(dml.broadcast(cond, [3, 5]), a, graph.input([3, 5], np.float16))


# --- clip, clip grad, cast ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_clip(device, dtype):
    x = random((4, 5), dtype)
    np.testing.assert_array_equal(run(device, lambda a: dml.clip(a, min=-2, max=7), x),
                                  np.clip(x, -2 if np.dtype(dtype).kind != "u" else 0, 7).astype(dtype))
    # bounds past an integer type's range saturate rather than wrap
    np.testing.assert_array_equal(run(device, lambda a: dml.clip(a, min=-1e30, max=1e30), x), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_clip_scale_bias(device, dtype):
    x = random((3, 5), dtype)
    g = x.astype(np.float32) * 2 + 0.5
    np.testing.assert_allclose(run(device, lambda a: dml.clip(a, min=-1, max=1.5, scale_bias=dml.ScaleBias(2, 0.5)), x),
                               np.clip(g, -1, 1.5), **tol(dtype))


def test_clip_errors(device):
    graph = dml.Graph(device)
    with pytest.raises(ValueError, match=r"^clip\(\): min and max must be numbers"):
        dml.clip(graph.input([2]), min=float("nan"), max=1)
    with pytest.raises(ValueError, match="^[^:]+: input has type INT32"):
        dml.clip(graph.input([2], np.int32), min=0, max=1, scale_bias=dml.ScaleBias())
    with pytest.raises(ValueError, match="^[^:]+: input has type FLOAT64"):
        dml.clip(graph.input([2], np.float64), min=0, max=1)


def test_clip_with_min_above_max_follows_directml(device):
    """DirectML defines CLIP as max(min, min(x, max)) for any pair: min > max gives min everywhere, and CLIP_GRAD
    passes no gradient (it passes only where min < x < max)."""
    x = np.array([-5, 0.5, 1.5, 2.5, 9], np.float32)
    np.testing.assert_array_equal(run(device, lambda a: dml.clip(a, min=2, max=1), x), np.maximum(2, np.minimum(x, 1)))
    np.testing.assert_array_equal(run(device, lambda a, g: dml.clip_grad(a, g, min=2, max=1), x, np.ones_like(x)),
                                  np.zeros_like(x))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_clip_grad(device, dtype):
    x = random((4, 5), dtype)
    grad = random((4, 5), dtype)
    lo = 1 if np.dtype(dtype).kind == "u" else -2
    x.flat[:2] = [lo, 5]  # exactly at the bounds: gradient 0
    y = run(device, lambda a, g: dml.clip_grad(a, g, min=lo, max=5), x, grad)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.where((x <= lo) | (x >= 5), 0, grad).astype(dtype))


def test_clip_grad_integer_input_with_fractional_bounds(device):
    x = np.array([-3, -2, 0, 2, 3], np.int32)
    g = np.array([10, 20, 30, 40, 50], np.int32)
    np.testing.assert_array_equal(run(device, lambda a, b: dml.clip_grad(a, b, min=-2.5, max=2.5), x, g), [0, 20, 30, 40, 0])


def test_clip_grad_errors(device):
    graph = dml.Graph(device)
    x = graph.input([2, 3])
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ: \[2, 3\] and \[3, 2\]"):
        dml.clip_grad(x, graph.input([3, 2]), min=0, max=1)
    with pytest.raises(ValueError, match="^[^:]+: the element types differ"):
        dml.clip_grad(x, graph.input([2, 3], np.float16), min=0, max=1)
    with pytest.raises(ValueError, match="^clip_grad\\(\\): min and max must be numbers"):
        dml.clip_grad(x, x, min=0, max=float("nan"))


def test_cast_saturates_and_truncates(device):
    x = np.array([np.nan, -1e10, 1e10, -2.7, 2.7, 300.5, -0.5], np.float32)
    np.testing.assert_array_equal(run(device, lambda a: dml.cast(a, dtype=np.int8), x), [0, -128, 127, -2, 2, 127, 0])
    np.testing.assert_array_equal(run(device, lambda a: dml.cast(a, dtype=dml.TensorDataType.UINT8), x),
                                  [0, 0, 255, 0, 2, 255, 0])


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", [np.float32, np.float16, np.int32, np.uint64, np.float64])
def test_cast_between_types(device, src, dst):
    x = random((3, 4), src, 0, 100)
    got = run(device, lambda a: dml.cast(a, dtype=dst), x)
    if device.kind == "directml" and dst == np.float16 and np.dtype(src).itemsize >= 4:
        # a device may round float32 to float16 toward zero (lavapipe does; Vulkan allows it): one ulp
        np.testing.assert_array_max_ulp(got, x.astype(dst), maxulp=1)
    else:
        np.testing.assert_array_equal(got, x.astype(dst))


def test_cast_float16_every_value_and_rounding_edge(device):
    # every float16 to float32 (exact); then float32 values at float16's rounding edges back: ties to even,
    # subnormal ties, the overflow threshold 65520 and just under it, NaN and infinities, both signs
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    widened = run(device, lambda a: dml.cast(a, dtype=np.float32), halves)
    np.testing.assert_array_equal(widened, halves.astype(np.float32))
    edges = np.array([1 + 2**-11, 1 + 3 * 2**-11, 2**-25, 3 * 2**-25, 2**-24 * 1.5, 2**-14 - 2**-25, 65504, 65519.99,
                      65520, 1e9, np.inf, np.nan, 2**-26, 0.0, 6.1e-5, 1 / 3], np.float32)
    edges = np.concatenate([edges, -edges])
    narrowed = run(device, lambda a: dml.cast(a, dtype=np.float16), edges)
    with np.errstate(over="ignore"):
        want = edges.astype(np.float16)
    if device.kind == "directml":  # a device may round toward zero (see test_cast_between_types), 65520 to 65504
        finite = np.abs(edges) < 65504
        np.testing.assert_array_max_ulp(narrowed[finite], want[finite], maxulp=1)
    else:
        np.testing.assert_array_equal(narrowed, want)


# --- strided, broadcast and non-contiguous inputs -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8])
def test_broadcast_and_strided_views(device, dtype):
    graph = dml.Graph(device)
    a = graph.input([3, 5], dtype)
    row = graph.input([1, 5], dtype)
    t = graph.input([5, 3], dtype)
    at = dml.reinterpret(t, [3, 5], [1, 3])  # the transpose of t, a strided view
    ys = [dml.max(a, dml.broadcast(row, [3, 5])), dml.bit_xor(at, a), dml.greater_than(at, dml.broadcast(row, [3, 5])),
          dml.identity(at), dml.where(dml.cast(dml.greater_than(a, at), dtype=np.uint8), a, at)]
    op = graph.compile(ys)
    x, r, tt = random((3, 5), dtype), random((1, 5), dtype), random((5, 3), dtype)
    got = op({a: x, row: r, t: tt})
    np.testing.assert_array_equal(got[0], np.maximum(x, r))
    np.testing.assert_array_equal(bits(got[1]), bits(tt.T) ^ bits(x))
    np.testing.assert_array_equal(got[2], tt.T > r)
    np.testing.assert_array_equal(got[3], tt.T)
    np.testing.assert_array_equal(got[4], np.where(x > tt.T, x, tt.T))


@pytest.mark.parametrize("shape", SHAPES)
def test_odd_shapes_and_non_contiguous_arrays(device, shape):
    big = RNG.standard_normal(tuple(2 * s for s in shape)).astype(np.float32)
    x = big[(slice(None, None, 2),) * len(shape)]  # every other element: not contiguous
    y = np.asfortranarray(RNG.standard_normal(shape).astype(np.float32))
    assert not x.flags.c_contiguous
    out = run(device, lambda a, b: (dml.subtract(a, b), dml.pow(a, 2.0), dml.is_nan(a)), x, y)
    np.testing.assert_allclose(out[0], x - y, rtol=1e-6)
    np.testing.assert_allclose(out[1], x * x, rtol=1e-6)
    np.testing.assert_array_equal(out[2], np.zeros(shape, np.uint8))


def test_broadcast_scalar_to_eight_dimensions(device):
    graph = dml.Graph(device)
    s = graph.input([1], np.int16)
    x = graph.input([2, 1, 3, 1, 2, 1, 3, 2], np.int16)
    op = graph.compile([dml.bit_and(x, dml.broadcast(s, x.shape)), dml.sign(x)])
    xv = full_range(x.shape, np.int16)
    got = op({s: np.array([0x0F0F], np.int16), x: xv})
    np.testing.assert_array_equal(got[0], xv & np.int16(0x0F0F))
    np.testing.assert_array_equal(got[1], np.sign(xv))


def test_shape_and_type_mismatches_name_the_operator(device):
    graph = dml.Graph(device)
    a, b = graph.input([2, 3]), graph.input([3, 2])
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ: \[2, 3\] and \[3, 2\]"):
        a + b
    with pytest.raises(ValueError, match=r"^[^:]+: the element types differ: FLOAT32 and INT32"):
        dml.bit_and(a, graph.input([2, 3], np.int32))
    with pytest.raises(ValueError, match=r"^[^:]+: operand shapes differ"):
        dml.mean(a, b)
    with pytest.raises(ValueError, match="^[^:]+: a fused activation needs a float tensor"):
        i = graph.input([2], np.int32)
        dml.add(i, i, fused_activation=dml.FusedActivation.relu())
    other = dml.Graph(device).input([2, 3])
    with pytest.raises(ValueError, match="ELEMENT_WISE_ADD"):
        dml.add(a, other)


# --- Python operators ---------------------------------------------------------------------------------------------

def test_float_operators_with_scalars(device):
    x = RNG.standard_normal((3, 4)).astype(np.float32) + 4
    z = RNG.standard_normal((3, 4)).astype(np.float32)
    got = run(device, lambda a, b: (a + 2, 2 + a, a - 2, 2 - a, a * 3, 3 * a, a / 4, 4 / a, a % 1.5, -a, a + b, a - b, a * b,
                            a / b, 7 % a), x, z)
    expected = [x + 2, 2 + x, x - 2, 2 - x, x * 3, 3 * x, x / 4, 4 / x, x % 1.5, -x, x + z, x - z, x * z, x / z, 7 % x]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64, np.uint16])
def test_integer_operators_with_scalars(device, dtype):
    # An integer tensor has no scale/bias: the number becomes a one-element constant broadcast with stride 0.
    x = RNG.integers(1, 50, (3, 4)).astype(dtype)
    got = run(device, lambda a: (a + 3, 3 + a, a - 1, 100 - a, a * 2, 2 * a, a / 7, 200 / a, a % 6, 7 % a), x)
    expected = [x + 3, 3 + x, x - 1, 100 - x, x * 2, 2 * x, x // 7, 200 // x, x % 6, 7 % x]
    for g, e in zip(got, expected):
        assert g.dtype == dtype
        np.testing.assert_array_equal(g, e)
    if np.dtype(dtype).kind == "i":
        neg, mod = run(device, lambda a: (-a, -7 % a), x)
        np.testing.assert_array_equal(neg, -x)
        np.testing.assert_array_equal(mod, -7 % x)  # floored, like Python's


@pytest.mark.parametrize("dtype", INTS)
def test_bit_operators_with_scalars_and_expressions(device, dtype):
    x = full_range((2, 5), dtype)
    z = full_range((2, 5), dtype)
    got = run(device, lambda a, b: (a & 0x5A, 0x5A & a, a | 3, 3 | a, a ^ 0x11, 0x11 ^ a, ~a, a & b, a | b, a ^ b), x, z)
    m = np.array(0x5A, dtype)
    expected = [x & m, m & x, x | dtype(3), dtype(3) | x, x ^ dtype(0x11), dtype(0x11) ^ x, ~x, x & z, x | z, x ^ z]
    for g, e in zip(got, expected):
        assert g.dtype == dtype
        np.testing.assert_array_equal(g, e)


def test_shift_operators_with_scalars(device):
    x = np.array([1, 3, 255, 128], np.uint8)
    got = run(device, lambda a: (a << 1, a >> 2, 1 << a, 255 >> a), x)
    np.testing.assert_array_equal(got[0], (x.astype(np.int64) << 1).astype(np.uint8))
    np.testing.assert_array_equal(got[1], x >> 2)
    shifted_out = slice(2) if device.kind == "directml" else slice(None)  # DirectML: amounts below the width
    np.testing.assert_array_equal(got[2][shifted_out], [2, 8, 0, 0][shifted_out])  # shifting by >= 8 gives 0
    np.testing.assert_array_equal(got[3][shifted_out], [127, 31, 0, 0][shifted_out])


def test_operator_errors(device):
    graph = dml.Graph(device)
    i, f, u = graph.input([2], np.int32), graph.input([2]), graph.input([2], np.uint8)
    with pytest.raises(ValueError, match=r"the scalar 0.5 is not representable as INT32 \(cast the tensor"):
        i + 0.5
    with pytest.raises(ValueError, match="the scalar 256 is not representable as UINT8"):
        u & 256
    with pytest.raises(ValueError, match="the scalar -1 is not representable as UINT8"):
        u * -1
    with pytest.raises(ValueError, match="^[^:]+: a has type INT32"):
        i << 1
    with pytest.raises(ValueError, match="^[^:]+: input has type UINT8"):
        -u
    with pytest.raises(TypeError):
        f & "a"
    with pytest.raises(TypeError):
        f + True  # bools are not numbers here
