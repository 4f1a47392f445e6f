"""A pytest plugin that runs the operator tests' `directml` half as DirectML's validation only (issue 16).

Where Direct3D 12 cannot build DirectML's shaders (Debian's vkd3d), `dml.Device("directml")` refuses, and the
operator tests skip. With this plugin the device is created with DIRECTML_VALIDATE_ONLY=1: every graph a test
compiles is lowered and each node checked by DirectML's CreateOperator, then CompileGraph. A test whose first graph
got through every CreateOperator counts as validated (it can run nothing, so it ends there); a node DirectML
refuses, or one the executor has no lowering for, fails the test with the node named. The summary counts both.

    PYTHONPATH=tests python -m pytest -p directml_validation_plugin tests/test_elementwise.py -k directml
"""
from __future__ import annotations

import collections
import os
import re

import pytest

_outcomes: collections.Counter[str] = collections.Counter()
_refused: collections.Counter[str] = collections.Counter()


def pytest_configure(config):
    os.environ["DIRECTML_VALIDATE_ONLY"] = "1"  # read when the directml device is created


def _on_directml(item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("device") == "directml"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):  # a fixture that compiles a graph: validated, the test itself is skipped
    outcome = yield
    if _on_directml(item) and outcome.excinfo and _judge(outcome):
        outcome.force_exception(pytest.skip.Exception("DirectML validated the fixture's graph; nothing can run here"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    if _on_directml(item) and _judge(outcome):
        outcome.force_result(None)


def _judge(outcome) -> bool:
    """Counts the outcome; True when DirectML validated the graph and the error only says that nothing can run."""
    error = outcome.excinfo[1] if outcome.excinfo else None
    message = str(error) if error else ""
    if error is None:
        _outcomes["passed: nothing reached DirectML (a builder raised), or a capable stack ran it"] += 1
    elif getattr(error, "code", None) == "VALIDATE_ONLY":
        _outcomes["DirectML compiled the graph (CompileGraph succeeded)"] += 1
        return True
    elif "IDMLDevice1::CompileGraph" in message:
        _outcomes["every node passed CreateOperator; CompileGraph failed building shaders"] += 1
        return True
    else:
        # The operator's name where the message gives it whole (a skip's reason may be cut short after it).
        m = (re.search(r"(DML_[A-Z0-9_]+) is not supported", message)
             or re.search(r"(?:refused|cannot run) (?:node \d+ \()?(DML_[A-Z0-9_]+)", message))
        if m:
            why = ("refused by DirectML's CreateOperator" if "refused" in message
                   else "no lowering" if "no lowering" in message else "refused by the lowering")
            _refused[f"{m.group(1)}: {why}"] += 1
        _outcomes["raised something else (failed, or xfailed)"] += 1
    return False


def pytest_terminal_summary(terminalreporter):
    if not _outcomes:
        return
    terminalreporter.section("DirectML validation of the directml half")
    for what, n in sorted(_outcomes.items()):
        terminalreporter.write_line(f"{n:6d}  {what}")
    for what, n in sorted(_refused.items()):
        terminalreporter.write_line(f"{n:6d}  {what}")
