// CPU kernels: Normalization: batch normalization (inference, training, gradients), mean-variance, local response.
#include "../../core/ops/normalization.h"
#include "kernel.h"

namespace dml::cpu {

void register_normalization_kernels(KernelTable&) {}

}  // namespace dml::cpu
