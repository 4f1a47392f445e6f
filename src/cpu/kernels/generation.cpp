// CPU kernels of the generation and quantization operators.
#include "../../core/ops/generation.h"

#include <algorithm>
#include <cstring>

#include "kernel.h"
#include "quantization.h"
#include "strided.h"

namespace dml::cpu {

namespace {

template <class T> constexpr bool is_quantized_v = std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>;
template <class T> constexpr bool is_scale_v = std::is_same_v<T, float> || std::is_same_v<T, half>;

void run_fill_value_constant(const KernelArgs& args) {
    const auto& d = args.desc<FillValueConstantDesc>();
    const TensorArg& y = args.outputs[0];
    visit_data_type(d.value_data_type, [&]<class T>() {
        std::fill_n(y.as<T>(), y.desc->element_count(), d.value.as<T>());
    });
}

void run_fill_value_sequence(const KernelArgs& args) {
    const auto& d = args.desc<FillValueSequenceDesc>();
    const TensorArg& y = args.outputs[0];
    visit_data_type(d.value_data_type, [&]<class T>() {
        using C = compute_t<T>;
        T* out = y.as<T>();
        const uint64_t n = y.desc->element_count();
        if constexpr (std::is_floating_point_v<C>) {
            const double start = double(C(d.value_start.as<T>())), delta = double(C(d.value_delta.as<T>()));
            for (uint64_t i = 0; i < n; ++i) out[i] = T(C(start + double(i) * delta));
        } else {
            // Integer sequences wrap around in the element type, as integer arithmetic on the device does.
            const uint64_t start = uint64_t(d.value_start.as<T>()), delta = uint64_t(d.value_delta.as<T>());
            for (uint64_t i = 0; i < n; ++i) out[i] = T(start + i * delta);
        }
    });
}

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11): ten rounds of the
// multiply-xor network, the key bumped by the Weyl constants between rounds.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> ctr, std::array<uint32_t, 2> key) {
    constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
    for (int round = 0; round < 10; ++round) {
        if (round) key = {key[0] + kW0, key[1] + kW1};
        const uint64_t p0 = uint64_t(kM0) * ctr[0], p1 = uint64_t(kM1) * ctr[2];
        ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ key[1], uint32_t(p0)};
    }
    return ctr;
}

// The 128-bit counter (four words, least significant first) plus `n`.
std::array<uint32_t, 4> counter_plus(std::array<uint32_t, 4> c, uint64_t n) {
    uint64_t carry = n;
    for (uint32_t& word : c) {
        uint64_t sum = uint64_t(word) + (carry & 0xffffffffu);
        word = uint32_t(sum);
        carry = (carry >> 32) + (sum >> 32);
    }
    return c;
}

// Output element i is lane i % 4 of the block generated from counter + i / 4.
void run_random_generator(const KernelArgs& args) {
    const TensorArg &state = args.inputs[0], &values = args.outputs[0];
    const int64_t st = state.desc->effective_strides()[3];
    const uint32_t* s = state.as<uint32_t>();
    const std::array<uint32_t, 4> counter = {s[0], s[st], s[2 * st], s[3 * st]};
    const std::array<uint32_t, 2> key = {s[4 * st], s[5 * st]};
    const uint64_t n = values.desc->element_count(), blocks = (n + 3) / 4;
    uint32_t* out = values.as<uint32_t>();
    args.pool.parallel_for(blocks, 4096, [&](size_t begin, size_t end) {
        for (size_t b = begin; b < end; ++b) {
            auto r = philox4x32_10(counter_plus(counter, b), key);
            for (uint64_t lane = 0; lane < 4 && 4 * b + lane < n; ++lane) out[4 * b + lane] = r[lane];
        }
    });
    if (args.outputs.size() > 1) {
        auto next = counter_plus(counter, blocks);
        uint32_t* o = args.outputs[1].as<uint32_t>();
        std::copy(next.begin(), next.end(), o);
        o[4] = key[0];
        o[5] = key[1];
    }
}

// The loop of an element-wise (de)quantization over output, input, scale and zero point. A parameter dimension
// smaller than the input's covers blocks: each such dimension splits into (parameter entry, offset in block), the
// parameter not advancing inside a block. Without a zero point its strides stay 0 (never read).
struct QuantizationLoop {
    Sizes shape;
    std::array<std::vector<int64_t>, 4> strides;  // output, input, scale, zero point

    QuantizationLoop(const TensorDesc& out, const TensorDesc& in, const TensorDesc& scale, const TensorArg& zero_point) {
        Strides os = out.effective_strides(), is = in.effective_strides(), ss = scale.effective_strides();
        Strides zs = zero_point ? zero_point.desc->effective_strides() : Strides(out.rank(), 0);
        for (size_t d = 0; d < out.rank(); ++d) {
            const uint32_t entries = scale.sizes[d], block = out.sizes[d] / entries;
            shape.insert(shape.end(), {entries, block});
            strides[0].insert(strides[0].end(), {int64_t(block) * os[d], int64_t(os[d])});
            strides[1].insert(strides[1].end(), {int64_t(block) * is[d], int64_t(is[d])});
            strides[2].insert(strides[2].end(), {int64_t(ss[d]), 0});
            strides[3].insert(strides[3].end(), {int64_t(zs[d]), 0});
        }
    }
};

// Quantizes in float: q = clamp(round(x / scale) + zero_point).
void run_quantize(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &scale = args.inputs[1], &zp = args.inputs[2], &y = args.outputs[0];
    QuantizationLoop loop(*y.desc, *x.desc, *scale.desc, zp);
    visit_data_type(x.desc->data_type, [&]<class T>() {
        if constexpr (is_scale_v<T> || std::is_same_v<T, int32_t>)
            visit_data_type(scale.desc->data_type, [&]<class S>() {
                if constexpr (is_scale_v<S>)
                    visit_data_type(y.desc->data_type, [&]<class Q>() {
                        if constexpr (is_quantized_v<Q>) {
                            const T* in = x.as<T>();
                            const S* sc = scale.as<S>();
                            const Q* z = zp ? zp.as<Q>() : nullptr;
                            Q* out = y.as<Q>();
                            for_each_row<4>(args.pool, loop.shape, loop.strides, [&](auto off, auto st, uint64_t n) {
                                for (uint64_t j = 0; j < n; ++j) {
                                    const int64_t i = int64_t(j);
                                    const float zero = z ? float(z[off[3] + i * st[3]]) : 0.0f;
                                    const float v = float(in[off[1] + i * st[1]]) / float(sc[off[2] + i * st[2]]);
                                    out[off[0] + i * st[0]] = quantize_rounded<Q>(v, zero);
                                }
                            });
                        }
                    });
            });
    });
}

// Dequantizes in float: x = (q - zero_point) * scale, the difference taken exactly.
void run_dequantize(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &scale = args.inputs[1], &zp = args.inputs[2], &y = args.outputs[0];
    QuantizationLoop loop(*y.desc, *x.desc, *scale.desc, zp);
    visit_data_type(x.desc->data_type, [&]<class T>() {
        if constexpr (std::is_integral_v<T> && sizeof(T) <= 4)
            visit_data_type(scale.desc->data_type, [&]<class S>() {
                if constexpr (is_scale_v<S>) {
                    const T* in = x.as<T>();
                    const S* sc = scale.as<S>();
                    const T* z = zp ? zp.as<T>() : nullptr;
                    S* out = y.as<S>();
                    for_each_row<4>(args.pool, loop.shape, loop.strides, [&](auto off, auto st, uint64_t n) {
                        for (uint64_t j = 0; j < n; ++j) {
                            const int64_t i = int64_t(j);
                            const int64_t q = int64_t(in[off[1] + i * st[1]]) - (z ? int64_t(z[off[3] + i * st[3]]) : 0);
                            out[off[0] + i * st[0]] = S(float(q) * float(sc[off[2] + i * st[2]]));
                        }
                    });
                }
            });
    });
}

void run_constant_data(const KernelArgs& args) {
    const auto& d = args.desc<ConstantDataDesc>();
    std::memcpy(args.outputs[0].data, d.data.data(), d.data.size());
}

}  // namespace

void register_generation_kernels(KernelTable& t) {
    add_kernel<FillValueConstantDesc>(t, {run_fill_value_constant, nullptr});
    add_kernel<FillValueSequenceDesc>(t, {run_fill_value_sequence, nullptr});
    add_kernel<RandomGeneratorDesc>(t, {run_random_generator, nullptr});
    add_kernel<QuantizeLinearDesc>(t, {run_quantize, nullptr});
    add_kernel<DequantizeLinearDesc>(t, {run_dequantize, nullptr});
    add_kernel<QuantizeDesc>(t, {run_quantize, nullptr});
    add_kernel<DequantizeDesc>(t, {run_dequantize, nullptr});
    add_kernel<ConstantDataDesc>(t, {run_constant_data, nullptr});
}

}  // namespace dml::cpu
