// Multi-head attention on the CPU, one (batch, head) pair at a time: gather that head's query, keys and values
// (bias added, past keys / values first) in the compute type, scores = scale * Q K^T on the BLAS, add the relative
// position bias and the mask, softmax each row, then P V on the BLAS.
#include "../../core/ops/attention.h"

#include <algorithm>
#include <cmath>

#include "blas_gemm.h"
#include "kernel.h"

namespace dml::cpu {

namespace {

enum Input {
    kQuery, kKey, kValue, kStackedQK, kStackedKV, kStackedQKV, kBias, kMask, kRelativeBias, kPastKey, kPastValue
};

// The element strides of the last `rank` dimensions (the builder checked that the leading ones have size 1).
std::vector<int64_t> trailing_strides(const TensorDesc& d, size_t rank) {
    Strides s = d.effective_strides();
    return std::vector<int64_t>(s.end() - rank, s.end());
}

// A tensor read through the strides of its last four dimensions (absent: reads nothing).
template <class T>
struct View4 {
    const T* data = nullptr;
    std::vector<int64_t> st;
    explicit View4(const TensorArg& t) {
        if (t) data = t.as<T>(), st = trailing_strides(*t.desc, 4);
    }
    explicit operator bool() const { return data != nullptr; }
    T at(uint32_t a, uint32_t b, uint32_t c, uint32_t d) const {
        return data[a * st[0] + b * st[1] + c * st[2] + d * st[3]];
    }
};

// Where one role (query, key or value) is read: a [batch, sequence, heads * head_size] tensor, or slot `slot` of a
// stacked [batch, sequence, heads, n, head_size] one.
template <class T>
struct Role {
    const T* data = nullptr;
    std::vector<int64_t> st;
    uint32_t slot = 0;
    uint32_t head_size = 0;

    Role(const TensorArg& plain, const TensorArg& stacked, uint32_t stacked_slot, uint32_t head_size_)
        : slot(stacked_slot), head_size(head_size_) {
        const TensorArg& t = plain ? plain : stacked;
        data = t.as<T>();
        st = trailing_strides(*t.desc, plain ? 3 : 5);
    }
    T at(uint32_t b, uint32_t s, uint32_t h, uint32_t d) const {
        if (st.size() == 3) return data[b * st[0] + s * st[1] + int64_t(h * head_size + d) * st[2]];
        return data[b * st[0] + s * st[1] + h * st[2] + slot * st[3] + d * st[4]];
    }
};

struct AttentionShape {
    uint32_t B, S, H, head_size, value_head_size, past, total;
    explicit AttentionShape(const Node& node) {
        const auto& d = static_cast<const MultiheadAttentionDesc&>(*node.desc);
        const Sizes& out = node.outputs[0].sizes;
        B = out[0], S = out[1], H = d.head_count, value_head_size = out[2] / H;
        const auto& q = node.inputs[kQuery] ? node.inputs[kQuery] : node.inputs[kStackedQK] ? node.inputs[kStackedQK]
                                                                                            : node.inputs[kStackedQKV];
        head_size = node.inputs[kQuery] ? q->desc.sizes.back() / H : q->desc.sizes.back();
        past = node.inputs[kPastKey] ? node.inputs[kPastKey]->desc.sizes[node.inputs[kPastKey]->desc.rank() - 2] : 0;
        const auto& k = node.inputs[kKey] ? node.inputs[kKey] : node.inputs[kStackedKV];
        total = past + (k ? k->desc.sizes[k->desc.rank() - (node.inputs[kKey] ? 2 : 4)] : S);
    }
    // Workspace: Q [S, hs], K [T, hs], V [T, vhs], scores [S, T], O [S, vhs].
    uint64_t workspace_elements() const {
        return uint64_t(S) * head_size + uint64_t(total) * (head_size + value_head_size) + uint64_t(S) * total +
               uint64_t(S) * value_head_size;
    }
};

template <class T>
void run_attention_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<MultiheadAttentionDesc>();
    const AttentionShape sh(args.node);
    const auto& in = args.inputs;
    const uint32_t B = sh.B, S = sh.S, H = sh.H, hs = sh.head_size, vhs = sh.value_head_size, P = sh.past,
                   T_ = sh.total;
    const Role<T> query(in[kQuery], in[kStackedQK] ? in[kStackedQK] : in[kStackedQKV], 0, hs);
    const Role<T> key(in[kKey], in[kStackedQK] ? in[kStackedQK] : in[kStackedKV] ? in[kStackedKV] : in[kStackedQKV],
                      in[kStackedKV] ? 0 : 1, hs);
    const Role<T> value(in[kValue], in[kStackedKV] ? in[kStackedKV] : in[kStackedQKV], in[kStackedKV] ? 1 : 2, vhs);
    std::vector<C> bias(2 * H * hs + H * vhs, C(0));
    if (in[kBias]) {
        const int64_t st = trailing_strides(*in[kBias].desc, 1)[0];
        for (size_t i = 0; i < bias.size(); ++i) bias[i] = C(in[kBias].as<T>()[int64_t(i) * st]);
    }
    const View4<T> past_key(in[kPastKey]), past_value(in[kPastValue]), relative_bias(in[kRelativeBias]);
    const View4<int32_t> boolean_mask(d.mask_type == MultiheadAttentionMaskType::Boolean ? in[kMask] : TensorArg{});
    const int32_t* mask = in[kMask] ? in[kMask].as<int32_t>() : nullptr;
    std::vector<int64_t> mask_st;
    if (mask && !boolean_mask)
        mask_st = trailing_strides(*in[kMask].desc,
                                   d.mask_type == MultiheadAttentionMaskType::KeyQuerySequenceLengthStartEnd ? 1 : 2);
    // The key range [begin, end) a sequence-type mask leaves unmasked for batch entry b.
    auto key_range = [&](uint32_t b) -> std::pair<int64_t, int64_t> {
        switch (d.mask_type) {
            case MultiheadAttentionMaskType::KeySequenceLength: return {0, mask[b * mask_st[1]]};
            case MultiheadAttentionMaskType::KeySequenceEndStart:  // row 0 the ends, row 1 the starts
                return {mask[mask_st[0] + b * mask_st[1]], mask[b * mask_st[1]]};
            case MultiheadAttentionMaskType::KeyQuerySequenceLengthStartEnd: return {0, mask[b * mask_st[0]]};
            default: return {0, T_};
        }
    };

    C* q = reinterpret_cast<C*>(args.workspace);
    C* k = q + uint64_t(S) * hs;
    C* v = k + uint64_t(T_) * hs;
    C* scores = v + uint64_t(T_) * vhs;
    C* o = scores + uint64_t(S) * T_;
    T* out = args.outputs[0].as<T>();
    size_t next_output = 1;
    T* present_key = d.output_present_key ? args.outputs[next_output++].as<T>() : nullptr;
    T* present_value = d.output_present_value ? args.outputs[next_output++].as<T>() : nullptr;

    for (uint32_t b = 0; b < B; ++b)
        for (uint32_t h = 0; h < H; ++h) {
            for (uint32_t s = 0; s < S; ++s)
                for (uint32_t i = 0; i < hs; ++i) q[uint64_t(s) * hs + i] = C(query.at(b, s, h, i)) + bias[h * hs + i];
            for (uint32_t t = 0; t < T_; ++t) {
                for (uint32_t i = 0; i < hs; ++i)
                    k[uint64_t(t) * hs + i] = t < P ? C(past_key.at(b, h, t, i))
                                                    : C(key.at(b, t - P, h, i)) + bias[H * hs + h * hs + i];
                for (uint32_t i = 0; i < vhs; ++i)
                    v[uint64_t(t) * vhs + i] = t < P ? C(past_value.at(b, h, t, i))
                                                     : C(value.at(b, t - P, h, i)) + bias[2 * H * hs + h * vhs + i];
            }
            auto narrow = [](C x) { return T(x); };
            if (present_key)
                std::transform(k, k + uint64_t(T_) * hs, present_key + (uint64_t(b) * H + h) * T_ * hs, narrow);
            if (present_value)
                std::transform(v, v + uint64_t(T_) * vhs, present_value + (uint64_t(b) * H + h) * T_ * vhs, narrow);
            blas_gemm<C>(args.pool, false, true, int(S), int(T_), int(hs), C(d.scale), q, int(hs), k, int(hs), C(0), scores,
                         int(T_));
            const auto [begin, end] = key_range(b);
            args.pool.parallel_for(S, 16, [&](size_t s_begin, size_t s_end) {
                for (size_t s = s_begin; s < s_end; ++s) {
                    C* row = scores + s * T_;
                    for (uint32_t t = 0; t < T_; ++t) {
                        if (relative_bias) row[t] += C(relative_bias.at(b, h, uint32_t(s), t));
                        // The mask adds MaskFilterValue to the scores of masked keys.
                        bool masked = boolean_mask ? boolean_mask.at(b, h, uint32_t(s), t) == 0
                                                   : int64_t(t) < begin || int64_t(t) >= end;
                        if (masked) row[t] += C(d.mask_filter_value);
                    }
                    const C peak = *std::max_element(row, row + T_);
                    C sum = 0;
                    for (uint32_t t = 0; t < T_; ++t) sum += row[t] = std::exp(row[t] - peak);
                    for (uint32_t t = 0; t < T_; ++t) row[t] /= sum;
                }
            });
            blas_gemm<C>(args.pool, false, false, int(S), int(vhs), int(T_), C(1), scores, int(T_), v, int(vhs), C(0), o,
                         int(vhs));
            for (uint32_t s = 0; s < S; ++s)
                for (uint32_t i = 0; i < vhs; ++i)
                    out[(uint64_t(b) * S + s) * H * vhs + h * vhs + i] = T(o[uint64_t(s) * vhs + i]);
        }
}

void run_attention(const KernelArgs& args) {
    visit_data_type(args.outputs[0].desc->data_type, [&]<class T>() {
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half>) run_attention_typed<T>(args);
    });
}

uint64_t attention_workspace(const Node& node) { return AttentionShape(node).workspace_elements() * sizeof(float); }

}  // namespace

void register_attention_kernels(KernelTable& t) {
    add_kernel<MultiheadAttentionDesc>(t, {run_attention, attention_workspace});
}

}  // namespace dml::cpu
