"""Image classification with SqueezeNet 1.1 (the Gluon model zoo's weights) as DirectML operators.

conv 3x3 stride 2 + relu, max pool 3x3 stride 2, two fire modules, max pool, two fire modules, max pool, four
fire modules, conv 1x1 to the 1000 ImageNet classes + relu, global average pool, softmax. A fire module squeezes
with a 1x1 convolution and expands with a 1x1 and a 3x3 convolution side by side, joined on the channels.
Gluon pools in ceil mode (a last window that runs past the edge still counts); DirectML gets that from the
output size asked of max_pooling.
Run: python samples/squeezenet.py [image] [--data DIR] [--device cpu|cuda]
"""

from pathlib import Path

import numpy as np

import directml as dml
from sample_data import (channel_vector, check_image, data_dir, imagenet_classes, imagenet_input, load_weights, parser,
                         print_top5)
from sample_device import open_device

RELU = dml.FusedActivation.relu()


def build(device: dml.Device, weights: dict[str, np.ndarray]) -> dml.CompiledOperator:
    """image [1, 3, 224, 224] (ImageNet-normalized) -> class probabilities [1, 1000, 1, 1]."""
    g = dml.Graph(device)

    def conv(x, i, padding=0, stride=1):  # squeezenet0_conv{i}, with its bias and a relu
        return dml.convolution(x, g.constant(weights[f"squeezenet0_conv{i}_weight"]),
                               channel_vector(g, weights[f"squeezenet0_conv{i}_bias"]),
                               strides=[stride] * 2, start_padding=[padding] * 2, end_padding=[padding] * 2,
                               fused_activation=RELU)

    def fire(x, i):  # conv i squeezes; convs i + 1 (1x1) and i + 2 (3x3) expand
        squeezed = conv(x, i)
        return dml.join([conv(squeezed, i + 1), conv(squeezed, i + 2, padding=1)], axis=1)

    def max_pool_ceil(x):  # 3x3 stride 2, the output size rounded up
        n, c, h, w = x.shape
        sizes = [n, c, -(-(h - 3) // 2) + 1, -(-(w - 3) // 2) + 1]
        return dml.max_pooling(x, window_size=[3, 3], strides=[2, 2], output_sizes=sizes).values

    image = g.input([1, 3, 224, 224], name="image")
    x = max_pool_ceil(conv(image, 0, stride=2))               # [1, 64, 55, 55]
    x = max_pool_ceil(fire(fire(x, 1), 4))                    # [1, 128, 27, 27]
    x = max_pool_ceil(fire(fire(x, 7), 10))                   # [1, 256, 13, 13]
    for i in (13, 16, 19, 22):
        x = fire(x, i)                                        # [1, 512, 13, 13]
    x = conv(x, 25)                                           # [1, 1000, 13, 13]
    h, w = x.shape[2:]
    x = dml.average_pooling(x, strides=[1, 1], window_size=[h, w], start_padding=[0, 0], end_padding=[0, 0],
                            include_padding=False)            # [1, 1000, 1, 1]
    return g.compile([dml.activation_softmax(x, axes=[1])])


def main() -> None:
    p = parser(__doc__)
    p.add_argument("image", nargs="?", type=Path, help="an image (default: dog2.jpg of the data)")
    args = p.parse_args()
    check_image(args.image)  # a missing image is named before anything else is read
    data = data_dir(args.data)
    device = open_device(args.device)

    op = build(device, load_weights(data / "squeezenet_tensor_data"))
    image = args.image or data / "dog2.jpg"
    (probabilities,) = op({"image": imagenet_input(image)})
    print(f"{device.kind} ({device.name}): {image}, top 5 of 1000 ImageNet classes:")
    print_top5(probabilities, imagenet_classes(data))


if __name__ == "__main__":
    main()
