// A node whose output element i depends on element i of each input (element-wise operators, activations, cast):
// one Indexer over the output and every input view, built at compile; the family's launcher picks the functor.
//
// A map functor has two steps: value(off) reads an element's inputs at offsets off[1..] and computes its output;
// put(off, v) stores that at off[0]. Each thread takes kMapUnroll elements, reading all of them before it writes
// any: the reads are in flight together (one at a time is far from the memory's bandwidth), and an output placed
// over an input (the planner reuses memory) is still read before it is overwritten.
#pragma once
#include "common.cuh"
#include "kernel.h"

namespace dml::cuda {

constexpr int kMapUnroll = 4;

// Thread t of the grid takes elements t, t + blockDim, ... (kMapUnroll of them, coalesced), then strides on.
template <int N, class F>
__global__ void __launch_bounds__(kThreads) map_kernel(Indexer<N> ix, F f) {
    constexpr int U = kMapUnroll;
    const uint64_t span = uint64_t(blockDim.x) * U;
    for (uint64_t first = uint64_t(blockIdx.x) * span + threadIdx.x; first < ix.count; first += gridDim.x * span) {
        int64_t off[U][N];
        decltype(f.value(off[0])) v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const uint64_t i = first + uint64_t(u) * blockDim.x;
            if (i < ix.count) {
                ix.offsets(i, off[u]);
                v[u] = f.value(off[u]);
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (first + uint64_t(u) * blockDim.x < ix.count) f.put(off[u], v[u]);
    }
}

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
    }
    void enqueue(const LaunchArgs& args) const override { launcher_(*this, args); }

    template <class D> const D& desc() const { return static_cast<const D&>(*node.desc); }
    DataType output_type() const { return node.outputs[0].data_type; }
    DataType input_type() const { return node.inputs[0]->desc.data_type; }
    template <class F> void run(const F& f, const LaunchArgs& args, const char* what) const {
        map_kernel<N, F><<<blocks_for((ix.count + kMapUnroll - 1) / kMapUnroll, sm_count), kThreads, 0,
                           args.stream>>>(ix, f);
        check_launch(what);
    }

    const Node& node;
    const int sm_count;
    Indexer<N> ix;

private:
    Launcher launcher_;
};

}  // namespace dml::cuda
