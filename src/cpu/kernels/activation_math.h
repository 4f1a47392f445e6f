// Scalar definitions of DirectML's element-wise activations, shared by the activation operators and by every
// kernel that fuses an activation into its output.
#pragma once
#include <algorithm>
#include <cmath>

#include "../../core/ops/activation.h"

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
    }
    return x;
}

// Applies `f` in place to `n` packed elements of type T (no-op for None).
template <class T>
inline void apply_activation_inplace(const FusedActivation& f, T* data, size_t n) {
    if (f.is_none()) return;
    for (size_t i = 0; i < n; ++i) data[i] = T(apply_activation(f, compute_t<T>(data[i])));
}

}  // namespace dml::cpu
