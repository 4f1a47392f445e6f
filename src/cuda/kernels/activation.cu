// Activation kernels: the element-wise activations, parameterized relu, softmax / log-softmax / hardmax over a set
// of axes, and the in-place bias + activation epilogue that GEMM and convolution use when cuBLASLt cannot fuse theirs.
// Softmax and log-softmax of float32 / float16 hold each group in registers (held_groups.cuh): one read, one write;
// hardmax (the first maximum's index) and float64 walk the group three times (for_each_group).
#include "../../core/ops/activation.h"

#include <stdexcept>

#include "group.cuh"
#include "held_groups.cuh"
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
struct Activation {
    using C = compute_of<T>;
    FusedActivation f;
    __device__ C operator()(C x) const {
        if constexpr (is_float_v<T>) return apply_activation(f, x);
        else return x > C(0) ? x : C(0);  // integers: RELU only (the builder admits no other)
    }
    // The activations networks use most (map.cuh).
    template <class G>
    void specialize(G&& g) const {
        switch (f.function) {
            case ActivationFunction::Relu: return g(FixedActivation<ActivationFunction::Relu>{f});
            case ActivationFunction::Sigmoid: return g(FixedActivation<ActivationFunction::Sigmoid>{f});
            case ActivationFunction::Tanh: return g(FixedActivation<ActivationFunction::Tanh>{f});
            case ActivationFunction::Gelu: return g(FixedActivation<ActivationFunction::Gelu>{f});
            case ActivationFunction::Swish: return g(FixedActivation<ActivationFunction::Swish>{f});
            default: return g(*this);
        }
    }
};

void launch_activation(const MapKernel<2>& k, const LaunchArgs& a) {
    const FusedActivation& f = k.desc<ActivationDesc>().activation;
    visit_activation_type(k.output_type(),
                          [&]<class T>() { map_elements<T, T>(k, a, Activation<T>{f}, "activation"); });
}

struct ParameterizedRelu {
    template <class C>
    __device__ C operator()(C x, C slope) const { return parameterized_relu(x, slope); }
};

void launch_parameterized_relu(const MapKernel<3>& k, const LaunchArgs& a) {
    visit_activation_type(k.output_type(), [&]<class T>() {
        map_elements<T, T, T>(k, a, ParameterizedRelu{}, "parameterized relu");
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
        const C log_sum = log(sum);  // log-softmax (x - max) - log(sum): a large max + log(sum) rounds log(sum) away
        for (uint64_t i = lane; i < n; i += TEAM) {
            int64_t o[2];
            C v = at(i, o);
            store(y + base[1] + o[1], fn == SoftmaxFunction::LogSoftmax ? (v - mx) - log_sum : exp(v - mx) / sum);
        }
    }
};

// Softmax and log-softmax of a group held in registers. A chunk's partial result is (its maximum m, the sum of
// exp(x - m) over it); chunks combine by rescaling to the larger maximum. A sum of 0 marks the empty result: no
// elements, or all -inf (a chunk's own finite maximum contributes exp(0) = 1), so that a masked chunk of a long
// row does not turn the row into NaN.
template <class T>
struct SoftmaxOp {
    using Type = T;
    enum { X, Y, N };
    static constexpr int kStreams = 1;
    static constexpr bool kWide = true;
    struct Coef {
        float max, inv_sum, log_sum;
    };

    const T* x;
    T* y;
    bool log;

    // exp(d) of d = x - max <= 0. For float16, MUFU.EX2 of d * log2(e) (__expf): its error at these arguments, a few
    // float ulps, is far below float16's rounding, where expf's accurate range reduction, twice an element, left a
    // softmax of [16384,4096] bound by its arithmetic at half the copy bandwidth. Float32 keeps expf.
    static __device__ __forceinline__ float exp_of(float d) {
        if constexpr (std::is_same_v<T, __half>) return __expf(d);
        else return expf(d);
    }

    static __device__ Triple combine(Triple p, Triple q) {
        if (p.b == 0.0f) return q;
        if (q.b == 0.0f) return p;
        const float m = fmaxf(p.a, q.a);
        return {m, p.b * expf(p.a - m) + q.b * expf(q.a - m), 0.0f};
    }

    template <int VEC>
    __device__ void gather(const int64_t (&at)[N], Vector<T, VEC> (&v)[1], L2Policy pol) const {
        v[0] = load_vector<VEC>(x + at[X], pol);
    }

    template <class Team, int ITEMS, int VEC>
    __device__ Triple reduce(const Team& team, const Vector<T, VEC> (&v)[ITEMS][1], int held, uint64_t,
                             const int64_t (&)[N]) const {
        float m = -::cuda::std::numeric_limits<float>::infinity();
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k < held)
#pragma unroll
                for (int j = 0; j < VEC; ++j) m = fmaxf(m, v[k][0][j]);
        m = team.reduce(m, [](float p, float q) { return fmaxf(p, q); });
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k)
            if (k < held)
#pragma unroll
                for (int j = 0; j < VEC; ++j) sum += exp_of(v[k][0][j] - m);
        sum = team.reduce(sum, [](float p, float q) { return p + q; });
        return {m, m == -::cuda::std::numeric_limits<float>::infinity() ? 0.0f : sum, 0.0f};
    }

    __device__ Coef finish(Triple t, const int64_t (&)[N], uint64_t, uint64_t, bool) const {
        return {t.a, 1.0f / t.b, logf(t.b)};
    }

    template <int VEC>
    struct Operands {};
    template <int VEC>
    __device__ Operands<VEC> operands(const int64_t (&)[N]) const { return {}; }

    template <int VEC>
    __device__ void output(Vector<T, VEC> (&v)[1], Operands<VEC>, Coef c) const {
#pragma unroll
        for (int j = 0; j < VEC; ++j)
            v[0].v[j] = to_stored<T>(log ? (v[0][j] - c.max) - c.log_sum : exp_of(v[0][j] - c.max) * c.inv_sum);
    }
    template <int VEC>
    __device__ void store_output(const int64_t (&at)[N], const Vector<T, VEC>& out, L2Policy pol) const {
        store_vector(y + at[Y], out, pol);
    }
};

class SoftmaxKernel : public CudaKernel {
public:
    SoftmaxKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const SoftmaxDesc&>(*node.desc)),
          type_(node.outputs[0].data_type),
          sm_count_(device.sm_count()) {
        const TensorDesc& x = node.inputs[0]->desc;
        held_ = desc_.function != SoftmaxFunction::Hardmax &&
                (type_ == DataType::Float32 || type_ == DataType::Float16);
        if (!held_) {
            layout_ = make_group_layout(x, node.outputs[0], desc_.axes);
            return;
        }
        using Op = SoftmaxOp<float>;
        std::vector<bool> reduced(x.rank(), false);
        for (uint32_t a : desc_.axes) reduced[a] = true;
        plan_ = plan_groups<Op::N>(x.sizes, reduced, {signed_strides(x), signed_strides(node.outputs[0])}, Op::kWide,
                                   type_, {Op::X, Op::Y});
    }

    uint64_t workspace_size() const override { return held_ ? plan_.workspace() : 0; }

    void enqueue(const LaunchArgs& a) const override {
        if (held_)
            return visit_float_type(type_, [&]<class T>() {
                if constexpr (!std::is_same_v<T, double>) {
                    const SoftmaxOp<T> op{static_cast<const T*>(a.inputs[0]), static_cast<T*>(a.outputs[0]),
                                          desc_.function == SoftmaxFunction::LogSoftmax};
                    run_groups(plan_, op, aligned16(op.x) && aligned16(op.y), a.workspace, sm_count_, a.stream,
                               "softmax");
                }
            });
        visit_float_type(type_, [&]<class T>() {
            SoftmaxGroup<T> f{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), desc_.function};
            for_each_group(layout_, f, sm_count_, a.stream, "softmax");
        });
    }

private:
    const SoftmaxDesc& desc_;
    DataType type_;
    int sm_count_;
    bool held_;  // softmax or log-softmax of float32 / float16: plan_, else layout_
    GroupPlan<SoftmaxOp<float>::N> plan_{};
    GroupLayout layout_{};
};

// y = fn(y + bias[channel]) in place over y as [outer, channels, inner]; the sum in compute values, as stored
// only at the end.
template <class T, class Fn>
struct BiasActivationOp {
    using Type = T;
    T* y;
    const T* bias;
    int64_t bias_stride;
    uint64_t channels, inner;
    bool narrow;  // 32-bit index arithmetic suffices
    Fn fn;
    __device__ compute_of<T> bias_at(uint64_t i) const {
        if (!bias) return compute_of<T>(0);
        const uint64_t c = narrow ? uint32_t(i) / uint32_t(inner) % uint32_t(channels) : i / inner % channels;
        return load(bias + int64_t(c) * bias_stride);
    }
    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const { store(y + i, fn(load(y + i) + bias_at(i))); }
};

// The same over 16-byte vectors of y (inner a multiple of their width: a vector is one channel's), in tiles of
// kMapVectors a thread like the packed maps.
template <class Op, int W>
__global__ void __launch_bounds__(kThreads) bias_activation_vectors(uint64_t vectors, Op op) {
    tiled_vectors<kMapVectors>(vectors, [&]<int K>(uint64_t first, uint64_t stride) {
        Vector<typename Op::Type, W> x[K];
        compute_of<typename Op::Type> b[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            x[k] = load_vector<W>(op.y + (first + k * stride) * W);
            b[k] = op.bias_at((first + k * stride) * W);
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
#pragma unroll
            for (int j = 0; j < W; ++j) x[k].v[j] = to_stored<typename Op::Type>(op.fn(x[k][j] + b[k]));
            store_vector(op.y + (first + k * stride) * W, x[k]);
        }
    });
}

}  // namespace

void enqueue_bias_activation(const CudaDevice& device, DataType type, void* y, uint64_t outer, uint64_t channels,
                             uint64_t inner, const void* bias, int64_t bias_stride, const FusedActivation& act,
                             cudaStream_t stream) {
    const uint64_t count = outer * channels * inner;
    visit_float_type(type, [&]<class T>() {
        constexpr int W = kVec<T>;
        if constexpr (sizeof(T) <= 4) {
            if (inner % W == 0 && aligned16(y)) {
                return with_specialized(Activation<T>{act}, [&]<class Fn>(const Fn& fn) {
                    BiasActivationOp<T, Fn> op{static_cast<T*>(y), static_cast<const T*>(bias), bias_stride, channels,
                                               inner, count <= UINT32_MAX, fn};
                    bias_activation_vectors<decltype(op), W>
                        <<<tile_blocks<kMapVectors>(count / W), kThreads, 0, stream>>>(count / W, op);
                    check_launch("bias and activation");
                });
            }
        }
        Indexer<1> ix;
        ix.count = count;
        ix.sizes[0] = 1;
        ix.strides[0][0] = 1;
        ix.rank = 1;
        BiasActivationOp<T, Activation<T>> op{static_cast<T*>(y), static_cast<const T*>(bias), bias_stride, channels,
                                              inner, count <= UINT32_MAX, Activation<T>{act}};
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
