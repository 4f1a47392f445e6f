// Pooling: average, max (with indices), ROI align and its gradient.
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
