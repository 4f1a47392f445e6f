// The CPU kernel interface, the shape of the CUDA executor's: each node gets a kernel object at compile, which
// settles there what it can (shapes, workspace), packs the constant operands it wants re-laid once the weights
// are bound (initialize), and runs the node on host memory at each dispatch. Kernels are looked up by the type
// of the node's OperatorDesc; each operator family registers its own in its file.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "../../core/graph.h"
#include "../thread_pool.h"

namespace dml::cpu {

struct TensorArg {
    const TensorDesc* desc = nullptr;  // null for an optional input left out
    std::byte* data = nullptr;
    explicit operator bool() const { return desc != nullptr; }
    template <class T> T* as() const { return reinterpret_cast<T*>(data); }
};

struct KernelArgs {
    const Node& node;
    std::vector<TensorArg> inputs, outputs;
    std::byte* workspace;
    ThreadPool& pool;
    template <class D> const D& desc() const { return static_cast<const D&>(*node.desc); }
};

class CpuKernel {
public:
    virtual ~CpuKernel() = default;
    virtual uint64_t workspace_size() const { return 0; }  // scratch bytes each dispatch needs
    // Bytes the kernel keeps for the plan's life (constant operands re-laid at initialize).
    virtual uint64_t persistent_size() const { return 0; }
    // Called once the weights are bound, and again if they are re-bound. `constants` follows the node's inputs:
    // the operands that stay the same from dispatch to dispatch (owned or constant graph inputs), an empty
    // TensorArg for the others.
    virtual void initialize(const std::vector<TensorArg>& constants) { (void)constants; }
    virtual void run(const KernelArgs& args) const = 0;
};

// `node` outlives the kernel (the plan keeps the graph).
using KernelFactory = std::function<std::unique_ptr<CpuKernel>(const Node&)>;
using KernelTable = std::unordered_map<std::type_index, KernelFactory>;

// A kernel with nothing to settle at compile but its workspace size: a function over the dispatch's arguments.
struct KernelFunctions {
    void (*run)(const KernelArgs&) = nullptr;
    uint64_t (*workspace)(const Node&) = nullptr;  // scratch bytes the kernel needs, if any
};

class FunctionKernel : public CpuKernel {
public:
    FunctionKernel(const Node& node, KernelFunctions f) : run_(f.run), workspace_(f.workspace ? f.workspace(node) : 0) {}
    uint64_t workspace_size() const override { return workspace_; }
    void run(const KernelArgs& args) const override { run_(args); }

private:
    void (*run_)(const KernelArgs&);
    uint64_t workspace_;
};

template <class Desc> void add_kernel(KernelTable& t, KernelFunctions f) {
    t[std::type_index(typeid(Desc))] = [f](const Node& node) { return std::make_unique<FunctionKernel>(node, f); };
}
// A kernel class K constructed from the node at compile.
template <class Desc, class K> void add_kernel(KernelTable& t) {
    t[std::type_index(typeid(Desc))] = [](const Node& node) { return std::make_unique<K>(node); };
}

// One registration function per operator family (kernels/<family>.cpp).
void register_elementwise_kernels(KernelTable&);
void register_activation_kernels(KernelTable&);
void register_elementwise_chain_kernels(KernelTable&);
void register_gemm_kernels(KernelTable&);
void register_convolution_kernels(KernelTable&);
void register_reduce_kernels(KernelTable&);
void register_data_movement_kernels(KernelTable&);
void register_pooling_kernels(KernelTable&);
void register_normalization_kernels(KernelTable&);
void register_indexing_kernels(KernelTable&);
void register_resampling_kernels(KernelTable&);
void register_generation_kernels(KernelTable&);
void register_recurrent_kernels(KernelTable&);
void register_attention_kernels(KernelTable&);

}  // namespace dml::cpu
