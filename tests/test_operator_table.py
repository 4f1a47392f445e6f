"""The operator table (src/core/ops/operators.def) against every place an operator must exist: its desc type in
the family's header, a builder in the family's source, the Python functions of the binding, and a kernel in each
executor built here. Adding an operator in one place and not in another fails here."""

import re
from pathlib import Path

import pytest

import directml as dml

SRC = Path(__file__).resolve().parent.parent / "src"
OPS = SRC / "core" / "ops"
TABLE = dml._core._operator_table()
# Module-level functions that build no node.
NOT_OPERATORS = {"available_device_kinds", "broadcast", "reinterpret"}


def declared_descs() -> dict[str, str]:
    """Every OperatorDesc type declared in core/ops/<family>.h, by name, with its family."""
    found = {}
    for header in OPS.glob("*.h"):
        for name in re.findall(r"^struct (\w+Desc)\s*:[^{]*\b\w*Desc\b", header.read_text(), re.M):
            if name != "OperatorDesc":
                found[name] = header.stem
    return found


def test_table_lists_every_declared_desc_under_its_family():
    if not OPS.is_dir():
        pytest.skip("the C++ sources are not beside the tests")
    assert {desc: family for desc, family, _, _ in TABLE} == declared_descs()


def test_every_desc_has_a_builder_in_its_family_source():
    if not OPS.is_dir():
        pytest.skip("the C++ sources are not beside the tests")
    for desc, family, _, _ in TABLE:
        assert f"make_shared<{desc}>" in (OPS / f"{family}.cpp").read_text(), f"no builder makes {desc}"


def test_builders_are_exactly_the_module_operator_functions():
    listed = [name for _, _, _, builders in TABLE for name in builders]
    assert len(listed) == len(set(listed)), "a Python function is listed under two desc types"
    functions = {name for name in dir(dml._core) if not name.startswith("_")
                 and callable(getattr(dml._core, name)) and not isinstance(getattr(dml._core, name), type)}
    assert set(listed) == functions - NOT_OPERATORS
    for name in listed:
        assert callable(getattr(dml, name)), name


def test_every_desc_names_directml_operator_types():
    for desc, _, directml, builders in TABLE:
        if not directml and not builders:  # internal: compile's rewrites make it (operators.def)
            continue
        assert builders, desc
        assert all(re.fullmatch(r"DML_(OPERATOR|GRAPH_NODE_TYPE)_[A-Z0-9_]+\*?", t) for t in directml.split()), desc


@pytest.mark.parametrize("kind", ["cpu", "cuda"])
def test_every_executor_built_here_has_a_kernel_for_every_desc(kind):
    try:
        device = dml.Device(kind)
    except dml.DeviceError as e:
        pytest.skip(f"no {kind} device here: {e}")
    assert sorted(device._operator_types) == sorted(desc for desc, _, _, _ in TABLE)
