// Element-wise kernels: unary math (with DirectML's input scale/bias), binary arithmetic, clip and cast.
#include "../../core/ops/elementwise.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "activation_math.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

template <class T, class F>
void map_unary(const KernelArgs& args, F&& f) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const T* in = x.as<T>();
    T* out = y.as<T>();
    for_each_row<2>(args.pool, y.desc->sizes, {y.desc->effective_strides(), x.desc->effective_strides()},
                    [&](auto off, auto st, uint64_t n) {
                        T* o = out + off[0];
                        const T* i = in + off[1];
                        for (uint64_t j = 0; j < n; ++j) o[j] = T(f(compute_t<T>(i[int64_t(j) * st[1]])));
                    });
}

template <class C>
C sign_of(C x) {
    return C((C(0) < x) - (x < C(0)));
}

template <class T>
void run_unary_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<UnaryDesc>();
    const C scale = d.scale_bias ? C(d.scale_bias->scale) : C(1), bias = d.scale_bias ? C(d.scale_bias->bias) : C(0);
    auto with = [&](auto fn) {
        if (d.scale_bias) map_unary<T>(args, [&](C x) { return fn(x * scale + bias); });
        else map_unary<T>(args, fn);
    };
    if constexpr (std::is_floating_point_v<C>) {
        switch (d.function) {
            case UnaryFunction::Identity: return with([](C x) { return x; });
            case UnaryFunction::Abs: return with([](C x) { return std::abs(x); });
            case UnaryFunction::ACos: return with([](C x) { return std::acos(x); });
            case UnaryFunction::ACosh: return with([](C x) { return std::acosh(x); });
            case UnaryFunction::ASin: return with([](C x) { return std::asin(x); });
            case UnaryFunction::ASinh: return with([](C x) { return std::asinh(x); });
            case UnaryFunction::ATan: return with([](C x) { return std::atan(x); });
            case UnaryFunction::ATanh: return with([](C x) { return std::atanh(x); });
            case UnaryFunction::Ceil: return with([](C x) { return std::ceil(x); });
            case UnaryFunction::Cos: return with([](C x) { return std::cos(x); });
            case UnaryFunction::Cosh: return with([](C x) { return std::cosh(x); });
            case UnaryFunction::Erf: return with([](C x) { return std::erf(x); });
            case UnaryFunction::Exp: return with([](C x) { return std::exp(x); });
            case UnaryFunction::Floor: return with([](C x) { return std::floor(x); });
            case UnaryFunction::Log: return with([](C x) { return std::log(x); });
            case UnaryFunction::Recip: return with([](C x) { return C(1) / x; });
            case UnaryFunction::Sin: return with([](C x) { return std::sin(x); });
            case UnaryFunction::Sinh: return with([](C x) { return std::sinh(x); });
            case UnaryFunction::Sqrt: return with([](C x) { return std::sqrt(x); });
            case UnaryFunction::Tan: return with([](C x) { return std::tan(x); });
            case UnaryFunction::Tanh: return with([](C x) { return std::tanh(x); });
            case UnaryFunction::Negate: return with([](C x) { return -x; });
            case UnaryFunction::Sign: return with([](C x) { return sign_of(x); });
        }
    } else {
        // Integer tensors: the builder admits only these, without scale/bias. Negation wraps like DirectML's.
        using U = std::make_unsigned_t<C>;
        switch (d.function) {
            case UnaryFunction::Identity: return map_unary<T>(args, [](C x) { return x; });
            case UnaryFunction::Abs: return map_unary<T>(args, [](C x) { return x < C(0) ? C(U(0) - U(x)) : x; });
            case UnaryFunction::Negate: return map_unary<T>(args, [](C x) { return C(U(0) - U(x)); });
            case UnaryFunction::Sign: return map_unary<T>(args, [](C x) { return sign_of(x); });
            default: break;
        }
    }
    throw std::logic_error("unary function not available for this type");
}

void run_unary(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() { run_unary_typed<T>(args); });
}

template <class T, class F>
void map_binary(const KernelArgs& args, const FusedActivation& fused, F&& f) {
    const TensorArg &a = args.inputs[0], &b = args.inputs[1], &y = args.outputs[0];
    const T* pa = a.as<T>();
    const T* pb = b.as<T>();
    T* out = y.as<T>();
    for_each_row<3>(args.pool, y.desc->sizes,
                    {y.desc->effective_strides(), a.desc->effective_strides(), b.desc->effective_strides()},
                    [&](auto off, auto st, uint64_t n) {
                        T* o = out + off[0];
                        const T* x = pa + off[1];
                        const T* z = pb + off[2];
                        for (uint64_t j = 0; j < n; ++j) {
                            auto v = f(compute_t<T>(x[int64_t(j) * st[1]]), compute_t<T>(z[int64_t(j) * st[2]]));
                            if constexpr (std::is_floating_point_v<compute_t<T>>) v = apply_activation(fused, v);
                            o[j] = T(v);
                        }
                    });
}

template <class T>
void run_binary_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<BinaryDesc>();
    const FusedActivation& fa = d.fused;
    switch (d.function) {
        case BinaryFunction::Add:
            if constexpr (std::is_integral_v<C>)
                return map_binary<T>(args, fa, [](C x, C y) { return C(std::make_unsigned_t<C>(x) + std::make_unsigned_t<C>(y)); });
            else return map_binary<T>(args, fa, [](C x, C y) { return x + y; });
        case BinaryFunction::Subtract:
            if constexpr (std::is_integral_v<C>)
                return map_binary<T>(args, fa, [](C x, C y) { return C(std::make_unsigned_t<C>(x) - std::make_unsigned_t<C>(y)); });
            else return map_binary<T>(args, fa, [](C x, C y) { return x - y; });
        case BinaryFunction::Multiply:
            if constexpr (std::is_integral_v<C>)
                return map_binary<T>(args, fa, [](C x, C y) { return C(std::make_unsigned_t<C>(x) * std::make_unsigned_t<C>(y)); });
            else return map_binary<T>(args, fa, [](C x, C y) { return x * y; });
        case BinaryFunction::Divide:
            if constexpr (std::is_integral_v<C>)
                // Integer division by zero is undefined in C++; DirectML leaves it unspecified, we return 0.
                return map_binary<T>(args, fa, [](C x, C y) {
                    if (y == C(0)) return C(0);
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
                    return C(x / y);
                });
            else return map_binary<T>(args, fa, [](C x, C y) { return x / y; });
        case BinaryFunction::Max: return map_binary<T>(args, fa, [](C x, C y) { return x > y ? x : y; });
        case BinaryFunction::Min: return map_binary<T>(args, fa, [](C x, C y) { return x < y ? x : y; });
        case BinaryFunction::ModulusTruncate:
            if constexpr (std::is_integral_v<C>)
                return map_binary<T>(args, fa, [](C x, C y) {
                    if (y == C(0)) return C(0);
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return C(0);
                    return C(x % y);
                });
            else return map_binary<T>(args, fa, [](C x, C y) { return std::fmod(x, y); });
        case BinaryFunction::ModulusFloor:
            if constexpr (std::is_integral_v<C>)
                return map_binary<T>(args, fa, [](C x, C y) {
                    if (y == C(0)) return C(0);
                    if constexpr (std::is_signed_v<C>) {
                        if (y == C(-1)) return C(0);
                        C r = C(x % y);
                        return (r != 0 && ((r < 0) != (y < 0))) ? C(r + y) : r;
                    }
                    return C(x % y);
                });
            else
                return map_binary<T>(args, fa, [](C x, C y) {
                    C r = std::fmod(x, y);
                    return (r != C(0) && ((r < C(0)) != (y < C(0)))) ? r + y : r;
                });
    }
}

void run_binary(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() { run_binary_typed<T>(args); });
}

template <class T>
void run_clip_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<ClipDesc>();
    // Bounds outside the type's range clamp to it, so an integer clip never wraps.
    auto bound = [](double v) {
        if constexpr (std::is_integral_v<C>) {
            v = std::max(v, double(std::numeric_limits<C>::lowest()));
            v = std::min(v, double(std::numeric_limits<C>::max()));
        }
        return C(v);
    };
    const C lo = bound(d.min), hi = bound(d.max);
    const C scale = d.scale_bias ? C(d.scale_bias->scale) : C(1), bias = d.scale_bias ? C(d.scale_bias->bias) : C(0);
    if (d.scale_bias) map_unary<T>(args, [&](C x) { x = x * scale + bias; return x < lo ? lo : (x > hi ? hi : x); });
    else map_unary<T>(args, [&](C x) { return x < lo ? lo : (x > hi ? hi : x); });
}

void run_clip(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() { run_clip_typed<T>(args); });
}

// DirectML's cast: float to integer truncates toward zero and saturates to the target's range (NaN gives 0).
template <class To, class From>
To cast_value(From v) {
    using CF = compute_t<From>;
    using CT = compute_t<To>;
    CF x = CF(v);
    if constexpr (std::is_floating_point_v<CF> && std::is_integral_v<CT>) {
        if (std::isnan(x)) return To(0);
        if (x <= CF(std::numeric_limits<CT>::lowest())) return To(std::numeric_limits<CT>::lowest());
        if (x >= CF(std::numeric_limits<CT>::max())) return To(std::numeric_limits<CT>::max());
        return To(CT(x));
    } else {
        return To(CT(x));
    }
}

void run_cast(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    visit_data_type(y.desc->data_type, [&]<class To>() {
        visit_data_type(x.desc->data_type, [&]<class From>() {
            const From* in = x.as<From>();
            To* out = y.as<To>();
            for_each_row<2>(args.pool, y.desc->sizes, {y.desc->effective_strides(), x.desc->effective_strides()},
                            [&](auto off, auto st, uint64_t n) {
                                for (uint64_t j = 0; j < n; ++j)
                                    out[off[0] + j] = cast_value<To>(in[off[1] + int64_t(j) * st[1]]);
                            });
        });
    });
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
    add_kernel<UnaryDesc>(t, {run_unary});
    add_kernel<BinaryDesc>(t, {run_binary});
    add_kernel<ClipDesc>(t, {run_clip});
    add_kernel<CastDesc>(t, {run_cast});
}

}  // namespace dml::cpu
