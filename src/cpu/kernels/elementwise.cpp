// Element-wise kernels: unary math (with DirectML's input scale/bias), round, the predicates and bit count,
// binary arithmetic / logical / bitwise operators, pow, comparisons, if, clip, clip grad and cast.
// Integer arithmetic wraps (two's complement) where C++ would overflow; bitwise operators work on the stored bits
// whatever the type, as DirectML's do.
#include "../../core/ops/elementwise.h"

#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "activation_math.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

// Unsigned arithmetic at least as wide as int, so that no operand is promoted to (overflowing) signed int.
template <class C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
// + - * in the compute type: integers wrap around as two's complement does, where C++ would overflow.
template <class C> C plus(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) + wide_unsigned_t<C>(y));
    else return x + y;
}
template <class C> C minus(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) - wide_unsigned_t<C>(y));
    else return x - y;
}
template <class C> C times(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) * wide_unsigned_t<C>(y));
    else return x * y;
}

template <class C>
C sign_of(C x) {
    return C((C(0) < x) - (x < C(0)));
}

// Calls f.template operator()<U>() with the unsigned integer type as wide as `type`'s elements.
template <class F>
void visit_bits(DataType type, F&& f) {
    switch (element_size(type)) {
        case 1: return f.template operator()<uint8_t>();
        case 2: return f.template operator()<uint16_t>();
        case 4: return f.template operator()<uint32_t>();
        default: return f.template operator()<uint64_t>();
    }
}

// visit_data_type over the types a builder admits, so that no kernel is compiled for the others: every type but
// FLOAT64 (DirectML has no FLOAT64 arithmetic), or the eight types of at most 32 bits (THRESHOLD's and POW's table).
template <class F>
void visit_numeric(DataType type, F&& f) {
    visit_data_type(type, [&]<class T>() {
        if constexpr (std::is_same_v<T, double>) throw std::logic_error("FLOAT64 is not admitted here");
        else f.template operator()<T>();
    });
}

template <class F>
void visit_narrow(DataType type, F&& f) {
    visit_data_type(type, [&]<class T>() {
        if constexpr (sizeof(T) > 4) throw std::logic_error("64-bit types are not admitted here");
        else f.template operator()<T>();
    });
}

// Calls f.template operator()<B>() with the UINT8 or UINT32 type of a predicate's output.
template <class F>
void visit_boolean(DataType type, F&& f) {
    if (type == DataType::UInt8) return f.template operator()<uint8_t>();
    return f.template operator()<uint32_t>();
}

// A min/max bound as the tensor's type holds it (DirectML's CLIP1 / CLIP_GRAD1 carry them in that type):
// floats round to T; integers truncate toward zero and saturate, so an integer bound never wraps.
template <class T>
compute_t<T> typed_bound(double v) {
    using C = compute_t<T>;
    if constexpr (std::is_integral_v<C>) {
        if (!(v > double(std::numeric_limits<C>::lowest()))) return std::numeric_limits<C>::lowest();
        if (!(v < double(std::numeric_limits<C>::max()))) return std::numeric_limits<C>::max();
        return C(v);
    } else {
        return C(T(v));
    }
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

// --- unary --------------------------------------------------------------------------------------------------------

template <class T>
void run_unary_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<UnaryDesc>();
    auto map = [&](auto fn) {
        if constexpr (std::is_floating_point_v<C>) {
            if (d.scale_bias) {
                const C scale = C(d.scale_bias->scale), bias = C(d.scale_bias->bias);
                return map_elements<T, T>(args, [&](T x) { return T(fn(C(x) * scale + bias)); });
            }
        }
        map_elements<T, T>(args, [&](T x) { return T(fn(C(x))); });
    };
    if constexpr (std::is_floating_point_v<C>) {
        const C p = C(d.parameter);
        switch (d.function) {
            case UnaryFunction::Identity: return map([](C x) { return x; });
            case UnaryFunction::Abs: return map([](C x) { return std::abs(x); });
            case UnaryFunction::ACos: return map([](C x) { return std::acos(x); });
            case UnaryFunction::ACosh: return map([](C x) { return std::acosh(x); });
            case UnaryFunction::ASin: return map([](C x) { return std::asin(x); });
            case UnaryFunction::ASinh: return map([](C x) { return std::asinh(x); });
            case UnaryFunction::ATan: return map([](C x) { return std::atan(x); });
            case UnaryFunction::ATanh: return map([](C x) { return std::atanh(x); });
            case UnaryFunction::Ceil: return map([](C x) { return std::ceil(x); });
            case UnaryFunction::Cos: return map([](C x) { return std::cos(x); });
            case UnaryFunction::Cosh: return map([](C x) { return std::cosh(x); });
            case UnaryFunction::Erf: return map([](C x) { return std::erf(x); });
            case UnaryFunction::Exp: return map([](C x) { return std::exp(x); });
            case UnaryFunction::Floor: return map([](C x) { return std::floor(x); });
            case UnaryFunction::Log: return map([](C x) { return std::log(x); });
            case UnaryFunction::Recip: return map([](C x) { return C(1) / x; });
            case UnaryFunction::Sin: return map([](C x) { return std::sin(x); });
            case UnaryFunction::Sinh: return map([](C x) { return std::sinh(x); });
            case UnaryFunction::Sqrt: return map([](C x) { return std::sqrt(x); });
            case UnaryFunction::Tan: return map([](C x) { return std::tan(x); });
            case UnaryFunction::Tanh: return map([](C x) { return std::tanh(x); });
            case UnaryFunction::Negate: return map([](C x) { return -x; });
            case UnaryFunction::Sign: return map([](C x) { return sign_of(x); });
            case UnaryFunction::Threshold: return map([p](C x) { return x < p ? p : x; });  // NaN stays NaN
            case UnaryFunction::ConstantPow: return map([p](C x) { return std::pow(x, p); });
            default: break;
        }
    } else {
        // Integer tensors: the builder admits only these, without scale/bias (a plain identity copies bits).
        switch (d.function) {
            case UnaryFunction::Abs: return map([](C x) { return x < C(0) ? minus(C(0), x) : x; });
            case UnaryFunction::Negate: return map([](C x) { return minus(C(0), x); });
            case UnaryFunction::Sign: return map([](C x) { return sign_of(x); });
            case UnaryFunction::Threshold: {
                // max(x, min) in integers: the least integer >= min, saturated to the type's range.
                const C lo = typed_bound<T>(std::ceil(double(d.parameter)));
                return map([lo](C x) { return x < lo ? lo : x; });
            }
            case UnaryFunction::LogicalNot: return map([](C x) { return C(x == C(0)); });
            default: break;
        }
    }
    throw std::logic_error("unary function not available for this type");
}

void run_unary(const KernelArgs& args) {
    DataType type = args.outputs[0].desc->data_type;
    const auto& d = args.desc<UnaryDesc>();
    if (d.function == UnaryFunction::BitNot)
        return visit_bits(type, [&]<class U>() { map_elements<U, U>(args, [](U x) { return U(~x); }); });
    if (d.function == UnaryFunction::Identity && !d.scale_bias)  // a copy: bits whatever the type
        return visit_bits(type, [&]<class U>() { map_elements<U, U>(args, [](U x) { return x; }); });
    visit_numeric(type, [&]<class T>() { run_unary_typed<T>(args); });
}

void run_round(const KernelArgs& args) {
    const RoundingMode mode = args.desc<RoundDesc>().mode;
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        if constexpr (std::is_floating_point_v<C>) {
            switch (mode) {
                // nearbyint rounds in the default (to nearest, ties to even) floating-point environment
                case RoundingMode::HalvesToNearestEven:
                    return map_elements<T, T>(args, [](T x) { return T(std::nearbyint(C(x))); });
                case RoundingMode::TowardZero: return map_elements<T, T>(args, [](T x) { return T(std::trunc(C(x))); });
                case RoundingMode::TowardInfinity:  // halves away from zero
                    return map_elements<T, T>(args, [](T x) { return T(std::round(C(x))); });
            }
        }
    });
}

void run_typed_unary(const KernelArgs& args) {
    const auto& d = args.desc<TypedUnaryDesc>();
    const DataType in = args.inputs[0].desc->data_type;
    visit_boolean(args.outputs[0].desc->data_type, [&]<class B>() {
        if (d.function == TypedUnaryFunction::BitCount)
            return visit_bits(in, [&]<class U>() {
                map_elements<B, U>(args, [](U x) { return B(std::popcount(x)); });
            });
        visit_data_type(in, [&]<class T>() {
            using C = compute_t<T>;
            if constexpr (std::is_floating_point_v<C>) {
                if (d.function == TypedUnaryFunction::IsNaN)
                    return map_elements<B, T>(args, [](T x) { return B(std::isnan(C(x))); });
                const bool pos = d.infinity_mode != IsInfinityMode::Negative;
                const bool neg = d.infinity_mode != IsInfinityMode::Positive;
                map_elements<B, T>(args, [=](T x) {
                    C v = C(x);
                    return B(std::isinf(v) && (v > 0 ? pos : neg));
                });
            }
        });
    });
}

// --- binary -------------------------------------------------------------------------------------------------------

template <class T>
void run_binary_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    constexpr bool integral = std::is_integral_v<C>;
    const auto& d = args.desc<BinaryDesc>();
    auto map = [&](auto fn) { map_elements<T, T, T>(args, [&](T x, T y) { return T(fn(C(x), C(y))); }); };
    switch (d.function) {
        case BinaryFunction::Add: return map([](C x, C y) { return plus(x, y); });
        case BinaryFunction::Subtract: return map([](C x, C y) { return minus(x, y); });
        case BinaryFunction::Multiply: return map([](C x, C y) { return times(x, y); });
        case BinaryFunction::Divide:
            return map([](C x, C y) -> C {
                if constexpr (integral) {
                    // Integer division by zero is undefined in C++; DirectML leaves it unspecified, we return 0.
                    if (y == C(0)) return C(0);
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return minus(C(0), x);  // lowest / -1 overflows
                    return C(x / y);
                } else {
                    return x / y;
                }
            });
        case BinaryFunction::Max: return map([](C x, C y) { return x > y ? x : y; });
        case BinaryFunction::Min: return map([](C x, C y) { return x < y ? x : y; });
        case BinaryFunction::ModulusTruncate:
            return map([](C x, C y) -> C {
                if constexpr (integral) {
                    if (y == C(0)) return C(0);  // unspecified by DirectML: 0
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return C(0);
                    return C(x % y);
                } else {
                    return std::fmod(x, y);
                }
            });
        case BinaryFunction::ModulusFloor:
            return map([](C x, C y) -> C {
                C r;
                if constexpr (integral) {
                    if (y == C(0)) return C(0);  // unspecified by DirectML: 0
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return C(0);
                    r = C(x % y);
                } else {
                    r = std::fmod(x, y);
                }
                return (r != C(0) && ((r < C(0)) != (y < C(0)))) ? C(r + y) : r;
            });
        case BinaryFunction::Mean:
            return map([](C x, C y) -> C {
                if constexpr (integral) {
                    // (x + y) / 2 rounded toward zero, without the sum's overflow: the floored mean, then + 1
                    // where the sum is negative and odd.
                    C floor_mean = C((x >> 1) + (y >> 1) + (x & y & C(1)));
                    return C(floor_mean + C(floor_mean < C(0) && ((x ^ y) & C(1))));
                } else {
                    return (x + y) * C(0.5);
                }
            });
        case BinaryFunction::DifferenceSquare: return map([](C x, C y) { return times(minus(x, y), minus(x, y)); });
        case BinaryFunction::ATanYX:  // floats only
            return map([](C y, C x) -> C {
                if constexpr (integral) return C(0);
                else return std::atan2(y, x);
            });
        case BinaryFunction::LogicalAnd: return map([](C x, C y) { return C(x != C(0) && y != C(0)); });
        case BinaryFunction::LogicalOr: return map([](C x, C y) { return C(x != C(0) || y != C(0)); });
        case BinaryFunction::LogicalXor: return map([](C x, C y) { return C((x != C(0)) != (y != C(0))); });
        default: break;
    }
    throw std::logic_error("binary function not available for this type");
}

template <class U>
void run_bitwise(const KernelArgs& args, BinaryFunction f) {
    constexpr U bits = U(sizeof(U) * 8);
    switch (f) {
        case BinaryFunction::BitAnd: return map_elements<U, U, U>(args, [](U x, U y) { return U(x & y); });
        case BinaryFunction::BitOr: return map_elements<U, U, U>(args, [](U x, U y) { return U(x | y); });
        case BinaryFunction::BitXor: return map_elements<U, U, U>(args, [](U x, U y) { return U(x ^ y); });
        // A shift by the width or more is undefined in C++ and unspecified by DirectML: every bit shifts out (0).
        case BinaryFunction::BitShiftLeft:
            return map_elements<U, U, U>(args, [](U x, U y) {
                return y >= bits ? U(0) : U(wide_unsigned_t<U>(x) << y);
            });
        case BinaryFunction::BitShiftRight:
            return map_elements<U, U, U>(args, [](U x, U y) { return y >= bits ? U(0) : U(x >> y); });
        default: throw std::logic_error("not a bitwise function");
    }
}

void run_binary(const KernelArgs& args) {
    const BinaryFunction f = args.desc<BinaryDesc>().function;
    const DataType type = args.outputs[0].desc->data_type;
    const bool bitwise = f == BinaryFunction::BitAnd || f == BinaryFunction::BitOr || f == BinaryFunction::BitXor ||
                         f == BinaryFunction::BitShiftLeft || f == BinaryFunction::BitShiftRight;
    if (bitwise) return visit_bits(type, [&]<class U>() { run_bitwise<U>(args, f); });
    visit_numeric(type, [&]<class T>() {
        run_binary_typed<T>(args);
        const FusedActivation& fused = args.desc<BinaryDesc>().fused;  // ADD1's, on the output in place
        if constexpr (std::is_floating_point_v<compute_t<T>>) {
            if (fused.is_none()) return;
            T* out = args.outputs[0].as<T>();
            args.pool.parallel_for(size_t(args.outputs[0].desc->element_count()), 32768,
                                   [&](size_t b, size_t e) { apply_activation_inplace(fused, out + b, e - b); });
        }
    });
}

// Integer base and exponent: exact, wrapping like repeated multiplication.
template <class C, class E>
C integer_pow(C base, E e) {
    if constexpr (std::is_signed_v<E>) {
        if (e < E(0)) {
            // |base^e| < 1 truncates to 0 unless |base| is 1; 0^negative is undefined: 0.
            if (base == C(1)) return C(1);
            if constexpr (std::is_signed_v<C>)
                if (base == C(-1)) return (e & E(1)) ? C(-1) : C(1);
            return C(0);
        }
    }
    C result = C(1);
    for (std::make_unsigned_t<E> n = std::make_unsigned_t<E>(e); n; n >>= 1) {
        if (n & 1u) result = times(result, base);
        base = times(base, base);
    }
    return result;
}

void run_pow(const KernelArgs& args) {
    const auto& sb = args.desc<PowDesc>().scale_bias;
    visit_narrow(args.outputs[0].desc->data_type, [&]<class T>() {
        visit_narrow(args.inputs[1].desc->data_type, [&]<class E>() {
            using C = compute_t<T>;
            using CE = compute_t<E>;
            if constexpr (std::is_floating_point_v<C>) {
                const C scale = sb ? C(sb->scale) : C(1), bias = sb ? C(sb->bias) : C(0);
                if (sb)
                    map_elements<T, T, E>(args, [=](T x, E e) { return T(std::pow(C(x) * scale + bias, C(CE(e)))); });
                else map_elements<T, T, E>(args, [](T x, E e) { return T(std::pow(C(x), C(CE(e)))); });
            } else if constexpr (std::is_integral_v<CE>) {
                map_elements<T, T, E>(args, [](T x, E e) { return T(integer_pow(C(x), CE(e))); });
            } else {
                // Integer base, float exponent: computed in double, then converted as cast does.
                map_elements<T, T, E>(args, [](T x, E e) { return cast_value<T>(std::pow(double(x), double(CE(e)))); });
            }
        });
    });
}

void run_compare(const KernelArgs& args) {
    const CompareFunction f = args.desc<CompareDesc>().function;
    visit_boolean(args.outputs[0].desc->data_type, [&]<class B>() {
        visit_numeric(args.inputs[0].desc->data_type, [&]<class T>() {
            using C = compute_t<T>;
            auto map = [&](auto cmp) { map_elements<B, T, T>(args, [&](T x, T y) { return B(cmp(C(x), C(y))); }); };
            switch (f) {
                case CompareFunction::Equals: return map(std::equal_to<C>());
                case CompareFunction::GreaterThan: return map(std::greater<C>());
                case CompareFunction::GreaterThanOrEqual: return map(std::greater_equal<C>());
                case CompareFunction::LessThan: return map(std::less<C>());
                case CompareFunction::LessThanOrEqual: return map(std::less_equal<C>());
            }
        });
    });
}

void run_if(const KernelArgs& args) {
    visit_bits(args.outputs[0].desc->data_type, [&]<class U>() {
        map_elements<U, uint8_t, U, U>(args, [](uint8_t c, U a, U b) { return c ? a : b; });
    });
}

// --- clip, clip grad, cast ----------------------------------------------------------------------------------------

void run_clip(const KernelArgs& args) {
    const auto& d = args.desc<ClipDesc>();
    visit_numeric(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        const C lo = typed_bound<T>(d.min), hi = typed_bound<T>(d.max);
        auto clamp = [lo, hi](C x) { return x < lo ? lo : (x > hi ? hi : x); };
        if (d.scale_bias) {
            const C scale = C(d.scale_bias->scale), bias = C(d.scale_bias->bias);
            map_elements<T, T>(args, [=](T x) { return T(clamp(C(x) * scale + bias)); });
        } else {
            map_elements<T, T>(args, [=](T x) { return T(clamp(C(x))); });
        }
    });
}

void run_clip_grad(const KernelArgs& args) {
    const auto& d = args.desc<ClipGradDesc>();
    visit_numeric(args.outputs[0].desc->data_type, [&]<class T>() {
        using C = compute_t<T>;
        // Compared exactly, in long double: float bounds as T holds them, integer inputs against the bounds given.
        auto bound = [](double v) -> long double {
            if constexpr (std::is_floating_point_v<C>) return C(T(v));
            else return v;
        };
        const long double lo = bound(d.min), hi = bound(d.max);
        map_elements<T, T, T>(args, [=](T x, T g) {
            const long double v = C(x);
            return (v <= lo || v >= hi) ? T(C(0)) : g;
        });
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
