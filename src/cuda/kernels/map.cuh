// A node whose output element i depends on element i of each input (element-wise operators, activations, cast):
// one Indexer over the output and every input view, built at compile; the family's launcher picks the functor.
// Where every operand is packed in the same order (the indexer merged them into one run of stride 1) and aligned,
// map_elements moves 16-byte vectors instead: no index arithmetic, a quarter to a sixteenth of the memory
// instructions.
#pragma once
#include <algorithm>
#include <iterator>
#include <utility>

#include "common.cuh"
#include "kernel.h"

namespace dml::cuda {

template <int N>  // operands: the output, then N - 1 inputs
class MapKernel : public CudaKernel {
public:
    using Launcher = void (*)(const MapKernel&, const LaunchArgs&);

    MapKernel(const Node& node, const CudaDevice& device, Launcher launcher)
        : node(node), sm_count(device.sm_count()), launcher_(launcher) {
        std::array<std::vector<int64_t>, N> strides;
        strides[0] = signed_strides(node.outputs[0]);
        for (int k = 1; k < N; ++k) strides[k] = signed_strides(node.inputs[k - 1]->desc);
        ix = make_indexer<N>(node.outputs[0].sizes, strides);
        packed = ix.rank == 1;
        for (int k = 0; k < N; ++k) packed = packed && (ix.strides[k][0] == 1 || ix.count == 1);
    }
    void enqueue(const LaunchArgs& args) const override { launcher_(*this, args); }

    template <class D> const D& desc() const { return static_cast<const D&>(*node.desc); }
    DataType output_type() const { return node.outputs[0].data_type; }
    DataType input_type() const { return node.inputs[0]->desc.data_type; }
    template <class F> void run(const F& f, const LaunchArgs& args, const char* what) const {
        for_each<N>(ix, f, sm_count, args.stream, what);
    }

    const Node& node;
    const int sm_count;
    Indexer<N> ix;
    bool packed;  // every operand is one run of stride 1, in the same order

private:
    Launcher launcher_;
};

// y = fn(x0, x1, ...) on compute values (float16 as float); Out and In... are the stored types.
template <class Out, class Fn, class... In>
struct MapOp {
    static constexpr int N = int(sizeof...(In)) + 1;
    // The packed path: float types, every input of the output's type (16 bytes a vector).
    static constexpr bool kPackable = is_float_v<Out> && sizeof(Out) <= 4 && (std::is_same_v<In, Out> && ...);
    static constexpr int kWidth = int(16 / sizeof(Out));
    Out* y;
    const void* x[N - 1];
    Fn fn;

    __device__ void operator()(uint64_t, const int64_t (&off)[N]) const {
        apply(off, std::index_sequence_for<In...>{});
    }
    template <size_t... I>
    __device__ void apply(const int64_t (&off)[N], std::index_sequence<I...>) const {
        store(y + off[0], compute_of<Out>(fn(load(static_cast<const In*>(x[I]) + off[I + 1])...)));
    }

    // Packed vectors v + k * stride (of kWidth elements) for k < K: every load first, then the outputs.
    template <int K>
    __device__ void apply_vectors(uint64_t v, uint64_t stride) const {
        apply_vectors<K>(v, stride, std::index_sequence_for<In...>{});
    }
    template <int K, size_t... I>
    __device__ void apply_vectors(uint64_t v, uint64_t stride, std::index_sequence<I...>) const {
        using V = Vector<Out, kWidth>;
        V in[K][N - 1];
#pragma unroll
        for (int k = 0; k < K; ++k)
            ((in[k][I] = *reinterpret_cast<const V*>(static_cast<const In*>(x[I]) + (v + k * stride) * kWidth)), ...);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            V out;
#pragma unroll
            for (int j = 0; j < kWidth; ++j) out.v[j] = to_stored<Out>(compute_of<Out>(fn(load(&in[k][I].v[j])...)));
            *reinterpret_cast<V*>(y + (v + k * stride) * kWidth) = out;
        }
    }
};

// Vectors first, in tiles of kMapVectors a thread; then the count % W elements left, one a thread (of block 0).
constexpr int kMapVectors = 2;

template <class Op>
__global__ void __launch_bounds__(kThreads) packed_map_kernel(uint64_t count, Op op) {
    constexpr int W = Op::kWidth;
    const uint64_t first = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    tiled_vectors<kMapVectors>(count / W, [&]<int K>(uint64_t v, uint64_t stride) {
        op.template apply_vectors<K>(v, stride);
    });
    const uint64_t tail = count / W * W + first;
    if (first < W && tail < count) {
        int64_t off[Op::N];
#pragma unroll
        for (int k = 0; k < Op::N; ++k) off[k] = int64_t(tail);
        op(tail, off);
    }
}

// A functor whose function is chosen at run time (a binary function, an activation) may offer
// `specialize(g)`: g called with an equivalent functor that has the choice as a compile-time constant, for the
// common choices. The packed path takes it: a switch per element makes it bound by instructions, not memory
// (an add at 60% of torch's bandwidth).
template <class Fn, class G>
void with_specialized(const Fn& fn, G&& g) {
    if constexpr (requires { fn.specialize(g); }) fn.specialize(g);
    else g(fn);
}

template <class Out, class... In, int N, class Fn>
void map_elements(const MapKernel<N>& k, const LaunchArgs& a, const Fn& fn, const char* what) {
    static_assert(N == int(sizeof...(In)) + 1);
    using Op = MapOp<Out, Fn, In...>;
    Op op{static_cast<Out*>(a.outputs[0]), {}, fn};
    bool aligned = aligned16(op.y);
    for (int i = 0; i + 1 < N; ++i) {
        op.x[i] = a.inputs[i];
        aligned = aligned && aligned16(op.x[i]);
    }
    if constexpr (Op::kPackable) {
        if (k.packed && aligned) {
            with_specialized(fn, [&]<class Fixed>(const Fixed& fixed) {
                using Packed = MapOp<Out, Fixed, In...>;
                Packed packed{op.y, {}, fixed};
                std::copy(std::begin(op.x), std::end(op.x), packed.x);
                const uint64_t count = k.ix.count;
                packed_map_kernel<Packed><<<tile_blocks<kMapVectors>(count / Op::kWidth), kThreads, 0, a.stream>>>(
                    count, packed);
            });
            return check_launch(what);
        }
    }
    k.run(op, a, what);
}

}  // namespace dml::cuda
