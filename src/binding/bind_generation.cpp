// Generation and quantization: fill_value_*, random_generator, quantize/dequantize, constant_data.
#include "../core/ops/generation.h"
#include "module.h"

namespace dml::binding {

void bind_generation(nb::module_&) {}

}  // namespace dml::binding
