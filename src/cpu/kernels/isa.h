// The widest x86-64 vector instruction set the hand-written kernels (direct convolution, max pooling, softmax
// rows, float16 conversions) take here: what the processor has, capped by DIRECTML_CPU_ISA=avx2 or generic (to
// test the other paths on one machine). Generic where the build has none (not x86-64 with GCC or Clang); AVX2
// comes with FMA and F16C (x86-64-v3), AVX-512 with both too. DIRECTML_CPU_ISA=avx512 keeps AVX-512 but not AMX.
#pragma once
#include <cstdint>

#if defined(DML_X86_DISPATCH) && defined(__linux__)
#include <immintrin.h>
#endif

namespace dml::cpu {

enum class Isa { Generic, Avx2, Avx512 };

Isa cpu_isa();
// Whether the float16 and float GEMMs may take AMX's BF16 tiles (kernels/amx_gemm.h): AVX-512 (with BW) not capped,
// AMX-TILE and AMX-BF16, and Linux granting this process the tile state (asked for once, here).
bool cpu_has_amx();

#if defined(DML_X86_DISPATCH) && defined(__linux__)
// The first c lanes of a 16-lane mask (none for c <= 0, all for c >= 16): the AVX-512 rows' last, partial vector.
__attribute__((target("arch=x86-64-v4"))) inline __mmask16 first_lanes(int64_t c) {
    return __mmask16(c <= 0 ? 0 : c >= 16 ? 0xffff : (1u << c) - 1);
}
#endif

}  // namespace dml::cpu
