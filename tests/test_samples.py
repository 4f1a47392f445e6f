"""Every sample runs as a program and exits 0 (each checks its own result against NumPy)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize("name", ["matmul.py", "dtypes.py"])
def test_sample_runs(name):
    result = subprocess.run(
        [sys.executable, str(SAMPLES / name), "--device", "cpu"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" in result.stdout  # each prints its measured error


def test_dtypes_sample_reports_every_refusal():
    out = subprocess.run([sys.executable, str(SAMPLES / "dtypes.py"), "--device", "cpu"],
                         capture_output=True, text=True, timeout=300).stdout
    assert out.count("refused ") == 5
    assert "input 0 'x'" in out and "input 1 'w' is owned" in out
