"""What the model samples share: finding the sample data, loading its weights and images, the command line.

The data (.npy weights, images, ImageNet class names) is Microsoft's DirectML sample data (MIT license):
`python samples/fetch_data.py` downloads it, checked, into the folder the samples read by default. A sample takes
its folder from --data DIR, else from DIRECTML_SAMPLE_DATA, else what fetch_data.py fetched
(~/.cache/directml/sample-data), else ../shared/sample-data beside the repository.
"""

import argparse
import ast
import warnings
from pathlib import Path

import numpy as np

import directml as dml
from fetch_data import DATA_ENV, default_data_dir
from sample_device import add_device_argument

try:
    from PIL import Image
except ImportError:
    raise SystemExit("error: the model samples read and write images with Pillow: pip install pillow "
                     "(or the package's [test] extra)") from None

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser with the options every model sample takes: --data and --device."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--data", type=Path, default=None,
                   help=f"sample data folder (default: ${DATA_ENV}, else {default_data_dir()})")
    add_device_argument(p)
    return p


def data_dir(arg: Path | None = None) -> Path:
    """The sample data folder: the argument, else $DIRECTML_SAMPLE_DATA, else the fetched or shared copy."""
    folder = Path(arg) if arg else default_data_dir()
    if not folder.is_dir():
        raise SystemExit(f"error: no sample data in {folder}: run `python samples/fetch_data.py` to download it "
                         f"there (Microsoft's DirectML sample weights, MIT license), or pass --data DIR or set "
                         f"{DATA_ENV} to a folder that has it")
    return folder


def check_image(path: Path | None) -> None:
    """An image named on the command line must exist: otherwise the program stops, naming it."""
    if path is not None and not path.is_file():
        raise SystemExit(f"error: the image {path} does not exist")


def require_data(path: Path) -> Path:
    """A file or folder of the sample data; missing, the program stops saying how to get the data."""
    if not path.exists():
        raise SystemExit(f"error: {path} is not in the sample data: run `python samples/fetch_data.py "
                         f"--data {path.parent}` to complete it")
    return path


def load_npy(path: Path) -> np.ndarray:
    """np.load, else the .npy format read here: the files were written by Python 2's NumPy, whose headers (padded
    after the newline) NumPy 2.5 refuses, where older versions read them with a warning."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Reading `.npy`")
            return np.load(path)
    except ValueError:
        data = path.read_bytes()
        length_bytes = 2 if data[6] == 1 else 4  # format version 1.0: a 2-byte header length, later 4
        start = 8 + length_bytes
        end = start + int.from_bytes(data[8:start], "little")
        header = ast.literal_eval(data[start:end].decode("latin1").strip())
        array = np.frombuffer(data, np.dtype(header["descr"]), offset=end)
        return array.reshape(header["shape"], order="F" if header["fortran_order"] else "C").copy()


def load_weights(folder: Path) -> dict[str, np.ndarray]:
    """Every .npy file of a folder, by file name without the extension."""
    weights = {f.stem: load_npy(f) for f in sorted(require_data(folder).glob("*.npy"))}
    if not weights:
        raise SystemExit(f"error: no .npy weights in {folder}")
    return weights


def load_rgb(path: Path, size: tuple[int, int] | None = None):
    """A PIL RGB image, resized to size (width, height) if given."""
    check_image(Path(path))
    image = Image.open(path).convert("RGB")
    return image if size is None else image.resize(size, Image.Resampling.BICUBIC)


def imagenet_input(path: Path) -> np.ndarray:
    """The usual ImageNet input: shorter side resized to 256, the centre 224 x 224, normalized; [1, 3, 224, 224]."""
    image = load_rgb(path)
    scale = 256 / min(image.size)
    image = image.resize((max(224, round(image.width * scale)), max(224, round(image.height * scale))),
                         Image.Resampling.BILINEAR)
    left, top = (image.width - 224) // 2, (image.height - 224) // 2
    pixels = np.asarray(image.crop((left, top, left + 224, top + 224)), np.float32) / 255
    return ((pixels - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1)[None].copy()


def imagenet_classes(data: Path) -> list[str]:
    return require_data(data / "imagenet_categories.txt").read_text().splitlines()


def print_top5(probabilities: np.ndarray, classes: list[str]) -> None:
    for i in np.argsort(probabilities.ravel())[::-1][:5]:
        print(f"  {probabilities.ravel()[i]:7.2%}  {i:4d}  {classes[i]}")


def channel_vector(graph: dml.Graph, values: np.ndarray) -> dml.Expression:
    """A per-channel constant (bias, scale, statistics) as DirectML wants it: [1, C, 1, 1]."""
    return graph.constant(values.ravel(), sizes=[1, values.size, 1, 1])
