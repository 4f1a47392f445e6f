// Element-wise kernels with the CPU kernels' semantics (cpu/kernels/elementwise.cpp): unary math (with DirectML's
// input scale/bias), round, the predicates and bit count, binary arithmetic / logical / bitwise operators, pow,
// comparisons, if, clip, clip grad and cast. Integer arithmetic wraps (two's complement); bitwise operators work on
// the stored bits whatever the type. A plain identity is a strided copy.
#include "../../core/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "../../executor/scalar_math.h"
#include "../../executor/type_visits.h"
#include "map.cuh"

namespace dml::cuda {

namespace {

// A compute value as the tensor stores it (float16 rounds), as the CPU reads back an output to activate it in place.
template <class T>
__device__ __forceinline__ compute_of<T> as_stored(compute_of<T> v) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(__float2half_rn(v));
    else return v;
}

// --- unary ----------------------------------------------------------------------------------------------------------

template <class C>
struct UnaryFloat {
    UnaryFunction fn;
    bool scaled;
    C scale, bias, p;  // p: THRESHOLD's min, CONSTANT_POW's exponent
    __device__ C operator()(C x) const {
        if (scaled) x = affine(x, scale, bias);
        return apply_unary(fn, x, p);
    }
};

// Integer tensors: the builder admits only these functions, without scale/bias.
template <class C>
struct UnaryInt {
    UnaryFunction fn;
    C lo;  // THRESHOLD's min as an integer
    __device__ C operator()(C x) const { return apply_unary(fn, x, lo); }
};

struct BitNot {
    template <class U>
    __device__ U operator()(U x) const { return U(~x); }
};

void launch_unary(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<UnaryDesc>();
    if (d.function == UnaryFunction::BitNot)
        return visit_storage(k.output_type(), [&]<class U>() { map_elements<U, U>(k, a, BitNot{}, "bit not"); });
    visit_numeric<device_type>(k.output_type(), [&]<class T>() {
        using C = compute_of<T>;
        if constexpr (is_float_v<T>) {
            UnaryFloat<C> fn{d.function, d.scale_bias.has_value(), C(d.scale_bias ? d.scale_bias->scale : 1.0f),
                             C(d.scale_bias ? d.scale_bias->bias : 0.0f), C(d.parameter)};
            map_elements<T, T>(k, a, fn, "unary");
        } else {
            // max(x, min) in integers: min truncated toward zero and saturated, as the cpu executor and DirectML.
            map_elements<T, T>(k, a, UnaryInt<C>{d.function, typed_bound<T>(double(d.parameter))}, "unary");
        }
    });
}

struct Round {
    RoundingMode mode;
    template <class C>
    __device__ C operator()(C x) const { return apply_round(mode, x); }
};

void launch_round(const MapKernel<2>& k, const LaunchArgs& a) {
    visit_numeric<device_type>(k.output_type(), [&]<class T>() {
        if constexpr (is_float_v<T>) map_elements<T, T>(k, a, Round{k.desc<RoundDesc>().mode}, "round");
    });
}

struct FloatClass {
    bool nan;  // IS_NAN, else IS_INFINITY of the mode's signs
    IsInfinityMode mode;
    template <class C>
    __device__ bool operator()(C x) const { return nan ? isnan(x) : is_infinity(x, mode); }
};

struct PopCount {
    template <class U>
    __device__ uint32_t operator()(U x) const { return bit_count(x); }
};

void launch_typed_unary(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<TypedUnaryDesc>();
    visit_boolean(k.output_type(), [&]<class B>() {
        if (d.function == TypedUnaryFunction::BitCount)
            return visit_storage(k.input_type(), [&]<class U>() { map_elements<B, U>(k, a, PopCount{}, "bit count"); });
        const FloatClass fn{d.function == TypedUnaryFunction::IsNaN, d.infinity_mode};
        visit_numeric<device_type>(k.input_type(), [&]<class T>() {
            if constexpr (is_float_v<T>) map_elements<B, T>(k, a, fn, "is nan / is infinity");
        });
    });
}

// --- binary ---------------------------------------------------------------------------------------------------------

template <class T, BinaryFunction F>
struct FixedBinary {
    __device__ compute_of<T> operator()(compute_of<T> x, compute_of<T> y) const { return apply_binary(F, x, y); }
};

template <class T>
struct Binary {
    using C = compute_of<T>;
    BinaryFunction fn;
    FusedActivation act;  // ADD1's, on the output as stored (floats only; None elsewhere)

    __device__ C operator()(C x, C y) const {
        if constexpr (is_float_v<T>) return apply_activation(act, as_stored<T>(apply_binary(fn, x, y)));
        else return apply_binary(fn, x, y);
    }
    // The four arithmetic functions without an activation: residual adds, gates, scales (map.cuh).
    template <class G>
    void specialize(G&& g) const {
        if (act.function == ActivationFunction::None) switch (fn) {
            case BinaryFunction::Add: return g(FixedBinary<T, BinaryFunction::Add>{});
            case BinaryFunction::Subtract: return g(FixedBinary<T, BinaryFunction::Subtract>{});
            case BinaryFunction::Multiply: return g(FixedBinary<T, BinaryFunction::Multiply>{});
            case BinaryFunction::Divide: return g(FixedBinary<T, BinaryFunction::Divide>{});
            default: break;
        }
        g(*this);
    }
};

template <class U>
struct Bitwise {
    BinaryFunction fn;
    __device__ U operator()(U x, U y) const { return apply_bitwise(fn, x, y); }
};

bool is_bitwise(BinaryFunction f) {
    return f == BinaryFunction::BitAnd || f == BinaryFunction::BitOr || f == BinaryFunction::BitXor ||
           f == BinaryFunction::BitShiftLeft || f == BinaryFunction::BitShiftRight;
}

void launch_binary(const MapKernel<3>& k, const LaunchArgs& a) {
    const auto& d = k.desc<BinaryDesc>();
    if (is_bitwise(d.function))
        return visit_storage(k.output_type(), [&]<class U>() {
            map_elements<U, U, U>(k, a, Bitwise<U>{d.function}, "bitwise");
        });
    visit_numeric<device_type>(k.output_type(), [&]<class T>() {
        map_elements<T, T, T>(k, a, Binary<T>{d.function, d.fused}, "binary");
    });
}

// --- pow ------------------------------------------------------------------------------------------------------------

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
            store(y + off[0], apply_pow(b, is_float ? C(fe) : C(ie)));
        } else {
            store(y + off[0], is_float ? apply_pow(b, fe) : apply_pow(b, ie));
        }
    }
};

void launch_pow(const MapKernel<3>& k, const LaunchArgs& a) {
    const auto& sb = k.desc<PowDesc>().scale_bias;
    visit_narrow<device_type>(k.output_type(), [&]<class T>() {
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
    __device__ bool operator()(C x, C y) const { return apply_compare(fn, x, y); }
};

void launch_compare(const MapKernel<3>& k, const LaunchArgs& a) {
    const Compare fn{k.desc<CompareDesc>().function};
    visit_boolean(k.output_type(), [&]<class B>() {
        visit_numeric<device_type>(k.input_type(), [&]<class T>() { map_elements<B, T, T>(k, a, fn, "compare"); });
    });
}

struct Select {
    template <class U>
    __device__ U operator()(uint8_t condition, U x, U y) const { return condition ? x : y; }
};

void launch_if(const MapKernel<4>& k, const LaunchArgs& a) {
    visit_storage(k.output_type(), [&]<class U>() { map_elements<U, uint8_t, U, U>(k, a, Select{}, "if"); });
}

// --- clip, clip grad, cast ------------------------------------------------------------------------------------------

template <class C>
struct Clip {
    C lo, hi, scale, bias;
    bool scaled;
    __device__ C operator()(C x) const {
        if (scaled) x = affine(x, scale, bias);
        return apply_clip(x, lo, hi);
    }
};

void launch_clip(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<ClipDesc>();
    visit_numeric<device_type>(k.output_type(), [&]<class T>() {
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
        else return clip_grad_stops(x, lo, hi) ? C(0) : g;
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
    visit_numeric<device_type>(k.output_type(), [&]<class T>() {
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
