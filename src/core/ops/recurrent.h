// Recurrent networks: gru.
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
