"""The package ships typed stubs (directml/_core.pyi and py.typed) and they match the module.

The build generates _core.pyi with nanobind's stubgen from the extension imported as the top-level module `_core`
(CMakeLists' nanobind_add_stub); the test regenerates it the same way from the installed extension and compares.
Its exception classes take their module from the extension's own name, so the stub declares them (with `.code`
and `.bytes`) instead of importing them from the package, which re-exports them: an import cycle type checkers
cannot resolve.
"""

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import directml as dml
from directml import _core

PACKAGE = Path(dml.__file__).parent
STUB = Path(_core.__file__).with_name("_core.pyi")  # beside the extension: in an editable install, not in PACKAGE


def test_package_ships_stubs_and_py_typed():
    assert (PACKAGE / "py.typed").is_file()
    assert STUB.is_file(), f"{STUB} is missing: the build installs it beside the extension"


def test_stub_matches_the_module(tmp_path):
    pytest.importorskip("nanobind.stubgen", reason="nanobind (a test dependency) regenerates the stub")
    out = tmp_path / "_core.pyi"
    result = subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-i", str(Path(_core.__file__).parent), "-m", "_core",
         "-o", str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == STUB.read_text(), "the shipped _core.pyi is stale: rebuild the package"


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text())


def declared_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.asname)  # `import x as x` re-exports
    return names


def test_stub_declares_the_module():
    declared = declared_names(stub_tree())
    own = {name for name in dir(_core) if not name.startswith("_")
           and getattr(getattr(_core, name), "__module__", None) == _core.__name__}
    assert own, "nothing of the module was found"
    assert own <= declared, f"missing from the stub: {sorted(own - declared)}"
    # What `import directml` re-exports by name must be there for type checkers.
    assert {"DeviceError", "OutOfDeviceMemory", "Device", "Graph", "Expression", "Buffer", "TensorDesc",
            "TensorDataType", "CompiledOperator", "broadcast", "reinterpret", "cast"} <= declared


def test_stub_declares_the_exceptions_with_their_attributes():
    classes = {node.name: node for node in stub_tree().body if isinstance(node, ast.ClassDef)}
    for name, base, attribute, kind in [("DeviceError", "RuntimeError", "code", "str"),
                                        ("OutOfDeviceMemory", "DeviceError", "bytes", "int")]:
        cls = classes[name]
        assert base in [ast.unparse(b) for b in cls.bases]
        fields = {n.target.id: ast.unparse(n.annotation) for n in cls.body
                  if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        assert fields.get(attribute) == kind


def test_stub_has_no_cpp_names():
    text = STUB.read_text()
    assert "std::" not in text, [line for line in text.splitlines() if "std::" in line]


def test_core_types_are_precise_in_the_stub():
    text = STUB.read_text()
    for expected in ["def shape(self) -> tuple[int, ...]", "def strides(self) -> tuple[int, ...] | None",
                     "def name(self) -> str | None", "def dtype(self, /) -> numpy.dtype",
                     "def numpy(self) -> NDArray", "def __dlpack_device__(self) -> tuple[int, int]",
                     "def broadcast(x: Expression, shape: Sequence[int]) -> Expression"]:
        assert expected in text, expected


USER_CODE = """
    import numpy as np
    import directml as dml
    from directml import *

    device: dml.Device = dml.Device("cpu")
    graph = Graph(device)
    x = graph.input([1, 1, 4, 8], np.float16, name="x")
    shape: tuple[int, ...] = x.shape
    strides: tuple[int, ...] | None = x.strides
    name: str | None = x.name
    desc: TensorDesc = x.desc
    w = graph.constant(np.ones((1, 1, 8, 3)), np.float16)
    y = dml.gemm(x, w, fused_activation=dml.FusedActivation.relu())
    z = dml.activation_relu(y * 2 + 1)
    b = dml.broadcast(z, [2, 1, 4, 3])
    v = dml.reinterpret(b, [3, 4])
    pooled: Expression = dml.max_pooling(x, window_size=[2, 2]).values
    indices: Expression | None = dml.max_pooling(x, window_size=[2, 2], output_indices=True).indices
    values, order = dml.top_k(y, axis=3, k=2)
    scaled = dml.abs(y, scale_bias=(2.0, 1.0))
    op = graph.compile([y, b, v])
    ready: bool = op.initialized
    first, *rest = op({"x": np.ones((1, 1, 4, 8))})
    buffer = Buffer(device, np.ones(3))
    array: np.ndarray = buffer.numpy()
    kind: np.dtype = buffer.dtype
    size: int = TensorDesc(np.float32, [3]).total_tensor_size_in_bytes
    try:
        dml.Device("cuda")
    except OutOfDeviceMemory as e:
        asked: int = e.bytes
    except dml.DeviceError as e:
        code: str = e.code
"""


def mypy(tmp_path, *paths: Path, search: tuple[Path, ...] = ()) -> None:
    """Type-checks `paths` under mypy against the shipped stubs (copied, so that only what ships is seen)."""
    api = pytest.importorskip("mypy.api", reason="mypy is not installed")
    site = tmp_path / "site" / "directml"
    site.mkdir(parents=True)
    for name in ("__init__.py", "_core.pyi", "py.typed"):
        (site / name).write_text((PACKAGE / name).read_text())
    env_path = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = os.pathsep.join(map(str, (tmp_path / "site", *search)))
    try:
        out, err, status = api.run([*map(str, paths), "--follow-imports=silent", "--no-incremental",
                                    "--ignore-missing-imports", "--cache-dir", str(tmp_path / "cache")])
    finally:
        if env_path is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = env_path
    assert status == 0, out + err


def test_user_code_type_checks(tmp_path):
    """`from directml import *` and the core API type-check under mypy (skipped where mypy is absent)."""
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent(USER_CODE))
    mypy(tmp_path, user)


def test_samples_type_check(tmp_path):
    """Every sample type-checks against the stubs: multi-output results are typed namedtuples, so
    `dml.max_pooling(...).values` is an Expression."""
    samples = Path(__file__).resolve().parent.parent / "samples"
    mypy(tmp_path, *sorted(p for p in samples.glob("*.py")), search=(samples,))
