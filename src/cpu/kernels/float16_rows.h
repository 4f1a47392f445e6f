// Contiguous float16 runs widened to float and narrowed back (round to nearest even, as half's own conversions):
// by the processor's F16C instructions where cpu_isa() takes AVX2 or more, 8 values an instruction, else value by
// value. half's portable conversions are bit manipulation that no loop turns into those instructions.
#pragma once
#include <cstdint>

#include "../../core/half.h"

namespace dml::cpu {

void widen(const half* src, float* dst, uint64_t n);
void narrow(const float* src, half* dst, uint64_t n);

}  // namespace dml::cpu
