// The pointwise GEMM (pointwise_gemm.h) for AVX2 with FMA (built with -mavx2 -mfma): a register tile of 6 output
// channels x 16 positions (12 accumulators, two image vectors and a broadcast filter value fill 15 of the 16
// registers), over depth slices of kDepthSlice input channels, so that an image panel's slice (16 KiB) stays in the
// first-level cache while the item's filter panels stream past it.
#include <immintrin.h>

#include <algorithm>

#include "pointwise_gemm.h"

namespace dml::cpu {
namespace {

constexpr int kRows = 6, kColumns = 16;
constexpr int64_t kDepthSlice = 256;

// The first n of 8 lanes (none for n <= 0, all for n >= 8), as a mask of maskload and maskstore.
__m256i first_lanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::clamp<int64_t>(n, 0, 8))),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

void pack(const PointwiseGemm& g, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) {
        const int64_t c = int64_t(j) * kColumns, n = std::min<int64_t>(kColumns, g.positions - c);
        const float* src = g.input + c;
        float* dst = g.packed + (g.in_place ? 0 : int64_t(j)) * g.depth * kColumns;
        const __m256i m0 = first_lanes(n), m1 = first_lanes(n - 8);
        for (int64_t k = 0; k < g.depth; ++k, src += g.input_row, dst += kColumns) {
            if (n == kColumns) {
                _mm256_storeu_ps(dst, _mm256_loadu_ps(src));
                _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(src + 8));
            } else {  // the image's last columns, the panel's rest zero
                _mm256_storeu_ps(dst, _mm256_maskload_ps(src, m0));
                _mm256_storeu_ps(dst + 8, _mm256_maskload_ps(src + 8, m1));
            }
        }
    }
}

// Channels [0, R) x positions [0, cols) of the output at `out`, cols <= 8 V: the products of a [kc][6] filter slice
// (its first R channels: a last panel of fewer computes no more) and the first V vectors of a [kc][16] image slice,
// added to what `out` holds where `accumulate` (a depth slice after the first); where `bias` is set (the last slice),
// + bias and, where `relu`, max(0, .). The loops over rows and vectors unrolled, so that acc stays in registers.
template <int R, int V>
void tile(const float* a, const float* b, int64_t b_row, int64_t kc, float* out, int64_t out_row, int64_t cols,
          bool accumulate, const float* bias, bool relu) {
    __m256 acc[R][V];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; ++k, a += kRows, b += b_row) {
        __m256 x[V];
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) x[v] = _mm256_loadu_ps(b + 8 * v);
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) {
            const __m256 w = _mm256_broadcast_ss(a + i);
#pragma GCC unroll 2
            for (int v = 0; v < V; ++v) acc[i][v] = _mm256_fmadd_ps(w, x[v], acc[i][v]);
        }
    }
    const bool whole = cols == 8 * V;
    __m256i mask[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) mask[v] = first_lanes(cols - 8 * v);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 2
        for (int v = 0; v < V; ++v) {
            float* o = out + i * out_row + 8 * v;
            __m256 sum = acc[i][v];
            if (accumulate) sum = _mm256_add_ps(sum, whole ? _mm256_loadu_ps(o) : _mm256_maskload_ps(o, mask[v]));
            if (bias) {
                sum = _mm256_add_ps(sum, _mm256_broadcast_ss(bias + i));
                if (relu) sum = _mm256_max_ps(sum, _mm256_setzero_ps());
            }
            if (whole) _mm256_storeu_ps(o, sum);
            else _mm256_maskstore_ps(o, mask[v], sum);
        }
}

// tile<rows, vectors>: rows in [1, 6], a panel's positions in one vector where it has 8 or fewer (a 49-position
// image's last panel holds one: two vectors would compute 16).
template <int V>
constexpr decltype(&tile<kRows, V>) kTilesOf[kRows] = {tile<1, V>, tile<2, V>, tile<3, V>, tile<4, V>, tile<5, V>, tile<6, V>};
constexpr const decltype(&tile<kRows, 2>)* kTiles[2] = {kTilesOf<1>, kTilesOf<2>};

void run(const PointwiseGemm& g, size_t begin, size_t end) {
    const int64_t channel_panels = (g.channels + kRows - 1) / kRows;
    const int64_t position_panels = (g.positions + kColumns - 1) / kColumns;
    const int64_t channel_blocks = (channel_panels + g.block_panels[0] - 1) / g.block_panels[0];
    const int64_t position_blocks = (position_panels + g.block_panels[1] - 1) / g.block_panels[1];
    for (size_t item = begin; item < end; ++item) {
        const int64_t cb = g.in_place ? int64_t(item) % channel_blocks : int64_t(item) / position_blocks;
        const int64_t pb = g.in_place ? int64_t(item) / channel_blocks : int64_t(item) % position_blocks;
        const int64_t i0 = cb * g.block_panels[0], i1 = std::min(channel_panels, i0 + g.block_panels[0]);
        const int64_t j0 = pb * g.block_panels[1], j1 = std::min(position_panels, j0 + g.block_panels[1]);
        for (int64_t k0 = 0; k0 < g.depth; k0 += kDepthSlice) {
            const int64_t kc = std::min(kDepthSlice, g.depth - k0);
            const bool last = k0 + kc == g.depth;
            for (int64_t j = j0; j < j1; ++j) {
                const int64_t cols = std::min<int64_t>(kColumns, g.positions - j * kColumns);
                const bool in_place = g.in_place && cols == kColumns;
                const float* b = in_place ? g.input + k0 * g.input_row + j * kColumns
                                          : g.packed + ((g.in_place ? 0 : j) * g.depth + k0) * kColumns;
                const int64_t b_row = in_place ? g.input_row : kColumns;
                for (int64_t i = i0; i < i1; ++i) {
                    const int64_t rows = std::min<int64_t>(kRows, g.channels - i * kRows);
                    kTiles[cols > 8][rows - 1](g.filter + (i * g.depth + k0) * kRows, b, b_row, kc,
                                               g.out + i * kRows * g.out_row + j * kColumns, g.out_row, cols, k0 > 0,
                                               last && g.bias ? g.bias + i * kRows : nullptr, g.relu);
                }
            }
        }
    }
}

}  // namespace

extern const PointwiseGemmKernel kPointwiseGemmAvx2 = {kRows, kColumns, pack, run};

}  // namespace dml::cpu
