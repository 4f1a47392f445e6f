// Resampling kernels. RESAMPLE2 is separable: each output coordinate of each dimension reads a few input
// coordinates with weights ("taps"), and an output element sums the products over every dimension's taps.
// UPSAMPLE_2D is RESAMPLE2 with integer scales on the last two dimensions; RESAMPLE_GRAD1 runs the transposed taps
// (each forward input gathers the forward outputs it fed, with the same weights), so no two threads accumulate
// into one element.
#include "../../core/ops/resampling.h"

#include <algorithm>
#include <cmath>

#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

// The taps of one dimension: for each coordinate of the side being computed, the (position, weight) pairs it reads.
using Taps = std::vector<std::vector<std::pair<int64_t, float>>>;

// RESAMPLE2's taps of dimension `d` for `n_out` outputs read from `n_in` inputs. The input coordinate of output o
// is (o - output_offset) / scale - input_offset, clamped to the edges. Zero weights are left out, so a
// neighbour's inf or NaN never leaks into an output it does not weigh.
Taps forward_taps(const ResampleParams& p, size_t d, uint32_t n_in, uint32_t n_out) {
    Taps t(n_out);
    const int64_t last = int64_t(n_in) - 1;
    for (uint32_t o = 0; o < n_out; ++o) {
        double x = (double(o) - p.output_offsets[d]) / p.scales[d] - p.input_offsets[d];
        x = std::clamp(x, -1.0, double(n_in));  // beyond the edges every coordinate reads the edge
        if (p.mode == InterpolationMode::NearestNeighbor) {
            const double r = p.rounding == AxisDirection::Decreasing ? std::floor(x) : std::ceil(x);
            t[o].push_back({std::clamp<int64_t>(int64_t(r), 0, last), 1.0f});
            continue;
        }
        const double x0 = std::floor(x);
        const float w = float(x - x0);
        const int64_t i0 = std::clamp<int64_t>(int64_t(x0), 0, last);
        const int64_t i1 = std::clamp<int64_t>(int64_t(x0) + 1, 0, last);
        if (i0 == i1) {
            t[o].push_back({i0, 1.0f});
            continue;
        }
        if (w != 1.0f) t[o].push_back({i0, 1.0f - w});
        if (w != 0.0f) t[o].push_back({i1, w});
    }
    return t;
}

// The transposed taps: for each of `n_in` forward inputs, the forward outputs that read it and their weights.
Taps transposed(const Taps& forward, uint32_t n_in) {
    Taps t(n_in);
    for (size_t o = 0; o < forward.size(); ++o)
        for (auto [i, w] : forward[o]) t[size_t(i)].push_back({int64_t(o), w});
    return t;
}

// y[c] = sum over the taps of every dimension of the weights' product times x at the tapped positions.
template <class T>
void apply_taps(ThreadPool& pool, const TensorArg& x, const TensorArg& y, const std::vector<Taps>& taps) {
    using C = compute_t<T>;
    const Sizes& out = y.desc->sizes;
    const Strides xs = x.desc->effective_strides();
    const size_t rank = out.size();
    const T* src = x.as<T>();
    T* dst = y.as<T>();
    const uint64_t n = out[rank - 1], rows = y.desc->element_count() / n;
    pool.parallel_for(rows, std::max<uint64_t>(1, 4096 / n), [&](size_t begin, size_t end) {
        std::vector<std::pair<int64_t, C>> outer, next;  // (offset, weight) over the row's leading dimensions
        for (size_t r = begin; r < end; ++r) {
            outer.assign(1, {0, C(1)});
            uint64_t rest = r;
            for (size_t d = rank - 1; d-- > 0;) {
                const auto& at = taps[d][rest % out[d]];
                rest /= out[d];
                next.clear();
                for (auto [o, w] : outer)
                    for (auto [i, tw] : at) next.push_back({o + i * int64_t(xs[d]), w * C(tw)});
                outer.swap(next);
            }
            const int64_t step = xs[rank - 1];
            for (uint64_t j = 0; j < n; ++j) {
                C acc = 0;
                for (auto [o, w] : outer)
                    for (auto [i, tw] : taps[rank - 1][j]) acc += w * C(tw) * C(src[o + i * step]);
                dst[r * n + j] = T(acc);
            }
        }
    });
}

template <class F>
void visit_float(DataType type, F&& f) {
    if (type == DataType::Float16) f.template operator()<half>();
    else f.template operator()<float>();
}

// Resamples inputs[0] into outputs[0] with RESAMPLE2's parameters, or with their transposed taps for the gradient
// (whose forward resample ran from the gradient's output sizes to its input sizes).
void resample_with(const KernelArgs& args, const ResampleParams& p, bool gradient) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const Sizes &forward_in = (gradient ? y : x).desc->sizes, &forward_out = (gradient ? x : y).desc->sizes;
    std::vector<Taps> taps;
    for (size_t d = 0; d < y.desc->rank(); ++d) {
        Taps t = forward_taps(p, d, forward_in[d], forward_out[d]);
        taps.push_back(gradient ? transposed(t, forward_in[d]) : std::move(t));
    }
    visit_float(x.desc->data_type, [&]<class T>() { apply_taps<T>(args.pool, x, y, taps); });
}

void run_resample(const KernelArgs& args) { resample_with(args, args.desc<ResampleDesc>().params, false); }

void run_resample_grad(const KernelArgs& args) { resample_with(args, args.desc<ResampleGradDesc>().params, true); }

// UPSAMPLE_2D maps pixel centres like RESAMPLE2's defaults; with integer scales nearest neighbour is
// floor(output / scale), which RESAMPLE2 gives with zero offsets rounding down.
void run_upsample(const KernelArgs& args) {
    const auto& d = args.desc<Upsample2dDesc>();
    const size_t rank = args.inputs[0].desc->rank();
    const bool nearest = d.mode == InterpolationMode::NearestNeighbor;
    ResampleParams p{d.mode, AxisDirection::Decreasing, std::vector<float>(rank, 1.0f),
                     std::vector<float>(rank, nearest ? 0.0f : 0.5f),
                     std::vector<float>(rank, nearest ? 0.0f : -0.5f)};
    p.scales[rank - 2] = float(d.scale_height);
    p.scales[rank - 1] = float(d.scale_width);
    resample_with(args, p, false);
}

// A third operand steps 1 along the channel dimension only: it is the channel, indexing the biases.
void run_value_scale(const KernelArgs& args) {
    const auto& d = args.desc<ValueScale2dDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const std::vector<int64_t> channel = {0, 1, 0, 0};
    const std::vector<int64_t> os = signed_strides(y.desc->effective_strides()),
                               is = signed_strides(x.desc->effective_strides());
    visit_float(x.desc->data_type, [&]<class T>() {
        const T* src = x.as<T>();
        T* dst = y.as<T>();
        for_each_row<3>(args.pool, y.desc->sizes, {os, is, channel}, [&](auto off, auto st, uint64_t n) {
            for (uint64_t j = 0; j < n; ++j) {
                const float v = d.scale * float(src[off[1] + int64_t(j) * st[1]]) + d.bias[off[2] + int64_t(j) * st[2]];
                dst[off[0] + int64_t(j) * st[0]] = T(v);
            }
        });
    });
}

}  // namespace

void register_resampling_kernels(KernelTable& t) {
    add_kernel<ResampleDesc>(t, {run_resample});
    add_kernel<ResampleGradDesc>(t, {run_resample_grad});
    add_kernel<Upsample2dDesc>(t, {run_upsample});
    add_kernel<ValueScale2dDesc>(t, {run_value_scale});
}

}  // namespace dml::cpu
