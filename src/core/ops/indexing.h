// Indexing: gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot.
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
