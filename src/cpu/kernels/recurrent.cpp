// CPU kernels: Recurrent networks: gru.
#include "../../core/ops/recurrent.h"
#include "kernel.h"

namespace dml::cpu {

void register_recurrent_kernels(KernelTable&) {}

}  // namespace dml::cpu
