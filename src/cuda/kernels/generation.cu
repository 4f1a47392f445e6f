// Generation and quantization (cpu/kernels/generation.cpp and quantization.h are the spec): fills, the Philox
// random stream, linear and block-wise (de)quantization, and constant data. Every result is bit-exact with the
// CPU: the arithmetic is written with explicitly rounded operations where nvcc would otherwise contract it.
#include "../../core/ops/generation.h"

#include <cstring>

#include "common.cuh"
#include "factory.h"
#include "kernel.h"
#include "../../executor/type_visits.h"

namespace dml::cuda {

namespace {

// Launches over a packed output: its one merged dimension drives for_each, offset 0 is element i.
Indexer<1> packed_indexer(const TensorDesc& y) { return make_indexer<1>(y.sizes, {signed_strides(y)}); }

// --- fills -------------------------------------------------------------------------------------------------------

template <class U>
struct FillOp {
    U* y;
    U value;
    __device__ void operator()(uint64_t, const int64_t (&off)[1]) const { y[off[0]] = value; }
};

// The value's first element-size bytes, as the CPU fills them.
class FillConstantKernel : public CudaKernel {
public:
    FillConstantKernel(const Node& node, const CudaDevice& device)
        : value_(static_cast<const FillValueConstantDesc&>(*node.desc).value),
          element_size_(element_size(node.outputs[0].data_type)),
          ix_(packed_indexer(node.outputs[0])),
          sm_count_(device.sm_count()) {}
    void enqueue(const LaunchArgs& a) const override {
        visit_storage(element_size_, [&]<class U>() {
            for_each<1>(ix_, FillOp<U>{static_cast<U*>(a.outputs[0]), value_.as<U>()}, sm_count_, a.stream,
                        "fill_value_constant");
        });
    }

private:
    ScalarUnion value_;
    size_t element_size_;
    Indexer<1> ix_;
    int sm_count_;
};

// Element i is start + i * delta: floats in double (rounded to the compute type, then the element type), as the
// CPU; integers in 64-bit unsigned arithmetic, wrapping in the element type.
template <class T>
struct SequenceOp {
    T* y;
    double start, delta;
    uint64_t istart, idelta;
    __device__ void operator()(uint64_t i, const int64_t (&off)[1]) const {
        if constexpr (is_float_v<T>) {
            const double v = __dadd_rn(start, __dmul_rn(double(i), delta));  // no fused multiply-add: the CPU has none
            store(y + off[0], compute_of<T>(v));
        } else {
            y[off[0]] = T(istart + i * idelta);
        }
    }
};

class FillSequenceKernel : public CudaKernel {
public:
    FillSequenceKernel(const Node& node, const CudaDevice& device)
        : type_(node.outputs[0].data_type), ix_(packed_indexer(node.outputs[0])), sm_count_(device.sm_count()) {
        const auto& d = static_cast<const FillValueSequenceDesc&>(*node.desc);
        // Start and delta as the CPU reads them from their scalars.
        visit_data_type(d.value_data_type, [&]<class T>() {
            using C = compute_t<T>;
            if constexpr (std::is_floating_point_v<C>) {
                start_ = double(C(d.value_start.as<T>()));
                delta_ = double(C(d.value_delta.as<T>()));
            } else {
                istart_ = uint64_t(d.value_start.as<T>());
                idelta_ = uint64_t(d.value_delta.as<T>());
            }
        });
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_type(type_, [&]<class T>() {
            for_each<1>(ix_, SequenceOp<T>{static_cast<T*>(a.outputs[0]), start_, delta_, istart_, idelta_},
                        sm_count_, a.stream, "fill_value_sequence");
        });
    }

private:
    DataType type_;
    double start_ = 0, delta_ = 0;
    uint64_t istart_ = 0, idelta_ = 0;
    Indexer<1> ix_;
    int sm_count_;
};

// --- random_generator -------------------------------------------------------------------------------------------

// Philox4x32-10 (Salmon et al., SC11), exactly as the CPU's philox4x32_10: ten rounds of the multiply-xor network,
// the key bumped by the Weyl constants between rounds.
__device__ __forceinline__ void philox4x32_10(uint32_t (&c)[4], uint32_t k0, uint32_t k1) {
    constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        if (round) {
            k0 += kW0;
            k1 += kW1;
        }
        const uint64_t p0 = uint64_t(kM0) * c[0], p1 = uint64_t(kM1) * c[2];
        const uint32_t c1 = c[1], c3 = c[3];
        c[0] = uint32_t(p1 >> 32) ^ c1 ^ k0;
        c[1] = uint32_t(p1);
        c[2] = uint32_t(p0 >> 32) ^ c3 ^ k1;
        c[3] = uint32_t(p0);
    }
}

// The 128-bit counter (four words, least significant first) plus n.
__device__ __forceinline__ void counter_plus(const uint32_t (&c)[4], uint64_t n, uint32_t (&out)[4]) {
    uint64_t carry = n;
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        const uint64_t sum = uint64_t(c[w]) + (carry & 0xffffffffu);
        out[w] = uint32_t(sum);
        carry = (carry >> 32) + (sum >> 32);
    }
}

// Output element i is lane i % 4 of the block generated from counter + i / 4; one thread per block. The thread of
// block 0 also writes the advanced state (counter + block count, then the key) when it is asked for.
__global__ void __launch_bounds__(kThreads)
    random_kernel(const uint32_t* state, int64_t stride, uint32_t* values, uint64_t count, uint32_t* next_state) {
    const uint32_t counter[4] = {state[0], state[stride], state[2 * stride], state[3 * stride]};
    const uint32_t k0 = state[4 * stride], k1 = state[5 * stride];
    const uint64_t blocks = (count + 3) / 4, first = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (uint64_t b = first; b < blocks; b += uint64_t(gridDim.x) * blockDim.x) {
        uint32_t r[4];
        counter_plus(counter, b, r);
        philox4x32_10(r, k0, k1);
#pragma unroll
        for (uint64_t lane = 0; lane < 4; ++lane)
            if (4 * b + lane < count) values[4 * b + lane] = r[lane];
    }
    if (first == 0 && next_state) {
        uint32_t next[4];
        counter_plus(counter, blocks, next);
        for (int w = 0; w < 4; ++w) next_state[w] = next[w];
        next_state[4] = k0;
        next_state[5] = k1;
    }
}

class RandomKernel : public CudaKernel {
public:
    RandomKernel(const Node& node, const CudaDevice& device)
        : stride_(signed_strides(node.inputs[0]->desc)[3]),
          count_(node.outputs[0].element_count()),
          blocks_(blocks_for((count_ + 3) / 4, device.sm_count())) {}
    void enqueue(const LaunchArgs& a) const override {
        random_kernel<<<blocks_, kThreads, 0, a.stream>>>(
            static_cast<const uint32_t*>(a.inputs[0]), stride_, static_cast<uint32_t*>(a.outputs[0]), count_,
            a.outputs.size() > 1 ? static_cast<uint32_t*>(a.outputs[1]) : nullptr);
        check_launch("random_generator");
    }

private:
    int64_t stride_;  // of the state's elements
    uint64_t count_;
    unsigned blocks_;
};

// --- quantization ------------------------------------------------------------------------------------------------

// The CPU's QuantizationLoop over output, input, scale and zero point: each dimension splits into (parameter
// entry, offset in block), the parameters not advancing inside a block. That is up to twice kMaxDimensions
// dimensions of size > 1, so the loop is walked as an outer and an inner Indexer (the outer one a single element
// unless the inner one is full).
struct QuantizationLoop {
    Indexer<4> outer, inner;

    explicit QuantizationLoop(const Node& node) {
        const TensorDesc &y = node.outputs[0], &x = node.inputs[0]->desc, &scale = node.inputs[1]->desc;
        const std::vector<int64_t> os = signed_strides(y), is = signed_strides(x), ss = signed_strides(scale);
        const std::vector<int64_t> zs = node.inputs[2] ? signed_strides(node.inputs[2]->desc)
                                                       : std::vector<int64_t>(y.rank(), 0);  // never read
        Sizes shape;
        std::array<std::vector<int64_t>, 4> strides;
        auto add = [&](uint32_t size, std::array<int64_t, 4> s) {
            if (size == 1) return;
            shape.push_back(size);
            for (int k = 0; k < 4; ++k) strides[k].push_back(s[k]);
        };
        for (size_t d = 0; d < y.rank(); ++d) {
            const uint32_t entries = scale.sizes[d], block = y.sizes[d] / entries;
            add(entries, {int64_t(block) * os[d], int64_t(block) * is[d], ss[d], zs[d]});
            add(block, {os[d], is[d], 0, 0});
        }
        const size_t split = shape.size() > kMaxDimensions ? shape.size() - kMaxDimensions : 0;
        auto part = [&](size_t from, size_t to) {
            if (from == to) return make_indexer<4>(Sizes{1}, {});  // one element, offsets 0
            std::array<std::vector<int64_t>, 4> s;
            for (int k = 0; k < 4; ++k) s[k].assign(strides[k].begin() + from, strides[k].begin() + to);
            return make_indexer<4>(Sizes(shape.begin() + from, shape.begin() + to), s);
        };
        outer = part(0, split);
        inner = part(split, shape.size());
    }

    __device__ __forceinline__ void offsets(uint64_t i, int64_t (&off)[4]) const {
        if (outer.count == 1) return inner.offsets(i, off);
        int64_t o[4];
        outer.offsets(i / inner.count, o);
        inner.offsets(i % inner.count, off);
#pragma unroll
        for (int k = 0; k < 4; ++k) off[k] += o[k];
    }
};

template <class F>
__global__ void __launch_bounds__(kThreads) quantization_kernel(QuantizationLoop loop, F f) {
    const uint64_t count = loop.outer.count * loop.inner.count;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += uint64_t(gridDim.x) * blockDim.x) {
        int64_t off[4];
        loop.offsets(i, off);
        f(off);
    }
}

// q = clamp(round(x / scale) + zero_point) in float, halves to even (cpu::quantize_rounded): NaN saturates to the
// minimum.
template <class T, class S, class Q>
struct QuantizeOp {
    Q* y;
    const T* x;
    const S* scale;
    const Q* zero;  // null when left out
    __device__ void operator()(const int64_t (&off)[4]) const {
        using L = ::cuda::std::numeric_limits<Q>;
        const float z = zero ? float(zero[off[3]]) : 0.0f;
        const float r = rintf(__fdiv_rn(float(load(x + off[1])), float(load(scale + off[2])))) + z;
        y[off[0]] = !(r >= float(L::min())) ? L::min() : r >= float(L::max()) ? L::max() : Q(r);
    }
};

// x = (q - zero_point) * scale in float, the difference taken exactly.
template <class T, class S>
struct DequantizeOp {
    S* y;
    const T* x;
    const S* scale;
    const T* zero;
    __device__ void operator()(const int64_t (&off)[4]) const {
        const int64_t q = int64_t(x[off[1]]) - (zero ? int64_t(zero[off[3]]) : 0);
        store(y + off[0], __fmul_rn(float(q), float(load(scale + off[2]))));
    }
};

class QuantizationKernel : public CudaKernel {
public:
    QuantizationKernel(const Node& node, const CudaDevice& device, bool quantizing)
        : loop_(node),
          quantizing_(quantizing),
          input_(node.inputs[0]->desc.data_type),
          scale_(node.inputs[1]->desc.data_type),
          output_(node.outputs[0].data_type),
          sm_count_(device.sm_count()) {
        // The builders' types; anything else has no kernel (the CPU's writes nothing).
        const bool scale_ok = scale_ == DataType::Float32 || scale_ == DataType::Float16;
        const bool ok = quantizing ? scale_ok &&
                                         (input_ == DataType::Float32 || input_ == DataType::Float16 ||
                                          input_ == DataType::Int32) &&
                                         (output_ == DataType::Int8 || output_ == DataType::UInt8)
                                   : scale_ok && output_ == scale_ && is_integer(input_) && element_size(input_) <= 4;
        if (!ok) unsupported(node, "for these element types");
    }
    void enqueue(const LaunchArgs& a) const override {
        const unsigned blocks = blocks_for(loop_.outer.count * loop_.inner.count, sm_count_);
        auto launch = [&](const auto& op) {
            quantization_kernel<<<blocks, kThreads, 0, a.stream>>>(loop_, op);
            check_launch(quantizing_ ? "quantize" : "dequantize");
        };
        visit_float_type(scale_, [&]<class S>() {
            if constexpr (!std::is_same_v<S, double>) {
                if (quantizing_) {
                    visit_type(input_, [&]<class T>() {
                        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, __half> ||
                                      std::is_same_v<T, int32_t>) {
                            auto with = [&]<class Q>() {
                                launch(QuantizeOp<T, S, Q>{static_cast<Q*>(a.outputs[0]),
                                                           static_cast<const T*>(a.inputs[0]),
                                                           static_cast<const S*>(a.inputs[1]),
                                                           static_cast<const Q*>(a.inputs[2])});
                            };
                            if (output_ == DataType::Int8) with.template operator()<int8_t>();
                            else with.template operator()<uint8_t>();
                        }
                    });
                } else {
                    visit_type(input_, [&]<class T>() {
                        if constexpr (std::is_integral_v<T> && sizeof(T) <= 4)
                            launch(DequantizeOp<T, S>{static_cast<S*>(a.outputs[0]),
                                                      static_cast<const T*>(a.inputs[0]),
                                                      static_cast<const S*>(a.inputs[1]),
                                                      static_cast<const T*>(a.inputs[2])});
                    });
                }
            }
        });
    }

private:
    QuantizationLoop loop_;
    bool quantizing_;
    DataType input_, scale_, output_;
    int sm_count_;
};

// --- constant_data: uploaded once at compile into memory the kernel owns -----------------------------------------

class ConstantDataKernel : public CudaKernel {
public:
    ConstantDataKernel(const Node& node, CudaDevice& device) {
        const auto& data = static_cast<const ConstantDataDesc&>(*node.desc).data;
        bytes_ = data.size();
        memory_ = device.allocate(bytes_);
        device.upload(*memory_, data.data(), bytes_);
    }
    void enqueue(const LaunchArgs& a) const override {
        check(cudaMemcpyAsync(a.outputs[0], memory_->data, bytes_, cudaMemcpyDeviceToDevice, a.stream),
              "cudaMemcpyAsync on the device");
    }
    uint64_t persistent_size() const override { return bytes_; }

private:
    uint64_t bytes_;
    std::shared_ptr<Memory> memory_;
};

}  // namespace

void register_generation_kernels(KernelTable& t) {
    add_kernel<FillValueConstantDesc>(t, make_kernel<FillConstantKernel>);
    add_kernel<FillValueSequenceDesc>(t, make_kernel<FillSequenceKernel>);
    add_kernel<RandomGeneratorDesc>(t, make_kernel<RandomKernel>);
    add_kernel<QuantizeLinearDesc>(t, make_kernel<QuantizationKernel, true>);  // true: quantizing
    add_kernel<QuantizeDesc>(t, make_kernel<QuantizationKernel, true>);
    add_kernel<DequantizeLinearDesc>(t, make_kernel<QuantizationKernel, false>);
    add_kernel<DequantizeDesc>(t, make_kernel<QuantizationKernel, false>);
    add_kernel<ConstantDataDesc>(t, make_kernel<ConstantDataKernel>);
}

}  // namespace dml::cuda
