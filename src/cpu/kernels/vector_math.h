// Loop bodies the compiler turns into vector code: a branch-free float exponential (std::exp is a library call
// per element, which no loop vectorizes), reductions kept in several independent lanes (a single running sum or
// maximum is one long dependency chain, and float addition may not be reordered for us), and fused activations
// inlined.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../../executor/scalar_math.h"
#include "../../executor/type_visits.h"
#include "float16_rows.h"

// A hot loop built once per x86-64 vector width (AVX-512, AVX2 with FMA, the baseline) and picked when the module
// loads (GCC / Clang function multi-versioning, x86-64 Linux builds); elsewhere the one baseline build. The helpers
// below are always inlined, so each version holds its own copy and none compiled for a wider unit is shared.
#if defined(DML_X86_DISPATCH) && defined(__linux__)
#define DML_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DML_VECTOR_CLONES
#endif

namespace dml::cpu {

// The reduction's constants (ln 2 in two parts: n * ln2_hi is exact) and the polynomial's coefficients, highest
// first, shared with the AVX-512 softmax's exponential (activation.cpp).
namespace exp_constants {
constexpr float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
constexpr float poly[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f, 1.0f};
}  // namespace exp_constants

// exp(x) within 2 ulp for float: x = n ln2 + r with |r| <= ln2 / 2, exp(r) by its Taylor polynomial to r^7
// (Horner), 2^n placed in the exponent bits. Below -87.3 (where exp leaves the normal floats) it gives 0, above
// 88.4 +inf; NaN stays NaN. Selects, not branches, so that loops of it vectorize.
[[gnu::always_inline]] inline float vector_exp(float x) {
    using namespace exp_constants;
    constexpr float round_magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    float c = x < -87.3f ? -87.3f : x;
    c = c > 88.7f ? 88.7f : c;
    const float n = (c * log2e + round_magic) - round_magic;
    const float r = (c - n * ln2_hi) - n * ln2_lo;
    float p = poly[0];
    for (int k = 1; k < 8; ++k) p = p * r + poly[k];
    const float scale = std::bit_cast<float>(uint32_t(int32_t(n) + 127) << 23);
    const float e = p * scale;  // NaN in, NaN out: it runs through the polynomial
    return x < -87.3f ? 0.0f : e;
}

// apply_activation with the function a constant: the common ones inline (the shared definition's switch is too
// large to inline, which would leave a call per element), sigmoid and swish in float on vector_exp (expf is a
// library call per element), the rest through the shared definition.
template <ActivationFunction A, class C>
inline C activate(const FusedActivation& f, C x) {
    constexpr bool on_vector_exp = std::is_same_v<C, float>;
    if constexpr (A == ActivationFunction::None || A == ActivationFunction::Identity) return x;
    else if constexpr (A == ActivationFunction::Relu) return x > C(0) ? x : C(0);
    else if constexpr (A == ActivationFunction::Sigmoid && on_vector_exp) return 1.0f / (1.0f + vector_exp(-x));
    else if constexpr (A == ActivationFunction::Swish && on_vector_exp) return x / (1.0f + vector_exp(-f.alpha * x));
    else return apply_activation(FusedActivation{A, f.alpha, f.beta}, x);
}

// y[i] = T(act(x[i])) over a packed run (y may be x), in the output's compute type, the function a constant in
// the loop (activate_run picks it).
template <ActivationFunction A, class T, class X>
DML_VECTOR_CLONES void activate_row(const FusedActivation& f, const X* x, T* y, uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) y[i] = T(activate<A>(f, compute_t<T>(x[i])));
}
template <class T, class X>
void activate_run(const FusedActivation& f, const X* x, T* y, uint64_t n) {
    if constexpr (std::is_same_v<T, half> && std::is_same_v<X, float>) {
        // Float results into float16: activated a block at a time in float, then narrowed by F16C
        // (float16_rows.h), where half's own conversion, value by value, costs more than most activations.
        if (f.is_none()) return narrow(x, y, n);
        constexpr uint64_t kBlock = 256;
        float block[kBlock];
        for (uint64_t b = 0; b < n; b += kBlock) {
            const uint64_t m = std::min(kBlock, n - b);
            activate_run(f, x + b, block, m);
            narrow(block, y + b, m);
        }
    } else {
        with_activation(f.function, [&]<ActivationFunction A>() { activate_row<A>(f, x, y, n); });
    }
}

// Kept in kLanes independent partial results, combined at the end.
constexpr int kLanes = 16;

template <class C>
[[gnu::always_inline]] inline C lane_sum(const C* x, uint64_t n) {
    C acc[kLanes] = {};
    uint64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
    for (; i < n; ++i) acc[0] += x[i];
    C s = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l];
    return s;
}

// The largest element that is not NaN (-inf if none is).
template <class C>
[[gnu::always_inline]] inline C lane_max(const C* x, uint64_t n) {
    C acc[kLanes];
    std::fill(acc, acc + kLanes, -std::numeric_limits<C>::infinity());
    uint64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) acc[l] = x[i + l] > acc[l] ? x[i + l] : acc[l];
    for (; i < n; ++i) acc[0] = x[i] > acc[0] ? x[i] : acc[0];
    return *std::max_element(acc, acc + kLanes);
}

}  // namespace dml::cpu
