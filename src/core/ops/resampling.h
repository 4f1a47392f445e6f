// Resampling: upsample_2d, resample (and its gradient), value_scale_2d.
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
