// CPU kernels: Pooling: average, max (with indices), ROI align and its gradient.
#include "../../core/ops/pooling.h"
#include "kernel.h"

namespace dml::cpu {

void register_pooling_kernels(KernelTable&) {}

}  // namespace dml::cpu
