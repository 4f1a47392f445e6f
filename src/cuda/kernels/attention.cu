// DML_OPERATOR_MULTIHEAD_ATTENTION with the CPU kernel's semantics (cpu/kernels/attention.cpp). Three paths:
//  - fused: one kernel reading Q, K and V in place through their strides where it can, else from copies packed by
//    the gather below (bias added, past keys / values first, or present outputs asked for). Two kernels can be it:
//     - cuDNN's fused SDPA (cudnn_attention.h: float16, head sizes multiples of 8 up to 256, no mask of any kind
//       nor relative position bias);
//     - our flash kernel (flash_attention.cuh: float16, head sizes 64 / 128 for keys and values alike, no relative
//       position bias, no BOOLEAN mask (the sequence masks are fine), sm_80 and up; DIRECTML_FLASH_ATTENTION=0
//       turns it off).
//    Where both take a problem, the faster on scratch operands of its shape runs it (measured once per shape).
//  - general (everything else): gather Q, K, V per (batch, head) into packed [batch, heads, rows, head_size] (K and
//    V straight into the present outputs when asked for), scores = scale * Q K^T on cuBLASLt (strided batches), a
//    kernel adding the relative position bias and the mask and taking each row's softmax in float, then P V on
//    cuBLASLt written straight into the [batch, sequence, heads * value_head_size] output. The scores of at most
//    kScoresBudget bytes of batch entries are held at once.
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>

#include "../../core/ops/attention.h"
#include "../cublaslt.h"
#include "../cudnn_attention.h"
#include "common.cuh"
#include "flash_attention.cuh"
#include "kernel.h"
#include "workspace.h"

namespace dml::cuda {

namespace {

enum Input {
    kQuery, kKey, kValue, kStackedQK, kStackedKV, kStackedQKV, kBias, kMask, kRelativeBias, kPastKey, kPastValue
};

constexpr uint64_t kScoresBudget = 256ull << 20;

// The element strides of the last `rank` dimensions (the builder checked that the leading ones have size 1).
std::vector<int64_t> trailing_strides(const TensorDesc& d, size_t rank) {
    Strides s = d.effective_strides();
    return std::vector<int64_t>(s.end() - rank, s.end());
}

// Where element (b, row, h, d) of one role is read: input `input`, at offset + b sb + row sr + h sh + d sd.
struct Source {
    int input;
    int64_t offset, sb, sr, sh, sd;
};

// A [batch, sequence, heads * head_size] tensor, or slot `slot` of a stacked [batch, sequence, heads, n, head_size].
Source role_source(const Node& node, int plain, int stacked, uint32_t slot, uint32_t head_size) {
    if (node.inputs[plain]) {
        const auto st = trailing_strides(node.inputs[plain]->desc, 3);
        return {plain, 0, st[0], st[1], int64_t(head_size) * st[2], st[2]};
    }
    const auto st = trailing_strides(node.inputs[stacked]->desc, 5);
    return {stacked, int64_t(slot) * st[3], st[0], st[1], st[2], st[4]};
}

// A 4-D [batch, heads, S, total] view read on the device (relative position bias, BOOLEAN mask).
struct View4 {
    const void* data = nullptr;
    int64_t st[4] = {};
};

// What the CPU adds to scale * Q K^T before the softmax: the relative position bias, then MaskFilterValue where the
// mask masks (a BOOLEAN mask's zeros, else keys outside the sequence mask's range).
struct ScoreTerms {
    KeyRangeMask range;
    View4 boolean, relative;
    float filter;
};

// Each warp takes one row of scores [pairs of (batch, head), S, total] (pairs starting at batch entry b0), in
// place: adds ScoreTerms and stores the softmax, computed in float as one pass of running maximum and sum, then one
// writing pass.
template <class T>
__global__ void __launch_bounds__(256) softmax_rows(T* scores, uint64_t rows, uint32_t S, uint32_t total, uint32_t H,
                                                    uint32_t b0, ScoreTerms terms) {
    const unsigned lane = threadIdx.x % 32;
    for (uint64_t row = uint64_t(blockIdx.x) * 8 + threadIdx.x / 32; row < rows; row += uint64_t(gridDim.x) * 8) {
        const uint64_t pair = row / S;
        const uint32_t s = uint32_t(row % S), b = b0 + uint32_t(pair / H), h = uint32_t(pair % H);
        T* x = scores + row * total;
        int64_t begin, end;
        terms.range.range(b, total, begin, end);
        const T* rel = terms.relative.data ? static_cast<const T*>(terms.relative.data) + b * terms.relative.st[0] +
                                                 h * terms.relative.st[1] + s * terms.relative.st[2]
                                           : nullptr;
        const int32_t* keep = terms.boolean.data ? static_cast<const int32_t*>(terms.boolean.data) +
                                                       b * terms.boolean.st[0] + h * terms.boolean.st[1] +
                                                       s * terms.boolean.st[2]
                                                 : nullptr;
        auto score = [&](uint32_t t) {
            float v = load(x + t);
            if (rel) v += load(rel + t * terms.relative.st[3]);
            const bool masked = keep ? keep[t * terms.boolean.st[3]] == 0 : int64_t(t) < begin || int64_t(t) >= end;
            return masked ? v + terms.filter : v;
        };
        float m = -INFINITY, l = 0.0f;
        for (uint32_t t = lane; t < total; t += 32) {
            const float v = score(t);
            if (v > m) l = l * expf(m - v) + 1.0f, m = v;
            else if (v != -INFINITY) l += expf(v - m);  // -inf weighs nothing (and -inf - -inf is NaN); NaN spreads
        }
#pragma unroll
        for (int mask = 16; mask > 0; mask >>= 1) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m, mask), l2 = __shfl_xor_sync(0xffffffffu, l, mask);
            const float mm = fmaxf(m, m2);
            l = (m == -INFINITY ? 0.0f : l * expf(m - mm)) + (m2 == -INFINITY ? 0.0f : l2 * expf(m2 - mm));
            m = mm;
        }
        const float inv = 1.0f / l;  // a row of -inf only: NaN, as on the CPU
        for (uint32_t t = lane; t < total; t += 32) store(x + t, expf(score(t) - m) * inv);
    }
}

// dst = src (+ bias) over one role's [batch, heads, rows, head_size] (offsets in that order: dst, src, bias).
template <class T>
struct Gather {
    T* dst;
    const T* src;
    const T* bias;  // null: none
    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        compute_of<T> v = load(src + off[1]);
        if (bias) v += load(bias + off[2]);
        store(dst + off[0], v);
    }
};

// Memory a kernel of the node reads or writes: the workspace, one of its outputs or one of its inputs (read only),
// at a byte offset.
struct Place {
    enum Kind { Workspace, Output, Input } kind = Workspace;
    int index = 0;
    int64_t offset = 0;

    std::byte* at(const LaunchArgs& a) const {
        switch (kind) {
            case Output: return static_cast<std::byte*>(a.outputs[index]) + offset;
            case Input: return const_cast<std::byte*>(static_cast<const std::byte*>(a.inputs[index])) + offset;
            default: return static_cast<std::byte*>(a.workspace) + offset;
        }
    }
};

class AttentionKernel : public CudaKernel {
public:
    AttentionKernel(const Node& node, CudaDevice& device) : device_(device) {
        const auto& d = static_cast<const MultiheadAttentionDesc&>(*node.desc);
        const auto& in = node.inputs;
        type_ = node.outputs[0].data_type;
        es_ = element_size(type_);
        // Shapes as the CPU's AttentionShape.
        B_ = node.outputs[0].sizes[0], S_ = node.outputs[0].sizes[1], H_ = d.head_count;
        vhs_ = node.outputs[0].sizes[2] / H_;
        hs_ = in[kQuery] ? in[kQuery]->desc.sizes.back() / H_
                         : (in[kStackedQK] ? in[kStackedQK] : in[kStackedQKV])->desc.sizes.back();
        past_ = in[kPastKey] ? in[kPastKey]->desc.sizes[in[kPastKey]->desc.rank() - 2] : 0;
        const auto& key = in[kKey] ? in[kKey] : in[kStackedKV];
        kv_ = key ? key->desc.sizes[key->desc.rank() - (in[kKey] ? 2 : 4)] : S_;
        total_ = past_ + kv_;
        int next_output = 1;
        const int present_key = d.output_present_key ? next_output++ : -1;
        const int present_value = d.output_present_value ? next_output++ : -1;

        // The three roles (slots of the stacked forms as the CPU reads them) and their bias offsets.
        const int stacked_q = in[kStackedQK] ? kStackedQK : kStackedQKV;
        const int stacked_k = in[kStackedQK] ? kStackedQK : in[kStackedKV] ? kStackedKV : kStackedQKV;
        const int stacked_v = in[kStackedKV] ? kStackedKV : kStackedQKV;
        Role q{role_source(node, kQuery, stacked_q, 0, hs_), std::nullopt, S_, hs_, 0, -1};
        Role k{role_source(node, kKey, stacked_k, in[kStackedKV] ? 0 : 1, hs_), past_source(node, kPastKey), kv_, hs_,
               int64_t(H_) * hs_, present_key};
        Role v{role_source(node, kValue, stacked_v, in[kStackedKV] ? 1 : 2, vhs_), past_source(node, kPastValue), kv_,
               vhs_, 2 * int64_t(H_) * hs_, present_value};
        if (in[kBias]) bias_stride_ = trailing_strides(in[kBias]->desc, 1)[0];
        else q.bias_offset = k.bias_offset = v.bias_offset = -1;

        terms_.filter = d.mask_filter_value;
        if (in[kMask]) {
            if (d.mask_type == MultiheadAttentionMaskType::Boolean) {
                boolean_mask_ = true;
                const auto st = trailing_strides(in[kMask]->desc, 4);
                std::copy(st.begin(), st.end(), terms_.boolean.st);
            } else {
                terms_.range.type = d.mask_type;
                const bool flat = d.mask_type == MultiheadAttentionMaskType::KeyQuerySequenceLengthStartEnd;
                const auto st = trailing_strides(in[kMask]->desc, flat ? 1 : 2);
                terms_.range.stride0 = st[0], terms_.range.stride1 = flat ? 0 : st[1];
            }
        }
        if (in[kRelativeBias]) {
            const auto st = trailing_strides(in[kRelativeBias]->desc, 4);
            std::copy(st.begin(), st.end(), terms_.relative.st);
        }

        const bool flash = flash_suits(node);
        if (dnn_suits(node)) dnn_ = DnnAttention::create(device, dnn_problem(d, q, k, v));
        if (dnn_ || flash) plan_fused(d, q, k, v, flash);
        else plan_general(d, q, k, v);
    }

    uint64_t workspace_size() const override { return workspace_.size; }

    void enqueue(const LaunchArgs& args) const override {
        if (type_ == DataType::Float16) run<__half>(args);
        else run<float>(args);
    }

private:
    // One role: where it is read, its past rows (keys and values), rows after them, head size, offset into the
    // bias vector (elements; < 0: no bias) and the present output it fills (or -1).
    struct Role {
        Source src;
        std::optional<Source> past;
        uint32_t rows, head_size;
        int64_t bias_offset;
        int present;
    };
    // dst (+ bias) = src over [batch, heads, rows, head_size].
    struct GatherStep {
        Indexer<3> ix;
        Place src, dst;
        int64_t bias_offset;  // elements; < 0: no bias
    };
    struct CallStep {
        int64_t scores, value, output;  // elements between consecutive P V matrices
    };

    static std::optional<Source> past_source(const Node& node, int input) {
        if (!node.inputs[input]) return std::nullopt;
        const auto st = trailing_strides(node.inputs[input]->desc, 4);  // [batch, heads, past, head_size]
        return Source{input, 0, st[0], st[2], st[1], st[3]};
    }

    bool flash_suits(const Node& node) const {
        const char* env = std::getenv("DIRECTML_FLASH_ATTENTION");
        if (env && std::string(env) == "0") return false;
        if (type_ != DataType::Float16 || hs_ != vhs_ || (hs_ != 64 && hs_ != 128)) return false;
        if (node.inputs[kRelativeBias] || boolean_mask_) return false;
        if (B_ > 65535 || H_ > 65535) return false;                   // grid dimensions z and y
        if (S_ > uint32_t(INT32_MAX) || total_ > uint32_t(INT32_MAX)) return false;  // 32-bit row and key indices
        if (device_.compute_capability_major() < 8) return false;
        // The kernel as this device runs it must come from sm_80 code or later: the PTX of an older architecture
        // (a build for compute_75 alone, JIT-compiled here) has an empty body (flash_attention.cuh).
        cudaFuncAttributes attr{};
        const cudaError_t e = hs_ == 64 ? cudaFuncGetAttributes(&attr, flash_attention_kernel<64>)
                                        : cudaFuncGetAttributes(&attr, flash_attention_kernel<128>);
        if (e != cudaSuccess) cudaGetLastError();  // not left for the next launch check to report
        return e == cudaSuccess && attr.ptxVersion >= 80;
    }

    bool dnn_suits(const Node& node) const {
        if (type_ != DataType::Float16 || node.inputs[kMask] || node.inputs[kRelativeBias]) return false;
        for (uint32_t size : {hs_, vhs_})
            if (size % 8 != 0 || size > 256) return false;
        return device_.compute_capability_major() >= 8;
    }

    // How a fused kernel reads a role: in place when nothing is added to it, its head rows are contiguous and every
    // step is 16-byte aligned; else from its packed copy [batch, heads, past + rows, head_size].
    bool in_place(const Role& r) const {
        const Source& s = r.src;
        auto aligned = [](int64_t stride, uint32_t size) { return size == 1 || stride % 8 == 0; };
        return r.bias_offset < 0 && !r.past && r.present < 0 && s.sd == 1 && s.offset % 8 == 0 && aligned(s.sb, B_) &&
               aligned(s.sr, r.rows) && aligned(s.sh, H_);
    }
    FlashOperand fused_layout(const Role& r) const {
        if (in_place(r)) return FlashOperand{nullptr, r.src.sb, r.src.sr, r.src.sh};
        const int64_t rows = (r.past ? past_ : 0) + r.rows, hs = r.head_size;
        return FlashOperand{nullptr, H_ * rows * hs, hs, rows * hs};
    }
    Place fused_place(const Role& r) {
        return in_place(r) ? Place{Place::Input, r.src.input, r.src.offset * int64_t(es_)} : gather(r);
    }

    DnnAttentionProblem dnn_problem(const MultiheadAttentionDesc& d, const Role& q, const Role& k,
                                    const Role& v) const {
        DnnAttentionProblem p;
        p.batch = B_, p.heads = H_, p.queries = S_, p.keys = total_, p.head_size = hs_, p.value_head_size = vhs_;
        p.scale = d.scale;
        auto strides = [](const FlashOperand& f, int64_t (&st)[3]) { st[0] = f.sb, st[1] = f.sh, st[2] = f.sr; };
        strides(fused_layout(q), p.q);
        strides(fused_layout(k), p.k);
        strides(fused_layout(v), p.v);
        const int64_t row = int64_t(H_) * vhs_;  // the output: packed [batch, S, heads * value_head_size]
        p.o[0] = S_ * row, p.o[1] = vhs_, p.o[2] = row;
        return p;
    }

    int64_t reserve(uint64_t bytes) { return int64_t(workspace_.reserve(bytes)); }

    // Gathers a role into packed [batch, heads, past + rows, head_size]: the present output when asked for, else
    // the workspace. Past rows first, as they are; then the role's rows with its bias.
    Place gather(const Role& r) {
        const uint32_t total = (r.past ? past_ : 0) + r.rows;
        const uint64_t bytes = uint64_t(B_) * H_ * total * r.head_size * es_;
        const Place dst =
            r.present >= 0 ? Place{Place::Output, r.present, 0} : Place{Place::Workspace, 0, reserve(bytes)};
        const std::vector<int64_t> dst_strides = {int64_t(H_) * total * r.head_size, int64_t(total) * r.head_size,
                                                  int64_t(r.head_size), 1};
        auto step = [&](const Source& s, uint32_t rows, uint32_t row0, int64_t bias_offset) {
            const int64_t bs = bias_offset < 0 ? 0 : bias_stride_;
            const std::vector<int64_t> bias_strides = {0, r.head_size * bs, 0, bs};
            gathers_.push_back({make_indexer<3>({B_, H_, rows, r.head_size},
                                                {dst_strides, {s.sb, s.sh, s.sr, s.sd}, bias_strides}),
                                Place{Place::Input, s.input, s.offset * int64_t(es_)},
                                Place{dst.kind, dst.index, dst.offset + int64_t(row0) * r.head_size * int64_t(es_)},
                                bias_offset});
        };
        if (r.past) step(*r.past, past_, 0, -1);
        step(r.src, r.rows, r.past ? past_ : 0, r.bias_offset);
        return dst;
    }

    void plan_general(const MultiheadAttentionDesc& d, const Role& q, const Role& k, const Role& v) {
        q_ = gather(q), k_ = gather(k), v_ = gather(v);

        // Batch entries per chunk: the largest divisor of B whose scores fit the budget (at least one).
        const uint64_t per_entry = uint64_t(H_) * S_ * total_ * es_;
        chunk_ = B_;
        while (chunk_ > 1 && (B_ % chunk_ != 0 || chunk_ * per_entry > kScoresBudget)) --chunk_;
        scores_offset_ = reserve(chunk_ * per_entry);

        // P V goes straight into [B, S, H * vhs]: one call per batch entry of a chunk (batched over heads) or one
        // per head (batched over the chunk's entries), whichever makes fewer calls.
        const int64_t S = S_, T = total_, H = H_, hs = hs_, vhs = vhs_;
        const bool per_entry_calls = chunk_ <= H_;
        calls_ = per_entry_calls ? chunk_ : H_;
        const CallStep per_entry_step{H * S * T, H * T * vhs, S * H * vhs}, per_head_step{S * T, T * vhs, vhs};
        call_step_ = per_entry_calls ? per_entry_step : per_head_step;
        const CallStep batch_step = per_entry_calls ? per_head_step : per_entry_step;

        // Base addresses are 256-byte aligned; the offsets added to them (chunks, calls) may be less.
        uint64_t align = 256;
        for (int64_t elements : {int64_t(chunk_) * H * S * hs, int64_t(chunk_) * H * T * hs,
                                 int64_t(chunk_) * H * T * vhs, int64_t(chunk_) * S * H * vhs, call_step_.scores,
                                 call_step_.value, call_step_.output})
            align = std::gcd(align, uint64_t(elements) * es_);

        const CublasLt& lib = device_.cublaslt();
        // scores^T (column-major T x S) = K (stored hs x T, transposed) Q^T (stored hs x S), over chunk * H pairs.
        LtProblem qk;
        qk.type = type_;
        qk.a = LtMatrix{uint64_t(hs), uint64_t(T), hs, T * hs, true};
        qk.b = LtMatrix{uint64_t(hs), uint64_t(S), hs, S * hs, false};
        qk.d = LtMatrix{uint64_t(T), uint64_t(S), T, S * T, false};
        qk.batch = int32_t(chunk_ * H_);
        qk.alpha = d.scale;
        qk.alignment = uint32_t(align);
        // O^T (column-major vhs x S, columns H vhs apart) = V^T (stored vhs x T) P^T (stored T x S).
        LtProblem pv;
        pv.type = type_;
        pv.a = LtMatrix{uint64_t(vhs), uint64_t(T), vhs, batch_step.value, false};
        pv.b = LtMatrix{uint64_t(T), uint64_t(S), T, batch_step.scores, false};
        pv.d = LtMatrix{uint64_t(vhs), uint64_t(S), H * vhs, batch_step.output, false};
        pv.batch = int32_t(per_entry_calls ? H_ : chunk_);
        pv.alignment = uint32_t(align);
        qk_.emplace(lib, qk);
        pv_.emplace(lib, pv);
        lt_offset_ = reserve(std::max(qk_->workspace_size(), pv_->workspace_size()));
    }

    // The fused path: cuDNN's SDPA (dnn_, where it built) or our flash kernel (`flash`: it suits), the faster
    // where both may run.
    void plan_fused(const MultiheadAttentionDesc& d, const Role& q, const Role& k, const Role& v, bool flash) {
        fused_ = true;
        params_.q = fused_layout(q), params_.k = fused_layout(k), params_.v = fused_layout(v);
        params_.S = S_, params_.T = total_, params_.H = H_;
        constexpr float kLog2e = 1.4426950408889634f;
        params_.scale_log2 = d.scale * kLog2e;
        params_.filter_log2 = d.mask_filter_value * kLog2e;
        if (flash) {
            auto allow = [](auto kernel, size_t bytes) {  // over 48 KiB of dynamic shared memory needs asking for
                check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
                      "cudaFuncSetAttribute (flash attention)");
            };
            if (hs_ == 64) allow(flash_attention_kernel<64>, FlashConfig<64>::kSharedBytes);
            else allow(flash_attention_kernel<128>, FlashConfig<128>::kSharedBytes);
            if (dnn_ && !dnn_faster()) dnn_.reset();
        }
        q_ = fused_place(q), k_ = fused_place(k), v_ = fused_place(v);
        if (dnn_) dnn_offset_ = reserve(dnn_->workspace_size());
    }

    // Whether cuDNN's SDPA runs this problem faster than the flash kernel, timed on zeroed scratch operands of its
    // layouts; remembered per device and layout for the process.
    bool dnn_faster() {
        std::vector<int64_t> key = {device_.index(), B_, S_, total_, H_, hs_};
        for (const FlashOperand* f : {&params_.q, &params_.k, &params_.v}) key.insert(key.end(), {f->sb, f->sr, f->sh});
        static Measurements<bool> chosen;
        return chosen.get(key, [&] { return measure_dnn_faster(); });
    }

    bool measure_dnn_faster() {
        std::lock_guard stream_lock(device_.stream_mutex());
        DeviceGuard guard(device_.index());
        const cudaStream_t stream = device_.stream();
        std::vector<std::shared_ptr<Memory>> held;
        auto zeros = [&](uint64_t elements) {
            held.push_back(device_.allocate(std::max<uint64_t>(elements * es_, 1)));
            check(cudaMemsetAsync(held.back()->data, 0, elements * es_, stream), "cudaMemsetAsync");
            return held.back()->data;
        };
        auto extent = [&](const FlashOperand& f, uint32_t rows) {  // elements, one past the last addressed
            return uint64_t((B_ - 1) * f.sb + (H_ - 1) * f.sh + (rows - 1) * f.sr + hs_);
        };
        FlashParams p = params_;
        p.q.base = static_cast<const __half*>(zeros(extent(p.q, S_)));
        p.k.base = static_cast<const __half*>(zeros(extent(p.k, total_)));
        p.v.base = static_cast<const __half*>(zeros(extent(p.v, total_)));
        p.out = static_cast<__half*>(zeros(uint64_t(B_) * S_ * H_ * vhs_));
        void* ws = zeros(dnn_->workspace_size());
        const float flash_ms = time_ms(stream, [&] { launch_flash(p, stream); });
        const float dnn_ms = time_ms(stream, [&] { dnn_->enqueue(p.q.base, p.k.base, p.v.base, p.out, ws, stream); });
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after timing attention");
        return dnn_ms < flash_ms;
    }

    template <int D>
    void launch_flash(const FlashParams& p, cudaStream_t stream) const {
        using C = FlashConfig<D>;
        const dim3 grid((S_ + C::kBlockM - 1) / C::kBlockM, H_, B_);
        flash_attention_kernel<D><<<grid, C::kThreads, C::kSharedBytes, stream>>>(p);
        check_launch("flash attention");
    }
    void launch_flash(const FlashParams& p, cudaStream_t stream) const {
        if (hs_ == 64) launch_flash<64>(p, stream);
        else launch_flash<128>(p, stream);
    }

    template <class T>
    void run(const LaunchArgs& args) const {
        const T* bias = static_cast<const T*>(args.inputs[kBias]);
        for (const GatherStep& g : gathers_) {
            const Gather<T> f{reinterpret_cast<T*>(g.dst.at(args)), reinterpret_cast<const T*>(g.src.at(args)),
                              g.bias_offset < 0 ? nullptr : bias + g.bias_offset * bias_stride_};
            for_each<3>(g.ix, f, device_.sm_count(), args.stream, "attention gather");
        }
        ScoreTerms terms = terms_;
        const auto* mask = static_cast<const int32_t*>(args.inputs[kMask]);
        if (boolean_mask_) terms.boolean.data = mask;
        else terms.range.data = mask;
        terms.relative.data = args.inputs[kRelativeBias];
        T* out = static_cast<T*>(args.outputs[0]);

        if constexpr (std::is_same_v<T, __half>)
            if (fused_) {
                FlashParams p = params_;
                p.q.base = reinterpret_cast<const __half*>(q_.at(args));
                p.k.base = reinterpret_cast<const __half*>(k_.at(args));
                p.v.base = reinterpret_cast<const __half*>(v_.at(args));
                p.out = out;
                p.mask = terms.range;
                if (!dnn_) return launch_flash(p, args.stream);
                void* ws = static_cast<std::byte*>(args.workspace) + dnn_offset_;
                dnn_->enqueue(p.q.base, p.k.base, p.v.base, out, ws, args.stream);
                return;
            }

        const int64_t S = S_, T_ = total_, H = H_;
        const T* q = reinterpret_cast<const T*>(q_.at(args));
        const T* k = reinterpret_cast<const T*>(k_.at(args));
        const T* v = reinterpret_cast<const T*>(v_.at(args));
        auto* ws = static_cast<std::byte*>(args.workspace);
        T* scores = reinterpret_cast<T*>(ws + scores_offset_);
        const uint64_t rows = uint64_t(chunk_) * H * S;
        const unsigned blocks = unsigned(std::min<uint64_t>((rows + 7) / 8, uint64_t(device_.sm_count()) * 8));
        for (uint32_t b0 = 0; b0 < B_; b0 += chunk_) {
            qk_->enqueue(k + b0 * H * T_ * hs_, q + b0 * H * S * hs_, nullptr, scores, nullptr, ws + lt_offset_,
                         args.stream);
            softmax_rows<T><<<blocks, 256, 0, args.stream>>>(scores, rows, S_, total_, H_, b0, terms);
            check_launch("attention softmax");
            const T* vb = v + b0 * H * T_ * vhs_;
            T* ob = out + b0 * S * H * vhs_;
            for (uint32_t i = 0; i < calls_; ++i)
                pv_->enqueue(vb + i * call_step_.value, scores + i * call_step_.scores, nullptr,
                             ob + i * call_step_.output, nullptr, ws + lt_offset_, args.stream);
        }
    }

    CudaDevice& device_;
    DataType type_;
    size_t es_;
    uint32_t B_, S_, H_, hs_, vhs_, past_, kv_, total_;
    int64_t bias_stride_ = 0;
    bool boolean_mask_ = false, fused_ = false;
    ScoreTerms terms_{};
    std::vector<GatherStep> gathers_;
    Place q_, k_, v_;  // where the products read Q, K, V
    WorkspaceLayout workspace_;
    // general path
    uint32_t chunk_ = 1, calls_ = 1;
    CallStep call_step_{};
    int64_t scores_offset_ = 0, lt_offset_ = 0;
    std::optional<LtMatmul> qk_, pv_;
    // fused path: the flash kernel's parameters but the addresses (their layouts are cuDNN's too), or cuDNN's SDPA
    // with its workspace
    FlashParams params_{};
    std::shared_ptr<const DnnAttention> dnn_;
    int64_t dnn_offset_ = 0;
};

}  // namespace

void register_attention_kernels(KernelTable& t) {
    add_kernel<MultiheadAttentionDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<AttentionKernel>(n, d);
    });
}

}  // namespace dml::cuda
