// The direct convolution for AVX2 with FMA (built with -mavx2 -mfma): 4 output channels x 3 vectors of 8
// positions, 12 of the 16 vector registers accumulating, or 2 x 5 or 3 x 3 for layers of few output channels
// (with the loaded vectors and a broadcast, the tile fills the 16 registers; a larger one spills). Wide layers
// (convolution.cpp says which) run a lanes tile instead: 16 output channels in 2 vectors x 6 positions broadcast
// one at a time, 4 of those a work item. Winograd's products run 6 x 2, whose 16 positions are a group of its
// tiles (winograd_convolution.cpp); the direct convolutions never pick it (it pads no layer less than those before).
// Depthwise (the layers the row kernels below do not take): 4 vectors (32 positions) a work item, 8 chains of sums
// with the taps split by parity (depthwise_rows).
#include <immintrin.h>

#include "direct_convolution_body.h"

namespace dml::cpu {
namespace {
struct Avx2 {
    using reg = __m256;
    static constexpr int width = 8;
    static reg zero() { return _mm256_setzero_ps(); }
    static reg load(const float* p) { return _mm256_loadu_ps(p); }
    static reg broadcast(const float* p) { return _mm256_broadcast_ss(p); }
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static __m256i first(int64_t n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static reg load_first(const float* p, __m256i m) { return _mm256_maskload_ps(p, m); }
    static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
    static constexpr bool stores_lanes = false, tap_masks = false;
    static constexpr int registers = 16;
};

// DirectKernel::depthwise_3x3_rows[1]. A vector of 8 outputs reads 16 + 2 input columns a filter row: two loads
// give two taps by in-lane shuffles (even columns, odd columns) and two more, 2 columns on, the third, the lanes
// holding outputs 0, 1, 4, 5 | 2, 3, 6, 7 until one cross-lane permute before the store. The compiler's loop over a
// stride-2 row took two cross-lane permutes and a blend a tap.
void depthwise_3x3_stride_2(const float* const* rows, const float* w, float* dst, int64_t out_width, int64_t in_width,
                            int64_t pad) {
    auto one = [&](int64_t o) {
        float sum = 0;
        for (int r = 0; r < 3; ++r)
            for (int64_t kx = 0, i = 2 * o - pad; kx < 3; ++kx, ++i)
                if (rows[r] && i >= 0 && i < in_width) sum += w[3 * r + kx] * rows[r][i];
        dst[o] = sum;
    };
    int64_t o = 0;
    for (; o < out_width && 2 * o < pad; ++o) one(o);  // the first column read lies in the padding
    for (; o + 8 <= out_width && 2 * o - pad + 18 <= in_width; o += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int r = 0; r < 3; ++r) {
            if (!rows[r]) continue;
            const float* x = rows[r] + 2 * o - pad;
            const __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
            const __m256 c = _mm256_loadu_ps(x + 2), d = _mm256_loadu_ps(x + 10);
            acc = _mm256_fmadd_ps(_mm256_broadcast_ss(w + 3 * r), _mm256_shuffle_ps(a, b, 0x88), acc);
            acc = _mm256_fmadd_ps(_mm256_broadcast_ss(w + 3 * r + 1), _mm256_shuffle_ps(a, b, 0xDD), acc);
            acc = _mm256_fmadd_ps(_mm256_broadcast_ss(w + 3 * r + 2), _mm256_shuffle_ps(c, d, 0x88), acc);
        }
        _mm256_storeu_ps(dst + o, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(acc), 0xD8)));
    }
    for (; o < out_width; ++o) one(o);
}

// DirectKernel::depthwise_3x3_rows[0]: vectors of 8 outputs, 4, 2 or 1 at a time where every column they read lies
// in the row, else (the edges, rows shorter than a vector) one at a time with the columns outside masked; even and
// odd taps sum apart (as depthwise_rows). Read in place, a row needs none of the band's padded copy.
void depthwise_3x3_stride_1(const float* const* rows, const float* w, float* dst, int64_t out_width, int64_t in_width,
                            int64_t pad) {
    // 8 outputs from o, the lanes whose column lies outside the row loaded as zero
    auto masked = [&](int64_t o) {
        __m256i in[3];
        for (int64_t kx = 0; kx < 3; ++kx) {
            const int64_t c = o + kx - pad;  // lane l reads column c + l: lanes [-c, in_width - c)
            in[kx] = _mm256_andnot_si256(Avx2::first(-c), Avx2::first(in_width - c));
        }
        __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
        for (int r = 0; r < 3; ++r) {
            if (!rows[r]) continue;
            for (int64_t kx = 0; kx < 3; ++kx) {
                const __m256 x = _mm256_maskload_ps(rows[r] + o + kx - pad, in[kx]);
                if ((r * 3 + kx) % 2) odd = _mm256_fmadd_ps(_mm256_broadcast_ss(w + 3 * r + kx), x, odd);
                else even = _mm256_fmadd_ps(_mm256_broadcast_ss(w + 3 * r + kx), x, even);
            }
        }
        const __m256 sum = _mm256_add_ps(even, odd);
        if (o + 8 <= out_width) _mm256_storeu_ps(dst + o, sum);
        else _mm256_maskstore_ps(dst + o, Avx2::first(out_width - o), sum);
    };
    // V vectors of 8 outputs from o, every column read inside the row
    auto whole = [&]<int V>(int64_t o) {
        __m256 even[V], odd[V];
        for (int j = 0; j < V; ++j) even[j] = _mm256_setzero_ps(), odd[j] = _mm256_setzero_ps();
        for (int r = 0; r < 3; ++r) {
            if (!rows[r]) continue;
            const float* x = rows[r] + o - pad;
            for (int kx = 0; kx < 3; ++kx) {
                const __m256 b = _mm256_broadcast_ss(w + 3 * r + kx);
                for (int j = 0; j < V; ++j) {
                    if ((r * 3 + kx) % 2) odd[j] = _mm256_fmadd_ps(b, _mm256_loadu_ps(x + kx + 8 * j), odd[j]);
                    else even[j] = _mm256_fmadd_ps(b, _mm256_loadu_ps(x + kx + 8 * j), even[j]);
                }
            }
        }
        for (int j = 0; j < V; ++j) _mm256_storeu_ps(dst + o + 8 * j, _mm256_add_ps(even[j], odd[j]));
    };
    int64_t o = 0;
    for (; o < out_width && o < pad; o += 8) masked(o);  // the first columns read lie in the padding
    for (; o + 32 <= out_width && o - pad + 34 <= in_width; o += 32) whole.template operator()<4>(o);
    for (; o + 16 <= out_width && o - pad + 18 <= in_width; o += 16) whole.template operator()<2>(o);
    for (; o + 8 <= out_width && o - pad + 10 <= in_width; o += 8) whole.template operator()<1>(o);
    for (; o < out_width; o += 8) masked(o);
}

constexpr DirectTile kTiles[] = {lanes_tile<Avx2, 2, 6, 4>(), direct_tile<Avx2, 4, 3>(), direct_tile<Avx2, 2, 5>(),
                                 direct_tile<Avx2, 3, 3>(), direct_tile<Avx2, 6, 2>()};
}  // namespace

extern const PointwiseGemmKernel kPointwiseGemmAvx2;

extern const DirectKernel kDirectAvx2 = {kTiles, depthwise_tile<Avx2, 4>(), false, 0, false,
                                         {depthwise_3x3_stride_1, depthwise_3x3_stride_2}, &kPointwiseGemmAvx2};

}  // namespace dml::cpu
