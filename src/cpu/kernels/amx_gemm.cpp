#include "amx_gemm.h"

#include <algorithm>
#include <atomic>

#include "isa.h"

namespace dml::cpu {

namespace {

// C in blocks of 2 x 2 tiles of 16 x 16 floats, so A's rows and B's columns are padded to 32 (zeros), K to 16.
uint32_t round_up(uint32_t v, uint32_t to) { return (v + to - 1) / to * to; }

struct Shape {
    uint32_t m, n, k, mp, np, kp;
    Shape(uint32_t m, uint32_t n, uint32_t k) : m(m), n(n), k(k), mp(round_up(m, 32)), np(round_up(n, 32)), kp(round_up(k, 16)) {}
    uint64_t packed_b_bytes() const { return uint64_t(kp) * np * 4; }  // a (bh, bl) pair of bfloat16 an element
    uint64_t products_bytes() const { return uint64_t(mp) * np * 4; }
};

}  // namespace

bool amx_gemm_pays(uint32_t m, uint32_t n, uint32_t k) {
    return cpu_has_amx() && m >= 32 && n >= 32 && uint64_t(m) * n * k >= (uint64_t(1) << 18);
}

uint64_t amx_gemm_workspace(uint32_t m, uint32_t n, uint32_t k) {
    const Shape s(m, n, k);
    return 64 + s.packed_b_bytes() + s.products_bytes();  // 64: the tiles' rows aligned to cache lines
}

#if defined(DML_X86_DISPATCH) && defined(__linux__)

namespace {

#define DML_AMX_TARGET __attribute__((target("arch=x86-64-v4,amx-tile,amx-bf16")))

// K in chunks of 128: a row pair's packed chunk of A (32 rows x 128 k x 4 bfloat16, 32 KiB) stays in the first-level
// cache while every column pair's B tiles pass by. Rows in blocks whose float products (at most 1 MiB) stay in the
// second-level cache across the chunks.
constexpr uint32_t kKChunk = 128;
constexpr uint64_t kBlockBytes = 1 << 20;

// 16 float16 from p, `count` of them (at most 16; the rest zero), `stride` apart, widened.
DML_AMX_TARGET inline __m512 load16(const half* p, int64_t stride, uint32_t count) {
    if (stride == 1) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(first_lanes(count), p));
    alignas(32) uint16_t v[16] = {};
    for (uint32_t i = 0; i < std::min(count, 16u); ++i) v[i] = p[i * stride].bits;
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(v)));
}

DML_AMX_TARGET inline __mmask16 nonfinite(__m512 x) {
    const __m512i exponent = _mm512_set1_epi32(0x7f800000);
    return _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x), exponent), exponent);
}

// Each finite x as the bfloat16 pairs (hi, lo) and (lo, hi), hi first in memory. hi = x's low 16 bits dropped, lo =
// x - hi: exact, and at most 3 significand bits, so lo's low 16 bits are zero too.
DML_AMX_TARGET inline void split(__m512 x, __m512i& hl, __m512i& lh) {
    const __m512i bits = _mm512_castps_si512(x);
    const __m512i hi = _mm512_and_si512(bits, _mm512_set1_epi32(int(0xffff0000u)));
    const __m512i lo = _mm512_castps_si512(_mm512_sub_ps(x, _mm512_castsi512_ps(hi)));
    hl = _mm512_or_si512(_mm512_srli_epi32(bits, 16), lo);
    lh = _mm512_or_si512(_mm512_srli_epi32(lo, 16), hi);
}

// B's column tiles [t0, t1) as TDPBF16PS takes its second operand: a tile for each 16 k, a row a k, 16 columns of
// (bh, bl) pairs in a row; the tiles of a column tile one after another along K. Returns whether all were finite.
DML_AMX_TARGET bool pack_b(Float16Operand b, const Shape& s, uint32_t t0, uint32_t t1, uint16_t* bp) {
    __mmask16 bad = 0;
    for (uint32_t t = t0; t < t1; ++t) {
        const uint32_t j = t * 16;
        uint16_t* dst = bp + uint64_t(t) * s.kp * 32;
        for (uint32_t k = 0; k < s.kp; ++k, dst += 32) {
            __m512i hl = _mm512_setzero_si512(), lh;
            if (k < s.k && j < s.n) {
                const __m512 x = load16(b.data + j * b.stride + k * b.k_stride, b.stride, s.n - j);
                bad |= nonfinite(x);
                split(x, hl, lh);
            }
            _mm512_store_si512(dst, hl);
        }
    }
    return !bad;
}

// A's rows [r, r + 32) over k in [k0, k0 + kc) as four tiles for each 16 k: rows r to r + 15 as (ah, al) pairs, the
// same as (al, ah), then rows r + 16 to r + 31 likewise. Returns whether all were finite.
DML_AMX_TARGET bool pack_a(Float16Operand a, const Shape& s, uint32_t r, uint32_t k0, uint32_t kc, uint16_t* ap) {
    __mmask16 bad = 0;
    for (uint32_t h = 0; h < 2; ++h)
        for (uint32_t row = 0; row < 16; ++row) {
            const uint32_t i = r + h * 16 + row;
            for (uint32_t k = k0; k < k0 + kc; k += 16) {
                uint16_t* dst = ap + ((k - k0) / 16 * 4 + 2 * h) * 512 + row * 32;
                __m512i hl = _mm512_setzero_si512(), lh = hl;
                if (i < s.m && k < s.k) {
                    const __m512 x = load16(a.data + i * a.stride + k * a.k_stride, a.k_stride, s.k - k);
                    bad |= nonfinite(x);
                    split(x, hl, lh);
                }
                _mm512_store_si512(dst, hl);
                _mm512_store_si512(dst + 512, lh);
            }
        }
    return !bad;
}

struct alignas(64) TileConfig {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// The products of rows [r0, r1) (multiples of 32) into p (s.np floats a row). Tiles 0-3: C's 2 x 2; 4, 5: A; 6, 7:
// B. Each load sits right before the first product that reads it. Returns whether A's rows were all finite.
DML_AMX_TARGET bool multiply_rows(Float16Operand a, const Shape& s, const uint16_t* bp, uint32_t r0, uint32_t r1, float* p) {
    alignas(64) uint16_t ap[kKChunk / 16 * 4 * 512];
    TileConfig config{};
    config.palette = 1;
    for (int t = 0; t < 8; ++t) config.colsb[t] = 64, config.rows[t] = 16;
    _tile_loadconfig(&config);
    const uint64_t ldp = s.np, tile_k = s.kp / 16;
    bool finite = true;
    for (uint32_t k0 = 0; k0 < s.kp; k0 += kKChunk) {
        const uint32_t kc = std::min(kKChunk, s.kp - k0);
        for (uint32_t r = r0; r < r1; r += 32) {
            finite &= pack_a(a, s, r, k0, kc, ap);
            for (uint32_t j = 0; j < s.np; j += 32) {
                float* c = p + r * ldp + j;
                if (k0 == 0) {
                    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
                } else {
                    _tile_loadd(0, c, ldp * 4); _tile_loadd(1, c + 16, ldp * 4);
                    _tile_loadd(2, c + 16 * ldp, ldp * 4); _tile_loadd(3, c + 16 * ldp + 16, ldp * 4);
                }
                const uint16_t* b0 = bp + (j / 16 * tile_k + k0 / 16) * 512;
                const uint16_t* b1 = b0 + tile_k * 512;
                for (uint32_t t = 0; t < kc / 16; ++t) {
                    const uint16_t* at = ap + t * 2048;
                    _tile_loadd(6, b0 + t * 512, 64); _tile_loadd(4, at, 64); _tile_dpbf16ps(0, 4, 6);
                    _tile_loadd(7, b1 + t * 512, 64); _tile_dpbf16ps(1, 4, 7);
                    _tile_loadd(5, at + 1024, 64); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
                    _tile_loadd(4, at + 512, 64); _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7);
                    _tile_loadd(5, at + 1536, 64); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
                }
                _tile_stored(0, c, ldp * 4); _tile_stored(1, c + 16, ldp * 4);
                _tile_stored(2, c + 16 * ldp, ldp * 4); _tile_stored(3, c + 16 * ldp + 16, ldp * 4);
            }
        }
    }
    _tile_release();
    return finite;
}

}  // namespace

bool amx_gemm(ThreadPool& pool, uint32_t m, uint32_t n, uint32_t k, Float16Operand a, Float16Operand b,
              std::byte* workspace, const std::function<void(uint32_t, float*)>& store_row) {
    const Shape s(m, n, k);
    std::atomic<bool> finite{true};
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(workspace) + 63) & ~uintptr_t(63);
    uint16_t* bp = reinterpret_cast<uint16_t*>(aligned);
    float* p = reinterpret_cast<float*>(aligned + s.packed_b_bytes());
    pool.parallel_for(s.np / 16, 4, [&](size_t t0, size_t t1) {
        if (!pack_b(b, s, uint32_t(t0), uint32_t(t1), bp)) finite = false;
    });
    if (!finite) return false;
    uint32_t block = uint32_t(std::clamp<uint64_t>(kBlockBytes / (s.np * 4) / 32 * 32, 32, 256));
    if ((s.mp + block - 1) / block < pool.size()) block = std::max(32u, round_up(uint32_t((s.mp + pool.size() - 1) / pool.size()), 32));
    pool.parallel_for((s.mp + block - 1) / block, 1, [&](size_t b0, size_t b1) {
        for (size_t i = b0; i < b1; ++i) {
            const uint32_t r0 = uint32_t(i) * block, r1 = std::min(r0 + block, s.mp);
            if (!finite || !multiply_rows(a, s, bp, r0, r1, p)) {
                finite = false;
                continue;
            }
            for (uint32_t r = r0; r < std::min(r1, m); ++r) store_row(r, p + uint64_t(r) * s.np);
        }
    });
    return finite;
}

#else

bool amx_gemm(ThreadPool&, uint32_t, uint32_t, uint32_t, Float16Operand, Float16Operand, std::byte*,
              const std::function<void(uint32_t, float*)>&) {
    return false;
}

#endif

}  // namespace dml::cpu
