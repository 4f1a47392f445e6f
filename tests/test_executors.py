"""The executor layer as Python sees it: the registry behind dml.Device, the exception an executor raises for a
node it does not run, the CPU executor finding its BLAS, and constants recorded as host data."""

import sys
from pathlib import Path

import numpy as np
import pytest

import directml as dml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fresh_python import python  # noqa: E402


def test_not_supported_error_is_a_device_error_not_a_value_error():
    # A node an executor lacks is the executor's limit, not the caller's mistake: another device may run the graph.
    assert issubclass(dml.NotSupportedError, dml.DeviceError)
    assert not issubclass(dml.NotSupportedError, ValueError)
    assert dml.NotSupportedError("x").code == ""


def test_every_known_kind_either_creates_a_device_or_says_why():
    available = dml.available_device_kinds()
    assert available and len(set(available)) == len(available)
    for kind in ("cpu", "cuda", "directml"):
        try:
            device = dml.Device(kind)
        except dml.DeviceError as e:
            assert kind not in available and e.code  # NOT_BUILT, or the backend's own error name
            if e.code == "NOT_BUILT":
                assert f"this build of directml has no {kind} executor" in str(e)
        else:
            assert kind in available and device.kind == kind


def test_unknown_kind_lists_every_registered_kind():
    with pytest.raises(ValueError, match=r"expected 'cpu', 'cuda' or 'directml'"):
        dml.Device("tpu")


def test_cpu_executor_loads_the_blas_the_package_names(tmp_path):
    code = ("import numpy as np, directml as dml\n"
            "g = dml.Graph(dml.Device('cpu'))\n"
            "a = g.input([1, 1, 2, 3]); b = g.input([1, 1, 3, 2])\n"
            "x, y = np.ones((1, 1, 2, 3), np.float32), np.full((1, 1, 3, 2), 2, np.float32)\n"
            "print(g.compile([dml.gemm(a, b)])({a: x, b: y})[0][0, 0].tolist())")
    result = python(code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str((np.ones((2, 3)) @ np.full((3, 2), 2.0)).tolist())
    # A library that is not there: importing still works; creating the cpu device says what failed to load.
    code = ("import directml as dml\ntry:\n    dml.Device('cpu')\nexcept dml.DeviceError as e:\n"
            "    print(e.code)")
    result = python(code, tmp_path, DIRECTML_OPENBLAS=str(tmp_path / "no-such-openblas.so"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "BLAS_LOAD_FAILED"


def test_constant_from_buffer_is_recorded_when_added():
    device = dml.Device("cpu")
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    buffer = dml.Buffer(device, data)
    g = dml.Graph(device)
    c = g.constant(buffer, name="c")
    x = g.input([2, 3], name="x")
    op = g.compile([x + c])
    del buffer  # the graph holds the constant's data itself
    np.testing.assert_array_equal(op({"x": np.ones((2, 3), np.float32)})[0], data + 1)
