"""Fixtures shared by the test files: the device under test and a seeded random generator."""

import sys
from pathlib import Path

import numpy as np
import pytest

# `python -m pytest` puts the checkout first on sys.path, where directml/ is the source package without its built
# extension; it would hide the installed package (or the one PYTHONPATH names). Tests import the built one.
_ROOT = Path(__file__).resolve().parent.parent
if not any((_ROOT / "directml").glob("_core*")):
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT]

import directml as dml  # noqa: E402  (after the path fix above)


@pytest.fixture(scope="session")
def device() -> dml.Device:
    """The default device: the best executor here, or the one DIRECTML_DEVICE names."""
    return dml.Device()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
