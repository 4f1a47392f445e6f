"""DirectML's operators as Python functions, run by the DirectML, CUDA or CPU executor.

See docs/api-design.md for the design; every operator mirrors DirectMLX's builder of the same (snake_cased) name.
"""

import os as _os

import scipy_openblas32 as _openblas

from . import _core
from ._core import *  # noqa: F401,F403  (the API is the extension module's)
from ._core import DeviceError, OutOfDeviceMemory  # noqa: F401  (not picked up by * on every Python)
from ._arguments import naming_missing_arguments as _naming_missing_arguments

# Module functions say which argument a call left out or misspelt (see _arguments.py).
for _name, _function in vars(_core).items():
    if not _name.startswith("_") and type(_function).__name__ == "nb_func":
        globals()[_name] = _naming_missing_arguments(_function)

# The CPU executor's GEMM and convolution run on the OpenBLAS that scipy-openblas32 ships.
_core._load_blas(_os.path.join(_openblas.get_lib_dir(), "lib" + _openblas.get_library() + ".so"))

__version__ = "0.1.0"
