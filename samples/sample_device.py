"""The --device option every sample takes, and opening the device it names with one clear line when it cannot."""

import argparse
import ctypes
import os

import directml as dml


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    kinds = dml.available_device_kinds()  # what this build can open here, best first
    parser.add_argument("--device", default=None,
                        help=f"cpu, cuda or directml; here: {', '.join(kinds)} (default: {kinds[0]})")


def has_nvidia_driver() -> bool:
    """Whether the NVIDIA driver's library (what the CUDA runtime talks to) can be loaded here."""
    try:
        ctypes.CDLL("nvcuda.dll" if os.name == "nt" else "libcuda.so.1")
        return True
    except OSError:
        return False


def open_device(kind: str | None) -> dml.Device:
    """The device asked for; one this machine cannot open stops the program with one `error:` line saying why."""
    try:
        return dml.Device(kind)
    except dml.DeviceError as e:
        # Without a driver the CUDA runtime reports an insufficient driver version; say what is really missing.
        reason = "this machine has no NVIDIA driver" if kind == "cuda" and not has_nvidia_driver() else str(e)
        raise SystemExit(f"error: cannot open a {kind or 'default'} device: {reason} (devices here: "
                         f"{', '.join(dml.available_device_kinds())})") from None
