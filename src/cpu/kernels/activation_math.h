// Scalar definitions of DirectML's element-wise activations, shared by the activation operators and by every
// kernel that fuses an activation into its output; and map_elements, the strided element-wise loop that the
// element-wise and activation kernels share.
#pragma once
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "../../core/ops/activation.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

template <class C>
inline C apply_activation(const FusedActivation& f, C x) {
    const C a = C(f.alpha), b = C(f.beta);
    switch (f.function) {
        case ActivationFunction::None:
        case ActivationFunction::Identity: return x;
        case ActivationFunction::Relu: return x > C(0) ? x : C(0);
        case ActivationFunction::LeakyRelu: return x >= C(0) ? x : a * x;
        case ActivationFunction::Sigmoid: return C(1) / (C(1) + std::exp(-x));
        case ActivationFunction::Tanh: return std::tanh(x);
        case ActivationFunction::Elu: return x >= C(0) ? x : a * (std::exp(x) - C(1));
        case ActivationFunction::Celu: return std::max(C(0), x) + std::min(C(0), a * (std::exp(x / a) - C(1)));
        case ActivationFunction::HardSigmoid: return std::max(C(0), std::min(a * x + b, C(1)));
        case ActivationFunction::Linear: return a * x + b;
        case ActivationFunction::ParametricSoftplus: return a * std::log1p(std::exp(b * x));
        case ActivationFunction::ScaledElu: return x > C(0) ? b * x : b * a * (std::exp(x) - C(1));
        case ActivationFunction::ScaledTanh: return a * std::tanh(b * x);
        case ActivationFunction::Softplus: return std::log1p(std::exp(a * x)) / a;
        case ActivationFunction::Softsign: return x / (C(1) + std::abs(x));
        case ActivationFunction::ThresholdedRelu: return x > a ? x : C(0);
        case ActivationFunction::Shrink: return x < -b ? x + a : (x > b ? x - a : C(0));
        case ActivationFunction::Gelu: return C(0.5) * x * (C(1) + std::erf(x / C(1.4142135623730951)));
        case ActivationFunction::Swish: return x / (C(1) + std::exp(-a * x));
        case ActivationFunction::HardSwish: return x * std::max(C(0), std::min(a * x + b, C(1)));
    }
    return x;
}

// Applies `f` in place to `n` packed elements of type T (no-op for None).
template <class T>
inline void apply_activation_inplace(const FusedActivation& f, T* data, size_t n) {
    if (f.is_none()) return;
    for (size_t i = 0; i < n; ++i) data[i] = T(apply_activation(f, compute_t<T>(data[i])));
}

namespace detail {
template <class Out, class... In, class F, size_t... I>
void map_elements(const KernelArgs& args, F& f, std::index_sequence<I...>) {
    constexpr size_t N = sizeof...(In) + 1;
    const TensorArg& y = args.outputs[0];
    Out* out = y.as<Out>();
    const std::tuple<const In*...> in{args.inputs[I].template as<In>()...};
    for_each_row<N>(args.pool, y.desc->sizes,
                    std::array<Strides, N>{y.desc->effective_strides(), args.inputs[I].desc->effective_strides()...},
                    [&](auto off, auto st, uint64_t n) {
                        Out* o = out + off[0];  // the output is packed: its inner stride is 1
                        for (uint64_t j = 0; j < n; ++j)
                            o[j] = f(std::get<I>(in)[off[I + 1] + int64_t(j) * st[I + 1]]...);
                    });
}
}  // namespace detail

// out[i] = f(in0[i], in1[i], ...) over the packed output, each input read (as its stored type In) through its
// own strides, zero strides included.
template <class Out, class... In, class F>
void map_elements(const KernelArgs& args, F&& f) {
    detail::map_elements<Out, In...>(args, f, std::index_sequence_for<In...>{});
}

}  // namespace dml::cpu
