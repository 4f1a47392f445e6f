// Normalization: batch normalization (inference, training, gradients), mean-variance, local response.
#include "../core/ops/normalization.h"
#include "module.h"

namespace dml::binding {

void bind_normalization(nb::module_&) {}

}  // namespace dml::binding
