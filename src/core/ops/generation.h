// Generation and quantization: fill_value_*, random_generator, quantize/dequantize, constant_data.
#pragma once

#include "../graph.h"

namespace dml {}  // namespace dml
