// CPU kernels: Attention: multihead_attention (DML_OPERATOR_MULTIHEAD_ATTENTION).
#include "../../core/ops/attention.h"
#include "kernel.h"

namespace dml::cpu {

void register_attention_kernels(KernelTable&) {}

}  // namespace dml::cpu
