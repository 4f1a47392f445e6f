// Activation kernels: the element-wise activations, parameterized relu, and softmax / log-softmax / hardmax
// over a set of axes.
#include "../../core/ops/activation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../../executor/scalar_math.h"
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
                map_elements<T, T>(args, [&](T x) { return T(activate<A>(f, C(x))); });
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
    if (log) {
        const float lse = mx + std::log(sum);
        for (uint64_t i = 0; i < n; ++i) y[i] = x[i] - lse;
    } else {
        const float inv = 1.0f / sum;
        for (uint64_t i = 0; i < n; ++i) y[i] *= inv;
    }
}

// Softmax / log-softmax of float rows contiguous in input and output.
void softmax_rows(const KernelArgs& args, const AxisSplit& s) {
    const bool log = args.desc<SoftmaxDesc>().function == SoftmaxFunction::LogSoftmax;
    const float* in = args.inputs[0].as<float>();
    float* out = args.outputs[0].as<float>();
    const uint64_t n = s.inner_count;
    args.pool.parallel_for(s.outer_count, std::max<uint64_t>(1, 8192 / n), [&](size_t b, size_t e) {
        for (size_t g = b; g < e; ++g) {
            int64_t gi, go;
            AxisSplit::offsets(g, s.outer_sizes, s.in_outer, s.out_outer, gi, go);
            softmax_row(in + gi, out + go, n, log);
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
                        C lse = mx + std::log(sum);
                        for (uint64_t i = 0; i < s.inner_count; ++i) out[go + out_off[i]] = T(C(in[gi + in_off[i]]) - lse);
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
