"""Fast style transfer (Johnson et al.'s feed-forward network with instance normalization) as DirectML operators.

One network, four styles: candy (default), la_muse, mosaic, udnie (--style), each a folder of weights in the sample
data.
The network works on B, G, R values 0..255 less the VGG means (scale_B holds them, in that order):
reflection padding of 40, conv 9x9 16, conv 3x3 stride 2 32, conv 3x3 stride 2 64 (each + instance norm +
relu), five residual blocks of two unpadded 3x3 convolutions (their shortcut cropped by 2 to match, which uses
up the padding), two transposed convolutions stride 2 (64 -> 32 -> 16, + instance norm + relu), conv 9x9 3,
tanh times 150, the means added back and clipped to 0..255. Instance normalization is DirectML's
mean_variance_normalization over the spatial axes [2, 3] with a scale and bias per channel.
Run: python samples/candy.py [image] [--style NAME|DIR] [--size N] [--output FILE] [--data DIR] [--device cpu|cuda]
"""

from pathlib import Path

import numpy as np

import directml as dml
from sample_data import Image, channel_vector, check_image, data_dir, load_rgb, load_weights, parser, require_data
from sample_device import open_device

STYLES = ("candy", "la_muse", "mosaic", "udnie")
PAD = 40  # what the 5 residual blocks crop (2 each at quarter resolution), so the output keeps the input's size
RELU, NONE = dml.FusedActivation.relu(), dml.FusedActivation.none()


def build(device: dml.Device, weights: dict[str, np.ndarray], height: int, width: int) -> dml.CompiledOperator:
    """bgr [1, 3, height, width] in 0..255 -> the styled image, same layout; height and width multiples of 4."""
    if height % 4 or width % 4:
        raise ValueError(f"the image's sides must be multiples of 4, not {height} x {width}")
    g = dml.Graph(device)

    def name(stem, i):  # the ONNX export numbers its layers "", "1", "2", ...
        return f"{stem}{i or ''}"

    def instance_norm(x, i, activation=RELU):
        return dml.mean_variance_normalization(
            x, channel_vector(g, weights[name("InstanceNormalization_scale", i)]),
            channel_vector(g, weights[name("InstanceNormalization_B", i)]),
            axes=[2, 3], normalize_variance=True, epsilon=1e-5, fused_activation=activation)

    def conv(x, i, stride=1, padding=0, activation=NONE):
        w, b = weights[name("convolution", i) + "_W"], weights[name("convolution", i) + "_B"]
        return dml.convolution(x, g.constant(w), channel_vector(g, b), strides=[stride] * 2,
                               start_padding=[padding] * 2, end_padding=[padding] * 2, fused_activation=activation)

    def conv_transpose(x, i):  # doubles the size: stride 2, padding 1 at the start, 1 - 1 (output padding) at the end
        w, b = weights[f"convolution{i}_W"], weights[f"convolution{i}_B"]  # w: [C_in, C_out, 3, 3]
        n, _, h, wd = x.shape
        return dml.convolution(x, g.constant(w), channel_vector(g, b), direction=dml.ConvolutionDirection.BACKWARD,
                               strides=[2, 2], start_padding=[1, 1], end_padding=[1, 1], output_padding=[1, 1],
                               output_sizes=[n, w.shape[1], 2 * h, 2 * wd])

    def residual(x, i):  # convolutions i and i + 1, unpadded: the shortcut loses 2 pixels on each side as well
        y = instance_norm(conv(instance_norm(conv(x, i), i), i + 1), i + 1, activation=NONE)
        n, c, h, w = x.shape
        shortcut = dml.slice(x, input_window_offsets=[0, 0, 2, 2], input_window_sizes=[n, c, h - 4, w - 4],
                             input_window_strides=[1, 1, 1, 1])
        return shortcut + y

    bgr = g.input([1, 3, height, width], name="bgr")
    mean = dml.broadcast(channel_vector(g, weights["scale_B"]), bgr.shape)
    x = dml.padding(bgr - mean, padding_mode=dml.PaddingMode.REFLECTION, padding_value=0,
                    start_padding=[0, 0, PAD, PAD], end_padding=[0, 0, PAD, PAD])
    x = instance_norm(conv(x, 0, padding=4), 0)                      # [1, 16, h + 80, w + 80]
    x = instance_norm(conv(x, 1, stride=2, padding=1), 1)            # [1, 32, h / 2 + 40, ...]
    x = instance_norm(conv(x, 2, stride=2, padding=1), 2)            # [1, 64, h / 4 + 20, ...]
    for i in range(3, 13, 2):
        x = residual(x, i)                                           # ... down to [1, 64, h / 4, w / 4]
    x = instance_norm(conv_transpose(x, 13), 13)                     # [1, 32, h / 2, w / 2]
    x = instance_norm(conv_transpose(x, 14), 14)                     # [1, 16, h, w]
    x = conv(x, 15, padding=4, activation=dml.FusedActivation.tanh())  # [1, 3, h, w] in -1..1
    x = x * dml.broadcast(channel_vector(g, 150 * weights["Mul_B"]), x.shape) + mean
    return g.compile([dml.clip(x, min=0, max=255)])


def stylize(op: dml.CompiledOperator, image):
    """A PIL RGB image (sides the network's) styled by the compiled network."""
    bgr = np.asarray(image, np.float32)[:, :, ::-1].transpose(2, 0, 1)[None]
    (out,) = op({"bgr": bgr})
    return Image.fromarray(np.round(out[0, ::-1].transpose(1, 2, 0)).astype(np.uint8), "RGB")


def style_dir(data: Path, style: str) -> Path:
    """A style given as a name (candy), a folder name of the data (candy_tensor_data) or a path."""
    for candidate in (Path(style), data / style, data / f"{style}_tensor_data"):
        if candidate.is_dir():
            return candidate
    return require_data(data / f"{style}_tensor_data")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("image", nargs="?", type=Path, help="an image (default: DefaultImage.jpg of the data)")
    p.add_argument("--style", default="candy",
                   help=f"{', '.join(STYLES)} or a folder of weights (default: %(default)s)")
    p.add_argument("--size", type=int, default=720, help="the longer side, in pixels (default: %(default)s)")
    p.add_argument("--output", type=Path, default=None, help="the PNG written (default: STYLE.png)")
    args = p.parse_args()
    if args.image is not None and not args.image.exists() and str(args.image) in STYLES:
        p.error(f"{args.image} is a style, not an image: pass it as --style {args.image}")
    check_image(args.image)  # a missing image is named before anything else is read
    data = data_dir(args.data)
    device = open_device(args.device)

    style = style_dir(data, args.style)
    image_path = args.image or data / "DefaultImage.jpg"
    image = load_rgb(image_path)
    scale = args.size / max(image.size)
    width, height = (max(4, round(side * scale / 4) * 4) for side in image.size)
    op = build(device, load_weights(style), height, width)
    output = args.output or Path(f"{style.name.removesuffix('_tensor_data')}.png")
    stylize(op, image.resize((width, height))).save(output)
    print(f"{device.kind} ({device.name}): {image_path} in the style of {style.name} -> {output} "
          f"({width} x {height})")


if __name__ == "__main__":
    main()
