// float16 and float32 matrix products on AMX's BF16 tiles, where cpu_has_amx(). Each value is split exactly into
// bfloat16 pieces (two for float16's 11 significand bits, three for float's 24), so a b is a sum of products of
// pieces, each exact in float; TDPBF16PS sums pairs of them into float32 tiles. float16 keeps all four products;
// float keeps the six whose pieces' orders add to 2 or less, dropping a1 b2 + a2 b1 + a2 b2 (at most 2^-23 |a b|,
// about float's own rounding of one product).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "../../core/half.h"
#include "../thread_pool.h"

namespace dml::cpu {

// An operand read where it lies: element (i, k) at data[i * stride + k * k_stride], i being A's row or B's column.
template <class T>
struct AmxOperand {
    const T* data;
    int64_t stride, k_stride;
};

// Whether an M x K by K x N product of T (half or float) is worth the tiles' padding and packing on a pool of
// `threads` (fewer threads never take fewer products: a workspace sized for one thread fits).
template <class T>
bool amx_gemm_pays(uint32_t m, uint32_t n, uint32_t k, size_t threads);
// Scratch bytes amx_gemm<T> takes for an M x K by K x N product.
template <class T>
uint64_t amx_gemm_workspace(uint32_t m, uint32_t n, uint32_t k);

// The float32 products A B, each row r handed to store_row(r, row of n floats it may overwrite) on the pool's
// threads. False where an operand holds a value the pieces cannot carry, found as the operands are packed: an
// infinity or NaN (inf - inf is NaN, and inf times a zero piece gives NaN), a float that rounds to bfloat16's
// infinity, or a nonzero float below 2^-50 in magnitude (its products' pieces would fall below float's normal range,
// which the tiles flush to zero). Some rows may have been stored by then, and the caller computes the whole product
// another way.
template <class T>
bool amx_gemm(ThreadPool& pool, uint32_t m, uint32_t n, uint32_t k, AmxOperand<T> a, AmxOperand<T> b,
              std::byte* workspace, const std::function<void(uint32_t, float*)>& store_row);

}  // namespace dml::cpu
