// Linear quantization as DirectML defines it, shared by the quantize operators and the quantized GEMM and
// convolution kernels: q = clamp(round(x / scale) + zero_point, min, max) with halves rounded to even, and
// x = (q - zero_point) * scale back.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernel.h"

namespace dml::cpu {

// round(v) + zero_point saturated to Q's range. DirectML leaves NaN undefined; it saturates to Q's minimum here so
// that no NaN ever reaches a float-to-integer conversion.
template <class Q, class F>
Q quantize_rounded(F v, F zero_point) {
    const F r = std::nearbyint(v) + zero_point;
    if (!(r >= F(std::numeric_limits<Q>::min()))) return std::numeric_limits<Q>::min();
    if (r >= F(std::numeric_limits<Q>::max())) return std::numeric_limits<Q>::max();
    return Q(r);
}

// Element `offset` of any tensor read as R.
template <class R>
R read_as(const TensorArg& t, int64_t offset) {
    return visit_data_type(t.desc->data_type, [&]<class T>() { return R(compute_t<T>(t.as<T>()[offset])); });
}

// The element offset of entry `i` along `axis` of a parameter tensor that is either per tensor (size 1 there) or
// per entry along that axis; every other dimension has size 1.
inline int64_t parameter_offset(const TensorDesc& d, size_t axis, uint32_t i) {
    return d.sizes[axis] == 1 ? 0 : int64_t(i) * d.effective_strides()[axis];
}

// An optional parameter tensor's value (`fallback` when it is left out).
template <class R>
R parameter(const TensorArg& t, size_t axis, uint32_t i, R fallback) {
    return t ? read_as<R>(t, parameter_offset(*t.desc, axis, i)) : fallback;
}

// Stores an exact integer accumulator as INT32 the way a 32-bit integer unit would: wrapping modulo 2^32.
inline int32_t wrap_int32(double exact) { return int32_t(uint32_t(uint64_t(int64_t(exact)))); }

}  // namespace dml::cpu
