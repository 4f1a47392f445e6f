// CPU kernels: Generation and quantization: fill_value_*, random_generator, quantize/dequantize, constant_data.
#include "../../core/ops/generation.h"
#include "kernel.h"

namespace dml::cpu {

void register_generation_kernels(KernelTable&) {}

}  // namespace dml::cpu
