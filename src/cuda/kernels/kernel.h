// The CUDA kernel interface: each node gets a kernel object at compile, which settles everything it can there
// (launch shapes, index layouts, cuBLASLt algorithms, workspace), and at each dispatch enqueues its work on the
// device's stream, or into the CUDA graph being recorded. Kernels are looked up by the type of the node's
// OperatorDesc; each operator family registers its own (kernels/<family>.cu).
#pragma once
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <memory>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "../../core/errors.h"
#include "../../core/graph.h"
#include "../../core/ops/activation.h"

namespace dml::cuda {

class CudaDevice;

struct LaunchArgs {
    std::vector<const void*> inputs;  // device addresses by the node's inputs; null for an optional input left out
    std::vector<void*> outputs;
    void* workspace;                  // workspace_size() bytes, 256-byte aligned
    cudaStream_t stream;
};

class CudaKernel {
public:
    virtual ~CudaKernel() = default;
    virtual uint64_t workspace_size() const { return 0; }
    // Device memory the kernel object holds for the plan's life (uploaded data, index tables): persistent_size.
    virtual uint64_t persistent_size() const { return 0; }
    virtual void enqueue(const LaunchArgs& args) const = 0;
};

// `node` outlives the kernel (the plan keeps the graph).
using KernelFactory = std::unique_ptr<CudaKernel> (*)(const Node& node, CudaDevice& device);
using KernelTable = std::unordered_map<std::type_index, KernelFactory>;

template <class Desc> void add_kernel(KernelTable& t, KernelFactory f) { t[std::type_index(typeid(Desc))] = f; }

void register_elementwise_kernels(KernelTable&);
void register_activation_kernels(KernelTable&);
void register_elementwise_chain_kernels(KernelTable&);
void register_gemm_kernels(KernelTable&);
void register_convolution_kernels(KernelTable&);
void register_reduce_kernels(KernelTable&);
void register_data_movement_kernels(KernelTable&);
void register_pooling_kernels(KernelTable&);
void register_resampling_kernels(KernelTable&);
void register_normalization_kernels(KernelTable&);
void register_indexing_kernels(KernelTable&);
void register_generation_kernels(KernelTable&);
void register_recurrent_kernels(KernelTable&);
void register_attention_kernels(KernelTable&);
void register_quantized_kernels(KernelTable&);  // integer and quantized GEMM/convolution

// --- building blocks shared by the families ------------------------------------------------------------------

// Operator families grow: a kernel refuses at compile a function it does not know (yet), with this ValueError.
[[noreturn]] inline void unsupported(const Node& node, const std::string& what = "") {
    throw ValueError("the cuda executor has no kernel for " + node.desc->type_name() + (what.empty() ? "" : " " + what));
}

// The element strides a view is addressed with, signed (slices walk backwards).
inline std::vector<int64_t> signed_strides(const TensorDesc& d) {
    Strides s = d.effective_strides();
    return std::vector<int64_t>(s.begin(), s.end());
}

// A strided copy of `shape` elements of `element_size` bytes, element strides and offsets settled at compile
// (negative strides walk backwards). Contiguous copies become cudaMemcpyAsync.
class StridedCopy {
public:
    StridedCopy(const CudaDevice& device, const Sizes& shape, size_t element_size,
                const std::vector<int64_t>& dst_strides, int64_t dst_offset, const std::vector<int64_t>& src_strides,
                int64_t src_offset);
    // The copy of a view into packed memory of its type and sizes.
    static StridedCopy packing(const CudaDevice& device, const TensorDesc& view);
    ~StridedCopy();
    StridedCopy(StridedCopy&&) noexcept;
    StridedCopy& operator=(StridedCopy&&) noexcept;
    void enqueue(void* dst, const void* src, cudaStream_t stream) const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// y[n, c, i] = act(y[n, c, i] + bias[c * bias_stride]) in place over a packed [outer, channels, inner] tensor of a
// float type; `bias` may be null. Nothing to do for no bias and no activation: callers skip it.
void enqueue_bias_activation(const CudaDevice& device, DataType type, void* y, uint64_t outer, uint64_t channels,
                             uint64_t inner, const void* bias, int64_t bias_stride, const FusedActivation& act,
                             cudaStream_t stream);

}  // namespace dml::cuda
