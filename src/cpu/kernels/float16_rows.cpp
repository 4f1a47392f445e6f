#include "float16_rows.h"

#if defined(DML_X86_DISPATCH)
#include <immintrin.h>
#endif

#include "isa.h"

namespace dml::cpu {

namespace {

// The value-by-value forms, also the F16C forms' tails.
void widen_portable(const half* src, float* dst, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) dst[i] = float(src[i]);
}
void narrow_portable(const float* src, half* dst, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) dst[i] = half(src[i]);
}

#if defined(DML_X86_DISPATCH)
__attribute__((target("avx,f16c"))) void widen_f16c(const half* src, float* dst, uint64_t n) {
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    widen_portable(src + i, dst + i, n - i);
}
__attribute__((target("avx,f16c"))) void narrow_f16c(const float* src, half* dst, uint64_t n) {
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    narrow_portable(src + i, dst + i, n - i);
}
#endif

}  // namespace

void widen(const half* src, float* dst, uint64_t n) {
#if defined(DML_X86_DISPATCH)
    if (cpu_isa() != Isa::Generic) return widen_f16c(src, dst, n);
#endif
    widen_portable(src, dst, n);
}

void narrow(const float* src, half* dst, uint64_t n) {
#if defined(DML_X86_DISPATCH)
    if (cpu_isa() != Isa::Generic) return narrow_f16c(src, dst, n);
#endif
    narrow_portable(src, dst, n);
}

}  // namespace dml::cpu
