"""The API as users of the binding we follow write it (issue 17): shapes less their 1s, literals, one dtype
keyword rule, the defaults users expect, tuples for small structs, errors that lead with the call, reprs,
memory errors and DLPack in both directions. Results are checked against NumPy."""

import re

import numpy as np
import pytest

import directml as dml
from directml import _core

AD = dml.AxisDirection


def compile_run(outputs, bindings=None):
    return outputs[0].graph.compile(outputs)(bindings)


# ---- shapes and literals ----

def test_arrays_of_the_shape_less_its_ones_bind_everywhere(device):
    g = dml.Graph(device)
    w = np.arange(20, dtype=np.float32).reshape(2, 10)
    x = g.input([1, 1, 2, 10], name="x")
    c = g.constant(w, sizes=[1, 1, 2, 10])  # graph.constant(array, sizes=...) follows the same rule
    (r,) = g.compile([x + c])({"x": w})
    np.testing.assert_array_equal(r, 2 * w.reshape(1, 1, 2, 10))
    (r,) = g.compile([x * 1])({"x": dml.Buffer(device, w)})  # and a Buffer
    np.testing.assert_array_equal(r, w.reshape(1, 1, 2, 10))
    with pytest.raises(ValueError, match=r"^input 0 'x': shape \[10, 2\] does not match \[1, 1, 2, 10\]"):
        g.compile([x * 1])({"x": w.T.copy()})
    with pytest.raises(ValueError, match=r"^constant: shape \[10, 2\] does not match \[1, 1, 2, 10\]"):
        g.constant(w.T.copy(), sizes=[1, 1, 2, 10])


def test_a_python_list_of_ints_is_a_literal_for_a_float_tensor(device):
    g = dml.Graph(device)
    x = g.input([1, 1, 2, 2], name="x")
    (r,) = g.compile([x * 2])({"x": [[1, 2], [3, 4]]})
    np.testing.assert_array_equal(r, [[[[2, 4], [6, 8]]]])
    assert r.dtype == np.float32
    (r,) = g.compile([x + g.constant([1, 2, 3, 4], np.float32, sizes=[1, 1, 2, 2])])({"x": [5, 6, 7, 8]})
    np.testing.assert_array_equal(r.ravel(), [6, 8, 10, 12])
    # An int64 *array* is data, not a literal: converting it to float32 still needs astype().
    with pytest.raises(ValueError, match="cannot convert an int64 array to FLOAT32"):
        g.compile([x * 2])({"x": np.arange(4)})
    # Floats do not become ints silently either.
    y = g.input([2], np.int32, name="y")
    with pytest.raises(ValueError, match="cannot convert a float64 array to INT32"):
        g.compile([y * 2])({"y": [1.5, 2.0]})


# ---- one dtype keyword rule ----

DTYPE_KEYWORDS = {"dtype", "output_dtype"}
OLD_KEYWORDS = re.compile(r"\b(\w*data_type|indices_dtype)\b")


def keywords(function) -> set[str]:
    return {name for sig, *_ in function.__nb_signature__ for name in re.findall(r"(\w+): ", sig.split(") ->")[0])}


def test_every_dtype_keyword_is_dtype_or_output_dtype():
    for name in dir(_core):
        function = getattr(_core, name)
        if type(function).__name__ != "nb_func":
            continue
        found = {k for k in keywords(function) if "dtype" in k or "data_type" in k}
        assert found <= DTYPE_KEYWORDS, (name, found)
    for name, want in [("cast", "dtype"), ("fill_value_constant", "dtype"), ("fill_value_sequence", "dtype"),
                       ("equals", "output_dtype"), ("is_nan", "output_dtype"), ("is_infinity", "output_dtype"),
                       ("bit_count", "output_dtype"), ("top_k", "output_dtype"), ("max_pooling", "output_dtype"),
                       ("reduce", "output_dtype")]:
        assert want in keywords(getattr(_core, name)), name


@pytest.mark.parametrize("spelling", [np.uint32, "uint32", np.dtype("uint32"), dml.TensorDataType.UINT32])
def test_dtype_keywords_take_numpy_and_directml_types(device, spelling):
    g = dml.Graph(device)
    x = g.input([4])
    assert dml.cast(x, dtype=spelling).dtype == np.uint32
    assert dml.equals(x, x, output_dtype=spelling).dtype == np.uint32
    assert dml.fill_value_constant(g, sizes=[2], value=3, dtype=spelling).dtype == np.uint32
    assert dml.top_k(x, axis=0, k=1, output_dtype=spelling).indices.dtype == np.uint32


# ---- defaults ----

def test_defaults_users_expect(device, rng):
    g = dml.Graph(device)
    a = rng.standard_normal((1, 1, 3, 6)).astype(np.float32)
    x = g.input(list(a.shape), name="x")
    top = dml.top_k(x, axis=3, k=2)  # largest first, UINT32 indices
    csum = dml.cumulative_summation(x, axis=3)  # forward, inclusive
    cprod = dml.cumulative_product(x, axis=2)
    fill = dml.fill_value_constant(g, sizes=[2, 2], value=1.5)  # float32
    seq = dml.fill_value_sequence(g, sizes=[5])  # float32 0, 1, 2, ...
    avg = dml.average_pooling(x, window_size=[1, 2], strides=[1, 2])  # like max_pooling: no padding
    idx = g.constant(np.array([[0, 0, 0, 1], [0, 0, 2, 3]], np.uint32), sizes=[1, 1, 2, 4])  # whole coordinates
    nd = dml.gather_nd(x, idx, input_dimension_count=4, indices_dimension_count=4)  # 0 batch dimensions
    values, indices, s, p, f, q, v, gathered = compile_run(
        [top.values, top.indices, csum, cprod, fill, seq, avg, nd], {"x": a})
    order = np.argsort(-a, axis=3, kind="stable")[..., :2]
    np.testing.assert_array_equal(values, np.take_along_axis(a, order, 3))
    np.testing.assert_array_equal(indices, order)
    assert indices.dtype == np.uint32
    np.testing.assert_allclose(s, np.cumsum(a, axis=3), rtol=1e-6)
    np.testing.assert_allclose(p, np.cumprod(a, axis=2), rtol=1e-6)
    assert f.dtype == np.float32 and (f == 1.5).all()
    np.testing.assert_array_equal(q, np.arange(5, dtype=np.float32))
    np.testing.assert_allclose(v, a.reshape(1, 1, 3, 3, 2).mean(axis=4), rtol=1e-6)
    np.testing.assert_array_equal(gathered.ravel(), [a[0, 0, 0, 1], a[0, 0, 2, 3]])


def test_missing_or_misspelt_arguments_are_named(device):
    x = dml.Graph(device).input([1, 1, 4, 4])
    with pytest.raises(TypeError, match=r"^average_pooling\(\) missing required keyword argument: 'window_size'$"):
        dml.average_pooling(x, strides=[2, 2])
    with pytest.raises(TypeError, match=r"^top_k\(\) got an unexpected keyword argument 'direction'$"):
        dml.top_k(x, axis=3, k=1, direction=AD.DECREASING)
    with pytest.raises(TypeError, match=r"^pow\(\) missing required argument: 'exponent'$"):
        dml.pow(x)
    with pytest.raises(TypeError, match="incompatible function arguments"):  # a wrong type keeps nanobind's list
        dml.abs(x, scale_bias="large")


# ---- small structs ----

def test_tuples_convert_to_scale_bias(device):
    a = np.array([-1.0, 0.5, 2.0], np.float32)
    g = dml.Graph(device)
    x = g.input([3], name="x")
    got = compile_run([dml.abs(x, scale_bias=(2.0, 1.0)), dml.clip(x, min=0, max=2, scale_bias=(1.0, 0.5)),
                       dml.pow(x, 2.0, scale_bias=(1.0, 1.0))], {"x": a})
    np.testing.assert_allclose(got[0], np.abs(2 * a + 1))
    np.testing.assert_allclose(got[1], np.clip(a + 0.5, 0, 2))
    np.testing.assert_allclose(got[2], (a + 1) ** 2, rtol=1e-6)  # a GPU's pow is exp2(e * log2 x): an ulp off
    with pytest.raises(TypeError):
        dml.abs(x, scale_bias=(1.0, 2.0, 3.0))


# ---- errors lead with the call ----

@pytest.mark.parametrize("call, message", [
    (lambda a, b: dml.max(a, b), r"^max\(\): operand shapes differ: \[2, 3\] and \[3, 2\] .*\(DML_OPERATOR_ELEMENT_WISE_MAX\)$"),
    (lambda a, b: a * b, r"^a \* b: operand shapes differ: \[2, 3\] and \[3, 2\]"),
    (lambda a, b: dml.gemm(a, b, b), r"^gemm\(\): .*\(DML_OPERATOR_GEMM\)$"),
    (lambda a, b: dml.join([a, b], axis=5), r"^join\(\): axis 5 is out of range"),
    (lambda a, b: dml.cast(a, dtype="complex64"), r"^cast\(\): dtype complex64 has no DirectML tensor type$"),
    (lambda a, b: dml.fill_value_constant(a.graph, sizes=[0], value=1), r"^fill_value_constant\(\): sizes must be"),
])
def test_errors_lead_with_the_python_call(device, call, message):
    g = dml.Graph(device)
    with pytest.raises((ValueError, TypeError), match=message):
        call(g.input([2, 3]), g.input([3, 2]))


# ---- repr ----

def test_reprs_say_what_things_are(device):
    g = dml.Graph(device)
    x = g.input([1, 4], name="x")
    w = g.input([1, 4], name="w", owned=True)
    y = dml.activation_relu(x + w)
    assert repr(x) == "Expression(FLOAT32[1, 4], input 'x')"
    assert repr(w) == "Expression(FLOAT32[1, 4], owned input 'w')"
    assert repr(y) == "Expression(FLOAT32[1, 4], output 0 of DML_OPERATOR_ACTIVATION_RELU)"
    assert repr(dml.broadcast(g.input([1], name="s"), [3])) == "Expression(FLOAT32[3] strides [0], a view of input 's')"
    assert repr(g) == f"Graph({device.kind}, inputs=3, nodes=2)"
    op = g.compile([y])
    assert re.fullmatch(rf"CompiledOperator\({device.kind}, inputs=\['x' FLOAT32\[1, 4\], owned input 'w' "
                        rf"FLOAT32\[1, 4\]\], outputs=\[FLOAT32\[1, 4\]\], initialized=False, temporary_size=\d+, "
                        rf"persistent_size=\d+, descriptor_count=3\)", repr(op)), repr(op)
    assert repr(dml.Buffer(device, np.ones((2, 3), np.float16))) == f"Buffer(FLOAT16[2, 3], device='{device.kind}', nbytes=12)"


# ---- memory ----

def test_a_buffer_too_large_for_the_device_is_out_of_device_memory(device):
    huge = np.broadcast_to(np.float32(1), (2**20, 2**20))  # 4 TiB once packed, no memory behind it here
    with pytest.raises(dml.OutOfDeviceMemory, match=f"asked for {4 * 2**40} bytes") as info:
        dml.Buffer(device, huge)
    assert info.value.bytes == 4 * 2**40 and isinstance(info.value, MemoryError)
    with pytest.raises(dml.OutOfDeviceMemory):
        dml.Graph(device).constant(huge)


# ---- DLPack import ----

def test_numpy_arrays_wrap_as_buffers_without_a_copy(device):
    if device.kind != "cpu":
        pytest.skip("NumPy's memory is the cpu device's")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = dml.Buffer.from_dlpack(device, a)
    assert b.shape == (2, 3) and b.dtype == np.float32
    a[0, 0] = 42  # the same memory
    assert b.numpy()[0, 0] == 42
    g = dml.Graph(device)
    x = g.input([2, 3], name="x")
    (r,) = g.compile([x * 2])({"x": b})
    np.testing.assert_array_equal(r, a * 2)
    del a  # the Buffer keeps the array's memory alive
    np.testing.assert_array_equal(b.numpy().ravel(), [42, 1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match=r"Buffer.from_dlpack: the tensor is not packed in C order"):
        dml.Buffer.from_dlpack(device, np.ones((3, 4), np.float32).T)
    with pytest.raises(ValueError, match="bool tensors have no DirectML tensor type"):
        dml.Buffer.from_dlpack(device, np.ones(3, bool))
    with pytest.raises(TypeError, match="does not speak DLPack"):
        dml.Buffer.from_dlpack(device, [1, 2, 3])


class ForeignDeviceTensor:
    """A DLPack producer on a device the executor is not (CUDA device 7)."""

    def __dlpack_device__(self):
        return (2, 7)

    def __dlpack__(self, stream=None, **kwargs):
        raise AssertionError("the device is checked before any export")


def test_a_tensor_of_another_device_is_refused_by_name(device):
    with pytest.raises(ValueError, match=r"the tensor is on cuda:7 but the device is"):
        dml.Buffer.from_dlpack(device, ForeignDeviceTensor())
    with pytest.raises(TypeError, match=r"^Buffer: the \S*ForeignDeviceTensor is in device memory; "
                                        r"dml.Buffer.from_dlpack\(device, tensor\) wraps it"):
        dml.Buffer(device, ForeignDeviceTensor())
    g = dml.Graph(device)
    x = g.input([2], name="x")
    with pytest.raises(ValueError, match=r"^input 0 'x': the tensor is on cuda:7"):
        g.compile([x * 1])({"x": ForeignDeviceTensor()})


@pytest.fixture
def torch_cuda(device):
    """PyTorch, where it and the device are CUDA (a CUDA tensor binds in place on the cuda device only)."""
    if device.kind != "cuda":
        pytest.skip("a CUDA tensor binds in place on the cuda device")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


def test_torch_cuda_tensors_bind_in_place(device, torch_cuda):
    torch = torch_cuda
    t = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    b = dml.Buffer.from_dlpack(device, t)
    assert torch.from_dlpack(b).data_ptr() == t.data_ptr()  # zero-copy both ways
    g = dml.Graph(device)
    x = g.input([1, 2, 3], name="x")  # the shape less its 1s
    w = g.input([1, 2, 3], name="w", owned=True)
    op = g.compile([x * 2 + w])
    op.initialize({"w": t})  # a device tensor where a Buffer is accepted
    (r,) = op({"x": t})
    np.testing.assert_array_equal(r.reshape(2, 3), t.cpu().numpy() * 3)
    with pytest.raises(ValueError, match="not packed in C order"):
        op({"x": t.t()})


def test_an_imported_tensor_is_ready_on_our_stream(device, torch_cuda):
    # No torch.cuda.synchronize(): the import hands PyTorch our stream, which then waits for the product.
    torch = torch_cuda
    a = torch.full((4096, 4096), 1 / 64, device="cuda")
    for _ in range(8):  # milliseconds of work still queued on PyTorch's stream when we read
        a = a @ a / 64  # 1/64 again, exactly
    a = a + 1  # a value no earlier (possibly recycled) block held
    g = dml.Graph(device)
    x = g.input([4096, 4096], name="x")
    (r,) = g.compile([x * 2])({"x": a})
    np.testing.assert_array_equal(r, np.full((4096, 4096), 2 * (1 + 1 / 64), np.float32))


class StreamRecorder:
    """A DLPack producer that records the stream it is asked for, then refuses to export."""

    def __init__(self, dlpack_device):
        self.dlpack_device, self.stream = dlpack_device, "not asked"

    def __dlpack_device__(self):
        return self.dlpack_device

    def __dlpack__(self, stream=None, **kwargs):
        self.stream = stream
        raise RuntimeError("recorded")


def test_the_import_asks_for_our_stream(device):
    producer = StreamRecorder(dml.Buffer(device, np.zeros(1, np.float32)).__dlpack_device__())
    with pytest.raises(RuntimeError, match="recorded"):
        dml.Buffer.from_dlpack(device, producer)
    if device.kind == "cuda":
        assert isinstance(producer.stream, int) and producer.stream not in (0, 1, 2)  # ours, not a default stream
    else:
        assert producer.stream is None  # the protocol's value on the CPU
    with pytest.raises(RuntimeError, match="recorded"):
        dml.Buffer.from_dlpack(device, producer, stream=None if device.kind != "cuda" else 5)
    assert producer.stream == (None if device.kind != "cuda" else 5)


def test_slice_and_padding_defaults(device, rng):
    a = rng.standard_normal((1, 1, 4, 5)).astype(np.float32)
    g = dml.Graph(device)
    x = g.input(list(a.shape), name="x")
    sliced = dml.slice(x, input_window_offsets=[0, 0, 1, 2], input_window_sizes=[1, 1, 2, 3])  # strides 1
    padded = dml.padding(x, start_padding=[0, 0, 1, 2], end_padding=[0, 0, 0, 1])  # zeros
    s, p = compile_run([sliced, padded], {"x": a})
    np.testing.assert_array_equal(s, a[:, :, 1:3, 2:5])
    np.testing.assert_array_equal(p, np.pad(a, [(0, 0), (0, 0), (1, 0), (2, 1)]))
