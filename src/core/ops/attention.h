// Attention: multihead_attention (DML_OPERATOR_MULTIHEAD_ATTENTION).
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
