// Element-wise kernels: unary math (with DirectML's input scale/bias), round, the predicates and bit count,
// binary arithmetic / logical / bitwise operators, pow, comparisons, if, clip, clip grad and cast.
// Integer arithmetic wraps (two's complement) where C++ would overflow; bitwise operators work on the stored bits
// whatever the type, as DirectML's do.
#include "../../core/ops/elementwise.h"

#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "../../executor/scalar_math.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

// DirectML's cast of stored values (scalar_math.h's convert, between the compute types).
template <class To, class From>
To cast_value(From v) {
    return To(convert<compute_t<To>>(compute_t<From>(v)));
}

// --- unary --------------------------------------------------------------------------------------------------------

template <class T>
void run_unary_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<UnaryDesc>();
    if constexpr (std::is_floating_point_v<C>) {
        const C p = C(d.parameter);
        with_constant(d.function, int_range<0, int(UnaryFunction::ConstantPow) + 1>, [&]<UnaryFunction F>() {
            if (d.scale_bias) {
                const C scale = C(d.scale_bias->scale), bias = C(d.scale_bias->bias);
                return map_computed<T, 1>(args, [&](C x) { return apply_unary(F, affine(x, scale, bias), p); });
            }
            map_computed<T, 1>(args, [&](C x) { return apply_unary(F, x, p); });
        });
    } else {
        // Integer tensors: the builder admits only these, without scale/bias (a plain identity copies bits).
        using enum UnaryFunction;
        using Admitted = std::integer_sequence<int, int(Abs), int(Negate), int(Sign), int(Threshold), int(LogicalNot)>;
        // THRESHOLD's min as DirectML holds it for an integer tensor: max(x, min) computed as max(x, trunc(min)),
        // min truncated toward zero and saturated (DirectML on lavapipe: min 2.5 leaves 2 at 2).
        const C lo = typed_bound<T>(double(d.parameter));
        with_constant(d.function, Admitted{}, [&]<UnaryFunction F>() {
            map_elements<T, T>(args, [&](T x) { return T(apply_unary(F, C(x), lo)); });
        });
    }
}

void run_unary(const KernelArgs& args) {
    DataType type = args.outputs[0].desc->data_type;
    const auto& d = args.desc<UnaryDesc>();
    if (d.function == UnaryFunction::BitNot)
        return visit_storage(type, [&]<class U>() { map_elements<U, U>(args, [](U x) { return U(~x); }); });
    if (d.function == UnaryFunction::Identity && !d.scale_bias)  // a copy: bits whatever the type
        return visit_storage(type, [&]<class U>() { map_elements<U, U>(args, [](U x) { return x; }); });
    visit_numeric(type, [&]<class T>() { run_unary_typed<T>(args); });
}

void run_round(const KernelArgs& args) {
    const RoundingMode mode = args.desc<RoundDesc>().mode;
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        if constexpr (std::is_floating_point_v<C>) {
            with_constant(mode, int_range<0, int(RoundingMode::TowardInfinity) + 1>, [&]<RoundingMode M>() {
                map_computed<T, 1>(args, [](C x) { return apply_round(M, x); });
            });
        }
    });
}

void run_typed_unary(const KernelArgs& args) {
    const auto& d = args.desc<TypedUnaryDesc>();
    const DataType in = args.inputs[0].desc->data_type;
    visit_boolean(args.outputs[0].desc->data_type, [&]<class B>() {
        if (d.function == TypedUnaryFunction::BitCount)
            return visit_storage(in, [&]<class U>() { map_elements<B, U>(args, [](U x) { return B(bit_count(x)); }); });
        visit_data_type(in, [&]<class T>() {
            using C = compute_t<T>;
            if constexpr (std::is_floating_point_v<C>) {
                if (d.function == TypedUnaryFunction::IsNaN)
                    return map_elements<B, T>(args, [](T x) { return B(std::isnan(C(x))); });
                const IsInfinityMode mode = d.infinity_mode;
                map_elements<B, T>(args, [=](T x) { return B(is_infinity(C(x), mode)); });
            }
        });
    });
}

// --- binary -------------------------------------------------------------------------------------------------------

void run_binary(const KernelArgs& args) {
    const BinaryFunction f = args.desc<BinaryDesc>().function;
    const DataType type = args.outputs[0].desc->data_type;
    constexpr int first_bitwise = int(BinaryFunction::BitAnd);
    if (int(f) >= first_bitwise)
        return visit_storage(type, [&]<class U>() {
            with_constant(f, int_range<first_bitwise, int(BinaryFunction::BitShiftRight) + 1>, [&]<BinaryFunction F>() {
                map_elements<U, U, U>(args, [](U x, U y) { return apply_bitwise(F, x, y); });
            });
        });
    visit_numeric(type, [&]<class T>() {
        using C = compute_t<T>;
        const FusedActivation& fused = args.desc<BinaryDesc>().fused;  // ADD1's
        with_constant(f, int_range<0, first_bitwise>, [&]<BinaryFunction F>() {
            map_computed<T, 2>(args, [](C x, C y) { return apply_binary(F, x, y); }, fused);
        });
    });
}

void run_pow(const KernelArgs& args) {
    const auto& sb = args.desc<PowDesc>().scale_bias;
    visit_narrow(args.outputs[0].desc->data_type, [&]<class T>() {
        visit_narrow(args.inputs[1].desc->data_type, [&]<class E>() {
            using C = compute_t<T>;
            using CE = compute_t<E>;
            if constexpr (std::is_floating_point_v<C>) {
                if (sb) {
                    const C scale = C(sb->scale), bias = C(sb->bias);
                    return map_elements<T, T, E>(args, [=](T x, E e) {
                        return T(apply_pow(affine(C(x), scale, bias), CE(e)));
                    });
                }
            }
            map_elements<T, T, E>(args, [](T x, E e) { return T(apply_pow(C(x), CE(e))); });
        });
    });
}

void run_compare(const KernelArgs& args) {
    const CompareFunction f = args.desc<CompareDesc>().function;
    visit_boolean(args.outputs[0].desc->data_type, [&]<class B>() {
        visit_numeric(args.inputs[0].desc->data_type, [&]<class T>() {
            using C = compute_t<T>;
            with_constant(f, int_range<0, int(CompareFunction::LessThanOrEqual) + 1>, [&]<CompareFunction F>() {
                map_elements<B, T, T>(args, [](T x, T y) { return B(apply_compare(F, C(x), C(y))); });
            });
        });
    });
}

void run_if(const KernelArgs& args) {
    visit_storage(args.outputs[0].desc->data_type, [&]<class U>() {
        map_elements<U, uint8_t, U, U>(args, [](uint8_t c, U a, U b) { return c ? a : b; });
    });
}

// --- clip, clip grad, cast ----------------------------------------------------------------------------------------

void run_clip(const KernelArgs& args) {
    const auto& d = args.desc<ClipDesc>();
    visit_numeric(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        const C lo = typed_bound<T>(d.min), hi = typed_bound<T>(d.max);
        if (d.scale_bias) {
            const C scale = C(d.scale_bias->scale), bias = C(d.scale_bias->bias);
            map_computed<T, 1>(args, [=](C x) { return apply_clip(affine(x, scale, bias), lo, hi); });
        } else {
            map_computed<T, 1>(args, [=](C x) { return apply_clip(x, lo, hi); });
        }
    });
}

void run_clip_grad(const KernelArgs& args) {
    const auto& d = args.desc<ClipGradDesc>();
    visit_numeric(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        // Compared exactly, in long double: float bounds as T holds them, integer inputs against the bounds given.
        auto bound = [](double v) -> long double {
            if constexpr (std::is_floating_point_v<C>) return typed_bound<T>(v);
            else return v;
        };
        const long double lo = bound(d.min), hi = bound(d.max);
        map_elements<T, T, T>(args, [=](T x, T g) { return clip_grad_stops<long double>(C(x), lo, hi) ? T(C(0)) : g; });
    });
}

void run_cast(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class To>() {
        visit_data_type(args.inputs[0].desc->data_type, [&]<class From>() {
            map_elements<To, From>(args, [](From x) { return cast_value<To>(x); });
        });
    });
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
    add_kernel<UnaryDesc>(t, {run_unary});
    add_kernel<RoundDesc>(t, {run_round});
    add_kernel<TypedUnaryDesc>(t, {run_typed_unary});
    add_kernel<BinaryDesc>(t, {run_binary});
    add_kernel<PowDesc>(t, {run_pow});
    add_kernel<CompareDesc>(t, {run_compare});
    add_kernel<IfDesc>(t, {run_if});
    add_kernel<ClipDesc>(t, {run_clip});
    add_kernel<ClipGradDesc>(t, {run_clip_grad});
    add_kernel<CastDesc>(t, {run_cast});
}

}  // namespace dml::cpu
