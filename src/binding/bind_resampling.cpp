// Resampling: upsample_2d, resample (and its gradient), value_scale_2d.
#include "../core/ops/resampling.h"
#include "module.h"

namespace dml::binding {

void bind_resampling(nb::module_&) {}

}  // namespace dml::binding
