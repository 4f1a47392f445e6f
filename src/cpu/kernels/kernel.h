// The CPU kernel interface: a kernel runs one node on host memory. Kernels are looked up by the type of the
// node's OperatorDesc; each operator family registers its own in its file.
#pragma once
#include <cstddef>
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

struct Kernel {
    void (*run)(const KernelArgs&) = nullptr;
    uint64_t (*workspace)(const Node&) = nullptr;  // scratch bytes the kernel needs, if any
};

using KernelTable = std::unordered_map<std::type_index, Kernel>;

template <class Desc> void add_kernel(KernelTable& t, Kernel k) { t[std::type_index(typeid(Desc))] = k; }

// One registration function per operator family (kernels/<family>.cpp).
void register_elementwise_kernels(KernelTable&);
void register_activation_kernels(KernelTable&);
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
