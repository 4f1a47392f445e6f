"""Handwritten digit recognition: the MNIST model of the ONNX model zoo (mnist-8) as DirectML operators.

conv 5x5 (8 channels) + bias, relu, max pool 2x2, conv 5x5 (16 channels) + bias, relu, max pool 3x3 stride 3,
then a matrix product to the 10 digits and a softmax. The input is a 28 x 28 image, white digit on black, pixel
values 0..255; another image is brought to that form the way MNIST's digits were made: the digit's bounding box
fitted into 20 x 20 and centred in 28 x 28 (a dark digit on a light ground is inverted first).
Run: python samples/mnist.py [image] [--data DIR] [--device cpu|cuda]
"""

from pathlib import Path

import numpy as np

import directml as dml
from sample_data import Image, channel_vector, check_image, data_dir, load_weights, parser
from sample_device import open_device


def build(device: dml.Device, weights: dict[str, np.ndarray]) -> dml.CompiledOperator:
    """image [1, 1, 28, 28] -> probabilities of the digits [1, 1, 1, 10]."""
    g = dml.Graph(device)
    relu = dml.FusedActivation.relu()
    image = g.input([1, 1, 28, 28], name="image")
    x = dml.convolution(image, g.constant(weights["Parameter5"]), channel_vector(g, weights["Parameter6"]),
                        start_padding=[2, 2], end_padding=[2, 2], fused_activation=relu)
    x = dml.max_pooling(x, window_size=[2, 2], strides=[2, 2]).values                     # [1, 8, 14, 14]
    x = dml.convolution(x, g.constant(weights["Parameter87"]), channel_vector(g, weights["Parameter88"]),
                        start_padding=[2, 2], end_padding=[2, 2], fused_activation=relu)
    x = dml.max_pooling(x, window_size=[3, 3], strides=[3, 3]).values                     # [1, 16, 4, 4]
    features = dml.reinterpret(x, [1, 1, 1, 256])                                          # flattened, as ONNX
    w = g.constant(weights["Parameter193"].reshape(1, 1, 256, 10))                         # was [16, 4, 4, 10]
    b = g.constant(weights["Parameter194"].reshape(1, 1, 1, 10))
    return g.compile([dml.activation_softmax(dml.gemm(features, w, b), axes=[3])])


def prepare(path: Path) -> np.ndarray:
    """The image as MNIST's model expects it: [1, 1, 28, 28], white digit on black, values 0..255."""
    check_image(Path(path))
    pixels = np.asarray(Image.open(path).convert("L"), np.float32)
    if pixels.shape == (28, 28):
        return pixels[None, None]
    if pixels.mean() > 127:
        pixels = 255 - pixels
    rows, cols = np.nonzero(pixels > 32)
    if rows.size == 0:
        raise SystemExit(f"error: {path} shows no digit")
    digit = Image.fromarray(pixels[rows.min():rows.max() + 1, cols.min():cols.max() + 1].astype(np.uint8))
    scale = 20 / max(digit.size)
    digit = digit.resize((max(1, round(digit.width * scale)), max(1, round(digit.height * scale))),
                         Image.Resampling.LANCZOS)
    canvas = Image.new("L", (28, 28))
    canvas.paste(digit, ((28 - digit.width) // 2, (28 - digit.height) // 2))
    return np.asarray(canvas, np.float32)[None, None]


def main() -> None:
    p = parser(__doc__)
    p.add_argument("image", nargs="?", type=Path, help="a digit image (default: mnist_image1.png of the data)")
    args = p.parse_args()
    check_image(args.image)  # a missing image is named before anything else is read
    data = data_dir(args.data)
    device = open_device(args.device)

    op = build(device, load_weights(data / "mnist-8_tensor_data"))
    image = args.image or data / "mnist_image1.png"
    (probabilities,) = op({"image": prepare(image)})
    probabilities = probabilities.ravel()
    digit = int(np.argmax(probabilities))
    print(f"{device.kind} ({device.name}): {image}")
    print(f"digit {digit}, probability {probabilities[digit]:.2%}")


if __name__ == "__main__":
    main()
