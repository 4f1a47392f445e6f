// CPU kernels: Indexing: gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot.
#include "../../core/ops/indexing.h"
#include "kernel.h"

namespace dml::cpu {

void register_indexing_kernels(KernelTable&) {}

}  // namespace dml::cpu
