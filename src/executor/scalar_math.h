// The scalar math both executors compute: DirectML's element-wise functions, activations, rounding and casts, one
// definition each, on the compute type (float16 computes as float). The CPU kernels call them in their strided
// loops, the CUDA kernels in their functors, so both give the same results.
//
// The math library is reached through `using std::exp;` and unqualified calls: on the host that is <cmath>'s
// overload for the type (std::exp(float) is expf, as the CPU kernels always called), in device code CUDA's own
// overloads of the same names. A plain `exp(x)` inside namespace dml would find dml's operator builders first
// (dml::round, dml::pow), and `::exp(x)` on the host may be only the C library's double version.
#pragma once
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "../core/half.h"
#include "../core/ops/activation.h"
#include "../core/ops/elementwise.h"
#include "host_device.h"

#ifdef __CUDACC__
#include <cuda/std/limits>
#else
#include <limits>
#endif

namespace dml {

// std::numeric_limits, or in CUDA code libcu++'s, whose members device code can call.
#ifdef __CUDACC__
template <class T> using limits_of = ::cuda::std::numeric_limits<T>;
#else
template <class T> using limits_of = std::numeric_limits<T>;
#endif

// --- integer arithmetic ---------------------------------------------------------------------------------------------

// Unsigned arithmetic at least as wide as int, so that no operand is promoted to (overflowing) signed int.
template <class C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;

// + - * in the compute type: integers wrap around as two's complement does, where C++ would overflow.
template <class C>
DML_HOST_DEVICE C plus(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) + wide_unsigned_t<C>(y));
    else return x + y;
}
template <class C>
DML_HOST_DEVICE C minus(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) - wide_unsigned_t<C>(y));
    else return x - y;
}
template <class C>
DML_HOST_DEVICE C times(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) * wide_unsigned_t<C>(y));
    else return x * y;
}

template <class C>
DML_HOST_DEVICE C sign_of(C x) {
    if constexpr (std::is_unsigned_v<C>) return C(x != C(0));
    else return C((C(0) < x) - (x < C(0)));
}

// --- scale/bias, bounds, cast ---------------------------------------------------------------------------------------

// DirectML's input scale/bias, x * scale + bias, rounded twice as the CPU computes it: CUDA would fuse the two into
// one FMA.
template <class C>
DML_HOST_DEVICE C affine(C x, C scale, C bias) {
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same_v<C, double>) return __dmul_rn(x, scale) + bias;
    else return __fmul_rn(x, scale) + bias;
#else
    return x * scale + bias;
#endif
}

// A min/max bound as a tensor of stored type T holds it (CLIP1 / CLIP_GRAD1 carry them in the tensor's type), in
// T's compute type: floats round to T (float16, the one storage type that is not arithmetic, through float as
// dml::half rounds); integers truncate toward zero and saturate, so a bound never wraps. Host code: kernels take it.
template <class T>
auto typed_bound(double v) {
    if constexpr (!std::is_arithmetic_v<T>) {
        return float(half(float(v)));
    } else if constexpr (std::is_integral_v<T>) {
        if (!(v > double(limits_of<T>::lowest()))) return limits_of<T>::lowest();
        if (!(v < double(limits_of<T>::max()))) return limits_of<T>::max();
        return T(v);
    } else {
        return T(v);
    }
}

// DirectML's cast between compute types: float to integer truncates toward zero and saturates to the target's range
// (NaN gives 0).
template <class CT, class CF>
DML_HOST_DEVICE CT convert(CF x) {
    if constexpr (std::is_floating_point_v<CF> && std::is_integral_v<CT>) {
        using std::isnan;
        using L = limits_of<CT>;
        return isnan(x) ? CT(0) : x <= CF(L::lowest()) ? L::lowest() : x >= CF(L::max()) ? L::max() : CT(x);
    } else {
        return CT(x);
    }
}

// --- unary ----------------------------------------------------------------------------------------------------------

// The unary functions (after the input's scale/bias). Floats: p is THRESHOLD's min and CONSTANT_POW's exponent.
// Integers (the builder admits Abs, Negate, Sign, Threshold and LogicalNot, without scale/bias): p is THRESHOLD's
// min as an integer, the parameter truncated toward zero and saturated (typed_bound of it).
template <class C>
DML_HOST_DEVICE C apply_unary(UnaryFunction f, C x, C p) {
    if constexpr (std::is_integral_v<C>) {
        switch (f) {
            case UnaryFunction::Abs:
                if constexpr (std::is_signed_v<C>) return x < C(0) ? minus(C(0), x) : x;
                else return x;
            case UnaryFunction::Negate: return minus(C(0), x);
            case UnaryFunction::Sign: return sign_of(x);
            case UnaryFunction::Threshold: return x < p ? p : x;
            case UnaryFunction::LogicalNot: return C(x == C(0));
            default: return x;
        }
    } else {
        using std::abs, std::acos, std::acosh, std::asin, std::asinh, std::atan, std::atanh, std::ceil, std::cos,
            std::cosh, std::erf, std::exp, std::floor, std::log, std::sin, std::sinh, std::sqrt, std::tan, std::tanh,
            std::pow;
        switch (f) {
            case UnaryFunction::Identity: return x;
            case UnaryFunction::Abs: return abs(x);
            case UnaryFunction::ACos: return acos(x);
            case UnaryFunction::ACosh: return acosh(x);
            case UnaryFunction::ASin: return asin(x);
            case UnaryFunction::ASinh: return asinh(x);
            case UnaryFunction::ATan: return atan(x);
            case UnaryFunction::ATanh: return atanh(x);
            case UnaryFunction::Ceil: return ceil(x);
            case UnaryFunction::Cos: return cos(x);
            case UnaryFunction::Cosh: return cosh(x);
            case UnaryFunction::Erf: return erf(x);
            case UnaryFunction::Exp: return exp(x);
            case UnaryFunction::Floor: return floor(x);
            case UnaryFunction::Log: return log(x);
            case UnaryFunction::Recip: return C(1) / x;
            case UnaryFunction::Sin: return sin(x);
            case UnaryFunction::Sinh: return sinh(x);
            case UnaryFunction::Sqrt: return sqrt(x);
            case UnaryFunction::Tan: return tan(x);
            case UnaryFunction::Tanh: return tanh(x);
            case UnaryFunction::Negate: return -x;
            case UnaryFunction::Sign: return sign_of(x);
            case UnaryFunction::Threshold: return x < p ? p : x;  // NaN stays NaN
            case UnaryFunction::ConstantPow: return pow(x, p);
            default: return x;  // BitNot works on bits; LogicalNot takes integers
        }
    }
}

template <class C>
DML_HOST_DEVICE C apply_round(RoundingMode mode, C x) {
    using std::nearbyint, std::trunc, std::round;
    switch (mode) {
        case RoundingMode::HalvesToNearestEven: return nearbyint(x);  // the default rounding mode: ties to even
        case RoundingMode::TowardZero: return trunc(x);
        case RoundingMode::TowardInfinity: return round(x);  // halves away from zero
    }
    return x;
}

// IS_INFINITY of the mode's signs.
template <class C>
DML_HOST_DEVICE bool is_infinity(C x, IsInfinityMode mode) {
    using std::isinf;
    return isinf(x) && (x > C(0) ? mode != IsInfinityMode::Negative : mode != IsInfinityMode::Positive);
}

// BIT_COUNT of an unsigned word.
template <class U>
DML_HOST_DEVICE unsigned bit_count(U x) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(U) == 8) return unsigned(__popcll(x));
    else return unsigned(__popc(uint32_t(x)));
#else
    return unsigned(std::popcount(x));
#endif
}

// --- binary ---------------------------------------------------------------------------------------------------------

// The arithmetic and logical binary functions (the bitwise ones: apply_bitwise). Integers wrap; an integer division
// or modulus by zero, unspecified by DirectML (undefined in C++), gives 0.
template <class C>
DML_HOST_DEVICE C apply_binary(BinaryFunction f, C x, C y) {
    constexpr bool integral = std::is_integral_v<C>;
    using std::fmod, std::atan2;
    switch (f) {
        case BinaryFunction::Add: return plus(x, y);
        case BinaryFunction::Subtract: return minus(x, y);
        case BinaryFunction::Multiply: return times(x, y);
        case BinaryFunction::Divide:
            if constexpr (integral) {
                if (y == C(0)) return C(0);
                if constexpr (std::is_signed_v<C>)
                    if (y == C(-1)) return minus(C(0), x);  // lowest / -1 overflows
                return C(x / y);
            } else {
                return x / y;
            }
        case BinaryFunction::Max: return x > y ? x : y;
        case BinaryFunction::Min: return x < y ? x : y;
        case BinaryFunction::ModulusTruncate:
        case BinaryFunction::ModulusFloor: {
            C r;
            if constexpr (integral) {
                if (y == C(0)) return C(0);
                if constexpr (std::is_signed_v<C>)
                    if (y == C(-1)) return C(0);
                r = C(x % y);
            } else {
                r = fmod(x, y);
            }
            if constexpr (std::is_unsigned_v<C>) return r;
            else if (f == BinaryFunction::ModulusFloor && r != C(0) && ((r < C(0)) != (y < C(0)))) return C(r + y);
            else return r;
        }
        case BinaryFunction::Mean:
            if constexpr (integral) {
                // (x + y) / 2 rounded toward zero, without the sum's overflow: the floored mean, then + 1 where the
                // sum is negative and odd.
                const C floor_mean = C((x >> 1) + (y >> 1) + (x & y & C(1)));
                if constexpr (std::is_signed_v<C>) return C(floor_mean + C(floor_mean < C(0) && ((x ^ y) & C(1))));
                else return floor_mean;
            } else {
                return (x + y) * C(0.5);
            }
        case BinaryFunction::DifferenceSquare: return times(minus(x, y), minus(x, y));
        case BinaryFunction::ATanYX:  // atan2(first, second); floats only
            if constexpr (integral) return C(0);
            else return atan2(x, y);
        case BinaryFunction::LogicalAnd: return C(x != C(0) && y != C(0));
        case BinaryFunction::LogicalOr: return C(x != C(0) || y != C(0));
        case BinaryFunction::LogicalXor: return C((x != C(0)) != (y != C(0)));
        default: return x;  // bitwise functions: apply_bitwise
    }
}

// The bitwise functions, on the stored bits whatever the type.
template <class U>
DML_HOST_DEVICE U apply_bitwise(BinaryFunction f, U x, U y) {
    constexpr U bits = U(sizeof(U) * 8);
    switch (f) {
        case BinaryFunction::BitAnd: return U(x & y);
        case BinaryFunction::BitOr: return U(x | y);
        case BinaryFunction::BitXor: return U(x ^ y);
        // A shift by the width or more is undefined in C++ and unspecified by DirectML: every bit shifts out (0).
        case BinaryFunction::BitShiftLeft: return y >= bits ? U(0) : U(wide_unsigned_t<U>(x) << y);
        case BinaryFunction::BitShiftRight: return y >= bits ? U(0) : U(x >> y);
        default: return x;
    }
}

template <class C>
DML_HOST_DEVICE bool apply_compare(CompareFunction f, C x, C y) {  // NaN compares false
    switch (f) {
        case CompareFunction::Equals: return x == y;
        case CompareFunction::GreaterThan: return x > y;
        case CompareFunction::GreaterThanOrEqual: return x >= y;
        case CompareFunction::LessThan: return x < y;
        case CompareFunction::LessThanOrEqual: return x <= y;
    }
    return false;
}

// Integer base and exponent: exact, wrapping like repeated multiplication.
template <class C, class E>
DML_HOST_DEVICE C integer_pow(C base, E e) {
    if constexpr (std::is_signed_v<E>) {
        if (e < E(0)) {
            // |base^e| < 1 truncates to 0 unless |base| is 1; 0^negative is infinite, saturated to the type's max
            // as a float exponent's result converts (and as DirectML answers).
            if (base == C(1)) return C(1);
            if constexpr (std::is_signed_v<C>)
                if (base == C(-1)) return (e & E(1)) ? C(-1) : C(1);
            return base == C(0) ? limits_of<C>::max() : C(0);
        }
    }
    C result = C(1);
    for (std::make_unsigned_t<E> n = std::make_unsigned_t<E>(e); n; n >>= 1) {
        if (n & 1u) result = times(result, base);
        base = times(base, base);
    }
    return result;
}

// POW of a base by an exponent, each of its own compute type (the exponent tensor has a type of its own).
template <class C, class CE>
DML_HOST_DEVICE C apply_pow(C x, CE e) {
    using std::pow;
    if constexpr (std::is_floating_point_v<C>) {
        return pow(x, C(e));
    } else if constexpr (std::is_integral_v<CE>) {
        return integer_pow(x, e);
    } else {
        // Integer base, float exponent: computed in double, then converted as cast does.
        double r = pow(double(x), double(e));
#ifdef __CUDA_ARCH__
        // CUDA's pow may miss by 2 ulp where the CPU's is exact (pow(9, 0.5) = 2.9999999999999996), and truncation
        // would turn that into 2: a result within 4 ulp of an integer is taken as that integer.
        using std::rint, std::fabs;
        const double n = rint(r);
        if (fabs(r - n) <= 4 * DBL_EPSILON * fabs(n)) r = n;
#endif
        return convert<C>(r);
    }
}

template <class C>
DML_HOST_DEVICE C apply_clip(C x, C lo, C hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}

// Where CLIP_GRAD's gradient is 0: x at or past a bound (a NaN x passes the gradient). B: a type in which x and
// the bounds compare exactly.
template <class B>
DML_HOST_DEVICE bool clip_grad_stops(B x, B lo, B hi) {
    return x <= lo || x >= hi;
}

// --- activations ----------------------------------------------------------------------------------------------------

// The element-wise activations, for the activation operators and every kernel that fuses one into its output.
template <class C>
DML_HOST_DEVICE C apply_activation(const FusedActivation& f, C x) {
    using std::exp, std::tanh, std::log1p, std::abs, std::erf;
    const C a = C(f.alpha), b = C(f.beta);
    // std::max / std::min (a NaN second operand gives the first), not fmax / fmin.
    auto max_of = [](C p, C q) { return p < q ? q : p; };
    auto min_of = [](C p, C q) { return q < p ? q : p; };
    switch (f.function) {
        case ActivationFunction::None:
        case ActivationFunction::Identity: return x;
        case ActivationFunction::Relu: return x > C(0) ? x : C(0);
        case ActivationFunction::LeakyRelu: return x >= C(0) ? x : a * x;
        case ActivationFunction::Sigmoid: return C(1) / (C(1) + exp(-x));
        case ActivationFunction::Tanh: return tanh(x);
        case ActivationFunction::Elu: return x >= C(0) ? x : a * (exp(x) - C(1));
        case ActivationFunction::Celu: return max_of(C(0), x) + min_of(C(0), a * (exp(x / a) - C(1)));
        case ActivationFunction::HardSigmoid: return max_of(C(0), min_of(a * x + b, C(1)));
        case ActivationFunction::Linear: return a * x + b;
        case ActivationFunction::ParametricSoftplus: return a * log1p(exp(b * x));
        case ActivationFunction::ScaledElu: return x > C(0) ? b * x : b * a * (exp(x) - C(1));
        case ActivationFunction::ScaledTanh: return a * tanh(b * x);
        case ActivationFunction::Softplus: return log1p(exp(a * x)) / a;
        case ActivationFunction::Softsign: return x / (C(1) + abs(x));
        case ActivationFunction::ThresholdedRelu: return x > a ? x : C(0);
        case ActivationFunction::Shrink: return x < -b ? x + a : (x > b ? x - a : C(0));
        case ActivationFunction::Gelu: return C(0.5) * x * (C(1) + erf(x / C(1.4142135623730951)));
        case ActivationFunction::Swish: return x / (C(1) + exp(-a * x));
        case ActivationFunction::HardSwish: return x * max_of(C(0), min_of(a * x + b, C(1)));
    }
    return x;
}

// PARAMETERIZED_RELU: x where x >= 0, else slope * x; an integer product wraps (two's complement).
template <class C>
DML_HOST_DEVICE C parameterized_relu(C x, C slope) {
    if constexpr (std::is_integral_v<C>) {
        using U = std::make_unsigned_t<C>;
        return x >= C(0) ? x : C(uint64_t(U(slope)) * uint64_t(U(x)));
    } else {
        return x >= C(0) ? x : slope * x;
    }
}

}  // namespace dml
