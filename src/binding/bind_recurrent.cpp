// Recurrent networks: gru.
#include "../core/ops/recurrent.h"
#include "module.h"

namespace dml::binding {

void bind_recurrent(nb::module_&) {}

}  // namespace dml::binding
