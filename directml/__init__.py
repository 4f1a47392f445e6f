"""DirectML's operators as Python functions, run by the DirectML, CUDA or CPU executor.

See docs/api-design.md for the design; every operator mirrors DirectMLX's builder of the same (snake_cased) name.
"""

import os as _os

import scipy_openblas32 as _openblas

# The CPU executor's GEMM and convolution run on the OpenBLAS that scipy-openblas32 ships; the executor loads it
# from this path when it creates a device.
_os.environ.setdefault("DIRECTML_OPENBLAS",
                       _os.path.join(_openblas.get_lib_dir(), "lib" + _openblas.get_library() + ".so"))

from . import _core  # noqa: E402
from ._core import *  # noqa: E402,F401,F403  (the API is the extension module's)
from ._core import DeviceError, NotSupportedError, OutOfDeviceMemory  # noqa: E402,F401  (not picked up by * on every Python)

__version__ = "0.1.0"
