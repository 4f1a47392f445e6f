// The element-wise chain (core/ops/elementwise_chain.h): each thread runs the chain's steps over the values it
// holds, in float, and stores the last once. Where every operand is packed in the same order and aligned, a thread
// holds one 16-byte vector (8 float16 or 4 float32 values) and each step switches on its function once for the whole
// vector, the common functions then a compile-time constant in the vector's loop: a switch per element made the
// maps bound by instructions (map.cuh). Otherwise (broadcast or strided operands) one element a thread.
// The chain's parameters are __grid_constant__: steps and inputs are indexed by the step at run time, and are read
// where the launch put them rather than copied to local memory.
#include "../../core/ops/elementwise_chain.h"

#include <algorithm>

#include "common.cuh"

namespace dml::cuda {

namespace {

constexpr int N = int(kMaxChainInputs) + 1;  // the output, then the inputs (unused ones: zero strides, never read)

template <class T>
struct ChainArgs {
    T* y;
    const T* x[kMaxChainInputs];
    ChainStep steps[kMaxChainSteps];
    int count;
};

// A function as a compile-time constant, or chosen at run time: fn() gives it.
template <auto F>
struct Constant {
    __device__ __forceinline__ constexpr auto operator()() const { return F; }
};
template <class E>
struct Runtime {
    E e;
    __device__ __forceinline__ E operator()() const { return e; }
};

// body(fn) with fn a Constant where `e` is among Fs and the loop runs over a vector (W > 1), else a Runtime.
template <int W, auto... Fs, class E, class Body>
__device__ __forceinline__ void with_common(E e, Body&& body) {
    if constexpr (W > 1)
        if (((e == Fs && (body(Constant<Fs>{}), true)) || ...)) return;
    body(Runtime<E>{e});
}

// An activation step's function: fixed at compile time where `fn` is a Constant (a float16 chain then takes
// FixedActivation's MUFU sigmoid and swish, whose error of a few float ulps its one rounding to float16 hides),
// else chosen per element.
template <class T, ActivationFunction A>
__device__ __forceinline__ auto step_activation(Constant<A>, const FusedActivation& f) {
    return FixedActivation<A, std::is_same_v<T, __half>>{f};
}
template <class T>
__device__ __forceinline__ auto step_activation(Runtime<ActivationFunction>, const FusedActivation& f) {
    return AnyActivation{f};
}

// v = the chain over U vectors of W values. load(k, o) reads input k's vectors into o; input 0 starts the chain and
// stays held as stored (float16: half the registers of its values in float) for the steps that take it again.
template <int U, int W, class T, class Load>
__device__ __forceinline__ void run_chain(const ChainArgs<T>& a, float (&v)[U * W], const Load& load) {
    Vector<T, W> start[U];
    load(0, start);
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int j = 0; j < W; ++j) v[u * W + j] = start[u][j];
    for (int k = 0; k < a.count; ++k) {
        const ChainStep& s = a.steps[k];
        switch (s.kind) {
            case ChainStep::Kind::Unary: {
                if (s.affine)
#pragma unroll
                    for (int j = 0; j < U * W; ++j) v[j] = affine(v[j], s.scale, s.bias);
                using enum UnaryFunction;
                with_common<U * W, Identity, Abs, Erf, Exp, Log, Recip, Sqrt, Tanh, Negate, ConstantPow>(
                    s.unary, [&](auto fn) {
#pragma unroll
                        for (int j = 0; j < U * W; ++j) v[j] = apply_unary(fn(), v[j], s.parameter);
                    });
                break;
            }
            case ChainStep::Kind::Activation: {
                using enum ActivationFunction;
                with_common<U * W, Relu, LeakyRelu, Sigmoid, Tanh, Gelu, Swish, HardSwish>(
                    s.activation.function, [&](auto fn) {
                        const auto act = step_activation<T>(fn, s.activation);
#pragma unroll
                        for (int j = 0; j < U * W; ++j) v[j] = act(v[j]);
                    });
                break;
            }
            case ChainStep::Kind::Binary: {
                float o[U * W];
                if (s.operand == kChainRunning || s.operand == 0) {
#pragma unroll
                    for (int u = 0; u < U; ++u)
#pragma unroll
                        for (int j = 0; j < W; ++j) o[u * W + j] = s.operand == 0 ? start[u][j] : v[u * W + j];
                } else {
                    Vector<T, W> in[U];
                    load(s.operand, in);
#pragma unroll
                    for (int u = 0; u < U; ++u)
#pragma unroll
                        for (int j = 0; j < W; ++j) o[u * W + j] = in[u][j];
                }
                using enum BinaryFunction;
                with_common<U * W, Add, Subtract, Multiply, Divide, Max, Min>(s.binary, [&](auto fn) {
                    if (s.running_second)
#pragma unroll
                        for (int j = 0; j < U * W; ++j) v[j] = apply_binary(fn(), o[j], v[j]);
                    else
#pragma unroll
                        for (int j = 0; j < U * W; ++j) v[j] = apply_binary(fn(), v[j], o[j]);
                });
                break;
            }
        }
    }
}

// U 16-byte vectors a thread, vector v + u * stride for u < U: each operand's U loads are in flight together, and
// each step's switch is paid once for U vectors rather than once for each.
template <int U, class T>
__device__ __forceinline__ void run_vectors(const ChainArgs<T>& a, uint64_t v, uint64_t stride) {
    constexpr int W = int(16 / sizeof(T));
    float r[U * W];
    run_chain<U, W>(a, r, [&](int k, Vector<T, W> (&o)[U]) {
#pragma unroll
        for (int u = 0; u < U; ++u) o[u] = load_vector<W>(a.x[k] + (v + u * stride) * W);
    });
#pragma unroll
    for (int u = 0; u < U; ++u) {
        Vector<T, W> out;
#pragma unroll
        for (int j = 0; j < W; ++j) out.v[j] = to_stored<T>(r[u * W + j]);
        store_vector(a.y + (v + u * stride) * W, out);
    }
}

// Vectors first, in tiles of kChainVectors a thread; then the count % W elements left, one a thread (of block 0).
constexpr int kChainVectors = 2;

template <class T>
__global__ void __launch_bounds__(kThreads)
    packed_chain_kernel(uint64_t count, const __grid_constant__ ChainArgs<T> a) {
    constexpr int W = int(16 / sizeof(T));
    const uint64_t first = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x, vectors = count / W;
    tiled_vectors<kChainVectors>(vectors, [&]<int K>(uint64_t v, uint64_t stride) { run_vectors<K>(a, v, stride); });
    const uint64_t tail = vectors * W + first;
    if (first < W && tail < count) {
        float r[1];
        run_chain<1, 1>(a, r, [&](int k, Vector<T, 1> (&o)[1]) { o[0] = load_vector<1>(a.x[k] + tail); });
        store(a.y + tail, r[0]);
    }
}

template <class T>
__global__ void __launch_bounds__(kThreads) strided_chain_kernel(const __grid_constant__ Indexer<N> ix,
                                                                 const __grid_constant__ ChainArgs<T> a) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < ix.count;
         i += uint64_t(gridDim.x) * blockDim.x) {
        int64_t off[N];
        ix.offsets(i, off);
        float v[1];
        run_chain<1, 1>(a, v, [&](int k, Vector<T, 1> (&o)[1]) {
            // off[k + 1], selected: a register array indexed at run time would go to local memory
            static_assert(N == 5);
            const int64_t at = k == 0 ? off[1] : k == 1 ? off[2] : k == 2 ? off[3] : off[4];
            o[0] = load_vector<1>(a.x[k] + at);
        });
        store(a.y + off[0], v[0]);
    }
}

class ChainKernel : public CudaKernel {
public:
    ChainKernel(const Node& node, const CudaDevice& device)
        : steps_(static_cast<const ElementwiseChainDesc&>(*node.desc).steps),
          type_(node.outputs[0].data_type),
          inputs_(node.inputs.size()),
          sm_count_(device.sm_count()) {
        std::array<std::vector<int64_t>, N> strides;
        strides.fill(std::vector<int64_t>(node.outputs[0].rank(), 0));
        strides[0] = signed_strides(node.outputs[0]);
        for (size_t k = 0; k < inputs_; ++k) strides[k + 1] = signed_strides(node.inputs[k]->desc);
        ix_ = make_indexer<N>(node.outputs[0].sizes, strides);
        packed_ = ix_.rank == 1;
        for (size_t k = 0; k <= inputs_; ++k) packed_ = packed_ && (ix_.strides[k][0] == 1 || ix_.count == 1);
    }

    void enqueue(const LaunchArgs& l) const override {
        auto launch = [&]<class T>() {
            ChainArgs<T> a{static_cast<T*>(l.outputs[0]), {}, {}, int(steps_.size())};
            std::copy(steps_.begin(), steps_.end(), a.steps);
            bool aligned = aligned16(a.y);
            for (size_t k = 0; k < inputs_; ++k) {
                a.x[k] = static_cast<const T*>(l.inputs[k]);
                aligned = aligned && aligned16(a.x[k]);
            }
            if (packed_ && aligned) {
                constexpr uint64_t W = 16 / sizeof(T);
                packed_chain_kernel<T><<<tile_blocks<kChainVectors>(ix_.count / W), kThreads, 0, l.stream>>>(ix_.count,
                                                                                                      a);
            } else {
                strided_chain_kernel<T><<<blocks_for(ix_.count, sm_count_), kThreads, 0, l.stream>>>(ix_, a);
            }
        };
        // The rewrite makes chains of FLOAT32 and FLOAT16 only.
        if (type_ == DataType::Float16) launch.template operator()<__half>();
        else launch.template operator()<float>();
        check_launch("element-wise chain");
    }

private:
    const std::vector<ChainStep>& steps_;  // the node's: the plan keeps the graph
    DataType type_;
    size_t inputs_;
    int sm_count_;
    Indexer<N> ix_;
    bool packed_ = false;
};

std::unique_ptr<CudaKernel> make_chain_kernel(const Node& node, CudaDevice& device) {
    return std::make_unique<ChainKernel>(node, device);
}

}  // namespace

void register_elementwise_chain_kernels(KernelTable& t) { add_kernel<ElementwiseChainDesc>(t, make_chain_kernel); }

}  // namespace dml::cuda
