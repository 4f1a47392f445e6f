// A node whose output element i depends on element i of each input (element-wise operators, activations, cast):
// one Indexer over the output and every input view, built at compile; the family's launcher picks the functor.
#pragma once
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

private:
    Launcher launcher_;
};

}  // namespace dml::cuda
