// Resampling on CUDA: RESAMPLE2, RESAMPLE_GRAD1 and UPSAMPLE_2D as one separable gather, and VALUE_SCALE_2D, with
// the CPU kernels' semantics (cpu/kernels/resampling.cpp). Each dimension's taps (for each output coordinate, the
// input coordinates it reads and their weights) are computed at compile by the CPU's code (resampling_taps.h) and
// uploaded once; the gradient runs the transposed taps, so every output element gathers and no two threads
// accumulate into one. Sums are in float, in the CPU's order.
#include "../../core/ops/resampling.h"

#include <algorithm>
#include <cstring>

#include "../../executor/resampling_taps.h"
#include "common.cuh"

namespace dml::cuda {

namespace {

struct Tap {
    uint32_t pos;
    float weight;
};

struct ResampleGeometry {
    int rank;
    uint32_t out[kMaxDimensions];        // output sizes
    int64_t in_stride[kMaxDimensions];   // the input's element strides
    uint32_t first[kMaxDimensions];      // where dimension d's entries begin in `starts`
};

// y[c] = sum over the taps of every dimension of the weights' product times x at the tapped positions. Coordinate
// c of dimension d reads taps[starts[first[d] + c] .. starts[first[d] + c + 1]). Where every coordinate has one tap
// of weight 1 (`Nearest`: nearest-neighbour resampling), y[c] is x at the tapped positions, without the weighted
// sum's loops. Index: the width of the index arithmetic (32 bits where the output allows).
template <class T, class Index, bool Nearest>
struct ResampleOp {
    T* y;
    const T* x;
    const Tap* taps;
    const uint32_t* starts;
    ResampleGeometry g;

    __device__ void operator()(uint64_t i, const int64_t (&)[1]) const {
        if constexpr (Nearest) nearest(i);
        else weighted(i);
    }

    __device__ void nearest(uint64_t i) const {
        Index r = Index(i);
        int64_t off = 0;
        for (int d = g.rank - 1; d >= 0; --d) {
            const Index c = r % Index(g.out[d]);
            r /= Index(g.out[d]);
            off += int64_t(taps[starts[g.first[d] + uint32_t(c)]].pos) * g.in_stride[d];
        }
        y[i] = x[off];
    }

    __device__ void weighted(uint64_t i) const {
        const int rank = g.rank, inner = rank - 1;
        uint32_t lo[kMaxDimensions], hi[kMaxDimensions], cur[kMaxDimensions];
        Index r = Index(i);
        bool empty = false;  // a dimension with no taps (a forward input nothing read): the sum is 0
        for (int d = rank - 1; d >= 0; --d) {
            const uint32_t c = uint32_t(r % Index(g.out[d]));
            r /= Index(g.out[d]);
            cur[d] = lo[d] = starts[g.first[d] + c];
            hi[d] = starts[g.first[d] + c + 1];
            empty = empty || lo[d] == hi[d];
        }
        float acc = 0.0f;
        while (!empty) {
            // The weight of the leading dimensions multiplies from the last of them down, as the CPU's.
            float w = 1.0f;
            int64_t off = 0;
            for (int d = rank - 2; d >= 0; --d) {
                const Tap t = taps[cur[d]];
                w *= t.weight;
                off += int64_t(t.pos) * g.in_stride[d];
            }
            const Tap t = taps[cur[inner]];
            acc += w * t.weight * float(load(x + off + int64_t(t.pos) * g.in_stride[inner]));
            // The innermost dimension steps fastest, then dimension 0, 1, ..., rank - 2 (the CPU's order).
            int k = 0;
            for (; k < rank; ++k) {
                const int d = k == 0 ? inner : k - 1;
                if (++cur[d] < hi[d]) break;
                cur[d] = lo[d];
            }
            if (k == rank) break;
        }
        store(y + i, compute_of<T>(acc));
    }
};

// Resamples inputs[0] into outputs[0] with RESAMPLE2's parameters, or with their transposed taps for the gradient
// (whose forward resample ran from the gradient's output sizes to its input sizes).
class ResampleKernel : public CudaKernel {
public:
    ResampleKernel(const Node& node, CudaDevice& device, const ResampleParams& p, bool gradient)
        : type_(node.outputs[0].data_type),
          sm_count_(device.sm_count()),
          ix_(make_indexer<1>(node.outputs[0].sizes, {signed_strides(node.outputs[0])})) {
        const TensorDesc &x = node.inputs[0]->desc, &y = node.outputs[0];
        const Strides xs = x.effective_strides();
        const std::vector<Taps> dims = resample_taps(p, gradient, x.sizes, y.sizes);
        std::vector<Tap> taps;
        std::vector<uint32_t> starts;
        g_.rank = int(y.rank());
        nearest_ = true;
        for (const auto& dim : dims)
            for (const auto& row : dim) nearest_ = nearest_ && row.size() == 1 && row[0].second == 1.0f;
        for (size_t d = 0; d < y.rank(); ++d) {
            g_.out[d] = y.sizes[d];
            g_.in_stride[d] = xs[d];
            g_.first[d] = uint32_t(starts.size());
            for (const auto& row : dims[d]) {
                starts.push_back(uint32_t(taps.size()));
                for (auto [i, w] : row) taps.push_back({i, w});
            }
            starts.push_back(uint32_t(taps.size()));
        }
        taps_bytes_ = taps.size() * sizeof(Tap);
        bytes_ = taps_bytes_ + starts.size() * sizeof(uint32_t);
        std::vector<std::byte> host(bytes_);
        std::memcpy(host.data(), taps.data(), taps_bytes_);
        std::memcpy(host.data() + taps_bytes_, starts.data(), bytes_ - taps_bytes_);
        tables_ = device.allocate(bytes_);
        device.upload(*tables_, host.data(), bytes_);
    }

    uint64_t persistent_size() const override { return bytes_; }

    void enqueue(const LaunchArgs& a) const override {
        visit_float_type(type_, [&]<class T>() {
            const auto* base = static_cast<const std::byte*>(tables_->data);
            auto* y = static_cast<T*>(a.outputs[0]);
            const auto* x = static_cast<const T*>(a.inputs[0]);
            const auto* taps = reinterpret_cast<const Tap*>(base);
            const auto* starts = reinterpret_cast<const uint32_t*>(base + taps_bytes_);
            auto run = [&]<class Index, bool Nearest>() {
                for_each<1>(ix_, ResampleOp<T, Index, Nearest>{y, x, taps, starts, g_}, sm_count_, a.stream, "resample");
            };
            const bool narrow = ix_.count <= UINT32_MAX;
            if (nearest_) narrow ? run.template operator()<uint32_t, true>() : run.template operator()<uint64_t, true>();
            else narrow ? run.template operator()<uint32_t, false>() : run.template operator()<uint64_t, false>();
        });
    }

private:
    DataType type_;
    int sm_count_;
    Indexer<1> ix_;
    ResampleGeometry g_{};
    bool nearest_ = false;  // one tap of weight 1 for every coordinate
    uint64_t taps_bytes_ = 0, bytes_ = 0;
    std::shared_ptr<Memory> tables_;  // the taps, then the starts
};

// y = scale * x + bias[channel]; the third operand steps 1 along the channel dimension only: it is the channel.
template <class T>
struct ValueScaleOp {
    T* y;
    const T* x;
    float scale, bias[3];
    __device__ void operator()(uint64_t, const int64_t (&off)[3]) const {
        store(y + off[0], compute_of<T>(scale * float(load(x + off[1])) + bias[off[2]]));
    }
};

class ValueScaleKernel : public CudaKernel {
public:
    ValueScaleKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const ValueScale2dDesc&>(*node.desc)),
          type_(node.outputs[0].data_type),
          sm_count_(device.sm_count()),
          ix_(make_indexer<3>(node.outputs[0].sizes, {signed_strides(node.outputs[0]),
                                                       signed_strides(node.inputs[0]->desc), {0, 1, 0, 0}})) {}

    void enqueue(const LaunchArgs& a) const override {
        visit_float_type(type_, [&]<class T>() {
            ValueScaleOp<T> op{static_cast<T*>(a.outputs[0]), static_cast<const T*>(a.inputs[0]), desc_.scale, {}};
            std::copy(desc_.bias.begin(), desc_.bias.end(), op.bias);  // the builder allows 1 or 3
            for_each<3>(ix_, op, sm_count_, a.stream, "value scale 2d");
        });
    }

private:
    const ValueScale2dDesc& desc_;
    DataType type_;
    int sm_count_;
    Indexer<3> ix_;
};

}  // namespace

void register_resampling_kernels(KernelTable& t) {
    add_kernel<ResampleDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<ResampleKernel>(n, d, static_cast<const ResampleDesc&>(*n.desc).params, false);
    });
    add_kernel<ResampleGradDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<ResampleKernel>(n, d, static_cast<const ResampleGradDesc&>(*n.desc).params, true);
    });
    add_kernel<Upsample2dDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        const ResampleParams p = upsample_params(static_cast<const Upsample2dDesc&>(*n.desc), n.outputs[0].rank());
        return std::make_unique<ResampleKernel>(n, d, p, false);
    });
    add_kernel<ValueScale2dDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        return std::make_unique<ValueScaleKernel>(n, d);
    });
}

}  // namespace dml::cuda
