"""The sample networks on one of our executors against PyTorch running the same networks on the same processor
(CPU, or the GPU for --device cuda), in the same run.

Each network is the sample's own graph (samples/*.py build functions, real weights from the sample data); the
peers' networks are written here once (the *_net functions) from the same .npy weights and run as PyTorch
(torch.nn.functional) and, on the CPU, as an ONNX model built with onnx.helper for ONNX Runtime's CPU execution
provider (as many threads as torch). Each peer's output is compared with ours before timing so all sides do the
same work. Ours and the peers run interleaved (one inference of each in turn). Prints our median time per
inference, each peer's, the ratio peer/ours (above 1: we are faster) and
our compiled graph's temporary memory. On cuda, inputs are already on the GPU and outputs stay there (as
dml.Buffers / torch tensors), and torch runs eagerly with cuDNN's benchmark mode on, each call timed up to a
synchronized result. Needs PyTorch and Pillow; onnx and onnxruntime for the second peer (none is a dependency
of the package).
Run: python bench/bench_samples.py [--device cpu|cuda] [--repeat N] [--data DIR] [--only NAME ...] [--threads N]
     [--cpu-time] [--block N]
"""

import argparse
import functools
import sys
from pathlib import Path

import numpy as np

import directml as dml
from bench_cpu import interleaved_medians, row, use_cpu_time

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
import sample_data  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    raise SystemExit("bench_samples needs PyTorch: pip install torch")
try:  # the second CPU peer, optional: pip install onnx onnxruntime
    import onnx
    import onnxruntime
except ImportError:
    onnx = onnxruntime = None


def torch_device(device: dml.Device) -> str:
    """Where torch runs to compare with our `device`: the GPU for cuda, else the CPU."""
    return "cuda" if device.kind == "cuda" else "cpu"


# Each network is written once against `o`, an Ops object: TorchOps runs it on PyTorch tensors, OnnxOps records it
# as an ONNX graph for ONNX Runtime. Weights are named as in the sample data; o.w(name, shape) is one, reshaped.

def mnist_net(o, x):
    x = o.max_pool(o.relu(o.conv(x, o.w("Parameter5"), o.w("Parameter6", (-1,)), padding=2)), 2, 2)
    x = o.max_pool(o.relu(o.conv(x, o.w("Parameter87"), o.w("Parameter88", (-1,)), padding=2)), 3, 3)
    x = o.add(o.matmul(o.reshape(x, (1, 256)), o.w("Parameter193", (256, 10))), o.w("Parameter194"))
    return o.softmax(x, 1)


def squeezenet_net(o, x):
    def conv(x, i, padding=0, stride=1):
        return o.relu(o.conv(x, o.w(f"squeezenet0_conv{i}_weight"), o.w(f"squeezenet0_conv{i}_bias"), stride, padding))

    def fire(x, i):
        s = conv(x, i)
        return o.concat([conv(s, i + 1), conv(s, i + 2, padding=1)], 1)

    x = o.max_pool(conv(x, 0, stride=2), 3, 2, ceil=True)
    x = o.max_pool(fire(fire(x, 1), 4), 3, 2, ceil=True)
    x = o.max_pool(fire(fire(x, 7), 10), 3, 2, ceil=True)
    for i in (13, 16, 19, 22):
        x = fire(x, i)
    return o.softmax(o.global_avg_pool(conv(x, 25)), 1)


def mobilenet_net(o, x, strides):
    def conv_bn(x, name, conv, bn, stride=1, depthwise=False, relu6=True):
        weight = f"mobilenetv20_features_{name}conv{conv}_weight"
        size = o.shape(weight)
        x = o.conv(x, o.w(weight), stride=stride, padding=size[2] // 2, groups=size[0] if depthwise else 1)
        p = f"mobilenetv20_features_{name}batchnorm{bn}_"
        x = o.batch_norm(x, o.w(p + "running_mean"), o.w(p + "running_var"), o.w(p + "gamma"), o.w(p + "beta"), 1e-5)
        return o.clip(x, 0, 6) if relu6 else x

    x = conv_bn(x, "", 0, 0, stride=2)
    for i, stride in enumerate(strides):
        b = f"linearbottleneck{i}_"
        y = conv_bn(conv_bn(conv_bn(x, b, 0, 0), b, 1, 1, stride=stride, depthwise=True), b, 2, 2, relu6=False)
        same = o.shape(f"mobilenetv20_features_{b}conv0_weight")[1] == o.shape(f"mobilenetv20_features_{b}conv2_weight")[0]
        x = o.add(x, y) if stride == 1 and same else y
    return o.global_avg_pool(conv_bn(x, "", 1, 1))


def superres_net(o, y):
    for i in (1, 2, 3):
        weight = f"conv{i}.weight"
        y = o.relu(o.conv(y, o.w(weight), o.w(f"conv{i}.bias"), padding=o.shape(weight)[2] // 2))
    return o.clip(o.depth_to_space(o.conv(y, o.w("conv4.weight"), o.w("conv4.bias"), padding=1), 3), 0, 1)


def style_net(o, bgr):
    def norm(x, i, act=True):
        s = str(i or "")
        x = o.instance_norm(x, o.w(f"InstanceNormalization_scale{s}"), o.w(f"InstanceNormalization_B{s}"), 1e-5)
        return o.relu(x) if act else x

    def conv(x, i, stride=1, padding=0):
        s = str(i or "")
        return o.conv(x, o.w(f"convolution{s}_W"), o.w(f"convolution{s}_B"), stride, padding)

    def up(x, i):
        return o.conv_transpose(x, o.w(f"convolution{i}_W"), o.w(f"convolution{i}_B"), 2, 1, 1)

    mean = o.w("scale_B", (1, 3, 1, 1))
    x = o.reflect_pad(o.sub(bgr, mean), 40)
    x = norm(conv(x, 0, padding=4), 0)
    x = norm(conv(x, 1, 2, 1), 1)
    x = norm(conv(x, 2, 2, 1), 2)
    for c in range(3, 13, 2):
        x = o.add(o.crop(x, 2), norm(conv(norm(conv(x, c), c), c + 1), c + 1, act=False))
    x = norm(up(norm(up(x, 13), 13), 14), 14)
    x = o.mul(o.mul(o.tanh(conv(x, 15, padding=4)), o.scalar(150.0)), o.w("Mul_B", (1, 3, 1, 1)))
    return o.clip(o.add(x, mean), 0, 255)


class TorchOps:
    """The networks' operations on PyTorch tensors on `where`; the weights are moved there once."""

    def __init__(self, weights, where):
        self.arrays = weights
        self.tensors = {k: torch.from_numpy(np.ascontiguousarray(v, np.float32)).to(where) for k, v in weights.items()}

    def shape(self, name):
        return self.arrays[name].shape

    def w(self, name, shape=None):
        return self.tensors[name] if shape is None else self.tensors[name].reshape(shape)

    def scalar(self, v):
        return v

    def conv(self, x, w, b=None, stride=1, padding=0, groups=1):
        return F.conv2d(x, w, b, stride, padding, 1, groups)

    def conv_transpose(self, x, w, b, stride, padding, output_padding):
        return F.conv_transpose2d(x, w, b, stride, padding, output_padding=output_padding)

    def batch_norm(self, x, mean, var, scale, bias, eps):
        return F.batch_norm(x, mean, var, scale, bias, eps=eps)

    def instance_norm(self, x, scale, bias, eps):
        return F.instance_norm(x, weight=scale, bias=bias, eps=eps)

    def max_pool(self, x, size, stride, ceil=False):
        return F.max_pool2d(x, size, stride, ceil_mode=ceil)

    relu, tanh = staticmethod(F.relu), staticmethod(torch.tanh)
    add, sub, mul, matmul = (staticmethod(f) for f in (torch.add, torch.sub, torch.mul, torch.matmul))
    clip = staticmethod(torch.clamp)
    global_avg_pool = staticmethod(lambda x: F.adaptive_avg_pool2d(x, 1))
    softmax = staticmethod(lambda x, axis: F.softmax(x, dim=axis))
    concat = staticmethod(lambda xs, axis: torch.cat(xs, axis))
    reshape = staticmethod(torch.reshape)
    reflect_pad = staticmethod(lambda x, p: F.pad(x, (p,) * 4, mode="reflect"))
    crop = staticmethod(lambda x, p: x[:, :, p:-p, p:-p])
    depth_to_space = staticmethod(F.pixel_shuffle)


class OnnxOps:
    """Records the networks' operations as an ONNX graph (opset 17) whose initializers are the sample's weights."""

    def __init__(self, weights):
        self.arrays, self.nodes, self.initializers = weights, [], {}

    def shape(self, name):
        return self.arrays[name].shape

    def constant(self, array):
        name = f"c{len(self.initializers)}"
        self.initializers[name] = onnx.numpy_helper.from_array(np.ascontiguousarray(array), name)
        return name

    def w(self, name, shape=None):
        array = self.arrays[name].astype(np.float32)
        return self.constant(array if shape is None else array.reshape(shape))

    def scalar(self, v):
        return self.constant(np.array(v, np.float32))

    def node(self, op, *inputs, **attributes):
        out = f"t{len(self.nodes)}"
        self.nodes.append(onnx.helper.make_node(op, [i or "" for i in inputs], [out], **attributes))
        return out

    def conv(self, x, w, b=None, stride=1, padding=0, groups=1):
        return self.node("Conv", x, w, b, strides=[stride] * 2, pads=[padding] * 4, group=groups)

    def conv_transpose(self, x, w, b, stride, padding, output_padding):
        return self.node("ConvTranspose", x, w, b, strides=[stride] * 2, pads=[padding] * 4,
                         output_padding=[output_padding] * 2)

    def batch_norm(self, x, mean, var, scale, bias, eps):
        return self.node("BatchNormalization", x, scale, bias, mean, var, epsilon=eps)

    def instance_norm(self, x, scale, bias, eps):
        return self.node("InstanceNormalization", x, scale, bias, epsilon=eps)

    def max_pool(self, x, size, stride, ceil=False):
        return self.node("MaxPool", x, kernel_shape=[size] * 2, strides=[stride] * 2, ceil_mode=int(ceil))

    def relu(self, x):
        return self.node("Relu", x)

    def tanh(self, x):
        return self.node("Tanh", x)

    def add(self, a, b):
        return self.node("Add", a, b)

    def sub(self, a, b):
        return self.node("Sub", a, b)

    def mul(self, a, b):
        return self.node("Mul", a, b)

    def matmul(self, a, b):
        return self.node("MatMul", a, b)

    def clip(self, x, lo, hi):
        return self.node("Clip", x, self.scalar(lo), self.scalar(hi))

    def global_avg_pool(self, x):
        return self.node("GlobalAveragePool", x)

    def softmax(self, x, axis):
        return self.node("Softmax", x, axis=axis)

    def concat(self, xs, axis):
        return self.node("Concat", *xs, axis=axis)

    def reshape(self, x, shape):
        return self.node("Reshape", x, self.constant(np.array(shape, np.int64)))

    def reflect_pad(self, x, p):
        return self.node("Pad", x, self.constant(np.array([0, 0, p, p, 0, 0, p, p], np.int64)), mode="reflect")

    def crop(self, x, p):
        return self.node("Slice", x, self.constant(np.array([p, p], np.int64)),
                         self.constant(np.array([-p, -p], np.int64)), self.constant(np.array([2, 3], np.int64)))

    def depth_to_space(self, x, r):
        return self.node("DepthToSpace", x, blocksize=r, mode="CRD")  # CRD is pixel_shuffle's order

    def model(self, output, x):
        graph = onnx.helper.make_graph(
            self.nodes, "network", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
            [onnx.helper.make_tensor_value_info(output, onnx.TensorProto.FLOAT, None)],
            list(self.initializers.values()))
        return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


def onnxruntime_session(net, weights, x, threads):
    """An ONNX Runtime CPU session of `net` recorded from the weights; its run(x) returns the output array."""
    o = OnnxOps(weights)
    model = o.model(net(o, "x"), x)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda array: session.run(None, {"x": array})[0]


def cases(data: Path, device: dml.Device):
    """(name, the sample's compiled graph, its input name, the network for Ops, its weights, an input array)."""
    import candy
    import mnist
    import mobilenet
    import squeezenet
    import superres

    load = sample_data.load_weights
    dog = sample_data.imagenet_input(data / "dog2.jpg")
    photo = sample_data.load_rgb(data / "DefaultImage.jpg", (720, 720))
    w = load(data / "mnist-8_tensor_data")
    yield "mnist 28x28", mnist.build(device, w), "image", mnist_net, w, mnist.prepare(data / "mnist_image1.png")
    w = load(data / "squeezenet_tensor_data")
    yield "squeezenet 1.1 224x224", squeezenet.build(device, w), "image", squeezenet_net, w, dog
    w = load(data / "mobile_net_data")
    yield "mobilenet v2 features 224x224", mobilenet.build(device, w), "image", \
        functools.partial(mobilenet_net, strides=mobilenet.STRIDES), w, dog
    w = load(data / "super_resolution_10_data")
    y = np.asarray(photo.resize((224, 224)).convert("YCbCr").split()[0], np.float32)[None, None] / 255
    yield "superres 224 -> 672", superres.build(device, w), "y", superres_net, w, y
    w = load(data / "candy_tensor_data")
    bgr = np.asarray(photo, np.float32)[:, :, ::-1].transpose(2, 0, 1)[None].copy()
    yield "candy 720x720", candy.build(device, w, 720, 720), "bgr", style_net, w, bgr


def agree(name, peer, got, want):
    """Stops the run unless our output matches the peer's (relative 1e-3 of its largest magnitude)."""
    error = np.abs(got.reshape(want.shape) - want).max() / np.abs(want).max()
    if not error < 1e-3:
        raise SystemExit(f"{name}: our output differs from {peer}'s by {error:.1e} (relative)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="our executor, and where torch runs (cpu or cuda)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--data", type=Path, default=None, help="sample data folder (as the samples take it)")
    parser.add_argument("--only", nargs="*", default=None, help="names starting with these (mnist, candy, ...)")
    parser.add_argument("--threads", type=int, default=None, help="cpu: every side's thread count (default: all)")
    parser.add_argument("--cpu-time", action="store_true", help="cpu: time by process CPU time (for --threads 1)")
    parser.add_argument("--block", type=int, default=1,
                        help="calls of one side in a row before the next's (above 1: peers' spinning threads "
                             "leave the cores before our calls, and ours before theirs)")
    args = parser.parse_args()
    use_cpu_time(args.cpu_time)
    data = sample_data.data_dir(args.data)
    device = dml.Device(args.device, threads=args.threads) if args.threads else dml.Device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    where = torch_device(device)
    gpu = where == "cuda"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False  # float32 in float32 on both sides
    processor = torch.cuda.get_device_name() if gpu else f"{torch.get_num_threads()} threads"
    with_ort = not gpu and onnxruntime is not None
    print(f"device: {device.name}; torch {torch.__version__}, {processor}" +
          (f"; onnxruntime {onnxruntime.__version__}" if with_ort else "; no onnxruntime peer"))
    for name, op, input_name, net, weights, x in cases(data, device):
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        tx = torch.from_numpy(x).to(where)
        feeds = {input_name: dml.Buffer(device, x) if gpu else x}
        torch_ops = TorchOps(weights, where)

        def ours():
            return op(feeds, readback=not gpu)

        def theirs():
            y = net(torch_ops, tx)
            if gpu:
                torch.cuda.synchronize()
            return y

        with torch.inference_mode():
            (got,) = ours()
            got = got.numpy() if gpu else got
            agree(name, "PyTorch", got, theirs().cpu().numpy())
            fns = {"ours": ours, f"torch-{where}": theirs}
            if with_ort:
                ort = onnxruntime_session(net, weights, x, torch.get_num_threads())
                agree(name, "ONNX Runtime", got, ort(x))
                fns["onnxruntime"] = lambda: ort(x)
            times = interleaved_medians(fns, args.repeat, args.block)
        temporary = f"temporary {op.temporary_size / 2**20:.0f} MiB"
        for peer in list(fns)[1:]:
            row(name, times["ours"], peer, times[peer], temporary if peer.startswith("torch") else "")

if __name__ == "__main__":
    main()
