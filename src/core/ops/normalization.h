// Normalization: batch normalization (inference, training, gradients), mean-variance, local response.
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
