"""python(code, tmp_path, **env): `code` run in a fresh interpreter that imports the directml package the tests
import, with the device and OpenBLAS choices of this process left out and `env` added."""

import os
import subprocess
import sys
from pathlib import Path

import directml as dml


def python(code: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("DIRECTML_DEVICE", "DIRECTML_OPENBLAS")}
    environment.update(env)
    package_root = str(Path(dml.__file__).parent.parent)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, environment.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment,
                          cwd=tmp_path, timeout=120)
