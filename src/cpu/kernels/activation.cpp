// Activation kernels: the element-wise activations, parameterized relu, and softmax / log-softmax / hardmax
// over a set of axes.
#include "../../core/ops/activation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(DML_X86_DISPATCH) && defined(__linux__)
#include <immintrin.h>
#endif

#include "../../executor/scalar_math.h"
#include "isa.h"
#include "kernel.h"
#include "strided.h"
#include "vector_math.h"

namespace dml::cpu {

namespace {

void run_activation(const KernelArgs& args) {
    const FusedActivation& f = args.desc<ActivationDesc>().activation;
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        if constexpr (std::is_floating_point_v<C>)  // the function a constant: each loop vectorizes
            with_activation(f.function, [&]<ActivationFunction A>() {
                map_computed<T, 1>(args, [&](C x) { return activate<A>(f, x); });
            });
        else  // integers: RELU only (the builder admits no other)
            map_elements<T, T>(args, [](T x) { return x > T(0) ? x : T(0); });
    });
}

void run_parameterized_relu(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        // x >= 0 passes as stored (no float16 round trip); the rest is the shared definition
        map_elements<T, T, T>(args, [](T x, T slope) {
            return C(x) >= C(0) ? x : T(parameterized_relu(C(x), C(slope)));
        });
    });
}

// Softmax / log-softmax of one float row: the exponentials go to the output row, then are scaled in place. Built
// for each x86-64 vector width (DML_VECTOR_CLONES), picked at load time from what the processor has.
DML_VECTOR_CLONES void softmax_row(const float* x, float* y, uint64_t n, bool log) {
    const float mx = lane_max(x, n);
    for (uint64_t i = 0; i < n; ++i) y[i] = vector_exp(x[i] - mx);
    const float sum = lane_sum(y, n);
    if (log) {  // (x - max) - log(sum): adding log(sum) to a large max first would round it away
        const float log_sum = std::log(sum);
        for (uint64_t i = 0; i < n; ++i) y[i] = (x[i] - mx) - log_sum;
    } else {
        const float inv = 1.0f / sum;
        for (uint64_t i = 0; i < n; ++i) y[i] *= inv;
    }
}

#if defined(DML_X86_DISPATCH) && defined(__linux__)
// exp of 16 floats: vector_exp's reduction and polynomial, 2^n applied by vscalefps, which itself gives 0 and
// infinity past the float range where vector_exp clamps and selects (inputs below -104 are taken as -104: 0 all
// the same). A third fewer instructions: softmax's [1024 x 1000] rows 15-20 % faster in a C++ loop.
__attribute__((target("arch=x86-64-v4"))) [[gnu::always_inline]] inline __m512 exp16(__m512 x) {
    using namespace exp_constants;
    const __m512 c = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // a NaN x stays: the second operand's
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(c, _mm512_set1_ps(log2e)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_lo), _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_hi), c));
    __m512 p = _mm512_set1_ps(poly[0]);
    for (int k = 1; k < 8; ++k) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(poly[k]));
    return _mm512_scalef_ps(p, n);
}

// softmax_row on AVX-512: the exponentials summed as they are stored (log-softmax only sums them), the last
// vector masked.
__attribute__((target("arch=x86-64-v4"))) void softmax_row_avx512(const float* x, float* y, uint64_t n, bool log) {
    const __m512 mx = _mm512_set1_ps(lane_max(x, n));
    __m512 sum = _mm512_setzero_ps();
    for (uint64_t i = 0; i < n; i += 16) {
        const __mmask16 k = first_lanes(int64_t(n - i));
        const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mx));
        if (!log) _mm512_mask_storeu_ps(y + i, k, e);
        sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, e));
    }
    const float total = _mm512_reduce_add_ps(sum);
    if (log) {
        const __m512 log_sum = _mm512_set1_ps(std::log(total));
        for (uint64_t i = 0; i < n; i += 16) {
            const __mmask16 k = first_lanes(int64_t(n - i));
            _mm512_mask_storeu_ps(y + i, k, _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mx), log_sum));
        }
    } else {
        const __m512 inv = _mm512_set1_ps(1.0f / total);
        for (uint64_t i = 0; i < n; i += 16) {
            const __mmask16 k = first_lanes(int64_t(n - i));
            _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, y + i), inv));
        }
    }
}
#endif

// The softmax_row for this processor.
void (*softmax_row_for())(const float*, float*, uint64_t, bool) {
#if defined(DML_X86_DISPATCH) && defined(__linux__)
    if (cpu_isa() == Isa::Avx512) return softmax_row_avx512;
#endif
    return softmax_row;
}

// Softmax / log-softmax of float rows contiguous in input and output.
void softmax_rows(const KernelArgs& args, const AxisSplit& s) {
    const bool log = args.desc<SoftmaxDesc>().function == SoftmaxFunction::LogSoftmax;
    const float* in = args.inputs[0].as<float>();
    float* out = args.outputs[0].as<float>();
    const uint64_t n = s.inner_count;
    const auto row = softmax_row_for();
    args.pool.parallel_for(s.outer_count, std::max<uint64_t>(1, 8192 / n), [&](size_t b, size_t e) {
        for (size_t g = b; g < e; ++g) {
            int64_t gi, go;
            AxisSplit::offsets(g, s.outer_sizes, s.in_outer, s.out_outer, gi, go);
            row(in + gi, out + go, n, log);
        }
    });
}

void run_softmax(const KernelArgs& args) {
    const auto& d = args.desc<SoftmaxDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    AxisSplit s(*x.desc, *y.desc, d.axes);
    std::vector<int64_t> in_off(s.inner_count), out_off(s.inner_count);
    for (uint64_t i = 0; i < s.inner_count; ++i)
        AxisSplit::offsets(i, s.inner_sizes, s.in_inner, s.out_inner, in_off[i], out_off[i]);
    // Rows contiguous in input and output (the usual softmax over the last axis) take vector loops.
    bool rows_packed = true;
    for (uint64_t i = 0; i < s.inner_count; ++i) rows_packed &= in_off[i] == int64_t(i) && out_off[i] == int64_t(i);
    visit_data_type(y.desc->data_type, [&]<class T>() {
        using C = std::conditional_t<std::is_same_v<compute_t<T>, double>, double, float>;
        if constexpr (std::is_same_v<T, float>) {
            if (rows_packed && d.function != SoftmaxFunction::Hardmax) return softmax_rows(args, s);
        }
        if constexpr (std::is_floating_point_v<compute_t<T>>) {
            const T* in = x.as<T>();
            T* out = y.as<T>();
            args.pool.parallel_for(s.outer_count, std::max<uint64_t>(1, 4096 / s.inner_count), [&](size_t b, size_t e) {
                std::vector<C> exps(s.inner_count);  // each exponential is computed once
                for (size_t g = b; g < e; ++g) {
                    int64_t gi, go;
                    AxisSplit::offsets(g, s.outer_sizes, s.in_outer, s.out_outer, gi, go);
                    C mx = -std::numeric_limits<C>::infinity();
                    uint64_t arg = 0;
                    for (uint64_t i = 0; i < s.inner_count; ++i) {
                        C v = C(in[gi + in_off[i]]);
                        if (v > mx) mx = v, arg = i;
                    }
                    if (d.function == SoftmaxFunction::Hardmax) {
                        for (uint64_t i = 0; i < s.inner_count; ++i) out[go + out_off[i]] = T(C(i == arg ? 1 : 0));
                        continue;
                    }
                    C sum = 0;
                    for (uint64_t i = 0; i < s.inner_count; ++i) sum += exps[i] = std::exp(C(in[gi + in_off[i]]) - mx);
                    if (d.function == SoftmaxFunction::LogSoftmax) {
                        const C log_sum = std::log(sum);
                        for (uint64_t i = 0; i < s.inner_count; ++i)
                            out[go + out_off[i]] = T((C(in[gi + in_off[i]]) - mx) - log_sum);
                    } else {
                        const C inv = C(1) / sum;
                        for (uint64_t i = 0; i < s.inner_count; ++i) out[go + out_off[i]] = T(exps[i] * inv);
                    }
                }
            });
        }
    });
}

}  // namespace

void register_activation_kernels(KernelTable& t) {
    add_kernel<ActivationDesc>(t, {run_activation});
    add_kernel<ParameterizedReluDesc>(t, {run_parameterized_relu});
    add_kernel<SoftmaxDesc>(t, {run_softmax});
}

}  // namespace dml::cpu
