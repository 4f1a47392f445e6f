// Pooling: average, max (with indices), ROI align and its gradient.
#include "../core/ops/pooling.h"
#include "module.h"

namespace dml::binding {

void bind_pooling(nb::module_&) {}

}  // namespace dml::binding
