"""The model samples (mnist, squeezenet, mobilenet, superres, candy) on their real weights.

Each sample's network, built by the sample from DirectML operators, is checked against tests/reference_nets.py,
the same network written in NumPy from the same .npy files; then against what the network is for (the digit,
a dog class, sharper than bicubic, a styled image); then each sample runs as a program. The data is
../shared/sample-data beside the repository, or $DIRECTML_SAMPLE_DATA; the tests skip where it is missing.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PIL", reason="the samples read and write images with Pillow (pip install pillow)")
from PIL import Image, ImageDraw  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference_nets as ref  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
DATA = Path(os.environ.get("DIRECTML_SAMPLE_DATA") or ROOT.parent / "shared" / "sample-data")
STYLES = ["candy", "la_muse", "mosaic", "udnie"]


def needs(*parts) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"sample data {path} not found (the shared directory's sample-data, or $DIRECTML_SAMPLE_DATA)")
    return path


def weights(folder) -> dict[str, np.ndarray]:
    load = sample("sample_data").load_npy  # reads the Python 2 headers that NumPy 2.5 refuses
    return {f.stem: load(f) for f in needs(folder).glob("*.npy")}


def sample(name):
    """The sample program as a module (its build functions), imported from samples/ under a private name."""
    if str(SAMPLES) not in sys.path:
        sys.path.insert(0, str(SAMPLES))  # for their shared sample_data module
    spec = importlib.util.spec_from_file_location(f"dml_sample_{name}", SAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_close(got, want, rel):
    """Equal to within rel of the reference's largest magnitude (float32 through a deep network)."""
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * np.abs(want).max())


def y_channel(image) -> np.ndarray:
    return np.asarray(image.convert("YCbCr").split()[0], np.float64)


def psnr(a, b) -> float:
    return 10 * np.log10(255.0 ** 2 / np.mean((a - b) ** 2))


# ---- mnist ----

def drawn_digit(digit: str, path: Path) -> Path:
    """A digit drawn with thick strokes, larger than 28 x 28 and off-centre, as a user's image would be."""
    image = Image.new("L", (100, 120))
    d = ImageDraw.Draw(image)
    if digit == "7":
        d.line([(20, 20), (80, 20)], fill=255, width=10)
        d.line([(80, 20), (40, 100)], fill=255, width=10)
    else:  # "0"
        d.ellipse([20, 10, 80, 110], outline=255, width=10)
    image.save(path)
    return path


def test_mnist_matches_reference(device):
    mnist, wt = sample("mnist"), weights("mnist-8_tensor_data")
    op = mnist.build(device, wt)
    image = mnist.prepare(needs("mnist_image1.png"))
    # The sample image is classified with near-certainty; a dimmed copy gives probabilities far from 0 and 1.
    for x in (image, image / 1000):
        (got,) = op({"image": x})
        assert got.shape == (1, 1, 1, 10)
        assert_close(got.reshape(1, 10), ref.softmax(ref.mnist(wt, x.astype(np.float64))), 1e-5)


def test_mnist_predicts_the_digit(device, tmp_path):
    mnist = sample("mnist")
    op = mnist.build(device, weights("mnist-8_tensor_data"))
    for digit, path in [("1", needs("mnist_image1.png")), ("7", drawn_digit("7", tmp_path / "7.png")),
                        ("0", drawn_digit("0", tmp_path / "0.png"))]:
        (p,) = op({"image": mnist.prepare(path)})
        assert int(np.argmax(p)) == int(digit), (digit, p.ravel())
        assert p.max() > 0.9


# ---- squeezenet ----

@pytest.fixture(scope="module")
def dog():
    return sample("squeezenet").imagenet_input(needs("dog2.jpg"))


def test_squeezenet_matches_reference(device, dog):
    wt = weights("squeezenet_tensor_data")
    op = sample("squeezenet").build(device, wt)
    noise = np.random.default_rng(3).standard_normal(dog.shape).astype(np.float32)
    for x in (dog, noise):
        (got,) = op({"image": x})
        assert got.shape == (1, 1000, 1, 1)
        assert_close(got.reshape(1, 1000), ref.softmax(ref.squeezenet(wt, x)), 1e-5)


def test_squeezenet_sees_a_dog(device, dog):
    (p,) = sample("squeezenet").build(device, weights("squeezenet_tensor_data"))({"image": dog})
    assert 151 <= int(np.argmax(p)) <= 268  # ImageNet's dog classes
    assert abs(p.sum() - 1) < 1e-4


# ---- mobilenet ----

def test_mobilenet_features_match_reference(device, dog):
    mobilenet, wt = sample("mobilenet"), weights("mobile_net_data")
    assert mobilenet.CLASSIFIER not in wt  # the shared data lacks it: the sample stops at the features
    (got,) = mobilenet.build(device, wt)({"image": dog})
    assert got.shape == (1, 1280, 1, 1)
    assert_close(got, ref.mobilenet_v2(wt, dog), 1e-4)


def test_mobilenet_classifier_matches_reference(device, dog):
    """With the classifier weight present the whole network runs (here a random stand-in for the weight)."""
    mobilenet, wt = sample("mobilenet"), weights("mobile_net_data")
    classifier = np.random.default_rng(5).standard_normal((1000, 1280, 1, 1)).astype(np.float32) * 0.05
    (got,) = mobilenet.build(device, {**wt, mobilenet.CLASSIFIER: classifier})({"image": dog})
    assert got.shape == (1, 1000, 1, 1)
    assert_close(got.reshape(1, 1000), ref.softmax(ref.mobilenet_v2(wt, dog, classifier)), 1e-4)


# ---- superres ----

def test_superres_matches_reference(device):
    superres, wt = sample("superres"), weights("super_resolution_10_data")
    y = y_channel(superres.load_rgb(needs("DefaultImage.jpg"), (224, 224)))[None, None].astype(np.float32) / 255
    (got,) = superres.build(device, wt)({"y": y})
    assert got.shape == (1, 1, 672, 672)
    assert_close(got, np.clip(ref.super_resolution(wt, y), 0, 1), 1e-4)


def test_superres_beats_bicubic(device):
    """DefaultImage.jpg at 672 x 672 is the truth; downscaled 3x and upscaled again, the network's Y channel
    is closer to the truth than bicubic upscaling's. The downscaling is bilinear, the degradation the model was
    trained to undo (PyTorch's example made its inputs with torchvision's Resize); we measured +1.3 dB."""
    superres = sample("superres")
    truth = superres.load_rgb(needs("DefaultImage.jpg"), (672, 672))
    small = truth.resize((224, 224), Image.BILINEAR)
    ours = superres.upscale(superres.build(device, weights("super_resolution_10_data")), small)
    bicubic = small.resize((672, 672), Image.BICUBIC)
    gain = psnr(y_channel(ours), y_channel(truth)) - psnr(y_channel(bicubic), y_channel(truth))
    assert gain > 0.5, f"PSNR gain over bicubic {gain:.2f} dB"


# ---- candy ----

@pytest.fixture(scope="module")
def small_photo():
    """DefaultImage.jpg at 96 x 96: the network is fully convolutional, and NumPy is slow at the full size."""
    return sample("candy").load_rgb(needs("DefaultImage.jpg"), (96, 96))


@pytest.mark.parametrize("style", STYLES)
def test_style_matches_reference(device, style, small_photo):
    candy, wt = sample("candy"), weights(f"{style}_tensor_data")
    bgr = np.asarray(small_photo, np.float32)[:, :, ::-1].transpose(2, 0, 1)[None].copy()
    (got,) = candy.build(device, wt, 96, 96)({"bgr": bgr})
    assert got.shape == (1, 3, 96, 96)
    assert_close(got, ref.fast_style(wt, bgr.astype(np.float64)), 1e-4)


@pytest.mark.parametrize("style", STYLES)
def test_style_changes_the_image_the_same_way_each_time(device, style, small_photo):
    candy, wt = sample("candy"), weights(f"{style}_tensor_data")
    first = np.asarray(candy.stylize(candy.build(device, wt, 96, 96), small_photo), np.float64)
    op = candy.build(device, wt, 96, 96)
    again = [np.asarray(candy.stylize(op, small_photo)) for _ in range(2)]
    assert np.array_equal(first, again[0]) and np.array_equal(again[0], again[1])
    assert np.abs(first - np.asarray(small_photo, np.float64)).mean() > 20


# ---- the programs ----

def run(args, **env):
    result = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONUNBUFFERED": "1", **env})
    return result.returncode, result.stdout + result.stderr


@pytest.mark.parametrize("program, expect", [
    (["mnist.py"], "digit 1,"),
    (["squeezenet.py"], "retriever"),
    (["mobilenet.py"], "mobilenetv20_output_pred_weight.npy"),
    (["superres.py", "--output", "{tmp}/superres.png"], "672 x 672"),
    (["candy.py", "--size", "64", "--output", "{tmp}/candy.png"], "candy_tensor_data"),
    (["candy.py", "{data}/dog2.jpg", "--style", "mosaic", "--size", "64", "--output", "{tmp}/mosaic.png"], "mosaic"),
])
def test_sample_program_runs(program, expect, tmp_path):
    needs()
    args = [a.format(tmp=tmp_path, data=DATA) for a in program]
    code, out = run([SAMPLES / args[0], *args[1:], "--data", DATA])
    assert code == 0, out
    assert expect in out
    for output in tmp_path.iterdir():
        assert Image.open(output).format == "PNG"


def test_mobilenet_program_classifies_with_the_classifier_weight(tmp_path):
    """A data folder that has mobilenetv20_output_pred_weight.npy: the program prints the top 5."""
    folder = tmp_path / "mobile_net_data"
    folder.mkdir()
    for f in needs("mobile_net_data").iterdir():
        (folder / f.name).symlink_to(f)
    np.save(folder / "mobilenetv20_output_pred_weight.npy",
            np.random.default_rng(0).standard_normal((1000, 1280, 1, 1)).astype(np.float32))
    (tmp_path / "imagenet_categories.txt").symlink_to(needs("imagenet_categories.txt"))
    code, out = run([SAMPLES / "mobilenet.py", needs("dog2.jpg")], DIRECTML_SAMPLE_DATA=str(tmp_path))
    assert code == 0, out
    assert "top 5" in out and out.count("%") == 5


@pytest.mark.parametrize("name", ["mnist.py", "squeezenet.py", "mobilenet.py", "superres.py", "candy.py"])
def test_sample_program_without_data_says_where_it_comes_from(name, tmp_path):
    code, out = run([SAMPLES / name], DIRECTML_SAMPLE_DATA=str(tmp_path / "missing"))
    assert code != 0
    assert out.startswith("error: no sample data in") and "python samples/fetch_data.py" in out
    assert "Traceback" not in out


def test_weights_read_without_numpys_python2_fallback(monkeypatch):
    # NumPy 2.5 refuses the files' Python 2 headers; sample_data then reads the format itself.
    folder = needs("mnist-8_tensor_data")
    want = {f.stem: np.load(f) for f in folder.glob("*.npy")}
    reader = sample("sample_data")

    def refuse(path, *args, **kwargs):
        raise ValueError("Cannot parse header")

    monkeypatch.setattr(reader.np, "load", refuse)
    got = reader.load_weights(folder)
    assert got.keys() == want.keys()
    for name, array in want.items():
        assert got[name].dtype == array.dtype
        np.testing.assert_array_equal(got[name], array)


def test_candy_says_a_style_given_as_the_image_is_a_style(tmp_path):
    code, out = run([SAMPLES / "candy.py", "la_muse"], DIRECTML_SAMPLE_DATA=str(tmp_path))
    assert code != 0 and "la_muse is a style, not an image: pass it as --style la_muse" in out


@pytest.mark.parametrize("name", ["mnist.py", "squeezenet.py", "mobilenet.py", "superres.py", "candy.py"])
def test_a_missing_image_is_named_before_the_data_is_looked_for(name, tmp_path):
    code, out = run([SAMPLES / name, "/missing.png"], DIRECTML_SAMPLE_DATA=str(tmp_path / "no-data-either"))
    assert code != 0 and out.strip() == "error: the image /missing.png does not exist"


@pytest.mark.parametrize("name", ["matmul.py", "dtypes.py"])
def test_a_device_this_machine_lacks_is_one_error_line(name):
    try:
        import directml as dml
        dml.Device("cuda")
        pytest.skip("this machine opens a cuda device")
    except dml.DeviceError:
        pass
    code, out = run([SAMPLES / name, "--device", "cuda"])
    assert code != 0 and out.startswith("error: cannot open a cuda device: ") and out.count("\n") == 1, out
    if not sample("sample_device").has_nvidia_driver():
        assert "this machine has no NVIDIA driver" in out
