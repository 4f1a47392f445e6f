#include "amx_gemm.h"

#include <algorithm>
#include <atomic>
#include <type_traits>
#include <vector>

#include "isa.h"

namespace dml::cpu {

namespace {

// How a type's values split into bfloat16 pieces p0 + p1 (+ p2), and how the pieces pair up for TDPBF16PS, whose
// every product is a dot product of two pairs: B holds `b_pairs` pairs a k, A `a_pairs`, each against one of B's.
struct PieceSplit {
    int pieces, b_pairs, a_pairs;
    bool rounded;    // pieces rounded to nearest (else truncated): split()
    int b[2][2];     // B's pair w: its first and second piece
    int a[3][3];     // A's pair v: its first and second piece, and the B pair it meets
    uint32_t chunk;  // K in chunks of this many: a row pair's packed chunk of A (32 rows x chunk x a_pairs pairs) fits
                     // the first-level cache while the column pairs' B tiles pass by
};
// float16: (a0, a1) . (b0, b1) + (a1, a0) . (b0, b1), all four products. 32 KiB of A a chunk.
constexpr PieceSplit kHalfSplit{2, 1, 2, false, {{0, 1}}, {{0, 1, 0}, {1, 0, 0}}, 128};
// float: (a0, a1) . (b0, b1) + (a1, a0) . (b0, b1) + (a0, a2) . (b2, b0), the six products of order 2 or less.
// 24 KiB of A a chunk.
constexpr PieceSplit kFloatSplit{3, 2, 3, true, {{0, 1}, {2, 0}}, {{0, 1, 0}, {1, 0, 0}, {0, 2, 1}}, 64};
static_assert(!(kHalfSplit.chunk & (kHalfSplit.chunk - 1)) && !(kFloatSplit.chunk & (kFloatSplit.chunk - 1)),
              "Shape::tile_at rounds to a chunk by masking");
template <class T>
constexpr const PieceSplit& split_of() {
    return std::is_same_v<T, half> ? kHalfSplit : kFloatSplit;
}

// B's chunk of a block of 1024 columns (512 KiB, contiguous) stays in the second-level cache for the next row pair.
constexpr uint32_t kColumnBlock = 1024;
// A thread's share of a block of B in the chunked schedule: at most this many columns, fewer where the block would
// otherwise leave a thread without one.
constexpr uint32_t kColumnGroup = 256;

// C in blocks of 2 x 2 tiles of 16 x 16 floats, so A's rows and B's columns are padded to 32 (zeros), K to 16.
uint32_t round_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

struct Shape {
    uint32_t m, n, k, mp, np, kp;
    uint32_t chunk, b_pairs;  // the split's K chunk and B's pairs a k
    bool chunked = false;     // B packed and multiplied a block at a time, each block packed into the first's room
    Shape(uint32_t m, uint32_t n, uint32_t k, const PieceSplit& split)
        : m(m), n(n), k(k), mp(round_up(m, 32)), np(round_up(n, 32)), kp(round_up(k, 16)), chunk(split.chunk),
          b_pairs(uint32_t(split.b_pairs)) {}
    // B's packed copy, b_pairs pairs of bfloat16 an element: a block where every schedule is chunked (at most 256
    // rows: one row block a thread, whatever the threads), else a block of columns along all of K.
    uint64_t packed_b_bytes() const {
        return uint64_t(std::min(np, kColumnBlock)) * (mp <= 256 ? std::min(kp, chunk) : kp) * 4 * b_pairs;
    }
    uint64_t products_bytes() const { return uint64_t(mp) * np * 4; }
    // Where B's packed tiles of columns [16 t, 16 t + 16) and k [16 kb, 16 kb + 16) lie (bfloat16 from the start; its
    // b_pairs tiles one after the other) while its block of kColumnBlock columns is held: by blocks of `chunk` k,
    // each contiguous (chunked: one block at a time), in it column tile by column tile. (Column tiles whole along K
    // were a power of 2 apart, a chunk's pieces falling into the same sets of the caches.)
    uint64_t tile_at(uint32_t t, uint32_t kb) const {
        const uint32_t j1 = t * 16 / kColumnBlock * kColumnBlock, k1 = kb * 16 & ~(chunk - 1);
        const uint64_t width = std::min(kColumnBlock, np - j1), depth = std::min(chunk, kp - k1);
        const uint64_t block = chunked ? 0 : k1 * width;
        return 2 * b_pairs * (block + (t * 16 - j1) * depth + (kb * 16 - k1) * 16);
    }
};

}  // namespace

// float16 against the widened sgemm (one thread, ms): 16 x 1024 @ 1024 x 1024 0.42 / 0.60-0.98, 32 x 1024 @ 1024 x
// 1024 0.43-0.52 / 0.81-0.86, 96^3 0.014-0.017 / 0.018-0.020, 4096 x 1024 @ 1024 x 8 1.73 / 2.45; 64^3 ties
// (0.009-0.011 / 0.010). Fewer rows pay only where B outgrows the caches, its packing then cheaper than its widening:
// 1 x 4096 @ 4096 x 4096 5.6-5.8 / 11.2, 8 x 4096 @ 4096 x 4096 6.9-7.1 / 12.1-12.2, but 1 x 1024 @ 1024 x 1024 0.36 /
// 0.17-0.19.
template <>
bool amx_gemm_pays<half>(uint32_t m, uint32_t n, uint32_t k, size_t) {
    const bool large_b = uint64_t(k) * n >= (uint64_t(1) << 24);
    return cpu_has_amx() && (m >= 16 || large_b) && n >= 8 && uint64_t(m) * n * k >= (uint64_t(1) << 18);
}

// float against OpenBLAS's sgemm (one thread, process CPU time, medians, alternately, ms): 256^3 0.18-0.21 /
// 0.21-0.23, 1024^3 9.8-11.8 / 11.5-13.8, 64 x 4096 @ 4096 x 4096 15.3-18.5 / 20.1-27.3, 512 x 128 @ 128 x 512 0.39-0.41 /
// 0.43-0.47, 2048^3 91-114 / 92-107 (a tie); it lost with fewer rows (32 x 512 @ 512 x 512 0.19 / 0.15-0.16, 48 x 2048
// @ 2048 x 2048 4.0-4.1 / 3.5-3.8), columns (512 x 512 @ 512 x 64 0.30 / 0.25-0.27), K (1024 x 64 @ 64 x 1024 1.10-1.38
// / 0.98-1.08) or products (96^3 0.022 / 0.015-0.025, 192^3 0.096-0.098 / 0.095-0.104). On two threads (wall time,
// against OpenBLAS single-threaded a slice a thread, bench_cpu.py --threads 2) the tiles gained only with 512 rows or
// more (1024^3 6.0-7.0 / 7.5 ms, 2048^3 47-71 / 50-68) and lost with fewer (256^3 0.20-0.22 / 0.13-0.14, 64 x 4096 @
// 4096 x 4096 13.0-14.7 / 9.4-13.1): two threads' tiles ran little faster than one's.
template <>
bool amx_gemm_pays<float>(uint32_t m, uint32_t n, uint32_t k, size_t threads) {
    return cpu_has_amx() && m >= (threads > 1 ? 512 : 64) && n >= 128 && k >= 128 &&
           uint64_t(m) * n * k >= (uint64_t(1) << 24);
}

template <class T>
uint64_t amx_gemm_workspace(uint32_t m, uint32_t n, uint32_t k) {
    const Shape s(m, n, k, split_of<T>());
    return 64 + s.packed_b_bytes() + s.products_bytes();  // 64: the tiles' rows aligned to cache lines
}
template uint64_t amx_gemm_workspace<half>(uint32_t, uint32_t, uint32_t);
template uint64_t amx_gemm_workspace<float>(uint32_t, uint32_t, uint32_t);

#if defined(DML_X86_DISPATCH) && defined(__linux__)

namespace {

#define DML_AMX_TARGET __attribute__((target("arch=x86-64-v4,amx-tile,amx-bf16")))

// Rows in blocks whose float products over a column block (at most 1 MiB) stay in the second-level cache across the
// K chunks.
constexpr uint64_t kBlockBytes = 1 << 20;

// 16 values from p, `count` of them (at most 16; the rest zero), `stride` apart, as floats.
DML_AMX_TARGET inline __m512 load16(const half* p, int64_t stride, uint32_t count) {
    if (stride == 1) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(first_lanes(count), p));
    alignas(32) uint16_t v[16] = {};
    for (uint32_t i = 0; i < std::min(count, 16u); ++i) v[i] = p[i * stride].bits;
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(v)));
}
DML_AMX_TARGET inline __m512 load16(const float* p, int64_t stride, uint32_t count) {
    if (stride == 1) return _mm512_maskz_loadu_ps(first_lanes(count), p);
    alignas(64) float v[16] = {};
    for (uint32_t i = 0; i < std::min(count, 16u); ++i) v[i] = p[i * stride];
    return _mm512_load_ps(v);
}

// The 16 x 16 floats r[q][l] as r[l][q].
DML_AMX_TARGET inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
        const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int i = 0; i < 4; ++i) {
        t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
        t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
        t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
        t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
    }
    for (int i = 0; i < 8; ++i) {
        r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    }
}

// The 16 x 16 values whose element (q, l) lies at p[q * across + l * along] (those of q < rows and l < cols; the
// rest zero), as floats: x[q] holds row q. Rows whose elements are contiguous load as they lie; where the columns are
// instead (a transposed operand), those load and are transposed, not read element by element.
template <class T>
DML_AMX_TARGET void load_block(const T* p, int64_t across, int64_t along, uint32_t rows, uint32_t cols,
                               __m512 x[16]) {
    if (along != 1 && across == 1) {
        for (uint32_t l = 0; l < 16; ++l) x[l] = l < cols ? load16(p + l * along, 1, rows) : _mm512_setzero_ps();
        return transpose16(x);
    }
    for (uint32_t q = 0; q < 16; ++q) x[q] = q < rows ? load16(p + q * across, along, cols) : _mm512_setzero_ps();
}

// The lanes the pieces cannot carry (amx_gemm.h): magnitudes from the one that rounds to bfloat16's infinity up
// (infinities and NaN included), and nonzero ones below 2^-50. A float16 lies between, but for infinities and NaN.
template <const PieceSplit& S>
DML_AMX_TARGET inline __mmask16 unsplittable(__m512 x) {
    if (S.pieces == 2) {
        const __m512i exponent = _mm512_set1_epi32(0x7f800000);
        return _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x), exponent), exponent);
    }
    const __m512i magnitude = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
    // nonzero and below 2^-50: magnitude - 1 below 2^-50's bits - 1, where zero's wraps to the largest
    const __mmask16 tiny = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(magnitude, _mm512_set1_epi32(1)),
                                                   _mm512_set1_epi32(((127 - 50) << 23) - 1));
    return _mm512_cmpge_epu32_mask(magnitude, _mm512_set1_epi32(0x7f7f8000)) | tiny;
}

// x's bfloat16 pieces as floats (low 16 bits zero): each but the last x's remainder cut to bfloat16, the last the
// remainder itself (exact: float16's 11 significand bits leave at most 3 to the second piece, float's 24 at most 8
// to the third). float's cuts round to nearest even, which halves the pieces a1 and a2 and so the products left out
// (2^-23 |a b| at most, against 2^-21 truncated); float16 keeps all its products, and truncates (cheaper: packing B
// is most of a product of few rows, 32 x 1024 @ 1024 x 1024 15 % slower rounded).
template <const PieceSplit& S>
DML_AMX_TARGET inline void split(__m512 x, __m512i p[]) {
    for (int i = 0; i < S.pieces - 1; ++i) {
        __m512i bits = _mm512_castps_si512(x);
        if (S.rounded) {
            const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
            bits = _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
        }
        p[i] = _mm512_and_si512(bits, _mm512_set1_epi32(int(0xffff0000u)));
        x = _mm512_sub_ps(x, _mm512_castsi512_ps(p[i]));
    }
    p[S.pieces - 1] = _mm512_castps_si512(x);
}
// The pair (p[first], p[second]) as TDPBF16PS reads it, p[first] first in memory.
DML_AMX_TARGET inline __m512i pair(const __m512i* p, int first, int second) {
    return _mm512_or_si512(_mm512_srli_epi32(p[first], 16), p[second]);
}

// A 16 x 16 block's rows x[q] split into pieces and stored as `count` tiles of pairs, pair w of row q (pieces
// pairs[w][0] and pairs[w][1]) at dst + w * 512 + q * 32. Returns the lanes the pieces cannot carry.
template <const PieceSplit& S, class Pairs>
DML_AMX_TARGET inline __mmask16 store_pairs(const __m512 x[16], const Pairs& pairs, int count, uint16_t* dst) {
    __mmask16 bad = 0;
    for (uint32_t q = 0; q < 16; ++q) {
        __m512i p[S.pieces];
        bad |= unsplittable<S>(x[q]);
        split<S>(x[q], p);
        for (int w = 0; w < count; ++w) _mm512_store_si512(dst + w * 512 + q * 32, pair(p, pairs[w][0], pairs[w][1]));
    }
    return bad;
}

// B's column tiles [t0, t1) over k in [k1, k2) (multiples of 16) as TDPBF16PS takes its second operand: for each 16
// k, a tile for each of the split's B pairs, a row a k, 16 columns of pairs in a row. K blocks outside: reading a
// stored B's rows down its columns (64 bytes of a row, then the next row's) missed the caches on every row, 64 x 4096
// @ 4096 x 4096 1.5 times slower. A transposed B's columns (K contiguous) have their next span of K fetched ahead, as
// pack_a does for A's rows. Returns whether the pieces carry every value.
template <class T>
DML_AMX_TARGET bool pack_b(AmxOperand<T> b, const Shape& s, uint32_t t0, uint32_t t1, uint32_t k1, uint32_t k2,
                           uint16_t* bp) {
    constexpr const PieceSplit& S = split_of<T>();
    __mmask16 bad = 0;
    __m512 x[16];
    for (uint32_t k = k1; k < k2; k += 16)
        for (uint32_t t = t0; t < t1; ++t) {
            const uint32_t j = t * 16;
            uint16_t* dst = bp + s.tile_at(t, k / 16);
            if (k >= s.k || j >= s.n) {
                std::fill(dst, dst + 512 * S.b_pairs, uint16_t(0));
                continue;
            }
            load_block(b.data + j * b.stride + k * b.k_stride, b.k_stride, b.stride, s.k - k, s.n - j, x);
            bad |= store_pairs<S>(x, S.b, S.b_pairs, dst);
            if (b.k_stride == 1 && k + 16 >= k2)
                for (uint32_t c = j; c < std::min(j + 16, s.n); ++c)
                    for (uint32_t next = k2; next < std::min(2 * k2 - k1, s.k); next += 64 / sizeof(T))
                        _mm_prefetch(reinterpret_cast<const char*>(b.data + c * b.stride + next), _MM_HINT_T1);
        }
    return !bad;
}

// A's rows [r, r + 32) over k in [k0, k0 + kc) as tiles for each 16 k: rows r to r + 15 as each of the split's A
// pairs, then rows r + 16 to r + 31 likewise. Where A's rows are contiguous, the rows' next chunk is fetched ahead
// into the second-level cache: the row block's 256 rows a K chunk apart are more streams than the processor's own
// prefetcher follows (4096 x 4096 @ 4096 x 64 waited on these loads half its time). Returns whether the pieces carry
// every value.
template <class T>
DML_AMX_TARGET bool pack_a(AmxOperand<T> a, const Shape& s, uint32_t r, uint32_t k0, uint32_t kc, uint16_t* ap) {
    constexpr const PieceSplit& S = split_of<T>();
    __mmask16 bad = 0;
    __m512 x[16];
    for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t i0 = r + h * 16, rows = i0 < s.m ? s.m - i0 : 0;
        for (uint32_t k = k0; k < k0 + kc; k += 16) {
            uint16_t* dst = ap + ((k - k0) / 16 * 2 + h) * S.a_pairs * 512;
            if (k >= s.k || rows == 0) {
                std::fill(dst, dst + 512 * S.a_pairs, uint16_t(0));
                continue;
            }
            load_block(a.data + i0 * a.stride + k * a.k_stride, a.stride, a.k_stride, rows, s.k - k, x);
            bad |= store_pairs<S>(x, S.a, S.a_pairs, dst);
        }
        if (a.k_stride == 1)
            for (uint32_t i = i0; i < std::min(i0 + 16, s.m); ++i)
                for (uint32_t k = k0 + kc; k < std::min(k0 + 2 * kc, s.k); k += 64 / sizeof(T))
                    _mm_prefetch(reinterpret_cast<const char*>(a.data + i * a.stride + k), _MM_HINT_T1);
    }
    return !bad;
}

struct alignas(64) TileConfig {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// The products of rows [r0, r1) and columns [j1, j2) (multiples of 32) over k in [k1, k2) (multiples of 16) added
// into p (s.np floats a row; k1 = 0 starts it). Tiles 0-3: C's 2 x 2; 4, 5: A; 6, 7: B. Each load sits right before
// the first product that reads it. Returns whether the pieces carried A's rows.
template <class T>
DML_AMX_TARGET bool multiply_rows(AmxOperand<T> a, const Shape& s, const uint16_t* bp, uint32_t r0, uint32_t r1,
                                  uint32_t j1, uint32_t j2, uint32_t k1, uint32_t k2, float* p) {
    constexpr const PieceSplit& S = split_of<T>();
    constexpr uint32_t a_tiles = 2 * S.a_pairs;  // A's tiles for each 16 k
    alignas(64) uint16_t ap[S.chunk / 16 * a_tiles * 512];
    TileConfig config{};
    config.palette = 1;
    for (int t = 0; t < 8; ++t) config.colsb[t] = 64, config.rows[t] = 16;
    _tile_loadconfig(&config);
    const uint64_t ldp = s.np;
    bool carried = true;
    for (uint32_t j0 = j1; j0 < j2; j0 += kColumnBlock) {
        for (uint32_t k0 = k1; k0 < k2; k0 += S.chunk) {
            const uint32_t kc = std::min(S.chunk, k2 - k0);  // k1 a multiple of the chunk: one block of B
            for (uint32_t r = r0; r < r1; r += 32) {
                carried &= pack_a(a, s, r, k0, kc, ap);
                for (uint32_t j = j0; j < std::min(j0 + kColumnBlock, j2); j += 32) {
                    float* c = p + r * ldp + j;
                    if (k0 == 0) {
                        _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
                    } else {
                        _tile_loadd(0, c, ldp * 4); _tile_loadd(1, c + 16, ldp * 4);
                        _tile_loadd(2, c + 16 * ldp, ldp * 4); _tile_loadd(3, c + 16 * ldp + 16, ldp * 4);
                    }
                    const uint16_t* b0 = bp + s.tile_at(j / 16, k0 / 16);
                    const uint16_t* b1 = bp + s.tile_at(j / 16 + 1, k0 / 16);
                    for (uint32_t t = 0; t < kc / 16; ++t) {
                        const uint16_t* at = ap + t * a_tiles * 512;
                        for (int w = 0; w < S.b_pairs; ++w) {
                            const uint64_t bt = (t * S.b_pairs + w) * 512;
                            bool second_b = false;  // tile 7 loaded after the first product, which needs only 6
                            _tile_loadd(6, b0 + bt, 64);
                            for (int v = 0; v < S.a_pairs; ++v) {
                                if (S.a[v][2] != w) continue;
                                _tile_loadd(4, at + v * 512, 64); _tile_dpbf16ps(0, 4, 6);
                                if (!second_b) {
                                    _tile_loadd(7, b1 + bt, 64);
                                    second_b = true;
                                }
                                _tile_dpbf16ps(1, 4, 7);
                                _tile_loadd(5, at + (S.a_pairs + v) * 512, 64);
                                _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
                            }
                        }
                    }
                    _tile_stored(0, c, ldp * 4); _tile_stored(1, c + 16, ldp * 4);
                    _tile_stored(2, c + 16 * ldp, ldp * 4); _tile_stored(3, c + 16 * ldp + 16, ldp * 4);
                }
            }
        }
    }
    _tile_release();
    return carried;
}

}  // namespace

template <class T>
bool amx_gemm(ThreadPool& pool, uint32_t m, uint32_t n, uint32_t k, AmxOperand<T> a, AmxOperand<T> b,
              std::byte* workspace, const std::function<void(uint32_t, float*)>& store_row) {
    Shape s(m, n, k, split_of<T>());
    std::atomic<bool> carried{true};
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(workspace) + 63) & ~uintptr_t(63);
    uint16_t* bp = reinterpret_cast<uint16_t*>(aligned);
    float* p = reinterpret_cast<float*>(aligned + s.packed_b_bytes());
    // Row blocks of up to 256 rows, fewer where their products would outgrow kBlockBytes, or to give every thread one.
    const uint32_t threads = uint32_t(pool.size());
    const uint64_t fit = kBlockBytes / (std::min(s.np, kColumnBlock) * 4) / 32 * 32;
    uint32_t block = uint32_t(std::clamp<uint64_t>(fit, 32, 256));
    if ((s.mp + block - 1) / block < threads) block = std::max(32u, round_up((s.mp + threads - 1) / threads, 32));
    const uint32_t blocks = (s.mp + block - 1) / block;
    // Where each thread has one row block at most, B is packed a block of columns and K chunk at a time into one
    // block's room, each multiplied while in the caches (B's whole packed copy would be written to memory and its
    // tiles loaded back from there: 64 x 4096 @ 4096 x 4096 ran slower than the widened sgemm), a group of its columns
    // by the thread that packed it (two threads packing halves of a block and each multiplying its rows by all of it
    // read half from the other core's cache: 64 x 4096 @ 4096 x 4096 ran slower on two threads than on one). With
    // more row blocks, each reading all of B, B is packed a block of columns at a time along all of K, each block
    // then multiplied by every row block (float's B packed whole, 32 MiB at 2048^3, ran slower than OpenBLAS's
    // sgemm). The rows are stored at the end.
    s.chunked = blocks <= threads;
    std::vector<ThreadPool::Stage> stages;
    const uint32_t columns = std::min(s.np, kColumnBlock);
    for (uint32_t j1 = 0; j1 < s.np; j1 += columns) {
        const uint32_t j2 = std::min(j1 + columns, s.np);
        if (s.chunked) {
            const uint32_t group = std::min(kColumnGroup, round_up((columns + threads - 1) / threads, 32));
            const uint32_t groups = (columns + group - 1) / group;
            for (uint32_t k1 = 0; k1 < s.kp; k1 += s.chunk) {
                const uint32_t k2 = std::min(k1 + s.chunk, s.kp);
                stages.push_back({groups, 1, [&, j1, j2, k1, k2, group](size_t g0, size_t g1) {
                                      const uint32_t c1 = std::min(j1 + uint32_t(g0) * group, j2);
                                      const uint32_t c2 = std::min(j1 + uint32_t(g1) * group, j2);
                                      if (!carried || c1 == c2) return;
                                      if (!pack_b(b, s, c1 / 16, c2 / 16, k1, k2, bp) ||
                                          !multiply_rows(a, s, bp, 0, s.mp, c1, c2, k1, k2, p))
                                          carried = false;
                                  }});
            }
            continue;
        }
        stages.push_back({(j2 - j1) / 16, 4, [&, j1](size_t t0, size_t t1) {
                              if (carried && !pack_b(b, s, j1 / 16 + uint32_t(t0), j1 / 16 + uint32_t(t1), 0, s.kp, bp))
                                  carried = false;
                          }});
        stages.push_back({blocks, 1, [&, j1, j2](size_t b0, size_t b1) {
                              for (size_t i = b0; i < b1 && carried; ++i) {
                                  const uint32_t r0 = uint32_t(i) * block, r1 = std::min(r0 + block, s.mp);
                                  if (!multiply_rows(a, s, bp, r0, r1, j1, j2, 0, s.kp, p)) carried = false;
                              }
                          }});
    }
    stages.push_back({m, 16, [&](size_t r0, size_t r1) {
                          for (size_t r = r0; r < r1 && carried; ++r) store_row(uint32_t(r), p + r * s.np);
                      }});
    pool.parallel_stages(stages);
    return carried;
}

#else

template <class T>
bool amx_gemm(ThreadPool&, uint32_t, uint32_t, uint32_t, AmxOperand<T>, AmxOperand<T>, std::byte*,
              const std::function<void(uint32_t, float*)>&) {
    return false;
}

#endif

template bool amx_gemm<half>(ThreadPool&, uint32_t, uint32_t, uint32_t, AmxOperand<half>, AmxOperand<half>, std::byte*,
                             const std::function<void(uint32_t, float*)>&);
template bool amx_gemm<float>(ThreadPool&, uint32_t, uint32_t, uint32_t, AmxOperand<float>, AmxOperand<float>,
                              std::byte*, const std::function<void(uint32_t, float*)>&);

}  // namespace dml::cpu
