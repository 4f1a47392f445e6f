// Resampling kernels: RESAMPLE2, RESAMPLE_GRAD1 and UPSAMPLE_2D gather through each dimension's taps
// (executor/resampling_taps.h); VALUE_SCALE_2D.
#include "../../core/ops/resampling.h"

#include <algorithm>

#include "../../executor/resampling_taps.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

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

// Resamples inputs[0] into outputs[0] with RESAMPLE2's parameters, or with their transposed taps for the gradient.
void resample_with(const KernelArgs& args, const ResampleParams& p, bool gradient) {
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const std::vector<Taps> taps = resample_taps(p, gradient, x.desc->sizes, y.desc->sizes);
    visit_float(x.desc->data_type, [&]<class T>() { apply_taps<T>(args.pool, x, y, taps); });
}

void run_resample(const KernelArgs& args) { resample_with(args, args.desc<ResampleDesc>().params, false); }

void run_resample_grad(const KernelArgs& args) { resample_with(args, args.desc<ResampleGradDesc>().params, true); }

void run_upsample(const KernelArgs& args) {
    resample_with(args, upsample_params(args.desc<Upsample2dDesc>(), args.inputs[0].desc->rank()), false);
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
