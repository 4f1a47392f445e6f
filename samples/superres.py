"""3x super-resolution (PyTorch's super_resolution example network, as in the ONNX tutorial) as DirectML operators.

The network sees only the brightness (Y of YCbCr, 0..1): conv 5x5 64 + relu, conv 3x3 64 + relu, conv 3x3 32 +
relu, conv 3x3 9, then depth_to_space with blocks of 3 (PyTorch's pixel shuffle) makes each pixel's 9 channels
a 3 x 3 patch, clipped to 0..1. The colour (Cb, Cr) is upscaled bicubically by Pillow. The input is resized to
224 x 224 as the model expects; the result, 672 x 672, is written as a PNG.
Run: python samples/superres.py [image] [--output FILE] [--data DIR] [--device cpu|cuda]
"""

from pathlib import Path

import numpy as np

import directml as dml
from sample_data import Image, channel_vector, check_image, data_dir, load_rgb, load_weights, parser
from sample_device import open_device

SCALE = 3


def build(device: dml.Device, weights: dict[str, np.ndarray], height: int = 224, width: int = 224):
    """y [1, 1, height, width] in 0..1 -> [1, 1, 3 height, 3 width] in 0..1 (the network is fully convolutional,
    so any size works; the model was made for 224 x 224)."""
    g = dml.Graph(device)

    def conv(x, i, relu=True):
        w = weights[f"conv{i}.weight"]
        pad = [w.shape[2] // 2] * 2
        return dml.convolution(x, g.constant(w), channel_vector(g, weights[f"conv{i}.bias"]),
                               start_padding=pad, end_padding=pad,
                               fused_activation=dml.FusedActivation.relu() if relu else dml.FusedActivation.none())

    y = g.input([1, 1, height, width], name="y")
    x = conv(conv(conv(y, 1), 2), 3)
    x = conv(x, 4, relu=False)                                                    # [1, 9, h, w]
    x = dml.depth_to_space(x, block_size=SCALE, order=dml.DepthSpaceOrder.COLUMN_ROW_DEPTH)  # [1, 1, 3h, 3w]
    return g.compile([dml.clip(x, min=0, max=1)])


def upscale(op: dml.CompiledOperator, image):
    """A PIL RGB image upscaled 3x: Y by the network, Cb and Cr bicubically."""
    y, cb, cr = image.convert("YCbCr").split()
    (big_y,) = op({"y": np.asarray(y, np.float32)[None, None] / 255})
    big_y = Image.fromarray(np.round(big_y[0, 0] * 255).astype(np.uint8), "L")
    size = big_y.size
    bicubic = Image.Resampling.BICUBIC
    return Image.merge("YCbCr", [big_y, cb.resize(size, bicubic), cr.resize(size, bicubic)]).convert("RGB")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("image", nargs="?", type=Path, help="an image (default: DefaultImage.jpg of the data)")
    p.add_argument("--output", type=Path, default=Path("superres.png"), help="the PNG written (default: %(default)s)")
    args = p.parse_args()
    check_image(args.image)  # a missing image is named before anything else is read
    data = data_dir(args.data)
    device = open_device(args.device)

    op = build(device, load_weights(data / "super_resolution_10_data"))
    image = args.image or data / "DefaultImage.jpg"
    result = upscale(op, load_rgb(image, (224, 224)))
    result.save(args.output)
    print(f"{device.kind} ({device.name}): {image} at 224 x 224 -> {args.output} "
          f"({result.width} x {result.height})")


if __name__ == "__main__":
    main()
