// Attention: multihead_attention (DML_OPERATOR_MULTIHEAD_ATTENTION).
#include "../core/ops/attention.h"
#include "module.h"

namespace dml::binding {

void bind_attention(nb::module_&) {}

}  // namespace dml::binding
