// A fused attention kernel for float16 in the manner of FlashAttention-2: softmax(scale * Q K^T + mask) V without
// materializing the scores. A block of 8 warps takes 128 query rows of one (batch, head); each warp owns 16 of them
// (one m-tile). Key / value tiles stream through shared memory, double-buffered (cp.async: tile j + 1 loads
// while tile j computes; one barrier per tile); fragments come out of shared memory through ldmatrix; products run
// on the tensor cores (mma.sync m16n8k16, float16 in, float32 accumulators); the softmax is online (running row
// maximum and sum, in the exp2 domain) and P stays in registers. Operands are read through strides, so
// [batch, sequence, heads * head_size] tensors and the stacked forms need no repacking.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "../../core/ops/attention.h"

namespace dml::cuda {

// The key range [begin, end) a sequence-type mask leaves unmasked for batch entry b; keys outside it get
// MaskFilterValue added to their scores (cpu/kernels/attention.cpp's key_range). Other mask types: every key.
struct KeyRangeMask {
    const int32_t* data = nullptr;
    MultiheadAttentionMaskType type = MultiheadAttentionMaskType::None;
    int64_t stride0 = 0, stride1 = 0;  // the mask's trailing strides (one for the [3 * batch + 2] form)

    __device__ __forceinline__ void range(uint32_t b, int64_t total, int64_t& begin, int64_t& end) const {
        begin = 0, end = total;
        switch (type) {
            case MultiheadAttentionMaskType::KeySequenceLength: end = data[b * stride1]; break;
            case MultiheadAttentionMaskType::KeySequenceEndStart:  // row 0 the ends, row 1 the starts
                begin = data[stride0 + b * stride1], end = data[b * stride1];
                break;
            case MultiheadAttentionMaskType::KeyQuerySequenceLengthStartEnd: end = data[b * stride0]; break;
            default: break;
        }
    }
};

// Element (b, row, h, d) of an operand is at base[b * sb + row * sr + h * sh + d]: d is contiguous, base is 16-byte
// aligned and every stride is a multiple of 8 elements (cp.async moves 16 bytes).
struct FlashOperand {
    const __half* base;
    int64_t sb, sr, sh;
};

struct FlashParams {
    FlashOperand q, k, v;
    __half* out;  // packed [batch, S, H, D]
    uint32_t S, T, H;
    float scale_log2;   // scale * log2(e)
    float filter_log2;  // MaskFilterValue * log2(e)
    KeyRangeMask mask;
};

template <int D>
struct FlashConfig {
    static_assert(D % 16 == 0 && D <= 128);
    // 8 warps of one m-tile (16 query rows) and 2 blocks per SM (so at most 128 registers a thread): on the H200
    // 1.5x the speed of 4 warps of two m-tiles (more warps hide the mma / softmax latencies better) and 1.1x that
    // of 4 warps of one m-tile at 4 blocks per SM (bench/README.md). Tiles of 64 keys (32 at D = 128, where 64
    // spills registers).
    static constexpr int kThreads = 256, kMTiles = 1, kMinBlocks = 2;  // kMinBlocks per SM: caps the registers
    static constexpr int kBlockM = kThreads / 32 * 16 * kMTiles;
    static constexpr int kBlockN = D <= 64 ? 64 : 32;
    static constexpr int kStride = D + 8;  // shared row pitch in halves: 16 bytes of padding keep ldmatrix
                                           // conflict-free (8 rows at one column land on 8 distinct bank groups)
    static constexpr bool kQInRegisters = D <= 64;  // else Q fragments come from shared memory at each use
    static constexpr size_t kSharedBytes = size_t(kBlockM + 4 * kBlockN) * kStride * sizeof(__half);  // Q, 2 K, 2 V
};

// mma.sync, ldmatrix and cp.async need sm_80: PTX for an older architecture gets an empty kernel, which the host
// never launches (it reads the kernel's PTX version: attention.cu, flash_suits).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
namespace flash {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return uint32_t(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, through L2 only; src_bytes 0 writes zeros (rows past the end of the operand).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, uint32_t src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src),
                 "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, and register i of lane l then holds
// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix i (with .trans: rows 2 (l % 4), +1 of column l / 4).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const __half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __half* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}

// d += a b over one m16n8k16 tile. With g = lane / 4 and c = lane % 4 (low half of a register = lower index):
//   a (16x16, row-major): a0 = (row g, cols 2c, 2c+1), a1 = (row g+8, same cols), a2 = (row g, cols 2c+8, 2c+9),
//                         a3 = (row g+8, cols 2c+8, 2c+9)
//   b (16x8, k-major):    b0 = (k 2c, 2c+1; n g), b1 = (k 2c+8, 2c+9; n g)
//   d (16x8, float):      d0, d1 = (row g, cols 2c, 2c+1), d2, d3 = (row g+8, cols 2c, 2c+1)
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ float exp2_approx(float x) {  // one MUFU op; exp2(-inf) = 0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
}

// Rows [row0, row0 + ROWS) of an operand (row stride `rs`, D contiguous halves each) into a shared tile; rows at or
// past `rows` read as zeros (their address clamped to row 0, which exists).
template <int D, int ROWS>
__device__ __forceinline__ void load_tile(__half* tile, const __half* g, int64_t rs, int row0, int rows, int tid) {
    using C = FlashConfig<D>;
    constexpr int kChunks = D / 8;  // 16-byte chunks per row
    static_assert(ROWS * kChunks % C::kThreads == 0);
#pragma unroll
    for (int i = 0; i < ROWS * kChunks / C::kThreads; ++i) {
        const int c = tid + i * C::kThreads, r = c / kChunks, col = c % kChunks * 8;
        const bool inside = row0 + r < rows;
        cp_async16(tile + r * C::kStride + col, g + (inside ? row0 + r : 0) * rs + col, inside ? 16 : 0);
    }
}

}  // namespace flash
#endif

template <int D>
__global__ void __launch_bounds__(FlashConfig<D>::kThreads, FlashConfig<D>::kMinBlocks)
    flash_attention_kernel(const FlashParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using namespace flash;
    using C = FlashConfig<D>;
    constexpr int kBlockN = C::kBlockN, kMT = C::kMTiles, kStride = C::kStride, kNT = kBlockN / 8, kDT = D / 8;
    constexpr int kTile = kBlockN * kStride;  // halves of one K or V tile
    extern __shared__ __align__(16) unsigned char flash_shared[];
    __half* sQ = reinterpret_cast<__half*>(flash_shared);
    __half* sK = sQ + C::kBlockM * kStride;  // two K tiles, then two V tiles: tile j lives in buffer j % 2
    __half* sV = sK + 2 * kTile;

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, c = lane % 4;
    const uint32_t b = blockIdx.z, h = blockIdx.y;
    const int m0 = blockIdx.x * C::kBlockM;
    const __half* q = p.q.base + b * p.q.sb + h * p.q.sh;
    const __half* k = p.k.base + b * p.k.sb + h * p.k.sh;
    const __half* v = p.v.base + b * p.v.sb + h * p.v.sh;
    const int n_keys = int(p.T);  // the host keeps S and T below 2^31

    load_tile<D, C::kBlockM>(sQ, q, p.q.sr, m0, int(p.S), tid);
    load_tile<D, kBlockN>(sK, k, p.k.sr, 0, n_keys, tid);
    load_tile<D, kBlockN>(sV, v, p.v.sr, 0, n_keys, tid);
    cp_async_commit();

    // The unmasked keys [begin, end), clamped to [0, T) so that key tests stay 32-bit.
    int64_t begin64, end64;
    p.mask.range(b, p.T, begin64, end64);
    auto clamp_key = [&](int64_t key) { return int(min(max(key, int64_t(0)), int64_t(n_keys))); };
    const int begin = clamp_key(begin64), end = clamp_key(end64);

    // Per-lane ldmatrix row / column within a 16x16 block (see ldmatrix_x4 and mma):
    //  Q (A operand): matrices = rows 0-7 / 8-15 x cols 0-7 / 8-15 -> a0..a3.
    const int qa_row = lane % 16, qa_col = lane / 16 * 8;
    //  K (B operand of Q K^T, rows = keys n, cols = dims k, not transposed): matrices = (keys 0-7, dims 0-7),
    //  (keys 0-7, dims 8-15), (keys 8-15, dims 0-7), (keys 8-15, dims 8-15) -> b0, b1 of n-tile 0, b0, b1 of n-tile 1.
    const int kb_row = lane % 8 + lane / 16 * 8, kb_col = lane / 8 % 2 * 8;
    //  V (B operand of P V, rows = keys k, cols = dims n, transposed): matrices = (keys 0-7, dims 0-7),
    //  (keys 8-15, dims 0-7), (keys 0-7, dims 8-15), (keys 8-15, dims 8-15) -> b0, b1 of d-tile 0, b0, b1 of d-tile 1.
    const int vb_row = lane % 8 + lane / 8 % 2 * 8, vb_col = lane / 16 * 8;
    const __half* q_warp = sQ + warp * (16 * kMT) * kStride;

    float o[kMT][kDT][4] = {};                 // O accumulators: m-tile, d-tile of 8 columns, fragment d0..d3
    float row_max[kMT][2], row_sum[kMT][2];     // per m-tile, rows g and g + 8 (row_sum: this lane's columns only)
    uint32_t qf[kMT][C::kQInRegisters ? D / 16 : 1][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
        for (int r = 0; r < 2; ++r) row_max[mt][r] = -INFINITY, row_sum[mt][r] = 0.0f;

    const int blocks = (n_keys + kBlockN - 1) / kBlockN;
    for (int j = 0; j < blocks; ++j) {
        const int key0 = j * kBlockN;
        cp_async_wait_all();
        __syncthreads();  // tile j (and Q) landed for every thread; every warp is done with tile j - 1
        if (j + 1 < blocks) {  // tile j + 1 loads into the other buffer while tile j computes
            const int next = (j + 1) % 2 * kTile;
            load_tile<D, kBlockN>(sK + next, k, p.k.sr, key0 + kBlockN, n_keys, tid);
            load_tile<D, kBlockN>(sV + next, v, p.v.sr, key0 + kBlockN, n_keys, tid);
            cp_async_commit();
        }
        const __half* tK = sK + j % 2 * kTile;
        const __half* tV = sV + j % 2 * kTile;
        if constexpr (C::kQInRegisters)
            if (j == 0)
#pragma unroll
                for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
                    for (int kk = 0; kk < D / 16; ++kk)
                        ldmatrix_x4(qf[mt][kk], q_warp + (mt * 16 + qa_row) * kStride + kk * 16 + qa_col);

        // S = Q K_j^T: s[mt][nt] is the 16x8 tile of keys key0 + 8 nt.
        float s[kMT][kNT][4] = {};
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
            uint32_t a[kMT][4];
#pragma unroll
            for (int mt = 0; mt < kMT; ++mt) {
                if constexpr (C::kQInRegisters)
                    for (int r = 0; r < 4; ++r) a[mt][r] = qf[mt][kk][r];
                else
                    ldmatrix_x4(a[mt], q_warp + (mt * 16 + qa_row) * kStride + kk * 16 + qa_col);
            }
#pragma unroll
            for (int np = 0; np < kNT / 2; ++np) {
                uint32_t bf[4];
                ldmatrix_x4(bf, tK + (np * 16 + kb_row) * kStride + kk * 16 + kb_col);
#pragma unroll
                for (int mt = 0; mt < kMT; ++mt) {
                    mma(s[mt][2 * np], a[mt], bf[0], bf[1]);
                    mma(s[mt][2 * np + 1], a[mt], bf[2], bf[3]);
                }
            }
        }

        // P = exp2(x - running max) as float16 A fragments of P V: the accumulator tiles of keys 16 kk.. and
        // 16 kk + 8.. are, element for element, P's A fragment for k-step kk ((d0, d1) of the first -> a0, (d2, d3)
        // -> a1, the second's -> a2, a3).
        uint32_t pf[kMT][kNT / 2][4];
        // Online softmax in the exp2 domain. A tile wholly inside [begin, end) (which lies within the keys) needs no
        // per-key test; keys past the end get -inf (no weight), masked keys MaskFilterValue as the CPU adds it.
        const bool plain = key0 >= begin && key0 + kBlockN <= end;
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
            for (int r = 0; r < 2; ++r) {  // row g (fragment elements 0, 1) and row g + 8 (elements 2, 3)
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        float& x = s[mt][nt][2 * r + e];
                        if (plain) {
                            x *= p.scale_log2;
                        } else {
                            const int key = key0 + nt * 8 + 2 * c + e;
                            x = key >= n_keys ? -INFINITY
                                              : x * p.scale_log2 + (key < begin || key >= end ? p.filter_log2 : 0.0f);
                        }
                        mx = fmaxf(mx, x);
                    }
                // The four lanes of a quad hold one row.
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float new_max = fmaxf(row_max[mt][r], mx);
                const float base = new_max == -INFINITY ? 0.0f : new_max;  // a row with no weight yet stays at 0
                const float rescale = exp2_approx(row_max[mt][r] - base);
                row_max[mt][r] = new_max;
                float sum = 0.0f;
#pragma unroll
                for (int nt = 0; nt < kNT; ++nt) {
                    const float x0 = exp2_approx(s[mt][nt][2 * r] - base);
                    const float x1 = exp2_approx(s[mt][nt][2 * r + 1] - base);
                    sum += x0 + x1;
                    pf[mt][nt / 2][nt % 2 * 2 + r] = pack_half2(x0, x1);
                }
                row_sum[mt][r] = row_sum[mt][r] * rescale + sum;
                if (__any_sync(0xffffffffu, rescale != 1.0f))  // once the maxima settle, most tiles skip this
#pragma unroll
                    for (int dt = 0; dt < kDT; ++dt) o[mt][dt][2 * r] *= rescale, o[mt][dt][2 * r + 1] *= rescale;
            }

        // O += P V_j.
#pragma unroll
        for (int kk = 0; kk < kNT / 2; ++kk) {
#pragma unroll
            for (int dp = 0; dp < kDT / 2; ++dp) {
                uint32_t bf[4];
                ldmatrix_x4_trans(bf, tV + (kk * 16 + vb_row) * kStride + dp * 16 + vb_col);
#pragma unroll
                for (int mt = 0; mt < kMT; ++mt) {
                    mma(o[mt][2 * dp], pf[mt][kk], bf[0], bf[1]);
                    mma(o[mt][2 * dp + 1], pf[mt][kk], bf[2], bf[3]);
                }
            }
        }
    }

    // O / row sum, to out[b, row, h, :]; lane (g, c) holds columns 8 dt + 2c, +1 of rows g and g + 8.
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float l = row_sum[mt][r];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const float inv = 1.0f / l;
            const int row = m0 + warp * (16 * kMT) + mt * 16 + r * 8 + g;
            if (row >= int(p.S)) continue;
            __half* dst = p.out + ((int64_t(b) * p.S + row) * p.H + h) * D + 2 * c;
#pragma unroll
            for (int dt = 0; dt < kDT; ++dt)
                *reinterpret_cast<__half2*>(dst + dt * 8) =
                    __floats2half2_rn(o[mt][dt][2 * r] * inv, o[mt][dt][2 * r + 1] * inv);
        }
#endif
}

}  // namespace dml::cuda
