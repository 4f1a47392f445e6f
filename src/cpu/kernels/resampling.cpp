// CPU kernels: Resampling: upsample_2d, resample (and its gradient), value_scale_2d.
#include "../../core/ops/resampling.h"
#include "kernel.h"

namespace dml::cpu {

void register_resampling_kernels(KernelTable&) {}

}  // namespace dml::cpu
