// float16 matrix products on AMX's BF16 tiles, where cpu_has_amx(). Each finite float16 is exactly the sum of two
// bfloat16 (hi: its value truncated to bfloat16's 8 significand bits, lo: the other 3), so a b = ah bh + ah bl +
// al bh + al bl, every term exact in float; TDPBF16PS sums them into float32 tiles. A row's k holds the pairs (ah,
// al) and (al, ah), B's column (bh, bl): the pairwise dot products give ah bh + al bl and al bh + ah bl.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "../../core/half.h"
#include "../thread_pool.h"

namespace dml::cpu {

// A float16 operand read where it lies: element (i, k) at data[i * stride + k * k_stride], i being A's row or B's
// column.
struct Float16Operand {
    const half* data;
    int64_t stride, k_stride;
};

// Whether an M x K by K x N product is worth the tiles' padding and packing.
bool amx_gemm_pays(uint32_t m, uint32_t n, uint32_t k);
// Scratch bytes amx_gemm takes for an M x K by K x N product.
uint64_t amx_gemm_workspace(uint32_t m, uint32_t n, uint32_t k);

// The float32 products A B, each row r handed to store_row(r, row of n floats it may overwrite) on the pool's
// threads. False where an operand holds an infinity or NaN, which the split cannot carry (inf - inf is NaN, and inf
// times a zero lo gives NaN), found as the operands are packed: some rows may have been stored by then, and the
// caller computes the whole product another way.
bool amx_gemm(ThreadPool& pool, uint32_t m, uint32_t n, uint32_t k, Float16Operand a, Float16Operand b,
              std::byte* workspace, const std::function<void(uint32_t, float*)>& store_row);

}  // namespace dml::cpu
