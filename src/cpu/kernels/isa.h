// The widest x86-64 vector instruction set the hand-written kernels (direct convolution, max pooling, softmax
// rows) take here: what the processor has, capped by DIRECTML_CPU_ISA=avx2 or generic (to test the other paths
// on one machine). Generic where the build has none (not x86-64 with GCC or Clang).
#pragma once

namespace dml::cpu {

enum class Isa { Generic, Avx2, Avx512 };

Isa cpu_isa();

}  // namespace dml::cpu
