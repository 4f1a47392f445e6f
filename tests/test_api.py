"""The binding API of SPEC.md's "Python API" section: each rule, and each error with the input it names.

References are NumPy, written here independently of the library. Operators other than the element-wise ones
appear only where the API needs a graph of some size (an MLP, a small CNN).
"""

import gc
import os
import re
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest

import directml as dml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_python import python  # noqa: E402


def compile_run(outputs, bindings=None, weights=None):
    """Compiles `outputs` (of one graph), initializes with `weights` if given, dispatches `bindings`."""
    op = outputs[0].graph.compile(outputs)
    if weights is not None:
        op.initialize(weights)
    return op(bindings)


# --- Device -------------------------------------------------------------------------------------------------------


def test_device_default_and_cpu():
    forced = os.environ.get("DIRECTML_DEVICE")
    assert dml.Device().kind == (forced or dml.available_device_kinds()[0])
    cpu = dml.Device("cpu")
    assert cpu.kind == "cpu"
    assert isinstance(cpu.name, str) and cpu.name
    assert "cpu" in repr(cpu)
    assert dml.Device(kind="cpu", index=0).kind == "cpu"
    assert "cpu" in dml.available_device_kinds()


@pytest.mark.parametrize("kind", ["gpu", "CPU", ""])
def test_device_unknown_kind(kind):
    if kind == "":  # the empty kind means "the default", not an unknown one
        assert dml.Device(kind).kind in dml.available_device_kinds()
        return
    with pytest.raises(ValueError, match=f"unknown device kind '{kind}'"):
        dml.Device(kind)


@pytest.mark.parametrize("index", [-1, 1])
def test_device_index(index):
    with pytest.raises(ValueError, match="index"):
        dml.Device("cpu", index)


@pytest.mark.parametrize("kind", ["cuda", "directml"])
def test_device_kind_not_built_raises_device_error(kind):
    if kind in dml.available_device_kinds():
        pytest.skip(f"this build has the {kind} executor")
    with pytest.raises(dml.DeviceError, match=kind) as info:
        dml.Device(kind)
    assert isinstance(info.value, RuntimeError)
    assert isinstance(info.value.code, str) and info.value.code  # NOT_BUILT, or the backend's own error name


def test_device_error_classes():
    assert issubclass(dml.DeviceError, RuntimeError)
    assert issubclass(dml.OutOfDeviceMemory, dml.DeviceError)
    assert issubclass(dml.OutOfDeviceMemory, MemoryError)
    # Attributes exist on every instance, also on one made by hand.
    assert dml.DeviceError("x").code == ""
    assert dml.OutOfDeviceMemory("x").bytes == 0


def test_directml_device_environment_forces_kind(tmp_path):
    code = "import directml as dml; print(dml.Device().kind)"
    result = python(code, tmp_path, DIRECTML_DEVICE="cpu")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "cpu"
    # An explicit kind is not overridden.
    result = python("import directml as dml; print(dml.Device('cpu').kind)", tmp_path, DIRECTML_DEVICE="bogus")
    assert result.returncode == 0 and result.stdout.strip() == "cpu", result.stderr
    # A kind the variable names but nothing knows: a ValueError that says where the kind came from.
    result = python(code, tmp_path, DIRECTML_DEVICE="bogus")
    assert result.returncode != 0
    assert "ValueError: unknown device kind 'bogus' (from DIRECTML_DEVICE)" in result.stderr
    if "directml" not in dml.available_device_kinds():
        code = ("import directml as dml\ntry:\n    dml.Device()\nexcept dml.DeviceError as e:\n"
                "    print(e.code)")
        result = python(code, tmp_path, DIRECTML_DEVICE="directml")
        # NOT_BUILT, or DIRECTML_NOT_FOUND where the executor is built but DirectML cannot be loaded
        assert result.returncode == 0 and result.stdout.strip() in ("NOT_BUILT", "DIRECTML_NOT_FOUND"), result.stderr


def test_devices_coexist():
    d1, d2 = dml.Device("cpu"), dml.Device("cpu")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    ops = []
    for d in (d1, d2):
        g = dml.Graph(d)
        x = g.input([2, 3], name="x")
        ops.append(g.compile([x * 2]))
    for op, d in zip(ops, (d1, d2)):
        assert op.device is not None
        np.testing.assert_array_equal(op({"x": dml.Buffer(d, a)})[0], a * 2)
    with pytest.raises(ValueError, match="input 0 'x': the Buffer belongs to a different device"):
        ops[0]({"x": dml.Buffer(d2, a)})
    with pytest.raises(ValueError, match="different device"):
        dml.Graph(d1).constant(dml.Buffer(d2, a))
    with pytest.raises(ValueError, match="different device"):
        ops[1]({"x": ops[0]({"x": a}, readback=False)[0]})


# --- Graph.input and Graph.constant -----------------------------------------------------------------------------


def test_input_properties(device):
    g = dml.Graph(device)
    assert g.device is device or g.device.kind == device.kind
    x = g.input([2, 3, 4], name="x")
    assert x.shape == (2, 3, 4)
    assert x.dtype == np.float32 and isinstance(x.dtype, np.dtype)  # float32 by default
    assert x.strides is None
    assert x.name == "x"
    w = g.input([5], np.int8, name="w", owned=True)
    assert w.dtype == np.int8
    op = g.compile([x + 1, w * 2])
    assert not op.initialized  # w is owned
    op.initialize({"w": np.arange(5, dtype=np.int8)})
    y, v = op({"x": np.zeros((2, 3, 4), np.float32)})
    assert np.all(y == 1) and v.tolist() == [0, 2, 4, 6, 8]


@pytest.mark.parametrize("dtype", [np.float16, "float16", np.dtype("float16"), dml.TensorDataType.FLOAT16, "e"])
def test_every_dtype_spelling(device, dtype):
    g = dml.Graph(device)
    assert g.input([2], dtype).dtype == np.float16
    assert g.constant(np.ones(2), dtype).dtype == np.float16
    assert dml.TensorDesc(dtype, [2]).data_type == dml.TensorDataType.FLOAT16
    assert dml.Buffer(device, np.ones(2), dtype).dtype == np.float16
    assert dml.cast(g.input([2]), dtype=dtype).dtype == np.float16
    assert dml.reinterpret(g.input([2]), [4], dtype=dtype).dtype == np.float16


def test_every_tensor_data_type_round_trips(device):
    names = {"FLOAT32", "FLOAT16", "FLOAT64", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "UINT64",
             "INT64"}
    assert {t.name for t in dml.TensorDataType} == names
    g = dml.Graph(device)
    for t in dml.TensorDataType:
        x = g.input([3], t)
        assert x.dtype == np.dtype(t.name.lower())
        assert x.desc.data_type == t


@pytest.mark.parametrize("dtype, error", [("complex64", ValueError), ("foo", TypeError), (3.5, TypeError),
                                          (np.bool_, ValueError)])
def test_bad_dtype(device, dtype, error):
    with pytest.raises(error):
        dml.Graph(device).input([2], dtype)


@pytest.mark.parametrize("sizes", [[0, 3], [-1], [], [1] * 9, [2**32]])
def test_bad_input_sizes(device, sizes):
    with pytest.raises(ValueError, match="input|dimensions"):
        dml.Graph(device).input(sizes)


def test_input_names_unique(device):
    g = dml.Graph(device)
    g.input([1], name="x")
    with pytest.raises(ValueError, match="already has an input named 'x'"):
        g.input([1], name="x")
    with pytest.raises(ValueError, match="already has an input named 'x'"):
        g.constant(np.ones(1), name="x")
    with pytest.raises(ValueError, match="empty"):
        g.input([1], name="")
    # Default names never collide, with each other or with a name the user chose that looks like one.
    g.input([1], name="input2")
    names = [g.input([1]).name for _ in range(5)] + [g.constant(np.ones(1)).name for _ in range(3)]
    assert len(set(names)) == len(names) and "input2" not in names and "x" not in names
    # Another graph has its own names.
    assert dml.Graph(device).input([1], name="x").name == "x"


def test_constant_is_an_owned_input_recorded_now(device):
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    c = g.constant(np.arange(6, dtype=np.float32).reshape(2, 3), name="c")
    assert c.name == "c" and c.shape == (2, 3) and c.dtype == np.float32
    op = g.compile([x + c])
    assert op.initialized  # only constants are owned
    np.testing.assert_array_equal(op({"x": np.ones((2, 3))})[0], np.arange(6).reshape(2, 3) + 1)
    with pytest.raises(ValueError, match="input 1 'c' is a constant"):
        op({"x": np.ones((2, 3)), "c": np.ones((2, 3))})


def test_constant_only_graph_is_initialized_at_compile(device):
    g = dml.Graph(device)
    c = g.constant(np.array([1.0, -2.0], np.float32))
    op = g.compile([c * 3])
    assert op.initialized
    np.testing.assert_array_equal(op()[0], [3, -6])
    np.testing.assert_array_equal(op({})[0], [3, -6])
    with pytest.raises(ValueError, match="is a constant"):
        op.initialize({c: np.ones(2)})


def test_constant_dtype_and_sizes(device):
    g = dml.Graph(device)
    assert g.constant(np.ones((2, 3))).dtype == np.float64  # dtype=None keeps the array's
    assert g.constant(np.ones((2, 3)), np.float16).dtype == np.float16  # same kind: converted
    assert g.constant(np.ones(6, np.int8), np.float32).dtype == np.float32  # safe: converted
    flat = g.constant(np.arange(6, dtype=np.float32), sizes=[1, 2, 3])  # a flat array fills the sizes
    assert flat.shape == (1, 2, 3)
    assert g.constant(7).shape == (1,)  # a scalar is one element
    with pytest.raises(ValueError, match=r"constant: cannot convert an int32 array to FLOAT32.*astype"):
        g.constant(np.ones(6, np.int32), np.float32)
    with pytest.raises(ValueError, match=r"cannot convert a float32 array to INT32.*astype"):
        g.constant(np.ones(6, np.float32), np.int32)
    with pytest.raises(ValueError, match=r"constant 'k': shape \[5\] does not match \[2, 3\] .*flat data needs 6 elements"):
        g.constant(np.ones(5), sizes=[2, 3], name="k")
    with pytest.raises(ValueError, match=r"shape \[3, 2\] does not match \[2, 3\]"):
        g.constant(np.ones((3, 2)), sizes=[2, 3])
    with pytest.raises(ValueError, match="constant"):
        g.constant(np.ones((0, 3)))
    op = g.compile([flat])
    np.testing.assert_array_equal(op()[0], np.arange(6).reshape(1, 2, 3))


def test_constant_keeps_no_reference_to_the_array(device):
    g = dml.Graph(device)
    array = np.arange(6, dtype=np.float32)
    before = sys.getrefcount(array)
    c = g.constant(array, sizes=[2, 3])
    op = g.compile([c * 2])
    assert sys.getrefcount(array) == before
    array[:] = 100  # the data was recorded: later writes do not reach it
    alive = weakref.ref(array)
    del array
    gc.collect()
    assert alive() is None
    np.testing.assert_array_equal(op()[0], np.arange(6).reshape(2, 3) * 2)


def test_constant_copy_false_lends_the_array_until_the_operator_goes(device):
    g = dml.Graph(device)
    array = np.arange(6, dtype=np.float32)
    c = g.constant(array, sizes=[2, 3], copy=False)
    array[:] = np.arange(6, 12)  # lent, not copied: compile reads what is there then (DirectML's CompileGraph too)
    alive = weakref.ref(array)
    del array
    gc.collect()
    assert alive() is not None  # the graph keeps it
    op = g.compile([c * 2])
    del g, c
    gc.collect()
    assert alive() is not None  # and so does the compiled operator (the cpu executor reads it in place)
    np.testing.assert_array_equal(op()[0], np.arange(6, 12).reshape(2, 3) * 2)
    del op
    gc.collect()
    assert alive() is None


def test_constant_copy_none_lends_where_it_can_and_copies_otherwise(device):
    g = dml.Graph(device)
    lent = np.arange(6, dtype=np.float16)
    strided = np.arange(12, dtype=np.float32)[::2]
    wider = np.arange(6, dtype=np.float64)
    odd = np.arange(3, dtype=np.float16)  # DirectML pads it to 8 bytes: copied, padded
    cs = [g.constant(lent, copy=None), g.constant(strided, copy=None), g.constant(wider, np.float32, copy=None),
          g.constant(odd, copy=None)]  # lent; then copied: not in C order, converted, padded
    for a in (lent, strided, wider, odd):
        a[:] = -1  # only the lent one is read again at compile
    out = g.compile([dml.cast(c, dtype=np.float32) for c in cs])()
    np.testing.assert_array_equal(out[0], -np.ones(6))
    np.testing.assert_array_equal(out[1], np.arange(0, 12, 2))
    np.testing.assert_array_equal(out[2], np.arange(6))
    np.testing.assert_array_equal(out[3], np.arange(3))


def test_constant_copy_false_refuses_what_needs_a_copy(device):
    g = dml.Graph(device)
    needs = [(np.arange(12, dtype=np.float32)[::2], None, "FLOAT32, C-contiguous"),
             (np.arange(6, dtype=np.float64), np.float32, "FLOAT32"),
             (np.arange(3, dtype=np.float16), None, "8 bytes"),
             ([1, 2], np.float32, "would need a copy")]
    for data, dtype, message in needs:
        with pytest.raises(ValueError, match=rf"constant 'w': copy=False .*{message}.*copy=None"):
            g.constant(data, dtype, name="w", copy=False)
    with pytest.raises(ValueError, match="copy=False lends host memory"):
        g.constant(dml.Buffer(device, np.ones(2, np.float32)), copy=False)
    with pytest.raises(TypeError):
        g.constant(np.ones(2, np.float32), copy="no")
    assert g.constant(np.ones(2, np.float32), copy=False).shape == (2,)  # the refusals left the graph usable


def test_constant_from_buffer(device):
    a = np.arange(6, dtype=np.float32)
    buf = dml.Buffer(device, a)
    g = dml.Graph(device)
    c = g.constant(buf, sizes=[2, 3])
    assert c.shape == (2, 3) and c.dtype == np.float32
    np.testing.assert_array_equal(compile_run([c + 1])[0], a.reshape(2, 3) + 1)
    with pytest.raises(ValueError, match="never converted"):
        g.constant(buf, np.float16)
    with pytest.raises(ValueError, match=r"constant \(a Buffer\): shape \[6\] does not match \[7\]"):
        g.constant(buf, sizes=[7])


# --- Expression ----------------------------------------------------------------------------------------------------


def test_expression_properties(device):
    g = dml.Graph(device)
    x = g.input([2, 3], np.float16, name="x")
    y = x * 2
    assert y.shape == (2, 3) and isinstance(y.shape, tuple)
    assert y.dtype == np.float16 and isinstance(y.dtype, np.dtype)
    assert y.strides is None
    assert isinstance(y.desc, dml.TensorDesc)
    assert y.desc == dml.TensorDesc(np.float16, [2, 3])
    assert y.name is None and x.name == "x"
    assert y.graph is not None
    view = dml.broadcast(x, [4, 2, 3])
    assert view.strides == (0, 3, 1)
    assert view.desc.strides == (0, 3, 1)
    assert view.name is None  # a view of an input is not the input
    assert "FLOAT16" in repr(y)


def test_expression_identity_hash_and_equality(device):
    g = dml.Graph(device)
    x = g.input([2], name="x")
    y = g.input([2], name="y")  # the same description, another input
    assert x == x and not (x == y) and x != y
    assert (x == y) is False
    a, b = x + 1, x + 1
    assert a != b  # two nodes
    table = {x: "x", y: "y", a: "a"}
    assert table[x] == "x" and table[y] == "y" and table[a] == "a" and len(table) == 3
    assert hash(x) == hash(x)
    assert {x, y, x} == {x, y}


FLOAT_X = np.array([[-7.5, -3.0, -1.25], [0.5, 2.0, 7.25]], np.float32)
FLOAT_Y = np.array([[2.0, -2.0, 3.0], [-3.0, 2.5, -1.5]], np.float32)

ARITHMETIC = {
    "x + y": (lambda x, y: x + y),
    "x - y": (lambda x, y: x - y),
    "x * y": (lambda x, y: x * y),
    "x / y": (lambda x, y: x / y),
    "x % y": (lambda x, y: x % y),
    "y % x": (lambda x, y: y % x),
    "x + 2": (lambda x, y: x + 2),
    "2 + x": (lambda x, y: 2 + x),
    "x - 2.5": (lambda x, y: x - 2.5),
    "2.5 - x": (lambda x, y: 2.5 - x),
    "x * 3": (lambda x, y: x * 3),
    "3 * x": (lambda x, y: 3 * x),
    "x / 4": (lambda x, y: x / 4),
    "x / 3": (lambda x, y: x / 3),
    "2.0 / x": (lambda x, y: 2.0 / x),  # 2/x, not DirectMLX's 1/(2x)
    "-3 / x": (lambda x, y: -3 / x),
    "-x": (lambda x, y: -x),
    "x % 3": (lambda x, y: x % 3),
    "x % -3": (lambda x, y: x % -3),
    "5.5 % x": (lambda x, y: 5.5 % x),
    "-5.5 % y": (lambda x, y: -5.5 % y),
    "(x + y) * (x - 1) / 2": (lambda x, y: (x + y) * (x - 1) / 2),
}


@pytest.mark.parametrize("expr", list(ARITHMETIC))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_arithmetic(device, expr, dtype):
    f = ARITHMETIC[expr]
    g = dml.Graph(device)
    x, y = g.input([2, 3], dtype, name="x"), g.input([2, 3], dtype, name="y")
    out = f(x, y)
    assert isinstance(out, dml.Expression) and out.dtype == dtype and out.shape == (2, 3)
    xs, ys = FLOAT_X.astype(dtype), FLOAT_Y.astype(dtype)
    result = g.compile([out, x, y])({"x": xs, "y": ys})[0]  # x and y as outputs too: both are bound
    expected = f(xs.astype(np.float64), ys.astype(np.float64))  # Python's semantics, % floored
    tol = 1e-6 if dtype == np.float32 else 4e-3
    np.testing.assert_allclose(result, expected, rtol=tol, atol=tol)


INT_ARITHMETIC = {
    "x + y": (lambda x, y: x + y),
    "x - y": (lambda x, y: x - y),
    "x * y": (lambda x, y: x * y),
    "x % y": (lambda x, y: x % y),
    "x + 2": (lambda x, y: x + 2),
    "2 + x": (lambda x, y: 2 + x),
    "x - 5": (lambda x, y: x - 5),
    "5 - x": (lambda x, y: 5 - x),
    "x * 3": (lambda x, y: x * 3),
    "3 * x": (lambda x, y: 3 * x),
    "-x": (lambda x, y: -x),
    "x % 3": (lambda x, y: x % 3),
    "x % -3": (lambda x, y: x % -3),
    "7 % x": (lambda x, y: 7 % x),
    "-7 % y": (lambda x, y: -7 % y),
}


@pytest.mark.parametrize("expr", list(INT_ARITHMETIC))
@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.int64])
def test_integer_arithmetic(device, expr, dtype):
    f = INT_ARITHMETIC[expr]
    g = dml.Graph(device)
    x, y = g.input([7], dtype, name="x"), g.input([7], dtype, name="y")
    out = f(x, y)
    assert out.dtype == dtype
    xs = np.array([-7, -3, -1, 1, 2, 5, 7], dtype)
    ys = np.array([3, -3, 2, -2, 5, -4, 7], dtype)
    result = g.compile([out, x, y])({"x": xs, "y": ys})[0]
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, f(xs.astype(np.int64), ys.astype(np.int64)))


def test_unsigned_arithmetic(device):
    g = dml.Graph(device)
    x = g.input([4], np.uint8, name="x")
    op = g.compile([x + 3, x * 2, x % 4, 200 - x])
    xs = np.array([0, 5, 10, 100], np.uint8)
    for r, e in zip(op({"x": xs}), [xs + 3, xs * 2, xs % 4, 200 - xs]):
        assert r.dtype == np.uint8
        np.testing.assert_array_equal(r, e.astype(np.uint8))


def test_no_in_place_forms(device):
    g = dml.Graph(device)
    x = g.input([3], name="x")
    original = x
    x += 1  # rebinds x to a new expression; the input is unchanged
    assert x is not original and original.name == "x" and x.name is None
    x *= 2
    x -= 0.5
    x /= 4
    op = g.compile([x, original])
    result, same = op({"x": np.array([1, 2, 3], np.float32)})
    np.testing.assert_allclose(result, ((np.array([1, 2, 3]) + 1) * 2 - 0.5) / 4)
    np.testing.assert_array_equal(same, [1, 2, 3])


@pytest.mark.parametrize("operator, name", [("+", "ADD"), ("-", "SUBTRACT"), ("*", "MULTIPLY"),
                                            ("/", "DIVIDE"), ("%", "MODULUS_FLOOR")])
def test_mismatched_operands(device, operator, name):
    g = dml.Graph(device)
    a, b = g.input([2, 3]), g.input([3, 2])
    with pytest.raises(ValueError, match=rf"^a \{operator} b: operand shapes differ: \[2, 3\] and \[3, 2\] .*\(DML_OPERATOR_ELEMENT_WISE_{name}\)$"):
        eval(f"a {operator} b")
    c = g.input([2, 3], np.float16)
    with pytest.raises(ValueError, match=rf"^a \{operator} b: the element types differ.*\(DML_OPERATOR_ELEMENT_WISE_{name}\)$"):
        eval(f"a {operator} c")
    other = dml.Graph(device).input([2, 3])
    with pytest.raises(ValueError, match="different graphs"):
        eval(f"a {operator} other")


def test_unsupported_operands_are_type_errors(device):
    x = dml.Graph(device).input([2])
    for bad in ("a", None, [1, 2], np.ones(2), True):
        with pytest.raises(TypeError):
            x + bad
        with pytest.raises(TypeError):
            bad * x  # NumPy defers to Expression (no object array of Expressions)
    with pytest.raises(TypeError):
        x @ x


# --- TensorDesc ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, sizes, strides, size", [
    (np.float16, [3], None, 8),           # 6 bytes, rounded up to 4
    (np.float32, [3], [0], 4),            # broadcast: one element
    (np.int8, [5], None, 8),
    (np.uint8, [1], None, 4),
    (np.float32, [2, 3], [1, 2], 24),     # last element at 1 + 2 * 2 = 5
    (np.float64, [2], [3], 32),           # last element at 3
    (np.float16, [2, 2], [0, 3], 8),      # last element at 3: 8 bytes
    (np.int32, [2, 3, 4], None, 96),
])
def test_tensor_desc_size_rule(dtype, sizes, strides, size):
    d = dml.TensorDesc(dtype, sizes, strides)
    assert d.total_tensor_size_in_bytes == size
    assert d.sizes == tuple(sizes)


def test_tensor_desc_properties():
    d = dml.TensorDesc("float32", [2, 3])
    assert d.data_type == dml.TensorDataType.FLOAT32 and isinstance(d.data_type, dml.TensorDataType)
    assert d.sizes == (2, 3) and d.strides is None
    assert dml.TensorDesc(np.float32, [2, 3], [3, 1]).strides is None  # packed strides are no strides
    assert dml.TensorDesc(np.float32, [2, 3], [1, 2]).strides == (1, 2)
    assert d == dml.TensorDesc(dml.TensorDataType.FLOAT32, (2, 3), [3, 1])
    assert d != dml.TensorDesc(np.float32, [3, 2]) and d != dml.TensorDesc(np.int32, [2, 3])
    assert hash(d) == hash(dml.TensorDesc(np.float32, [2, 3], [3, 1]))
    assert (d == "FLOAT32[2, 3]") is False and d != 3
    assert "FLOAT32" in repr(d)


@pytest.mark.parametrize("sizes, strides, match", [
    ([2, 3], [1], "TensorDesc: strides .* do not match"),
    ([2, 3], [-1, 1], "TensorDesc: strides must be unsigned"),
    ([0], None, "TensorDesc: sizes must be positive"),
    ([1] * 9, None, "TensorDesc: a tensor has 1 to 8 dimensions"),
    ([2**31 + 1], [2**31], "2\\^40"),  # its byte extent would overflow 64 bits
    ([2**20] * 3, None, "2\\^40"),
])
def test_tensor_desc_errors(sizes, strides, match):
    with pytest.raises(ValueError, match=match):
        dml.TensorDesc(np.float32, sizes, strides)


# --- dtypes: the cast rules ------------------------------------------------------------------------------------


CAST_CASES = [(s, t) for s in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                               "float16", "float32", "float64"]
              for t in ["int8", "int32", "int64", "uint8", "uint32", "float16", "float32", "float64"]]


def numpy_allows(source: str, target: str) -> bool:
    """The spec's rule, in NumPy's words: the same kind, or a cast NumPy calls safe."""
    return np.dtype(source).kind == np.dtype(target).kind or np.can_cast(source, target, "safe")


@pytest.mark.parametrize("source, target", CAST_CASES)
def test_cast_rules_at_binding(device, source, target):
    g = dml.Graph(device)
    x = g.input([2, 3], target, name="x")
    op = g.compile([x])
    values = np.array([[0, 1, 2], [3, 4, 5]]).astype(source)
    if numpy_allows(source, target):
        (result,) = op({"x": values})
        assert result.dtype == np.dtype(target) and result.shape == (2, 3)
        np.testing.assert_array_equal(result, values.astype(target))
    else:
        article = "an" if source.startswith("int") else "a"
        with pytest.raises(ValueError,
                           match=rf"input 0 'x': cannot convert {article} {source} array to {target.upper()}.*astype"):
            op({"x": values})


def test_values_convert_exactly(device):
    g = dml.Graph(device)
    x = g.input([4], np.float16, name="x")
    y = g.input([3], np.int8, name="y")
    op = g.compile([x, y])
    # float64 in, rounded once to float16 as NumPy rounds (the last one is just past a float16 half-way point,
    # by less than float32 can hold: rounding through float32 would round it down).
    xs = np.array([0.1, -65504.0, 1e-5, 1 + 2**-11 + 2**-40])
    ys = np.array([-128, 0, 127], np.int64)       # in range: same kind converts
    rx, ry = op({"x": xs, "y": ys})
    np.testing.assert_array_equal(rx, xs.astype(np.float16))
    np.testing.assert_array_equal(ry, ys.astype(np.int8))


def test_flat_arrays_fill_and_other_shapes_do_not(device):
    g = dml.Graph(device)
    x = g.input([2, 1, 3], name="x")
    op = g.compile([x * 1])
    (r,) = op({"x": np.arange(6, dtype=np.float32)})
    assert r.shape == (2, 1, 3)
    np.testing.assert_array_equal(r.ravel(), np.arange(6))
    np.testing.assert_array_equal(op({"x": np.arange(6, dtype=np.float32).reshape(2, 1, 3)})[0], r)
    # The tensor's shape less its 1s binds too: [2, 3] or [1, 2, 3] for [2, 1, 3].
    for same in (np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(6, dtype=np.float32).reshape(1, 2, 3, 1)):
        np.testing.assert_array_equal(op({"x": same})[0], r)
    for bad, what in [(np.ones(5), r"\[5\]"), (np.ones((3, 2)), r"\[3, 2\]"), (np.ones((6, 1)), r"\[6, 1\]"),
                      (np.float32(1), r"\[\]")]:
        with pytest.raises(ValueError, match=rf"input 0 'x': shape {what} does not match \[2, 1, 3\]"):
            op({"x": bad})


def test_array_dimensions_past_32_bits_are_refused(device):
    huge = np.broadcast_to(np.float32(1), (2**32 + 6,))  # no memory behind it: zero strides
    g = dml.Graph(device)
    x = g.input([6], name="x")
    op = g.compile([x + 1])
    with pytest.raises(ValueError, match="input 0 'x': the array's dimension 0 has 4294967302 elements"):
        op({"x": huge})
    with pytest.raises(ValueError, match="Buffer: the array's dimension 0"):
        dml.Buffer(device, huge)
    with pytest.raises(ValueError, match="constant: the array's dimension 0"):
        g.constant(huge)


def test_out_of_device_memory_says_how_much(device):
    g = dml.Graph(device)
    x = g.input([1], name="x")
    op = g.compile([dml.broadcast(x, [2**20, 2**20]) * 1])  # one element viewed as 2^40: 4 TiB once written
    with pytest.raises(dml.OutOfDeviceMemory, match=f"asked for {4 * 2**40} bytes") as info:
        op({"x": np.ones(1)})
    assert isinstance(info.value, MemoryError) and isinstance(info.value, dml.DeviceError)
    assert info.value.bytes == 4 * 2**40 and info.value.code
    np.testing.assert_array_equal(compile_run([x + 1], {"x": np.ones(1)})[0], [2])  # the device still works


def test_python_sequences_bind(device):
    g = dml.Graph(device)
    x = g.input([2, 2], name="x")
    (r,) = g.compile([x + x])({"x": [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_array_equal(r, [[2, 4], [6, 8]])
    with pytest.raises(TypeError, match="input 0 'x'"):
        g.compile([x + x])({"x": "text"})


def test_float16_end_to_end(device):
    g = dml.Graph(device)
    x = g.input([1, 1, 3, 4], np.float16, name="x")
    w = g.input([1, 1, 4, 2], np.float16, name="w", owned=True)
    y = dml.gemm(x, w) * 0.5 + 1
    op = g.compile([y])
    wv = np.linspace(-1, 1, 8).reshape(1, 1, 4, 2)
    op.initialize({"w": dml.Buffer(device, wv, np.float16)})
    xv = np.linspace(-2, 2, 12).reshape(1, 1, 3, 4).astype(np.float16)
    (r,) = op({"x": xv})
    assert r.dtype == np.float16 and r.shape == (1, 1, 3, 2)
    expected = (xv[0, 0].astype(np.float64) @ wv[0, 0].astype(np.float16)) * 0.5 + 1
    np.testing.assert_allclose(r[0, 0], expected, rtol=1e-2, atol=1e-2)
    (buffer,) = op({"x": xv}, readback=False)
    assert buffer.dtype == np.float16
    np.testing.assert_array_equal(buffer.numpy(), r)


# --- Views: broadcast, reinterpret, cast --------------------------------------------------------------------------


def test_broadcast(device):
    g = dml.Graph(device)
    x = g.input([3, 1], name="x")
    assert dml.broadcast(x, [3, 1]) is x
    assert dml.broadcast(x, (3, 1)) is x
    b = dml.broadcast(x, [2, 3, 4])
    assert b.shape == (2, 3, 4) and b.strides == (0, 1, 0)
    row = g.input([4], name="row")
    r = dml.broadcast(row, [3, 4])
    assert r.strides == (0, 1)
    assert dml.broadcast(r, [2, 3, 4]).strides == (0, 0, 1)  # a view of a view
    op = g.compile([b + 0, r * 1])
    xv, rv = np.array([[1], [2], [3]], np.float32), np.arange(4, dtype=np.float32)
    got_b, got_r = op({"x": xv, "row": rv})
    np.testing.assert_array_equal(got_b, np.broadcast_to(xv, (2, 3, 4)))
    np.testing.assert_array_equal(got_r, np.broadcast_to(rv, (3, 4)))
    for bad in ([4, 1], [2], [2, 2, 1], [1] * 9):
        with pytest.raises(ValueError, match=r"broadcast.*\[3, 1\]"):
            dml.broadcast(x, bad)
    with pytest.raises(TypeError, match="broadcast"):
        dml.broadcast(np.ones(3), [3])


def test_nothing_broadcasts_implicitly(device):
    g = dml.Graph(device)
    with pytest.raises(ValueError, match=r"\[2, 3\].*\[3\]"):
        g.input([2, 3]) + g.input([3])


def test_reinterpret(device):
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    t = dml.reinterpret(x, [3, 2], [1, 3])  # the transpose
    assert t.shape == (3, 2) and t.strides == (1, 3)
    flat = dml.reinterpret(x, [6])
    assert flat.strides is None
    bits = dml.reinterpret(x, [2, 3], dtype=np.int32)
    assert bits.dtype == np.int32
    halves = dml.reinterpret(x, [12], dtype=np.float16)
    op = g.compile([t * 1, flat + 0, bits, halves])
    xv = np.array([[1.5, -2, 3], [4, 5, 6.25]], np.float32)
    rt, rf, rb, rh = op({"x": xv})
    np.testing.assert_array_equal(rt, xv.T)
    np.testing.assert_array_equal(rf, xv.ravel())
    np.testing.assert_array_equal(rb, xv.view(np.int32))
    np.testing.assert_array_equal(rh, xv.ravel().view(np.float16))


@pytest.mark.parametrize("sizes, strides, dtype", [
    ([3, 3], None, None),       # 36 bytes of a 24-byte buffer
    ([2, 3], [3, 2], None),     # the last element is at 3 + 4 = 7
    ([13], None, np.float16),
    ([4], None, np.float64),
    ([2**31 + 1], [2**31], None),  # an extent that wraps 64 bits must not pass
])
def test_reinterpret_is_bounds_checked(device, sizes, strides, dtype):
    x = dml.Graph(device).input([2, 3], name="x")
    with pytest.raises(ValueError, match="reinterpret"):
        dml.reinterpret(x, sizes, strides, dtype=dtype)


def test_reinterpret_of_a_view_is_checked_against_the_buffer(device):
    g = dml.Graph(device)
    c = g.input([1, 3], name="c")
    wide = dml.broadcast(c, [5, 3])  # a view addressing 3 elements
    with pytest.raises(ValueError, match=r"reinterpret.*FLOAT32\[1, 3\] holds 12"):
        dml.reinterpret(wide, [5, 3])
    assert dml.reinterpret(wide, [3]).shape == (3,)
    with pytest.raises(ValueError, match="reinterpret strides must be unsigned"):
        dml.reinterpret(c, [3], [-1])
    with pytest.raises(ValueError, match=r"reinterpret\(\): strides .* do not match"):
        dml.reinterpret(c, [1, 3], [1])


def test_cast(device):
    g = dml.Graph(device)
    x = g.input([4], name="x")
    n = g.input([4], np.int32, name="n")
    outs = [dml.cast(x, dtype=np.float16), dml.cast(x, dtype="int32"),
            dml.cast(n, dtype=dml.TensorDataType.FLOAT64), dml.cast(n, dtype=np.uint8)]
    assert [o.dtype for o in outs] == [np.float16, np.int32, np.float64, np.uint8]
    xv = np.array([-2, 0.5, 3, 100], np.float32)
    nv = np.array([0, 1, 7, 255], np.int32)
    r16, r32, r64, r8 = g.compile(outs)({"x": xv, "n": nv})
    np.testing.assert_array_equal(r16, xv.astype(np.float16))
    np.testing.assert_array_equal(r32[[0, 2, 3]], [-2, 3, 100])  # integral values: no rounding question
    np.testing.assert_array_equal(r64, nv)
    np.testing.assert_array_equal(r8, nv.astype(np.uint8))


# --- CompiledOperator ----------------------------------------------------------------------------------------------


def weighted_graph(device):
    """y = x * w + c + b, with x plain, w and b owned, c a constant, and an input the output does not use."""
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    w = g.input([2, 3], name="w", owned=True)
    g.input([2, 3], name="unused")
    c = g.constant(np.full((2, 3), 10, np.float32), name="c")
    b = g.input([2, 3], name="b", owned=True)
    return g, (x, w, c, b), x * w + c + b


ONES = np.ones((2, 3), np.float32)


def test_initialize_and_dispatch(device):
    g, (x, w, c, b), y = weighted_graph(device)
    op = g.compile([y])
    assert not op.initialized
    assert op.initialize({w: ONES * 2, "b": ONES}) is None  # by Expression and by name
    assert op.initialized
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(op({"x": xv})[0], xv * 2 + 11)
    np.testing.assert_array_equal(op({x: xv})[0], xv * 2 + 11)
    # Re-initializing replaces the weights.
    op.initialize({"w": ONES * 3, "b": ONES * -1})
    np.testing.assert_array_equal(op({"x": xv})[0], xv * 3 + 9)
    op.initialize({"w": dml.Buffer(device, ONES), "b": dml.Buffer(device, ONES)})
    np.testing.assert_array_equal(op({"x": xv})[0], xv + 11)


@pytest.mark.parametrize("bindings, match", [
    ({}, "input 1 'w' is missing from initialize"),
    ({"w": ONES}, "input 4 'b' is missing from initialize"),
    ({"w": ONES, "b": ONES, "unused": ONES}, "input 2 'unused' is not used by this operator's outputs"),
    ({"w": ONES, "b": ONES, "zz": ONES}, "unknown input 'zz'"),
    ({"w": ONES, "b": ONES, "x": ONES}, "input 0 'x' is not owned: bind it at dispatch"),
    ({"w": ONES, "b": ONES, "c": ONES}, "input 3 'c' is a constant"),
    ({"w": ONES.astype(np.int32), "b": ONES}, "input 1 'w': cannot convert an int32 array"),
    ({"w": ONES[:, :2], "b": ONES}, r"input 1 'w': shape \[2, 2\] does not match"),
    (lambda d: {"w": ONES, "b": dml.Buffer(d, ONES.astype(np.float16))},
     "input 4 'b': the Buffer holds FLOAT16 but the tensor is FLOAT32"),
])
def test_initialize_errors(device, bindings, match):
    g, _, y = weighted_graph(device)
    op = g.compile([y])
    with pytest.raises(ValueError, match=match):
        op.initialize(bindings(device) if callable(bindings) else bindings)
    assert not op.initialized


def test_initialize_doubly_bound(device):
    g, (x, w, c, b), y = weighted_graph(device)
    op = g.compile([y])
    with pytest.raises(ValueError, match="input 1 'w' is bound twice"):
        op.initialize({"w": ONES, w: ONES, "b": ONES})


@pytest.mark.parametrize("bindings, match", [
    ({}, "input 0 'x' is missing"),
    (None, "input 0 'x' is missing"),
    ({"x": ONES, "unused": ONES}, "input 2 'unused' is not used"),
    ({"x": ONES, "nope": ONES}, "unknown input 'nope'"),
    ({"x": ONES, "w": ONES}, "input 1 'w' is owned: bind it with initialize"),
    ({"x": ONES, "c": ONES}, "input 3 'c' is a constant"),
    ({"x": ONES.astype(np.int64)}, "input 0 'x': cannot convert an int64 array to FLOAT32"),
    ({"x": ONES.astype(np.complex64)}, "input 0 'x': complex64 arrays have no DirectML tensor type"),
    ({"x": np.ones((3, 2))}, r"input 0 'x': shape \[3, 2\] does not match \[2, 3\]"),
    (lambda d: {"x": dml.Buffer(d, np.ones(5, np.float32))},
     r"input 0 'x' \(a Buffer\): shape \[5\] does not match \[2, 3\]"),
    (lambda d: {"x": dml.Buffer(d, ONES, np.float16)}, "input 0 'x': .* never converted"),
])
def test_dispatch_errors(device, bindings, match):
    g, _, y = weighted_graph(device)
    op = g.compile([y])
    op.initialize({"w": ONES, "b": ONES})
    with pytest.raises(ValueError, match=match):
        op(bindings(device) if callable(bindings) else bindings)


def test_dispatch_doubly_bound_and_foreign_keys(device):
    g, (x, w, c, b), y = weighted_graph(device)
    op = g.compile([y])
    op.initialize({"w": ONES, "b": ONES})
    with pytest.raises(ValueError, match="input 0 'x' is bound twice"):
        op({"x": ONES, x: ONES})
    with pytest.raises(ValueError, match="another graph"):
        op({dml.Graph(device).input([2, 3], name="x"): ONES})
    with pytest.raises(ValueError, match=r"not a graph input but FLOAT32\[2, 3\]"):
        op({y: ONES})
    with pytest.raises(ValueError, match="not a graph input"):
        op({dml.broadcast(x, [1, 2, 3]): ONES})
    with pytest.raises(TypeError, match="binding keys"):
        op({0: ONES})
    with pytest.raises(TypeError, match="dict"):
        op([ONES])
    late = g.input([1], name="late")
    with pytest.raises(ValueError, match="input 5 'late' was added to the graph after compile"):
        op({"x": ONES, late: np.ones(1)})
    with pytest.raises(ValueError, match="input 5 'late' was added"):
        op({"x": ONES, "late": np.ones(1)})


def test_dispatch_before_initialize(device):
    g, _, y = weighted_graph(device)
    op = g.compile([y])
    with pytest.raises(ValueError, match="not initialized: input 1 'w' is owned; call initialize"):
        op({"x": ONES})


def test_compile_errors(device):
    g = dml.Graph(device)
    x = g.input([2], name="x")
    with pytest.raises(ValueError, match="at least one output"):
        g.compile([])
    with pytest.raises(ValueError, match="another graph"):
        g.compile([dml.Graph(device).input([2])])
    with pytest.raises(TypeError):
        g.compile(x)


def test_outputs_in_order_in_their_dtype_and_shape(device):
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    n = g.input([4], np.int16, name="n")
    y = x * 2
    op = g.compile([y, x, y, n, dml.broadcast(n, [2, 4])])  # an input, a repeat and a view are outputs too
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    nv = np.array([1, -2, 3, -4], np.int16)
    results = op({"x": xv, "n": nv})
    assert [r.shape for r in results] == [(2, 3), (2, 3), (2, 3), (4,), (2, 4)]
    assert [r.dtype for r in results] == [np.float32, np.float32, np.float32, np.int16, np.int16]
    for r, e in zip(results, [xv * 2, xv, xv * 2, nv, np.broadcast_to(nv, (2, 4))]):
        np.testing.assert_array_equal(r, e)
    results[0][:] = 0  # outputs are separate arrays
    np.testing.assert_array_equal(results[2], xv * 2)


def test_a_packed_reshape_of_a_node_output_is_returned_without_a_copy(device):
    g = dml.Graph(device)
    x = g.input([2, 3, 4], name="x")
    y = x + x
    flat = dml.reinterpret(y, [6, 4])  # the same bytes under other sizes
    op = g.compile([flat])
    assert op._node_types == ["DML_OPERATOR_ELEMENT_WISE_ADD"]  # the add writes the output itself
    assert "outputs=[FLOAT32[6, 4]]" in repr(op)
    xv = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (r,) = op({"x": xv})
    assert r.shape == (6, 4) and r.dtype == np.float32
    np.testing.assert_array_equal(r, (xv * 2).reshape(6, 4))
    (b,) = op({"x": xv}, readback=False)
    assert b.shape == (6, 4)
    # A strided view, a reinterpret to another type and a repeat of the reshape are copied, each as asked for.
    op = g.compile([flat, dml.reinterpret(y, [3, 2, 4], [4, 12, 1]), dml.reinterpret(y, [24], dtype=np.int32), flat])
    r0, r1, r2, r3 = op({"x": xv})
    np.testing.assert_array_equal(r0, (xv * 2).reshape(6, 4))
    np.testing.assert_array_equal(r1, (xv * 2).transpose(1, 0, 2))
    np.testing.assert_array_equal(r2, (xv * 2).ravel().view(np.int32))
    np.testing.assert_array_equal(r3, r0)
    r0[:] = 0  # separate arrays
    np.testing.assert_array_equal(r3, (xv * 2).reshape(6, 4))


def test_binding_properties(device):
    g = dml.Graph(device)
    x = g.input([4, 16], name="x")
    w = g.input([4, 16], name="w", owned=True)
    y = ((x * w) + 1) * (x - 1)
    op = g.compile([y])
    for name in ("temporary_size", "persistent_size", "descriptor_count"):
        assert isinstance(getattr(op, name), int)
    assert op.temporary_size >= 4 * 16 * 4  # the intermediates live somewhere
    assert op.persistent_size >= 4 * 16 * 4  # the weights stay on the device
    assert op.descriptor_count >= 3  # x, w and the output
    assert isinstance(op.initialized, bool)
    constant_only = dml.Graph(device)
    assert constant_only.compile([constant_only.constant(np.ones(3, np.float32)) + 1]).persistent_size >= 12


def test_readback_false_returns_buffers_that_bind_in_place(device):
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    y, z = x * 2, dml.cast(x, dtype=np.int32)
    op = g.compile([y, z])
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    by, bz = op({"x": xv}, readback=False)
    assert isinstance(by, dml.Buffer) and isinstance(bz, dml.Buffer)
    assert by.shape == (2, 3) and by.dtype == np.float32 and bz.dtype == np.int32
    assert by.device.kind == device.kind
    g2 = dml.Graph(device)
    a = g2.input([1, 2, 3], name="a")  # a shape that differs only in axes of size 1
    w = g2.input([6], np.int32, name="w", owned=True)  # a Buffer [2, 3] does not fill [6]
    with pytest.raises(ValueError, match=r"input 1 'w' \(a Buffer\): shape \[2, 3\] does not match \[6\]"):
        g2.compile([w * 3]).initialize({"w": bz})
    w = g2.input([2, 3], np.int32, name="w2", owned=True)
    op2 = g2.compile([a + 1, w * 3])
    op2.initialize({"w2": bz})
    ra, rw = op2({"a": by})
    np.testing.assert_array_equal(ra.ravel(), xv.ravel() * 2 + 1)
    np.testing.assert_array_equal(rw, np.arange(6).reshape(2, 3) * 3)


def test_buffer_outlives_graph_and_operator(device):
    g = dml.Graph(device)
    x = g.input([3], name="x")
    op = g.compile([x * 2 + 1])
    (buffer,) = op({"x": np.array([1, 2, 3], np.float32)}, readback=False)
    (array,) = op({"x": np.array([1, 2, 3], np.float32)})
    del g, x, op
    gc.collect()
    np.testing.assert_array_equal(buffer.numpy(), [3, 5, 7])
    np.testing.assert_array_equal(array, [3, 5, 7])


# --- Buffer -------------------------------------------------------------------------------------------------------


def test_buffer_properties(device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = dml.Buffer(device, a)
    assert b.shape == (2, 3) and b.dtype == np.float32 and b.nbytes == 24
    assert b.device.kind == device.kind
    assert "FLOAT32" in repr(b)
    copy = b.numpy()
    np.testing.assert_array_equal(copy, a)
    copy[:] = -1  # numpy() is a copy
    np.testing.assert_array_equal(b.numpy(), a)
    np.testing.assert_array_equal(np.asarray(b), a)
    assert np.asarray(b, dtype=np.float64).dtype == np.float64
    a[:] = 7  # the Buffer holds its own data
    np.testing.assert_array_equal(b.numpy(), np.arange(6).reshape(2, 3))


def test_buffer_conversion(device):
    assert dml.Buffer(device, np.ones(3), np.float16).dtype == np.float16
    assert dml.Buffer(device, np.ones(3, np.uint8), dml.TensorDataType.INT32).dtype == np.int32
    assert dml.Buffer(device, 2.5).shape == (1,)
    assert dml.Buffer(device, [1, 2, 3]).dtype == np.int64
    np.testing.assert_array_equal(dml.Buffer(device, np.arange(6.0).reshape(2, 3).T).numpy(),
                                  np.arange(6.0).reshape(2, 3).T)
    with pytest.raises(ValueError, match="Buffer: cannot convert a float64 array to INT32.*astype"):
        dml.Buffer(device, np.ones(3), np.int32)
    with pytest.raises(ValueError, match="Buffer: tensor sizes must be positive"):
        dml.Buffer(device, np.ones((0, 2)))
    with pytest.raises(TypeError):
        dml.Buffer("cpu", np.ones(3))


def test_buffer_dlpack(device):
    b = dml.Buffer(device, np.arange(6, dtype=np.float32).reshape(2, 3))
    if b.__dlpack_device__() != (1, 0):
        pytest.skip("the Buffer is not in host memory")
    first, second = np.from_dlpack(b), np.from_dlpack(b)
    np.testing.assert_array_equal(first, np.arange(6).reshape(2, 3))
    assert first.dtype == np.float32 and first.shape == (2, 3)
    assert np.shares_memory(first, second)  # no copy: both view the Buffer
    first[0, 0] = 42
    assert second[0, 0] == 42 and b.numpy()[0, 0] == 42
    copied = np.from_dlpack(b, copy=True)
    copied[0, 0] = -1
    assert b.numpy()[0, 0] == 42
    assert np.shares_memory(np.asarray(b, copy=False), first)  # NumPy's protocol: a view where memory allows
    with pytest.raises(BufferError):
        b.__dlpack__(dl_device=(2, 0))


def test_dlpack_view_keeps_the_buffer_alive(device):
    b = dml.Buffer(device, np.arange(4, dtype=np.int16))
    if b.__dlpack_device__() != (1, 0):
        pytest.skip("the Buffer is not in host memory")
    view = np.from_dlpack(b)
    del b
    gc.collect()
    np.testing.assert_array_equal(view, [0, 1, 2, 3])


# --- Arrays handed in ---------------------------------------------------------------------------------------------


def non_contiguous_arrays(rng):
    base = rng.standard_normal((4, 6, 5)).astype(np.float32)
    return {
        "transposed": base[0].T,                              # column-major
        "stepped": base[::2, 1::2, ::2],
        "reversed": base[0, ::-1, ::-1],                      # negative strides
        "fortran": np.asfortranarray(base[1]),
        "broadcast": np.broadcast_to(base[2, 0], (6, 5)),     # zero strides
        "float64 view": base.astype(np.float64)[1:, ::-1, 2],  # converted while walking the strides
    }


@pytest.mark.parametrize("kind", list(non_contiguous_arrays(np.random.default_rng(0))))
def test_non_contiguous_arrays(device, rng, kind):
    array = non_contiguous_arrays(rng)[kind]
    assert not array.flags.c_contiguous
    g = dml.Graph(device)
    x = g.input(list(array.shape), name="x")
    w = g.input(list(array.shape), name="w", owned=True)
    op = g.compile([x * w])
    op.initialize({"w": array})
    (r,) = op({"x": array})
    np.testing.assert_allclose(r, np.asarray(array, np.float32) ** 2, rtol=1e-6)
    np.testing.assert_array_equal(dml.Buffer(device, array, np.float32).numpy(), array.astype(np.float32))
    np.testing.assert_array_equal(compile_run([g.constant(array, np.float32) + 0]), [array.astype(np.float32)])


def test_misaligned_array(device):
    raw = np.zeros(4 * 6 + 1, np.uint8)
    raw[1:] = np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), np.uint8)
    misaligned = np.frombuffer(raw, dtype=np.float32, count=6, offset=1)
    assert misaligned.ctypes.data % 4 != 0 and misaligned.flags.c_contiguous
    g = dml.Graph(device)
    x = g.input([6], name="x")
    np.testing.assert_array_equal(g.compile([x + 1])({"x": misaligned})[0], np.arange(6) + 1)


# --- Graphs of some size --------------------------------------------------------------------------------------


def test_graph_of_more_than_100_nodes(device, rng):
    g = dml.Graph(device)
    x = g.input([3, 5], name="x")
    y = g.input([3, 5], name="y")
    z = x
    for i in range(30):
        z = (z * 0.5 + y) - x * 0.25  # four nodes
        if i % 10 == 9:
            z = dml.activation_relu(z)
    op = g.compile([z])
    xv, yv = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    zr = xv.copy()
    for i in range(30):
        zr = (zr * 0.5 + yv) - xv * 0.25
        if i % 10 == 9:
            zr = np.maximum(zr, 0)
    (result,) = op({"x": xv, "y": yv})
    np.testing.assert_allclose(result, zr, rtol=1e-5, atol=1e-5)
    # Intermediates share memory: a handful of blocks (64 bytes on the CPU, 256 on CUDA), not one per node.
    assert op.temporary_size <= 8 * (256 if device.kind == "cuda" else 64)


def softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_mlp(device, rng):
    batch, k, hidden, classes = 5, 7, 6, 4
    g = dml.Graph(device)
    x = g.input([1, 1, batch, k], name="x")
    w1 = g.input([1, 1, k, hidden], name="w1", owned=True)
    b1 = g.input([1, 1, 1, hidden], name="b1", owned=True)
    w2v = rng.standard_normal((classes, hidden)).astype(np.float32)
    b2v = rng.standard_normal(classes).astype(np.float32)
    w2 = g.constant(w2v.ravel(), sizes=[1, 1, classes, hidden])  # a flat array fills the sizes
    b2 = g.constant(b2v, sizes=[1, 1, 1, classes])
    h = dml.gemm(x, w1, dml.broadcast(b1, [1, 1, batch, hidden]), fused_activation=dml.FusedActivation.relu())
    logits = dml.gemm(h, w2, trans_b=dml.MatrixTransform.TRANSPOSE) + dml.broadcast(b2, [1, 1, batch, classes])
    p = dml.activation_softmax(logits, axes=[3])
    op = g.compile([p])
    w1v, b1v = rng.standard_normal((k, hidden)), rng.standard_normal(hidden)
    op.initialize({"w1": w1v.reshape(1, 1, k, hidden), "b1": b1v})
    xv = rng.standard_normal((batch, k))
    (probs,) = op({"x": xv.reshape(1, 1, batch, k)})
    expected = softmax(np.maximum(xv @ w1v + b1v, 0) @ w2v.T + b2v, axis=1)
    assert probs.shape == (1, 1, batch, classes)
    np.testing.assert_allclose(probs[0, 0], expected, rtol=1e-5, atol=1e-6)


def conv2d_reference(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    k, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, k, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,kc->nkhw", patch, w[:, :, i, j])
    return out + b.reshape(1, k, 1, 1)


def test_small_cnn(device, rng):
    n, c, size, k, classes = 2, 3, 9, 4, 3
    g = dml.Graph(device)
    x = g.input([n, c, size, size], name="image")
    wv = rng.standard_normal((k, c, 3, 3)).astype(np.float32)
    bv = rng.standard_normal(k).astype(np.float32)
    fv = rng.standard_normal((k, classes)).astype(np.float32)
    w = g.constant(wv)
    b = g.constant(bv, sizes=[1, k, 1, 1])
    f = g.constant(fv.reshape(1, 1, k, classes))
    y = dml.convolution(x, w, b, strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1])
    y = dml.activation_relu(y)
    pooled = dml.reduce(y, function=dml.ReduceFunction.AVERAGE, axes=[2, 3])  # [n, k, 1, 1]
    logits = dml.gemm(dml.reinterpret(pooled, [1, 1, n, k]), f)
    op = g.compile([logits, y])
    assert op.initialized
    image = rng.standard_normal((n, c, size, size)).astype(np.float32)
    got_logits, got_y = op({"image": image})
    ref_y = np.maximum(conv2d_reference(image.astype(np.float64), wv, bv, 2, 1), 0)
    np.testing.assert_allclose(got_y, ref_y, rtol=1e-4, atol=1e-5)
    ref_logits = ref_y.mean(axis=(2, 3)) @ fv
    np.testing.assert_allclose(got_logits[0, 0], ref_logits, rtol=1e-4, atol=1e-5)


# --- Threads ----------------------------------------------------------------------------------------------------


def test_dispatch_from_several_threads(device, rng):
    g = dml.Graph(device)
    x = g.input([1, 1, 16, 24], name="x")
    w = g.input([1, 1, 24, 8], name="w", owned=True)
    y = dml.activation_relu(dml.gemm(x, w) * 0.5 + 1)
    op = g.compile([y])
    wv = rng.standard_normal((24, 8)).astype(np.float32)
    op.initialize({"w": wv.reshape(1, 1, 24, 8)})
    inputs = [rng.standard_normal((1, 1, 16, 24)).astype(np.float32) for _ in range(8)]
    failures = []
    start = threading.Barrier(len(inputs))

    def worker(xv):
        try:
            start.wait()
            expected = np.maximum((xv[0, 0].astype(np.float64) @ wv) * 0.5 + 1, 0)
            for _ in range(20):
                (r,) = op({"x": xv})
                np.testing.assert_allclose(r[0, 0], expected, rtol=1e-4, atol=1e-4)
        except Exception as e:  # noqa: BLE001  (reported below, with the thread's input)
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(xv,)) for xv in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def test_error_messages_use_articles_correctly(device):
    g = dml.Graph(device)
    x = g.input([2], name="x")
    op = g.compile([x + 1])
    for dtype, text in [(np.int64, "an int64 array"), (np.uint64, "a uint64 array")]:
        with pytest.raises(ValueError, match=re.escape(text)):
            op({"x": np.ones(2, dtype)})
