"""Fixtures shared by the test files: the device under test and a seeded random generator."""

import collections
import sys
from pathlib import Path

import numpy as np
import pytest

# `python -m pytest` puts the checkout first on sys.path, where directml/ is the source package without its built
# extension; it would hide the installed package (or the one PYTHONPATH names). Tests import the built one.
_ROOT = Path(__file__).resolve().parent.parent
if not any((_ROOT / "directml").glob("_core*.so")) and not any((_ROOT / "directml").glob("_core*.pyd")):
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT]

import directml as dml  # noqa: E402  (after the path fix above)


# Every operator test runs on each executor in turn; one this machine cannot create is skipped with the DeviceError's
# text (directml: where DirectML, Direct3D 12 or a device that builds DirectML's shaders is missing; docs/directml.md).
EXECUTORS = ("cpu", "cuda", "directml")


@pytest.fixture(scope="session", params=EXECUTORS)
def device(request: pytest.FixtureRequest) -> dml.Device:
    try:
        return dml.Device(request.param)
    except dml.DeviceError as e:  # e.g. cudaErrorNoDevice, NOT_BUILT, DIRECTML_NOT_FOUND, SHADERS_UNSUPPORTED
        pytest.skip(f"no {request.param} device here: {e}")


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """On the directml executor, a graph DirectML itself refuses on this device (NotSupportedError at compile: a
    FLOAT64 GEMM on a GPU without double-precision shaders, a feature level above the device's) is a skip that says
    so, not a failure: the refusal is the documented behaviour, and the test has no result to compare."""
    outcome = yield
    callspec = getattr(pyfuncitem, "callspec", None)
    if callspec is not None and callspec.params.get("device") == "directml" and \
            isinstance(outcome.excinfo[1] if outcome.excinfo else None, dml.NotSupportedError):
        outcome.force_exception(pytest.skip.Exception(f"DirectML refuses it here: {str(outcome.excinfo[1])[:120]}"))


@pytest.fixture
def directml_differs(request: pytest.FixtureRequest, device: dml.Device):
    """directml_differs(why): on the directml executor, the test is an expected failure because DirectML answers
    otherwise, for the reason docs/operators.md gives ("On the directml executor"); elsewhere nothing changes. Not
    strict: a device whose DirectML matches (the H200's driver, a newer DirectML) shows as XPASS."""
    def mark(why: str) -> None:
        if device.kind == "directml":
            request.applymarker(pytest.mark.xfail(reason=f"DirectML differs: {why}", strict=False))
    return mark


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture
def run(device: dml.Device):
    """run(build, *arrays): builds `build(*inputs)` on inputs shaped like `arrays` on the device under test, runs
    it, and returns the outputs (a tuple or list of outputs, an output left out as None skipped; or one output)."""
    def run(build, *arrays):
        g = dml.Graph(device)
        xs = [g.input(a.shape, a.dtype) for a in arrays]
        outs = build(*xs)
        outs = [o for o in outs if o is not None] if isinstance(outs, (tuple, list)) else [outs]
        return g.compile(outs)(dict(zip(xs, arrays)))
    return run



def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Why tests were skipped, one line per reason with its count: thousands of skips (the cuda half of every
    operator test on a machine without a GPU) stay readable. `-rs` lists them by location instead."""
    reasons: collections.Counter[str] = collections.Counter()
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    if reasons:
        terminalreporter.section("skipped, by reason", sep="-")
        for reason, count in reasons.most_common():
            terminalreporter.write_line(f"{count:6d}  {reason}")
