// The KernelFactory of a kernel class, so that a family registers a class without writing a lambda per operator.
#pragma once
#include <memory>

#include "kernel.h"

namespace dml::cuda {

// Builds K(node, device, args...): `args` are constants the registration fixes (e.g. which variant of a family).
template <class K, auto... Args>
std::unique_ptr<CudaKernel> make_kernel(const Node& node, CudaDevice& device) {
    return std::make_unique<K>(node, device, Args...);
}

}  // namespace dml::cuda
