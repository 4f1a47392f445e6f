"""Image classification with MobileNetV2 1.0 (the Gluon model zoo's mobilenetv2_1.0) as DirectML operators.

conv 3x3 stride 2 + batch norm + relu6, then 17 linear bottlenecks: a 1x1 convolution widening the channels
(t = 6 times, once 1), a 3x3 depthwise convolution (group_count = channels; some of stride 2), each with batch
norm and relu6 (clip to 0..6), and a 1x1 convolution narrowing them with batch norm and no activation, added
to the block's input where the shapes allow. Then conv 1x1 to 1280 + batch norm + relu6 and a global average
pool: the image's features. The classifier (a 1x1 convolution 1280 -> 1000, no bias) needs
mobilenetv20_output_pred_weight.npy, which samples/fetch_data.py downloads (the shared copy lacks it): without
it the sample stops at the features and says so.
Run: python samples/mobilenet.py [image] [--data DIR] [--device cpu|cuda]
"""

from pathlib import Path

import numpy as np

import directml as dml
from sample_data import (channel_vector, check_image, data_dir, imagenet_classes, imagenet_input, load_weights, parser,
                         print_top5)
from sample_device import open_device

CLASSIFIER = "mobilenetv20_output_pred_weight"
# Stride of each linear bottleneck's depthwise convolution.
STRIDES = [1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1]


def build(device: dml.Device, weights: dict[str, np.ndarray]) -> dml.CompiledOperator:
    """image [1, 3, 224, 224] (ImageNet-normalized) -> class probabilities [1, 1000, 1, 1] when the classifier
    weight is among the weights, else the features [1, 1280, 1, 1]."""
    g = dml.Graph(device)

    def conv_bn(x, name, conv, bn, stride=1, groups=1, relu6=True):  # {name}conv{conv} + {name}batchnorm{bn}
        w = weights[f"mobilenetv20_features_{name}conv{conv}_weight"]
        pad = [w.shape[2] // 2] * 2
        x = dml.convolution(x, g.constant(w), strides=[stride] * 2, start_padding=pad, end_padding=pad,
                            group_count=groups)
        stats = [channel_vector(g, weights[f"mobilenetv20_features_{name}batchnorm{bn}_{s}"])
                 for s in ("running_mean", "running_var", "gamma", "beta")]
        x = dml.batch_normalization(x, *stats, spatial=True, epsilon=1e-5)
        return dml.clip(x, min=0, max=6) if relu6 else x

    image = g.input([1, 3, 224, 224], name="image")
    x = conv_bn(image, "", 0, 0, stride=2)                                   # [1, 32, 112, 112]
    for i, stride in enumerate(STRIDES):
        block = f"linearbottleneck{i}_"
        y = conv_bn(x, block, 0, 0)                                          # widen
        y = conv_bn(y, block, 1, 1, stride=stride, groups=y.shape[1])        # depthwise
        y = conv_bn(y, block, 2, 2, relu6=False)                             # narrow, linear
        x = x + y if stride == 1 and x.shape == y.shape else y
    x = conv_bn(x, "", 1, 1)                                                 # [1, 1280, 7, 7]
    h, w = x.shape[2:]
    features = dml.average_pooling(x, strides=[1, 1], window_size=[h, w], start_padding=[0, 0],
                                   end_padding=[0, 0], include_padding=False)  # [1, 1280, 1, 1]
    if CLASSIFIER not in weights:
        return g.compile([features])
    w = weights[CLASSIFIER]  # Gluon's export is [1000, 1280, 1, 1]; a [1280, 1000] matrix is taken as its transpose
    classifier = g.constant((w.T if w.shape == (1280, 1000) else w).reshape(1000, 1280, 1, 1))
    return g.compile([dml.activation_softmax(dml.convolution(features, classifier), axes=[1])])


def main() -> None:
    p = parser(__doc__)
    p.add_argument("image", nargs="?", type=Path, help="an image (default: dog2.jpg of the data)")
    args = p.parse_args()
    check_image(args.image)  # a missing image is named before anything else is read
    data = data_dir(args.data)
    device = open_device(args.device)

    weights = load_weights(data / "mobile_net_data")
    image = args.image or data / "dog2.jpg"
    (result,) = build(device, weights)({"image": imagenet_input(image)})
    print(f"{device.kind} ({device.name}): {image}")
    if CLASSIFIER in weights:
        print("top 5 of 1000 ImageNet classes:")
        print_top5(result, imagenet_classes(data))
    else:
        f = result.ravel()
        print(f"features [1280]: mean {f.mean():.4f}, max {f.max():.4f} (channel {f.argmax()}), "
              f"{np.count_nonzero(f)} non-zero")
        print(f"{CLASSIFIER}.npy (the 1280 -> 1000 classifier) is not in {data / 'mobile_net_data'}: "
              "stopped at the features. `python samples/fetch_data.py` fetches the whole set, classifier "
              "included, into the folder the samples read by default.")


if __name__ == "__main__":
    main()
