// DML_OPERATOR_GRU on CUDA, with the CPU kernel's semantics (cpu/kernels/recurrent.cpp): ONNX's gates z, r, h and
// the state kept in float (float16's compute type too). The operands are packed into float in the workspace; the
// input's part of every gate at every step (x W^T) is one cuBLASLt GEMM per direction; the recurrence is one
// kernel in which a block per (direction, batch entry) steps through time, its warps sharing the dot products.
#include "../../core/ops/recurrent.h"

#include "../cublaslt.h"
#include "common.cuh"
#include "factory.h"
#include "kernel.h"
#include "workspace.h"

namespace dml::cuda {

namespace {

constexpr unsigned kGruThreads = 512;

template <class T>
struct ToFloat {
    float* dst;
    const T* src;
    __device__ void operator()(uint64_t, const int64_t (&off)[2]) const { dst[off[0]] = float(load(src + off[1])); }
};

template <class T>
struct GruRecurrence {
    const float* xw;      // [dirs][seq * batch][3 hidden]: x W^T, directions xw_dir apart
    uint64_t xw_dir;
    const float* r;       // [dirs][3 hidden][hidden]
    const float* bias;    // [dirs][6 hidden] (W's then R's), or null
    const T* h0;          // or null
    int64_t h0_stride[3]; // direction, batch, hidden
    const uint32_t* lengths;  // or null
    int64_t length_stride;
    float* state;         // per block: h [hidden], hr [3 hidden], r * h [hidden]
    T* sequence;          // [seq][dirs][batch][hidden], or null
    T* single;            // [dirs][batch][hidden], or null
    FusedActivation act[4];  // f, g per direction
    uint32_t seq, batch, hidden, dirs;
    bool backward, linear_before_reset;
};

// Block (direction, batch entry) runs the whole sequence: per step, the recurrent products R h (warp per row),
// then the gates (thread per hidden unit), with r * h and its product with R's h rows in between unless the
// linear part comes before the reset.
template <class T>
__global__ void __launch_bounds__(kGruThreads) gru_recurrence_kernel(GruRecurrence<T> p) {
    const uint32_t dir = blockIdx.x / p.batch, b = blockIdx.x % p.batch, H = p.hidden, G = 3 * H;
    const bool reverse = p.backward || dir == 1;
    const FusedActivation f = p.act[2 * dir], g = p.act[2 * dir + 1];
    float* h = p.state + uint64_t(blockIdx.x) * 5 * H;
    float* hr = h + H;
    float* reset_h = hr + G;
    const float* R = p.r + uint64_t(dir) * G * H;
    const float* wb = p.bias ? p.bias + uint64_t(dir) * 2 * G : nullptr;  // R's bias follows at wb + G
    const uint32_t length = p.lengths ? min(p.lengths[b * p.length_stride], p.seq) : p.seq;
    for (uint32_t i = threadIdx.x; i < H; i += blockDim.x)
        h[i] = p.h0 ? float(load(p.h0 + dir * p.h0_stride[0] + b * p.h0_stride[1] + i * p.h0_stride[2])) : 0.0f;
    __syncthreads();

    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    // hr[j] = Rb[j] + R[j] . v for rows [from, to)
    auto recurrent = [&](uint32_t from, uint32_t to, const float* v) {
        for (uint32_t j = from + warp; j < to; j += warps) {
            const float* row = R + uint64_t(j) * H;
            float acc = 0;
            for (uint32_t i = lane; i < H; i += 32) acc += row[i] * v[i];
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, m);
            if (lane == 0) hr[j] = (wb ? wb[G + j] : 0.0f) + acc;
        }
    };
    for (uint32_t step = 0; step < length; ++step) {
        const uint32_t t = reverse ? length - 1 - step : step;
        const float* xg = p.xw + dir * p.xw_dir + (uint64_t(t) * p.batch + b) * G;
        auto input = [&](uint32_t j) { return wb ? xg[j] + wb[j] : xg[j]; };  // x W^T + Wb of gate row j
        recurrent(0, p.linear_before_reset ? G : 2 * H, h);
        __syncthreads();
        if (!p.linear_before_reset) {
            for (uint32_t i = threadIdx.x; i < H; i += blockDim.x)
                reset_h[i] = apply_activation(f, input(H + i) + hr[H + i]) * h[i];
            __syncthreads();
            recurrent(2 * H, G, reset_h);  // R_h (r * h) + Rb_h
            __syncthreads();
        }
        T* out = p.sequence ? p.sequence + ((uint64_t(t) * p.dirs + dir) * p.batch + b) * H : nullptr;
        for (uint32_t i = threadIdx.x; i < H; i += blockDim.x) {
            const float z = apply_activation(f, input(i) + hr[i]);
            const float linear =
                p.linear_before_reset ? apply_activation(f, input(H + i) + hr[H + i]) * hr[2 * H + i] : hr[2 * H + i];
            const float candidate = apply_activation(g, input(2 * H + i) + linear);
            h[i] = (1.0f - z) * candidate + z * h[i];  // each thread reads and writes only its own units
            if (out) store(out + i, h[i]);
        }
        __syncthreads();
    }
    if (p.single)
        for (uint32_t i = threadIdx.x; i < H; i += blockDim.x)
            store(p.single + (uint64_t(dir) * p.batch + b) * H + i, h[i]);
}

class GruKernel : public CudaKernel {
public:
    GruKernel(const Node& node, CudaDevice& device)
        : desc_(static_cast<const GRUDesc&>(*node.desc)), type_(node.inputs[0]->desc.data_type),
          sm_count_(device.sm_count()) {
        const TensorDesc &x = node.inputs[0]->desc, &w = node.inputs[1]->desc, &r = node.inputs[2]->desc;
        seq_ = x.sizes[1], batch_ = x.sizes[2], hidden_ = r.sizes[3], dirs_ = w.sizes[1];
        const uint64_t I = x.sizes[3], G = 3ull * hidden_, rows = uint64_t(seq_) * batch_;
        // Directions 64 floats (256 bytes) apart at least, so that every GEMM operand is as aligned as cuBLASLt
        // was told.
        const uint64_t w_dir = (G * I + 63) & ~uint64_t(63);
        xw_dir_ = (rows * G + 63) & ~uint64_t(63);
        // A float copy of input `input` in the workspace: its dimensions `dims`, of `sizes`, at `dst_strides`.
        auto pack = [&](size_t input, const Sizes& sizes, std::vector<int64_t> dst_strides, std::vector<uint32_t> dims,
                        uint64_t bytes) {
            const std::vector<int64_t> s = signed_strides(node.inputs[input]->desc);
            std::vector<int64_t> src;
            for (uint32_t d : dims) src.push_back(s[d]);
            const uint64_t at = workspace_.reserve(bytes);
            packs_.push_back({input, at, make_indexer<2>(sizes, {std::move(dst_strides), std::move(src)})});
            return at;
        };
        xs_ = pack(0, {seq_, batch_, uint32_t(I)}, {int64_t(batch_ * I), int64_t(I), 1}, {1, 2, 3}, rows * I * 4);
        w_ = pack(1, {dirs_, uint32_t(G), uint32_t(I)}, {int64_t(w_dir), int64_t(I), 1}, {1, 2, 3}, dirs_ * w_dir * 4);
        r_ = pack(2, {dirs_, uint32_t(G), hidden_}, {int64_t(G * hidden_), int64_t(hidden_), 1}, {1, 2, 3},
                  dirs_ * G * hidden_ * 4);
        if (node.inputs[3]) bias_ = pack(3, {dirs_, uint32_t(2 * G)}, {int64_t(2 * G), 1}, {2, 3}, dirs_ * 2 * G * 4);
        xw_ = workspace_.reserve(dirs_ * xw_dir_ * 4);
        state_ = workspace_.reserve(uint64_t(dirs_) * batch_ * 5 * hidden_ * 4);
        if (node.inputs[4]) {
            const std::vector<int64_t> s = signed_strides(node.inputs[4]->desc);
            h0_stride_ = {s[1], s[2], s[3]};
        }
        if (node.inputs[5]) length_stride_ = signed_strides(node.inputs[5]->desc)[3];

        // Column-major, xw^T [G, rows] = W [G, I] (stored as W^T: I x G) times x^T [I, rows] (stored as x: I x rows).
        LtProblem p;
        p.type = DataType::Float32;
        p.a = LtMatrix{I, G, int64_t(I), 0, true};
        p.b = LtMatrix{I, rows, int64_t(I), 0, false};
        p.d = LtMatrix{G, rows, int64_t(G), 0, false};
        projection_.emplace(device.cublaslt(), p);
        lt_workspace_ = workspace_.reserve(projection_->workspace_size());
        w_dir_ = w_dir;
    }

    uint64_t workspace_size() const override { return workspace_.size; }

    void enqueue(const LaunchArgs& a) const override {
        auto* ws = static_cast<std::byte*>(a.workspace);
        auto at = [&](uint64_t offset) { return reinterpret_cast<float*>(ws + offset); };
        visit_float_type(type_, [&]<class T>() {
            for (const Pack& k : packs_)
                for_each<2>(k.ix, ToFloat<T>{at(k.offset), static_cast<const T*>(a.inputs[k.input])}, sm_count_,
                            a.stream, "gru pack");
            for (uint32_t dir = 0; dir < dirs_; ++dir)
                projection_->enqueue(at(w_) + dir * w_dir_, at(xs_), nullptr, at(xw_) + dir * xw_dir_, nullptr,
                                     ws + lt_workspace_, a.stream);
            T* sequence = desc_.output_sequence ? static_cast<T*>(a.outputs[0]) : nullptr;
            T* single = desc_.output_single ? static_cast<T*>(a.outputs[desc_.output_sequence ? 1 : 0]) : nullptr;
            // Steps past a sequence's length leave zeros in the sequence output.
            if (sequence)
                check(cudaMemsetAsync(sequence, 0, uint64_t(seq_) * dirs_ * batch_ * hidden_ * sizeof(T), a.stream),
                      "cudaMemsetAsync");
            GruRecurrence<T> p{};
            p.xw = at(xw_);
            p.xw_dir = xw_dir_;
            p.r = at(r_);
            p.bias = a.inputs[3] ? at(bias_) : nullptr;
            p.h0 = static_cast<const T*>(a.inputs[4]);
            for (int k = 0; k < 3; ++k) p.h0_stride[k] = h0_stride_[k];
            p.lengths = static_cast<const uint32_t*>(a.inputs[5]);
            p.length_stride = length_stride_;
            p.state = at(state_);
            p.sequence = sequence;
            p.single = single;
            for (size_t k = 0; k < desc_.activations.size(); ++k) p.act[k] = desc_.activations[k];  // 2 per direction
            p.seq = seq_, p.batch = batch_, p.hidden = hidden_, p.dirs = dirs_;
            p.backward = desc_.direction == RecurrentNetworkDirection::Backward;
            p.linear_before_reset = desc_.linear_before_reset;
            gru_recurrence_kernel<T><<<dirs_ * batch_, kGruThreads, 0, a.stream>>>(p);
            check_launch("gru");
        });
    }

private:
    struct Pack {
        size_t input;
        uint64_t offset;  // of the float copy in the workspace
        Indexer<2> ix;    // [copy, input]
    };

    const GRUDesc& desc_;
    DataType type_;
    int sm_count_;
    uint32_t seq_, batch_, hidden_, dirs_;
    std::vector<Pack> packs_;
    WorkspaceLayout workspace_;
    uint64_t xs_ = 0, w_ = 0, r_ = 0, bias_ = 0, xw_ = 0, state_ = 0, lt_workspace_ = 0;  // its regions
    uint64_t w_dir_ = 0, xw_dir_ = 0;  // floats between directions
    std::array<int64_t, 3> h0_stride_{};
    int64_t length_stride_ = 0;
    std::optional<LtMatmul> projection_;
};

}  // namespace

void register_recurrent_kernels(KernelTable& t) {
    add_kernel<GRUDesc>(t, make_kernel<GruKernel>);
}

}  // namespace dml::cuda
