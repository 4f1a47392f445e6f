"""DirectML's operators as Python functions, run by the DirectML, CUDA or CPU executor.

See docs/api-design.md for the design; every operator mirrors DirectMLX's builder of the same (snake_cased) name.
"""

import os as _os
import sys as _sys

import scipy_openblas32 as _openblas


def _openblas_path() -> str:
    """The shared library scipy-openblas32 ships, by its platform's naming (get_library() keeps "lib" on Windows)."""
    if _sys.platform == "win32":
        name = _openblas.get_library() + ".dll"
    else:
        name = "lib" + _openblas.get_library() + (".dylib" if _sys.platform == "darwin" else ".so")
    return _os.path.join(_openblas.get_lib_dir(), name)


# The CPU executor's GEMM and convolution run on the OpenBLAS that scipy-openblas32 ships; the executor loads it
# from this path when it creates a device (a path already in the environment is kept).
_os.environ.setdefault("DIRECTML_OPENBLAS", _openblas_path())

from . import _core  # noqa: E402
from ._core import *  # noqa: E402,F401,F403  (the API is the extension module's)
from ._core import DeviceError, NotSupportedError, OutOfDeviceMemory  # noqa: E402,F401  (not picked up by * on every Python)
from ._arguments import naming_missing_arguments as _naming_missing_arguments  # noqa: E402

# Module functions say which argument a call left out or misspelt (see _arguments.py).
for _name, _function in vars(_core).items():
    if not _name.startswith("_") and type(_function).__name__ == "nb_func":
        globals()[_name] = _naming_missing_arguments(_function)

if_ = where  # noqa: F405  DirectMLX's If by its snake-cased name, less the Python keyword (where is NumPy's)

__version__ = "0.1.0"
