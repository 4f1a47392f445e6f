// Activation kernels: the element-wise activations, parameterized relu, softmax / log-softmax / hardmax over a set
// of axes, and the in-place bias + activation epilogue that GEMM and convolution use when cuBLASLt cannot fuse theirs.
#include "../../core/ops/activation.h"

#include <stdexcept>

#include "group.cuh"
#include "map.cuh"

namespace dml::cuda {

namespace {

// The types the activation builders admit: FLOAT32 and FLOAT16; RELU and PARAMETERIZED_RELU also the signed
// integers of at most 32 bits. No kernel is compiled for the others.
template <class F>
void visit_activation_type(DataType type, F&& f) {
    visit_type(type, [&]<class T>() {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, __half> ||
                      (std::is_signed_v<T> && std::is_integral_v<T> && sizeof(T) <= 4))
            f.template operator()<T>();
        else
            throw std::logic_error("type not admitted by the activation builders");
    });
}

template <class T>
struct ActivationOp {
    T* y;
    const T* x;
    FusedActivation f;
    __device__ void operator()(uint64_t, const int64_t (&off)[2]) const {
        const auto v = load(x + off[1]);
        if constexpr (is_float_v<T>) store(y + off[0], apply_activation(f, v));
        else store(y + off[0], v > T(0) ? v : T(0));  // integers: RELU only (the builder admits no other)
    }
};

void launch_activation(const MapKernel<2>& k, const LaunchArgs& a) {
    const FusedActivation& f = k.desc<ActivationDesc>().activation;
    visit_activation_type(k.output_type(), [&]<class T>() {
        k.run(ActivationOp<T>{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), f}, a, "activation");
    });
}

template <class T>
struct ParameterizedReluOp {
    T* y;
    const T* x;
    const T* slope;
    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        store(y + off[0], parameterized_relu(load(x + off[1]), load(slope + off[2])));
    }
};

void launch_parameterized_relu(const MapKernel<3>& k, const LaunchArgs& a) {
    visit_activation_type(k.output_type(), [&]<class T>() {
        ParameterizedReluOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]),
                                  static_cast<const T*>(a.inputs[1])};
        k.run(op, a, "parameterized relu");
    });
}

template <class T>
struct SoftmaxGroup {
    T* y;
    const T* x;
    SoftmaxFunction fn;

    template <int TEAM>
    __device__ void run(const GroupLayout& g, const int64_t (&base)[2], unsigned lane) const {
        using C = compute_of<T>;
        const uint64_t n = g.inner.count;
        auto at = [&](uint64_t i, int64_t (&o)[2]) {
            g.inner.offsets(i, o);
            return load(x + base[0] + o[0]);
        };
        // The first maximum (lowest index on ties, index 0 if nothing compares greater, as the CPU kernel).
        ValueIndex<C> best{-::cuda::std::numeric_limits<C>::infinity(), UINT64_MAX};
        for (uint64_t i = lane; i < n; i += TEAM) {
            int64_t o[2];
            C v = at(i, o);
            if (v > best.value) best = {v, i};
        }
        best = team_reduce<TEAM>(best, [](ValueIndex<C> p, ValueIndex<C> q) {
            return (q.value > p.value || (q.value == p.value && q.index < p.index)) ? q : p;
        });
        if (fn == SoftmaxFunction::Hardmax) {
            const uint64_t arg = best.index == UINT64_MAX ? 0 : best.index;
            for (uint64_t i = lane; i < n; i += TEAM) {
                int64_t o[2];
                g.inner.offsets(i, o);
                store(y + base[1] + o[1], C(i == arg ? 1 : 0));
            }
            return;
        }
        const C mx = best.value;
        C sum = 0;
        for (uint64_t i = lane; i < n; i += TEAM) {
            int64_t o[2];
            sum += exp(at(i, o) - mx);
        }
        sum = team_reduce<TEAM>(sum, [](C p, C q) { return p + q; });
        const C lse = mx + log(sum);
        for (uint64_t i = lane; i < n; i += TEAM) {
            int64_t o[2];
            C v = at(i, o);
            store(y + base[1] + o[1], fn == SoftmaxFunction::LogSoftmax ? v - lse : exp(v - mx) / sum);
        }
    }
};

class SoftmaxKernel : public CudaKernel {
public:
    SoftmaxKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const SoftmaxDesc&>(*node.desc)),
          type_(node.outputs[0].data_type),
          layout_(make_group_layout(node.inputs[0]->desc, node.outputs[0], desc_.axes)),
          sm_count_(device.sm_count()) {}
    void enqueue(const LaunchArgs& a) const override {
        visit_float_type(type_, [&]<class T>() {
            SoftmaxGroup<T> f{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), desc_.function};
            for_each_group(layout_, f, sm_count_, a.stream, "softmax");
        });
    }

private:
    const SoftmaxDesc& desc_;
    DataType type_;
    GroupLayout layout_;
    int sm_count_;
};

template <class T>
struct BiasActivationOp {
    T* y;
    const T* bias;
    int64_t bias_stride;
    uint64_t channels, inner;
    bool narrow;  // 32-bit index arithmetic suffices
    FusedActivation f;
    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        auto v = load(y + i);
        if (bias) {
            uint64_t c = narrow ? uint32_t(i) / uint32_t(inner) % uint32_t(channels) : i / inner % channels;
            v += load(bias + int64_t(c) * bias_stride);
        }
        store(y + i, apply_activation(f, v));
    }
};

}  // namespace

void enqueue_bias_activation(const CudaDevice& device, DataType type, void* y, uint64_t outer, uint64_t channels,
                             uint64_t inner, const void* bias, int64_t bias_stride, const FusedActivation& act,
                             cudaStream_t stream) {
    Indexer<1> ix;
    ix.count = outer * channels * inner;
    ix.sizes[0] = 1;
    ix.strides[0][0] = 1;
    ix.rank = 1;
    visit_float_type(type, [&]<class T>() {
        BiasActivationOp<T> op{static_cast<T*>(y), static_cast<const T*>(bias), bias_stride, channels, inner,
                                ix.count <= UINT32_MAX, act};
        for_each<1>(ix, op, device.sm_count(), stream, "bias and activation");
    });
}

void register_activation_kernels(KernelTable& t) {
    add_kernel<ActivationDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<MapKernel<2>>(n, d, launch_activation);
    });
    add_kernel<ParameterizedReluDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<MapKernel<3>>(n, d, launch_parameterized_relu);
    });
    add_kernel<SoftmaxDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<SoftmaxKernel>(n, d);
    });
}

}  // namespace dml::cuda
