// Element-wise kernels: unary math (with DirectML's input scale/bias), binary arithmetic, clip and cast, with
// the CPU kernels' semantics (cpu/kernels/elementwise.cpp). A plain identity is a strided copy.
#include "../../core/ops/elementwise.h"

#include <limits>

#include "map.cuh"

namespace dml::cuda {

namespace {

template <class C>
__device__ __forceinline__ C sign_of(C x) {
    return C((C(0) < x) - (x < C(0)));
}

template <class C>
__device__ C unary_float(UnaryFunction f, C x) {
    switch (f) {
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
    }
    return x;
}

// Signed integers: the builder admits abs, negate and sign, without scale/bias. Negation wraps.
template <class C>
__device__ C unary_int(UnaryFunction f, C x) {
    using U = std::make_unsigned_t<C>;
    switch (f) {
        case UnaryFunction::Abs: return x < C(0) ? C(U(0) - U(x)) : x;
        case UnaryFunction::Negate: return C(U(0) - U(x));
        case UnaryFunction::Sign: return sign_of(x);
        default: return x;
    }
}

template <class T>
struct UnaryOp {
    T* y;
    const T* x;
    UnaryFunction fn;
    bool scaled;
    float scale, bias;
    __device__ void operator()(uint64_t, const int64_t (&off)[2]) const {
        using C = compute_of<T>;
        C v = load(x + off[1]);
        if constexpr (is_float_v<T>) {
            if (scaled) v = v * C(scale) + C(bias);
            store(y + off[0], unary_float(fn, v));
        } else {
            store(y + off[0], unary_int(fn, v));
        }
    }
};

void launch_unary(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<UnaryDesc>();
    visit_type(k.output_type(), [&]<class T>() {
        if constexpr (is_float_v<T> || std::is_signed_v<T>) {
            UnaryOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), d.function,
                          d.scale_bias.has_value(), d.scale_bias ? d.scale_bias->scale : 1.0f,
                          d.scale_bias ? d.scale_bias->bias : 0.0f};
            k.run(op, a, "unary");
        } else {
            throw ValueError(d.type_name() + ": unsigned integers support only the identity");
        }
    });
}

template <class C>
__device__ C binary_math(BinaryFunction f, C x, C y) {
    if constexpr (std::is_integral_v<C>) {
        // Unsigned arithmetic wraps; narrow types widen first so that the product cannot overflow an int.
        using U = std::conditional_t<sizeof(C) < 4, uint32_t, std::make_unsigned_t<C>>;
        switch (f) {
            case BinaryFunction::Add: return C(U(x) + U(y));
            case BinaryFunction::Subtract: return C(U(x) - U(y));
            case BinaryFunction::Multiply: return C(U(x) * U(y));
            case BinaryFunction::Divide:
                // Division by zero gives 0 (DirectML leaves it unspecified); the most negative / -1 wraps.
                if (y == C(0)) return C(0);
                if constexpr (std::is_signed_v<C>)
                    if (y == C(-1)) return C(U(0) - U(x));
                return C(x / y);
            case BinaryFunction::Max: return x > y ? x : y;
            case BinaryFunction::Min: return x < y ? x : y;
            case BinaryFunction::ModulusTruncate:
                if (y == C(0)) return C(0);
                if constexpr (std::is_signed_v<C>)
                    if (y == C(-1)) return C(0);
                return C(x % y);
            case BinaryFunction::ModulusFloor: {
                if (y == C(0)) return C(0);
                if constexpr (std::is_signed_v<C>) {
                    if (y == C(-1)) return C(0);
                    C r = C(x % y);
                    return (r != 0 && ((r < 0) != (y < 0))) ? C(r + y) : r;
                }
                return C(x % y);
            }
        }
        return x;
    } else {
        switch (f) {
            case BinaryFunction::Add: return x + y;
            case BinaryFunction::Subtract: return x - y;
            case BinaryFunction::Multiply: return x * y;
            case BinaryFunction::Divide: return x / y;
            case BinaryFunction::Max: return x > y ? x : y;
            case BinaryFunction::Min: return x < y ? x : y;
            case BinaryFunction::ModulusTruncate: return fmod(x, y);
            case BinaryFunction::ModulusFloor: {
                C r = fmod(x, y);
                return (r != C(0) && ((r < C(0)) != (y < C(0)))) ? r + y : r;
            }
        }
        return x;
    }
}

template <class T>
struct BinaryOp {
    T* y;
    const T* a;
    const T* b;
    BinaryFunction fn;
    FusedActivation act;
    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        auto v = binary_math(fn, load(a + off[1]), load(b + off[2]));
        if constexpr (is_float_v<T>) v = apply_activation(act, v);
        store(y + off[0], v);
    }
};

void launch_binary(const MapKernel<3>& k, const LaunchArgs& a) {
    const auto& d = k.desc<BinaryDesc>();
    visit_type(k.output_type(), [&]<class T>() {
        BinaryOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]),
                       static_cast<const T*>(a.inputs[1]), d.function, d.fused};
        k.run(op, a, "binary");
    });
}

template <class T>
struct ClipOp {
    T* y;
    const T* x;
    compute_of<T> lo, hi, scale, bias;
    bool scaled;
    __device__ void operator()(uint64_t, const int64_t (&off)[2]) const {
        compute_of<T> v = load(x + off[1]);
        if (scaled) v = v * scale + bias;
        store(y + off[0], v < lo ? lo : (v > hi ? hi : v));
    }
};

void launch_clip(const MapKernel<2>& k, const LaunchArgs& a) {
    const auto& d = k.desc<ClipDesc>();
    visit_type(k.output_type(), [&]<class T>() {
        using C = compute_of<T>;
        // Bounds outside the type's range clamp to it, so an integer clip never wraps.
        auto bound = [](double v) {
            if constexpr (std::is_integral_v<C>) {
                v = std::max(v, double(std::numeric_limits<C>::lowest()));
                v = std::min(v, double(std::numeric_limits<C>::max()));
            }
            return C(v);
        };
        ClipOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), bound(d.min), bound(d.max),
                     C(d.scale_bias ? d.scale_bias->scale : 1.0f), C(d.scale_bias ? d.scale_bias->bias : 0.0f),
                     d.scale_bias.has_value()};
        k.run(op, a, "clip");
    });
}

// DirectML's cast: float to integer truncates toward zero and saturates to the target's range (NaN gives 0).
template <class To, class CF>
__device__ __forceinline__ void cast_store(void* y, int64_t off, CF x) {
    using CT = compute_of<To>;
    CT v;
    if constexpr (std::is_floating_point_v<CF> && std::is_integral_v<CT>) {
        using L = ::cuda::std::numeric_limits<CT>;
        v = isnan(x) ? CT(0) : x <= CF(L::lowest()) ? L::lowest() : x >= CF(L::max()) ? L::max() : CT(x);
    } else {
        v = CT(x);
    }
    store(static_cast<To*>(y) + off, v);
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

std::unique_ptr<CudaKernel> make_unary(const Node& node, CudaDevice& device) {
    const auto& d = static_cast<const UnaryDesc&>(*node.desc);
    if (int(d.function) > int(UnaryFunction::Sign)) unsupported(node);
    if (d.function == UnaryFunction::Identity && !d.scale_bias) return std::make_unique<CopyKernel>(node, device);
    return std::make_unique<MapKernel<2>>(node, device, launch_unary);
}

}  // namespace

void register_elementwise_kernels(KernelTable& t) {
    add_kernel<UnaryDesc>(t, make_unary);
    add_kernel<BinaryDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        const auto& b = static_cast<const BinaryDesc&>(*n.desc);
        if (int(b.function) > int(BinaryFunction::ModulusTruncate) || !known_activation(b.fused)) unsupported(n);
        return std::make_unique<MapKernel<3>>(n, d, launch_binary);
    });
    add_kernel<ClipDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<MapKernel<2>>(n, d, launch_clip);
    });
    add_kernel<CastDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<MapKernel<2>>(n, d, launch_cast);
    });
}

}  // namespace dml::cuda
