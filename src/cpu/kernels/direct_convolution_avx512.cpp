// The direct convolution for AVX-512 (built with -mavx512f -mfma): 8 output channels x 3 vectors of 16 positions,
// or 4 x 6 or 3 x 8 for layers of few output channels, 24 of the 32 vector registers accumulating. The tiles store
// their finished sums from the registers (bias and relu added there, padded columns dropped by a compressing store).
#include <immintrin.h>

#include "direct_convolution_body.h"

namespace dml::cpu {
namespace {
struct Avx512 {
    using reg = __m512;
    static constexpr int width = 16;
    static reg zero() { return _mm512_setzero_ps(); }
    static reg load(const float* p) { return _mm512_loadu_ps(p); }
    static reg broadcast(const float* p) { return _mm512_set1_ps(*p); }
    static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
    static __mmask16 first(int64_t n) { return __mmask16((1u << n) - 1); }
    static reg load_first(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
    static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
    static constexpr bool stores_lanes = true, tap_masks = true;
    static constexpr int registers = 32;
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg relu(reg x) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ), x); }
    // the lanes of `mask`, packed, at p
    static void store_lanes(float* p, uint32_t mask, reg v) {
        if (mask == 0xffff) return _mm512_storeu_ps(p, v);
        const __mmask16 packed((1u << __builtin_popcount(mask)) - 1);
        _mm512_mask_storeu_ps(p, packed, _mm512_maskz_compress_ps(__mmask16(mask), v));
    }
};

constexpr DirectTile kTiles[] = {direct_tile<Avx512, 8, 3>(), direct_tile<Avx512, 4, 6>(),
                                 direct_tile<Avx512, 3, 8>()};
}  // namespace

extern const DirectKernel kDirectAvx512 = {kTiles, depthwise_tile<Avx512, 3>(), true, Avx512::width, true,
                                           {nullptr, nullptr}, nullptr};

}  // namespace dml::cpu
