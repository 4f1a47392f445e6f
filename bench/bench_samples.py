"""The sample networks on one of our executors against PyTorch running the same networks on the same processor
(CPU, or the GPU for --device cuda), in the same run.

Each network is the sample's own graph (samples/*.py build functions, real weights from the sample data); the
PyTorch model is written here with torch.nn.functional from the same .npy weights, and its output is compared
with ours before timing so both sides do the same work. Prints our median time per inference, PyTorch's, and
the ratio torch/ours (above 1: we are faster). On cuda, inputs are already on the GPU and outputs stay there (as
dml.Buffers / torch tensors), and torch runs eagerly with cuDNN's benchmark mode on, each call timed up to a
synchronized result. Needs PyTorch (not a dependency of the package) and Pillow.
Run: python bench/bench_samples.py [--device cpu|cuda] [--repeat N] [--data DIR] [--only NAME ...]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

import directml as dml
from bench_cpu import median_time, row

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
import sample_data  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    raise SystemExit("bench_samples needs PyTorch: pip install torch")


def torch_device(device: dml.Device) -> str:
    """Where torch runs to compare with our `device`: the GPU for cuda, else the CPU."""
    return "cuda" if device.kind == "cuda" else "cpu"


def torch_mnist(w):
    def run(x):
        x = F.max_pool2d(F.relu(F.conv2d(x, w["Parameter5"], w["Parameter6"].flatten(), padding=2)), 2, 2)
        x = F.max_pool2d(F.relu(F.conv2d(x, w["Parameter87"], w["Parameter88"].flatten(), padding=2)), 3, 3)
        return F.softmax(x.reshape(1, 256) @ w["Parameter193"].reshape(256, 10) + w["Parameter194"], dim=1)
    return run


def torch_squeezenet(w):
    def conv(x, i, padding=0, stride=1):
        return F.relu(F.conv2d(x, w[f"squeezenet0_conv{i}_weight"], w[f"squeezenet0_conv{i}_bias"], stride, padding))

    def fire(x, i):
        s = conv(x, i)
        return torch.cat([conv(s, i + 1), conv(s, i + 2, padding=1)], dim=1)

    def run(x):
        x = F.max_pool2d(conv(x, 0, stride=2), 3, 2, ceil_mode=True)
        x = F.max_pool2d(fire(fire(x, 1), 4), 3, 2, ceil_mode=True)
        x = F.max_pool2d(fire(fire(x, 7), 10), 3, 2, ceil_mode=True)
        for i in (13, 16, 19, 22):
            x = fire(x, i)
        return F.softmax(F.adaptive_avg_pool2d(conv(x, 25), 1), dim=1)
    return run


def torch_mobilenet(w, strides):
    def conv_bn(x, name, conv, bn, stride=1, groups=1, relu6=True):
        weight = w[f"mobilenetv20_features_{name}conv{conv}_weight"]
        x = F.conv2d(x, weight, stride=stride, padding=weight.shape[2] // 2, groups=groups)
        p = f"mobilenetv20_features_{name}batchnorm{bn}_"
        x = F.batch_norm(x, w[p + "running_mean"], w[p + "running_var"], w[p + "gamma"], w[p + "beta"], eps=1e-5)
        return F.relu6(x) if relu6 else x

    def run(x):
        x = conv_bn(x, "", 0, 0, stride=2)
        for i, stride in enumerate(strides):
            b = f"linearbottleneck{i}_"
            y = conv_bn(x, b, 0, 0)
            y = conv_bn(y, b, 1, 1, stride=stride, groups=y.shape[1])
            y = conv_bn(y, b, 2, 2, relu6=False)
            x = x + y if stride == 1 and x.shape == y.shape else y
        return F.adaptive_avg_pool2d(conv_bn(x, "", 1, 1), 1)
    return run


def torch_superres(w):
    def run(y):
        for i in (1, 2, 3):
            weight = w[f"conv{i}.weight"]
            y = F.relu(F.conv2d(y, weight, w[f"conv{i}.bias"], padding=weight.shape[2] // 2))
        return F.pixel_shuffle(F.conv2d(y, w["conv4.weight"], w["conv4.bias"], padding=1), 3).clamp(0, 1)
    return run


def torch_style(w):
    def norm(x, i, act=True):
        s = str(i or "")
        x = F.instance_norm(x, weight=w[f"InstanceNormalization_scale{s}"], bias=w[f"InstanceNormalization_B{s}"],
                            eps=1e-5)
        return F.relu(x) if act else x

    def conv(x, i, stride=1, padding=0):
        s = str(i or "")
        return F.conv2d(x, w[f"convolution{s}_W"], w[f"convolution{s}_B"], stride, padding)

    def up(x, i):
        return F.conv_transpose2d(x, w[f"convolution{i}_W"], w[f"convolution{i}_B"], 2, 1, output_padding=1)

    mean = w["scale_B"].reshape(1, 3, 1, 1)

    def run(bgr):
        x = F.pad(bgr - mean, (40,) * 4, mode="reflect")
        x = norm(conv(x, 0, padding=4), 0)
        x = norm(conv(x, 1, 2, 1), 1)
        x = norm(conv(x, 2, 2, 1), 2)
        for c in range(3, 13, 2):
            x = x[:, :, 2:-2, 2:-2] + norm(conv(norm(conv(x, c), c), c + 1), c + 1, act=False)
        x = norm(up(norm(up(x, 13), 13), 14), 14)
        return (torch.tanh(conv(x, 15, padding=4)) * 150 * w["Mul_B"].reshape(1, 3, 1, 1) + mean).clamp(0, 255)
    return run


def cases(data: Path, device: dml.Device):
    """(name, the sample's compiled graph, its input name, the torch model, an input array) per network."""
    import candy
    import mnist
    import mobilenet
    import squeezenet
    import superres

    where = torch_device(device)

    def tensors(weights):
        return {k: torch.from_numpy(np.ascontiguousarray(v, np.float32)).to(where) for k, v in weights.items()}

    load = sample_data.load_weights
    dog = sample_data.imagenet_input(data / "dog2.jpg")
    photo = sample_data.load_rgb(data / "DefaultImage.jpg", (720, 720))
    w = load(data / "mnist-8_tensor_data")
    yield "mnist 28x28", mnist.build(device, w), "image", torch_mnist(tensors(w)), \
        mnist.prepare(data / "mnist_image1.png")
    w = load(data / "squeezenet_tensor_data")
    yield "squeezenet 1.1 224x224", squeezenet.build(device, w), "image", torch_squeezenet(tensors(w)), dog
    w = load(data / "mobile_net_data")
    yield "mobilenet v2 features 224x224", mobilenet.build(device, w), "image", \
        torch_mobilenet(tensors(w), mobilenet.STRIDES), dog
    w = load(data / "super_resolution_10_data")
    y = np.asarray(photo.resize((224, 224)).convert("YCbCr").split()[0], np.float32)[None, None] / 255
    yield "superres 224 -> 672", superres.build(device, w), "y", torch_superres(tensors(w)), y
    w = load(data / "candy_tensor_data")
    bgr = np.asarray(photo, np.float32)[:, :, ::-1].transpose(2, 0, 1)[None].copy()
    yield "candy 720x720", candy.build(device, w, 720, 720), "bgr", torch_style(tensors(w)), bgr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="our executor, and where torch runs (cpu or cuda)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--data", type=Path, default=None, help="sample data folder (as the samples take it)")
    parser.add_argument("--only", nargs="*", default=None, help="names starting with these (mnist, candy, ...)")
    args = parser.parse_args()
    data = sample_data.data_dir(args.data)
    device = dml.Device(args.device)
    where = torch_device(device)
    gpu = where == "cuda"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False  # float32 in float32 on both sides
    processor = torch.cuda.get_device_name() if gpu else f"{torch.get_num_threads()} threads"
    print(f"device: {device.name}; torch {torch.__version__}, {processor}")
    for name, op, input_name, model, x in cases(data, device):
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        tx = torch.from_numpy(x).to(where)
        feeds = {input_name: dml.Buffer(device, x) if gpu else x}

        def ours():
            return op(feeds, readback=not gpu)

        def theirs():
            y = model(tx)
            if gpu:
                torch.cuda.synchronize()
            return y

        with torch.inference_mode():
            (got,) = ours()
            want = theirs().cpu().numpy()
            got = got.numpy() if gpu else got
            error = np.abs(got.reshape(want.shape) - want).max() / np.abs(want).max()
            if not error < 1e-3:
                raise SystemExit(f"{name}: our output differs from PyTorch's by {error:.1e} (relative)")
            ours_t = median_time(ours, args.repeat)
            theirs_t = median_time(theirs, args.repeat)
        row(name, ours_t, f"torch-{where}", theirs_t)


if __name__ == "__main__":
    main()
