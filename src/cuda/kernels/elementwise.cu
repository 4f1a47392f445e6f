// Element-wise kernels with the CPU kernels' semantics (cpu/kernels/elementwise.cpp): unary math (with DirectML's
// input scale/bias), round, the predicates and bit count, binary arithmetic / logical / bitwise operators, pow,
// comparisons, if, clip, clip grad and cast. Integer arithmetic wraps (two's complement); bitwise operators work on
// the stored bits whatever the type. A plain identity is a strided copy.
#include "../../core/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cfloat>
#include <limits>
#include <stdexcept>
#include <utility>

#include "map.cuh"

namespace dml::cuda {

namespace {

// --- type dispatch (host) -------------------------------------------------------------------------------------------

// visit_type over the types a builder admits, so that no kernel is compiled for the others: every type but FLOAT64
// (DirectML has no FLOAT64 arithmetic), or the eight types of at most 32 bits (THRESHOLD's and POW's tables).
template <class F>
void visit_numeric(DataType type, F&& f) {
    visit_type(type, [&]<class T>() {
        if constexpr (std::is_same_v<T, double>) throw std::logic_error("FLOAT64 is not admitted here");
        else f.template operator()<T>();
    });
}

template <class F>
void visit_narrow(DataType type, F&& f) {
    visit_type(type, [&]<class T>() {
        if constexpr (sizeof(T) > 4) throw std::logic_error("64-bit types are not admitted here");
        else f.template operator()<T>();
    });
}

// The unsigned integer type as wide as `type`'s elements.
template <class F>
void visit_bits(DataType type, F&& f) {
    switch (element_size(type)) {
        case 1: return f.template operator()<uint8_t>();
        case 2: return f.template operator()<uint16_t>();
        case 4: return f.template operator()<uint32_t>();
        default: return f.template operator()<uint64_t>();
    }
}

// The UINT8 or UINT32 type of a predicate's output.
template <class F>
void visit_boolean(DataType type, F&& f) {
    if (type == DataType::UInt8) return f.template operator()<uint8_t>();
    return f.template operator()<uint32_t>();
}

// A min/max bound as the tensor's type holds it (CLIP1 / CLIP_GRAD1 carry them in that type), as the CPU rounds it:
// floats round to T (float16 through float); integers truncate toward zero and saturate, so a bound never wraps.
template <class T>
compute_of<T> typed_bound(double v) {
    using C = compute_of<T>;
    using L = std::numeric_limits<C>;
    if constexpr (std::is_integral_v<C>) {
        if (!(v > double(L::lowest()))) return L::lowest();
        if (!(v < double(L::max()))) return L::max();
        return C(v);
    } else if constexpr (std::is_same_v<T, __half>) {
        return float(dml::half(float(v)));
    } else {
        return C(v);
    }
}

// --- the generic map --------------------------------------------------------------------------------------------

// y = fn(x0, x1, ...) on compute values (float16 as float); Out and In... are the stored types.
template <class Out, class Fn, class... In>
struct MapOp {
    static constexpr int N = int(sizeof...(In)) + 1;
    Out* y;
    const void* x[N - 1];
    Fn fn;

    __device__ void operator()(uint64_t, const int64_t (&off)[N]) const {
        apply(off, std::index_sequence_for<In...>{});
    }
    template <size_t... I>
    __device__ void apply(const int64_t (&off)[N], std::index_sequence<I...>) const {
        store(y + off[0], compute_of<Out>(fn(load(static_cast<const In*>(x[I]) + off[I + 1])...)));
    }
};

template <class Out, class... In, int N, class Fn>
void map_elements(const MapKernel<N>& k, const LaunchArgs& a, const Fn& fn, const char* what) {
    static_assert(N == int(sizeof...(In)) + 1);
    MapOp<Out, Fn, In...> op{static_cast<Out*>(a.outputs[0]), {}, fn};
    for (int i = 0; i + 1 < N; ++i) op.x[i] = a.inputs[i];
    k.run(op, a, what);
}

// --- device arithmetic ----------------------------------------------------------------------------------------------

// Unsigned arithmetic at least as wide as int, so that no operand is promoted to (overflowing) signed int.
template <class C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
// + - * in the compute type: integers wrap around as two's complement does, where C++ would overflow.
template <class C>
__device__ __forceinline__ C plus(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) + wide_unsigned_t<C>(y));
    else return x + y;
}
template <class C>
__device__ __forceinline__ C minus(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) - wide_unsigned_t<C>(y));
    else return x - y;
}
template <class C>
__device__ __forceinline__ C times(C x, C y) {
    if constexpr (std::is_integral_v<C>) return C(wide_unsigned_t<C>(x) * wide_unsigned_t<C>(y));
    else return x * y;
}

// x * scale + bias rounded twice, as the CPU computes it (no fused multiply-add).
template <class C>
__device__ __forceinline__ C affine(C x, C scale, C bias) {
    if constexpr (std::is_same_v<C, double>) return __dmul_rn(x, scale) + bias;
    else return __fmul_rn(x, scale) + bias;
}

template <class C>
__device__ __forceinline__ C sign_of(C x) {
    if constexpr (std::is_unsigned_v<C>) return C(x != C(0));
    else return C((C(0) < x) - (x < C(0)));
}

// A compute value as the tensor stores it (float16 rounds), as the CPU reads back an output to activate it in place.
template <class T>
__device__ __forceinline__ compute_of<T> as_stored(compute_of<T> v) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(__float2half_rn(v));
    else return v;
}

// DirectML's cast: float to integer truncates toward zero and saturates to the target's range (NaN gives 0).
template <class CT, class CF>
__device__ __forceinline__ CT convert(CF x) {
    if constexpr (std::is_floating_point_v<CF> && std::is_integral_v<CT>) {
        using L = ::cuda::std::numeric_limits<CT>;
        return isnan(x) ? CT(0) : x <= CF(L::lowest()) ? L::lowest() : x >= CF(L::max()) ? L::max() : CT(x);
    } else {
        return CT(x);
    }
}

// --- unary ----------------------------------------------------------------------------------------------------------

template <class C>
struct UnaryFloat {
    UnaryFunction fn;
    bool scaled;
    C scale, bias, p;  // p: THRESHOLD's min, CONSTANT_POW's exponent
    __device__ C operator()(C x) const {
        if (scaled) x = affine(x, scale, bias);
        switch (fn) {
            case UnaryFunction::Identity: return x;
            case UnaryFunction::Abs: return fabs(x);
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
            case UnaryFunction::ConstantPow: return ::pow(x, p);
            default: return x;  // BitNot works on bits; LogicalNot takes integers
        }
    }
};

// Integer tensors: the builder admits only these functions, without scale/bias.
template <class C>
struct UnaryInt {
    UnaryFunction fn;
    C lo;  // THRESHOLD's min as an integer
    __device__ C operator()(C x) const {
        switch (fn) {
            case UnaryFunction::Abs:
                if constexpr (std::is_signed_v<C>) return x < C(0) ? minus(C(0), x) : x;
                else return x;
            case UnaryFunction::Negate: return minus(C(0), x);
            case UnaryFunction::Sign: return sign_of(x);
            case UnaryFunction::Threshold: return x < lo ? lo : x;
            case UnaryFunction::LogicalNot: return C(x == C(0));
            default: return x;
        }
    }
};

struct BitNot {
    template <class U>
    __device__ U operator()(U x) const { return U(~x); }
};

void launch_unary(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<UnaryDesc>();
    if (d.function == UnaryFunction::BitNot)
        return visit_bits(k.output_type(), [&]<class U>() { map_elements<U, U>(k, a, BitNot{}, "bit not"); });
    visit_numeric(k.output_type(), [&]<class T>() {
        using C = compute_of<T>;
        if constexpr (is_float_v<T>) {
            UnaryFloat<C> fn{d.function, d.scale_bias.has_value(), C(d.scale_bias ? d.scale_bias->scale : 1.0f),
                             C(d.scale_bias ? d.scale_bias->bias : 0.0f), C(d.parameter)};
            map_elements<T, T>(k, a, fn, "unary");
        } else {
            // max(x, min) in integers: the least integer >= min, saturated to the type's range.
            map_elements<T, T>(k, a, UnaryInt<C>{d.function, typed_bound<T>(std::ceil(double(d.parameter)))}, "unary");
        }
    });
}

struct Round {
    RoundingMode mode;
    template <class C>
    __device__ C operator()(C x) const {
        switch (mode) {
            case RoundingMode::HalvesToNearestEven: return rint(x);  // the default rounding mode: ties to even
            case RoundingMode::TowardZero: return trunc(x);
            case RoundingMode::TowardInfinity: return ::round(x);  // halves away from zero
        }
        return x;
    }
};

void launch_round(const MapKernel<2>& k, const LaunchArgs& a) {
    visit_numeric(k.output_type(), [&]<class T>() {
        if constexpr (is_float_v<T>) map_elements<T, T>(k, a, Round{k.desc<RoundDesc>().mode}, "round");
    });
}

struct FloatClass {
    bool nan, positive, negative;  // IS_NAN, else IS_INFINITY of these signs
    template <class C>
    __device__ bool operator()(C x) const { return nan ? isnan(x) : isinf(x) && (x > C(0) ? positive : negative); }
};

struct PopCount {
    template <class U>
    __device__ uint32_t operator()(U x) const {
        if constexpr (sizeof(U) == 8) return uint32_t(__popcll(x));
        else return uint32_t(__popc(uint32_t(x)));
    }
};

void launch_typed_unary(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<TypedUnaryDesc>();
    visit_boolean(k.output_type(), [&]<class B>() {
        if (d.function == TypedUnaryFunction::BitCount)
            return visit_bits(k.input_type(), [&]<class U>() { map_elements<B, U>(k, a, PopCount{}, "bit count"); });
        const FloatClass fn{d.function == TypedUnaryFunction::IsNaN, d.infinity_mode != IsInfinityMode::Negative,
                            d.infinity_mode != IsInfinityMode::Positive};
        visit_numeric(k.input_type(), [&]<class T>() {
            if constexpr (is_float_v<T>) map_elements<B, T>(k, a, fn, "is nan / is infinity");
        });
    });
}

// --- binary ---------------------------------------------------------------------------------------------------------

template <class T>
struct Binary {
    using C = compute_of<T>;
    BinaryFunction fn;
    FusedActivation act;  // ADD1's, on the output as stored (floats only; None elsewhere)

    __device__ C operator()(C x, C y) const {
        if constexpr (is_float_v<T>) return apply_activation(act, as_stored<T>(math(x, y)));
        else return math(x, y);
    }

    __device__ C math(C x, C y) const {
        constexpr bool integral = std::is_integral_v<C>;
        switch (fn) {
            case BinaryFunction::Add: return plus(x, y);
            case BinaryFunction::Subtract: return minus(x, y);
            case BinaryFunction::Multiply: return times(x, y);
            case BinaryFunction::Divide:
                if constexpr (integral) {
                    // Division by zero gives 0 (DirectML leaves it unspecified); the most negative / -1 wraps.
                    if (y == C(0)) return C(0);
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return minus(C(0), x);
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
                    if (y == C(0)) return C(0);  // unspecified by DirectML: 0
                    if constexpr (std::is_signed_v<C>)
                        if (y == C(-1)) return C(0);
                    r = C(x % y);
                } else {
                    r = fmod(x, y);
                }
                if constexpr (std::is_unsigned_v<C>) return r;
                else if (fn == BinaryFunction::ModulusFloor && r != C(0) && ((r < C(0)) != (y < C(0)))) return C(r + y);
                else return r;
            }
            case BinaryFunction::Mean:
                if constexpr (integral) {
                    // (x + y) / 2 rounded toward zero, without the sum's overflow: the floored mean, then + 1 where
                    // the sum is negative and odd.
                    const C floor_mean = C((x >> 1) + (y >> 1) + (x & y & C(1)));
                    if constexpr (std::is_signed_v<C>) return C(floor_mean + C(floor_mean < C(0) && ((x ^ y) & C(1))));
                    else return floor_mean;
                } else {
                    return (x + y) * C(0.5);
                }
            case BinaryFunction::DifferenceSquare: return times(minus(x, y), minus(x, y));
            case BinaryFunction::ATanYX:  // floats only
                if constexpr (integral) return C(0);
                else return atan2(x, y);
            case BinaryFunction::LogicalAnd: return C(x != C(0) && y != C(0));
            case BinaryFunction::LogicalOr: return C(x != C(0) || y != C(0));
            case BinaryFunction::LogicalXor: return C((x != C(0)) != (y != C(0)));
            default: return x;  // bitwise functions: Bitwise
        }
    }
};

template <class U>
struct Bitwise {
    BinaryFunction fn;
    __device__ U operator()(U x, U y) const {
        constexpr U bits = U(sizeof(U) * 8);
        switch (fn) {
            case BinaryFunction::BitAnd: return U(x & y);
            case BinaryFunction::BitOr: return U(x | y);
            case BinaryFunction::BitXor: return U(x ^ y);
            // A shift by the width or more is unspecified by DirectML: every bit shifts out (0), as on the CPU.
            case BinaryFunction::BitShiftLeft: return y >= bits ? U(0) : U(wide_unsigned_t<U>(x) << y);
            case BinaryFunction::BitShiftRight: return y >= bits ? U(0) : U(x >> y);
            default: return x;
        }
    }
};

bool is_bitwise(BinaryFunction f) {
    return f == BinaryFunction::BitAnd || f == BinaryFunction::BitOr || f == BinaryFunction::BitXor ||
           f == BinaryFunction::BitShiftLeft || f == BinaryFunction::BitShiftRight;
}

void launch_binary(const MapKernel<3>& k, const LaunchArgs& a) {
    const auto& d = k.desc<BinaryDesc>();
    if (is_bitwise(d.function))
        return visit_bits(k.output_type(), [&]<class U>() {
            map_elements<U, U, U>(k, a, Bitwise<U>{d.function}, "bitwise");
        });
    visit_numeric(k.output_type(), [&]<class T>() {
        map_elements<T, T, T>(k, a, Binary<T>{d.function, d.fused}, "binary");
    });
}

// --- pow ------------------------------------------------------------------------------------------------------------

// Integer base and exponent: exact, wrapping like repeated multiplication.
template <class C>
__device__ C integer_pow(C base, int64_t e) {
    if (e < 0) {
        // |base^e| < 1 truncates to 0 unless |base| is 1; 0^negative is undefined: 0.
        if (base == C(1)) return C(1);
        if constexpr (std::is_signed_v<C>)
            if (base == C(-1)) return (e & 1) ? C(-1) : C(1);
        return C(0);
    }
    C result = C(1);
    for (uint64_t n = uint64_t(e); n; n >>= 1) {
        if (n & 1u) result = times(result, base);
        base = times(base, base);
    }
    return result;
}

// The exponent tensor has a type of its own (one of the eight of at most 32 bits): each is read as its value, an
// int64 for the integer types, a float for the float ones, which the CPU's arithmetic cannot tell apart.
template <class T>
struct PowOp {
    using C = compute_of<T>;
    T* y;
    const T* x;
    const void* e;
    DataType e_type;
    bool scaled;
    C scale, bias;

    template <class E>
    __device__ compute_of<E> at(int64_t off) const { return load(static_cast<const E*>(e) + off); }

    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        bool is_float = false;
        float fe = 0.0f;
        int64_t ie = 0;
        switch (e_type) {
            case DataType::Float32: is_float = true, fe = at<float>(off[2]); break;
            case DataType::Float16: is_float = true, fe = at<__half>(off[2]); break;
            case DataType::UInt32: ie = at<uint32_t>(off[2]); break;
            case DataType::UInt16: ie = at<uint16_t>(off[2]); break;
            case DataType::UInt8: ie = at<uint8_t>(off[2]); break;
            case DataType::Int32: ie = at<int32_t>(off[2]); break;
            case DataType::Int16: ie = at<int16_t>(off[2]); break;
            default: ie = at<int8_t>(off[2]); break;
        }
        C b = load(x + off[1]);
        if constexpr (is_float_v<T>) {
            if (scaled) b = affine(b, scale, bias);
            store(y + off[0], ::pow(b, is_float ? C(fe) : C(ie)));
        } else if (is_float) {
            // Integer base, float exponent: computed in double, then converted as cast does. CUDA's pow may miss
            // by 2 ulp where the CPU's is exact (pow(9, 0.5) = 2.9999999999999996), and truncation would turn that
            // into 2: a result within 4 ulp of an integer is taken as that integer.
            double r = ::pow(double(b), double(fe)), n = rint(r);
            if (fabs(r - n) <= 4 * DBL_EPSILON * fabs(n)) r = n;
            store(y + off[0], convert<C>(r));
        } else {
            store(y + off[0], integer_pow(b, ie));
        }
    }
};

void launch_pow(const MapKernel<3>& k, const LaunchArgs& a) {
    const auto& sb = k.desc<PowDesc>().scale_bias;
    visit_narrow(k.output_type(), [&]<class T>() {
        using C = compute_of<T>;
        PowOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), a.inputs[1],
                    k.node.inputs[1]->desc.data_type, sb.has_value(), C(sb ? sb->scale : 1.0f),
                    C(sb ? sb->bias : 0.0f)};
        k.run(op, a, "pow");
    });
}

// --- compare, if ----------------------------------------------------------------------------------------------------

struct Compare {
    CompareFunction fn;
    template <class C>
    __device__ bool operator()(C x, C y) const {  // NaN compares false
        switch (fn) {
            case CompareFunction::Equals: return x == y;
            case CompareFunction::GreaterThan: return x > y;
            case CompareFunction::GreaterThanOrEqual: return x >= y;
            case CompareFunction::LessThan: return x < y;
            case CompareFunction::LessThanOrEqual: return x <= y;
        }
        return false;
    }
};

void launch_compare(const MapKernel<3>& k, const LaunchArgs& a) {
    const Compare fn{k.desc<CompareDesc>().function};
    visit_boolean(k.output_type(), [&]<class B>() {
        visit_numeric(k.input_type(), [&]<class T>() { map_elements<B, T, T>(k, a, fn, "compare"); });
    });
}

struct Select {
    template <class U>
    __device__ U operator()(uint8_t condition, U x, U y) const { return condition ? x : y; }
};

void launch_if(const MapKernel<4>& k, const LaunchArgs& a) {
    visit_bits(k.output_type(), [&]<class U>() { map_elements<U, uint8_t, U, U>(k, a, Select{}, "if"); });
}

// --- clip, clip grad, cast ------------------------------------------------------------------------------------------

template <class C>
struct Clip {
    C lo, hi, scale, bias;
    bool scaled;
    __device__ C operator()(C x) const {
        if (scaled) x = affine(x, scale, bias);
        return x < lo ? lo : (x > hi ? hi : x);
    }
};

void launch_clip(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<ClipDesc>();
    visit_numeric(k.output_type(), [&]<class T>() {
        using C = compute_of<T>;
        const Clip<C> fn{typed_bound<T>(d.min), typed_bound<T>(d.max), C(d.scale_bias ? d.scale_bias->scale : 1.0f),
                         C(d.scale_bias ? d.scale_bias->bias : 0.0f), d.scale_bias.has_value()};
        map_elements<T, T>(k, a, fn, "clip");
    });
}

// The gradient passes where min < x < max, else 0. Floats compare with the bounds as T holds them; integers with
// the bounds given, exactly: [lo, hi] is then the range of integers strictly between them ([max, lowest] if none).
template <class C>
struct ClipGrad {
    C lo, hi;
    __device__ C operator()(C x, C g) const {
        if constexpr (std::is_integral_v<C>) return (x < lo || x > hi) ? C(0) : g;
        else return (x <= lo || x >= hi) ? C(0) : g;
    }
};

template <class T>
ClipGrad<compute_of<T>> clip_grad_bounds(double min, double max) {
    using C = compute_of<T>;
    if constexpr (std::is_integral_v<C>) {
        // long double holds every 64-bit integer and every double exactly (x86-64's 80-bit format).
        using L = std::numeric_limits<C>;
        const long double first = std::floor((long double)min) + 1, last = std::ceil((long double)max) - 1;
        const long double lowest = L::lowest(), highest = L::max();
        if (first > highest || last < lowest || first > last) return {L::max(), L::lowest()};
        return {C(std::max(first, lowest)), C(std::min(last, highest))};
    } else {
        return {typed_bound<T>(min), typed_bound<T>(max)};
    }
}

void launch_clip_grad(const MapKernel<3>& k, const LaunchArgs& a) {
    const auto& d = k.desc<ClipGradDesc>();
    visit_numeric(k.output_type(), [&]<class T>() {
        map_elements<T, T, T>(k, a, clip_grad_bounds<T>(d.min, d.max), "clip grad");
    });
}

template <class To, class CF>
__device__ __forceinline__ void cast_store(void* y, int64_t off, CF x) {
    store(static_cast<To*>(y) + off, convert<compute_of<To>>(x));
}

template <class From>
struct CastOp {
    void* y;
    const From* x;
    DataType to;
    __device__ void operator()(uint64_t, const int64_t (&off)[2]) const {
        auto v = load(x + off[1]);
        switch (to) {
            case DataType::Float32: return cast_store<float>(y, off[0], v);
            case DataType::Float16: return cast_store<__half>(y, off[0], v);
            case DataType::Float64: return cast_store<double>(y, off[0], v);
            case DataType::UInt32: return cast_store<uint32_t>(y, off[0], v);
            case DataType::UInt16: return cast_store<uint16_t>(y, off[0], v);
            case DataType::UInt8: return cast_store<uint8_t>(y, off[0], v);
            case DataType::Int32: return cast_store<int32_t>(y, off[0], v);
            case DataType::Int16: return cast_store<int16_t>(y, off[0], v);
            case DataType::Int8: return cast_store<int8_t>(y, off[0], v);
            case DataType::UInt64: return cast_store<uint64_t>(y, off[0], v);
            case DataType::Int64: return cast_store<int64_t>(y, off[0], v);
            default: return;
        }
    }
};

void launch_cast(const MapKernel<2>& k, const LaunchArgs& a) {
    visit_type(k.input_type(), [&]<class From>() {
        k.run(CastOp<From>{a.outputs[0], static_cast<const From*>(a.inputs[0]), k.output_type()}, a, "cast");
    });
}

// A node that only moves elements: one strided copy.
class CopyKernel : public CudaKernel {
public:
    CopyKernel(const Node& node, const CudaDevice& device)
        : copy_(device, node.outputs[0].sizes, element_size(node.outputs[0].data_type), signed_strides(node.outputs[0]),
                0, signed_strides(node.inputs[0]->desc), 0) {}
    void enqueue(const LaunchArgs& a) const override { copy_.enqueue(a.outputs[0], a.inputs[0], a.stream); }

private:
    StridedCopy copy_;
};

template <int N, typename MapKernel<N>::Launcher launch>
std::unique_ptr<CudaKernel> make_map(const Node& node, CudaDevice& device) {
    return std::make_unique<MapKernel<N>>(node, device, launch);
}

std::unique_ptr<CudaKernel> make_unary(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const UnaryDesc&>(*node.desc);
    if (d.function == UnaryFunction::Identity && !d.scale_bias) return std::make_unique<CopyKernel>(node, device);
    return make_map<2, launch_unary>(node, device);
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
    add_kernel<UnaryDesc>(t, make_unary);
    add_kernel<RoundDesc>(t, make_map<2, launch_round>);
    add_kernel<TypedUnaryDesc>(t, make_map<2, launch_typed_unary>);
    add_kernel<BinaryDesc>(t, make_map<3, launch_binary>);
    add_kernel<PowDesc>(t, make_map<3, launch_pow>);
    add_kernel<CompareDesc>(t, make_map<3, launch_compare>);
    add_kernel<IfDesc>(t, make_map<4, launch_if>);
    add_kernel<ClipDesc>(t, make_map<2, launch_clip>);
    add_kernel<ClipGradDesc>(t, make_map<3, launch_clip_grad>);
    add_kernel<CastDesc>(t, make_map<2, launch_cast>);
}

}  // namespace dml::cuda
