// CPU kernels of the normalization family: batch normalization (inference, training, both gradients), mean
// variance normalization and local response normalization. Statistics are computed in double.
#include "../../core/ops/normalization.h"

#include <array>
#include <cmath>

#include "../../executor/scalar_math.h"
#include "kernel.h"
#include "strided.h"
#include "vector_math.h"

namespace dml::cpu {

namespace {

// The element strides of `t` viewed at `sizes`: its size-1 dimensions broadcast (stride 0). An absent optional
// operand reads as all-zero strides (its pointer is never dereferenced).
std::vector<int64_t> strides_at(const TensorArg& t, const Sizes& sizes) {
    std::vector<int64_t> s(sizes.size(), 0);
    if (!t) return s;
    const Strides st = t.desc->effective_strides();
    for (size_t d = 0; d < sizes.size(); ++d) s[d] = t.desc->sizes[d] == sizes[d] ? int64_t(st[d]) : 0;
    return s;
}

// The input's dimensions split into reduced ones (the elements of one group) and kept ones (one group per point),
// addressing N operands viewed at the input's sizes.
template <size_t N>
struct Groups {
    uint64_t count = 1, size = 1;  // groups, and elements per group
    std::vector<uint32_t> outer_sizes, inner_sizes;
    std::array<std::vector<int64_t>, N> outer, inner;

    Groups(const Sizes& sizes, const std::vector<bool>& reduced, const std::array<const TensorArg*, N>& operands) {
        for (size_t k = 0; k < N; ++k) {
            const std::vector<int64_t> s = strides_at(*operands[k], sizes);
            for (size_t d = 0; d < sizes.size(); ++d) (reduced[d] ? inner : outer)[k].push_back(s[d]);
        }
        for (size_t d = 0; d < sizes.size(); ++d) {
            (reduced[d] ? inner_sizes : outer_sizes).push_back(sizes[d]);
            (reduced[d] ? size : count) *= sizes[d];
        }
    }
    // Offsets of group g's first element in each operand.
    std::array<int64_t, N> group(uint64_t g) const {
        std::array<int64_t, N> off{};
        for (size_t d = outer_sizes.size(); d-- > 0;) {
            const uint64_t i = g % outer_sizes[d];
            g /= outer_sizes[d];
            for (size_t k = 0; k < N; ++k) off[k] += int64_t(i) * outer[k][d];
        }
        return off;
    }
    // Calls f(offsets) for each element of the group starting at `off`, in row-major order.
    template <class F> void each(std::array<int64_t, N> off, F&& f) const {
        std::vector<uint32_t> idx(inner_sizes.size(), 0);
        for (uint64_t i = 0; i < size; ++i) {
            f(off);
            for (size_t d = inner_sizes.size(); d-- > 0;) {
                for (size_t k = 0; k < N; ++k) off[k] += inner[k][d];
                if (++idx[d] < inner_sizes[d]) break;
                for (size_t k = 0; k < N; ++k) off[k] -= inner[k][d] * int64_t(inner_sizes[d]);
                idx[d] = 0;
            }
        }
    }
    // Whether operand k's elements of a group lie contiguous in row-major order (its stride 1 inside the group).
    bool contiguous(size_t k) const {
        int64_t expected = 1;
        for (size_t d = inner_sizes.size(); d-- > 0;) {
            if (inner_sizes[d] != 1 && inner[k][d] != expected) return false;
            expected *= inner_sizes[d];
        }
        return true;
    }
    // Whether operand k is one value per group (every stride inside the group 0).
    bool constant(size_t k) const {
        for (size_t d = 0; d < inner_sizes.size(); ++d)
            if (inner_sizes[d] != 1 && inner[k][d] != 0) return false;
        return true;
    }
    template <class F> void for_each_group(ThreadPool& pool, F&& f) const {
        pool.parallel_for(count, std::max<uint64_t>(1, 4096 / size), [&](size_t b, size_t e) {
            for (size_t g = b; g < e; ++g) f(group(g));
        });
    }
};

template <class T> double get(const TensorArg& t, int64_t at) { return double(compute_t<T>(t.as<T>()[at])); }
template <class T> void put(const TensorArg& t, int64_t at, double v) { t.as<T>()[at] = T(compute_t<T>(v)); }

// Dimensions reduced by the training operators: those where the per-channel tensor is 1 and the input is not.
std::vector<bool> broadcast_dims(const TensorDesc& input, const TensorDesc& stats) {
    std::vector<bool> r(input.rank());
    for (size_t d = 0; d < input.rank(); ++d) r[d] = stats.sizes[d] == 1 && input.sizes[d] != 1;
    return r;
}

template <class T>
void run_batch_normalization_typed(const KernelArgs& args) {
    const auto& d = args.desc<BatchNormalizationDesc>();
    const Sizes& sizes = args.inputs[0].desc->sizes;
    std::array<std::vector<int64_t>, 6> st = {strides_at(args.outputs[0], sizes)};
    for (size_t k = 0; k < 5; ++k) st[k + 1] = strides_at(args.inputs[k], sizes);
    const TensorArg &y = args.outputs[0], &x = args.inputs[0], &mean = args.inputs[1], &var = args.inputs[2],
                    &scale = args.inputs[3], &bias = args.inputs[4];
    for_each_row<6>(args.pool, sizes, st, [&](auto off, auto step, uint64_t n) {
        if (step[1] == 1 && step[2] == 0 && step[3] == 0 && step[4] == 0 && step[5] == 0) {
            // One channel's run of a packed input: its factors once (in double), then a loop in the compute type
            // (float for float16 and float32, as DirectML computes; in double it ran at half the vector width and
            // 0.64-0.78x PyTorch), the activation a constant.
            using C = compute_t<T>;
            const C mu = C(get<T>(mean, off[2])), bias_value = C(get<T>(bias, off[5]));
            const C a = C(get<T>(scale, off[4]) / std::sqrt(get<T>(var, off[3]) + d.epsilon));
            const T* xs = x.as<T>() + off[1];
            T* ys = y.as<T>() + off[0];
            with_activation(d.fused.function, [&]<ActivationFunction A>() {
                for (uint64_t j = 0; j < n; ++j) ys[j] = T(activate<A>(d.fused, a * (C(xs[j]) - mu) + bias_value));
            });
            return;
        }
        for (uint64_t j = 0; j < n; ++j) {
            const double v = get<T>(scale, off[4]) * (get<T>(x, off[1]) - get<T>(mean, off[2])) /
                                 std::sqrt(get<T>(var, off[3]) + d.epsilon) +
                             get<T>(bias, off[5]);
            put<T>(y, off[0], apply_activation(d.fused, v));
            for (size_t k = 0; k < 6; ++k) off[k] += step[k];
        }
    });
}

template <class T>
void run_batch_normalization_training_typed(const KernelArgs& args) {
    const auto& d = args.desc<BatchNormalizationTrainingDesc>();
    const TensorArg &x = args.inputs[0], &scale = args.inputs[1], &bias = args.inputs[2], &add = args.inputs[3];
    const TensorArg &y = args.outputs[0], &mean_out = args.outputs[1], &var_out = args.outputs[2];
    Groups<7> g(x.desc->sizes, broadcast_dims(*x.desc, *scale.desc), {&y, &x, &add, &scale, &bias, &mean_out, &var_out});
    g.for_each_group(args.pool, [&](const std::array<int64_t, 7>& at) {
        double sum = 0, sq = 0;
        g.each(at, [&](const auto& o) { sum += get<T>(x, o[1]); });
        const double mean = sum / double(g.size);
        g.each(at, [&](const auto& o) { sq += (get<T>(x, o[1]) - mean) * (get<T>(x, o[1]) - mean); });
        const double var = sq / double(g.size);
        put<T>(mean_out, at[5], mean);
        put<T>(var_out, at[6], var);
        const double a = get<T>(scale, at[3]) / std::sqrt(var + d.epsilon), b = get<T>(bias, at[4]);
        g.each(at, [&](const auto& o) {
            const double v = a * (get<T>(x, o[1]) - mean) + b + (add ? get<T>(add, o[2]) : 0.0);
            put<T>(y, o[0], apply_activation(d.fused, v));
        });
    });
}

template <class T>
void run_batch_normalization_grad_typed(const KernelArgs& args) {
    const auto& d = args.desc<BatchNormalizationGradDesc>();
    const TensorArg &x = args.inputs[0], &dy = args.inputs[1], &mean_in = args.inputs[2], &var_in = args.inputs[3],
                    &scale = args.inputs[4];
    const TensorArg &dx = args.outputs[0], &dscale = args.outputs[1], &dbias = args.outputs[2];
    Groups<8> g(x.desc->sizes, broadcast_dims(*x.desc, *mean_in.desc),
                {&x, &dy, &mean_in, &var_in, &scale, &dx, &dscale, &dbias});
    g.for_each_group(args.pool, [&](const std::array<int64_t, 8>& at) {
        const double mean = get<T>(mean_in, at[2]), var = get<T>(var_in, at[3]) + d.epsilon;
        const double inv_std = 1 / std::sqrt(var), s = get<T>(scale, at[4]);
        double sum_dy = 0, sum_dy_xc = 0;
        g.each(at, [&](const auto& o) {
            sum_dy += get<T>(dy, o[1]);
            sum_dy_xc += get<T>(dy, o[1]) * (get<T>(x, o[0]) - mean);
        });
        put<T>(dscale, at[6], sum_dy_xc * inv_std);
        put<T>(dbias, at[7], sum_dy);
        if (!d.training) {
            g.each(at, [&](const auto& o) { put<T>(dx, o[5], get<T>(dy, o[1]) * s * inv_std); });
            return;
        }
        // DirectML's training gradient centers the input on its own mean over the group (not on the mean operand).
        double sum_x = 0;
        g.each(at, [&](const auto& o) { sum_x += get<T>(x, o[0]); });
        const double n = double(g.size), batch_mean = sum_x / n, mean_dy = sum_dy / n;
        double sum_coef1 = 0;
        g.each(at, [&](const auto& o) { sum_coef1 += get<T>(dy, o[1]) * (get<T>(x, o[0]) - batch_mean); });
        const double mean_coef1 = sum_coef1 / n;
        g.each(at, [&](const auto& o) {
            const double xc = get<T>(x, o[0]) - batch_mean;
            put<T>(dx, o[5], s * inv_std * (get<T>(dy, o[1]) - mean_dy - xc * mean_coef1 / var));
        });
    });
}

template <class T>
void run_mean_variance_normalization_typed(const KernelArgs& args) {
    const auto& d = args.desc<MeanVarianceNormalizationDesc>();
    const TensorArg &x = args.inputs[0], &scale = args.inputs[1], &bias = args.inputs[2], &y = args.outputs[0];
    std::vector<bool> reduced(x.desc->rank(), false);
    for (uint32_t a : d.axes) reduced[a] = true;
    Groups<4> g(x.desc->sizes, reduced, {&y, &x, &scale, &bias});
    if (g.contiguous(0) && g.contiguous(1) && g.constant(2) && g.constant(3)) {
        // Each group a contiguous block (instance and layer norm of packed tensors): vector loops, sums in lanes.
        return g.for_each_group(args.pool, [&](const std::array<int64_t, 4>& at) {
            const T* xs = x.as<T>() + at[1];
            T* ys = y.as<T>() + at[0];
            auto sum_of = [&](auto term) {
                double lanes[kLanes] = {};
                uint64_t i = 0;
                for (; i + kLanes <= g.size; i += kLanes)
                    for (int l = 0; l < kLanes; ++l) lanes[l] += term(double(compute_t<T>(xs[i + l])));
                for (; i < g.size; ++i) lanes[0] += term(double(compute_t<T>(xs[i])));
                return lane_sum(lanes, kLanes);
            };
            const double mean = d.normalize_mean ? sum_of([](double v) { return v; }) / double(g.size) : 0.0;
            const double inv_std = d.normalize_variance
                                       ? 1 / std::sqrt(sum_of([&](double v) { return (v - mean) * (v - mean); }) /
                                                           double(g.size) + d.epsilon)
                                       : 1.0;
            const double a = (scale ? get<T>(scale, at[2]) : 1.0) * inv_std, b = bias ? get<T>(bias, at[3]) : 0.0;
            with_activation(d.fused.function, [&]<ActivationFunction A>() {
                for (uint64_t i = 0; i < g.size; ++i)
                    ys[i] = T(compute_t<T>(activate<A>(d.fused, a * (double(compute_t<T>(xs[i])) - mean) + b)));
            });
        });
    }
    g.for_each_group(args.pool, [&](const std::array<int64_t, 4>& at) {
        double sum = 0, sq = 0;
        if (d.normalize_mean) g.each(at, [&](const auto& o) { sum += get<T>(x, o[1]); });
        const double mean = sum / double(g.size);  // 0 without normalize_mean
        g.each(at, [&](const auto& o) { sq += (get<T>(x, o[1]) - mean) * (get<T>(x, o[1]) - mean); });
        const double inv_std = d.normalize_variance ? 1 / std::sqrt(sq / double(g.size) + d.epsilon) : 1.0;
        g.each(at, [&](const auto& o) {
            const double v = (scale ? get<T>(scale, o[2]) : 1.0) * (get<T>(x, o[1]) - mean) * inv_std +
                             (bias ? get<T>(bias, o[3]) : 0.0);
            put<T>(y, o[0], apply_activation(d.fused, v));
        });
    });
}

template <class T>
void run_local_response_normalization_typed(const KernelArgs& args) {
    const auto& d = args.desc<LocalResponseNormalizationDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    const Strides st = x.desc->effective_strides();
    const int64_t N = x.desc->sizes[0], C = x.desc->sizes[1], H = x.desc->sizes[2], W = x.desc->sizes[3];
    // The window spans (size - 1) / 2 elements before the center and size / 2 after, clipped to the tensor.
    const int64_t before = (int64_t(d.local_size) - 1) / 2, after = int64_t(d.local_size) / 2;
    auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
        return get<T>(x, n * st[0] + c * st[1] + h * st[2] + w * st[3]);
    };
    args.pool.parallel_for(uint64_t(N * C * H), 1, [&](size_t b, size_t e) {
        for (size_t row = b; row < e; ++row) {
            const int64_t h = row % H, c = (row / H) % C, n = row / (H * C);
            for (int64_t w = 0; w < W; ++w) {
                double sum = 0;
                if (d.cross_channel) {
                    for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(C - 1, c + after); ++k)
                        sum += at(n, k, h, w) * at(n, k, h, w);
                } else {
                    for (int64_t i = std::max<int64_t>(0, h - before); i <= std::min(H - 1, h + after); ++i)
                        for (int64_t j = std::max<int64_t>(0, w - before); j <= std::min(W - 1, w + after); ++j)
                            sum += at(n, c, i, j) * at(n, c, i, j);
                }
                // DirectML's formula divides alpha by LocalSize in both modes.
                const double denom = std::pow(d.bias + d.alpha / double(d.local_size) * sum, double(d.beta));
                put<T>(y, ((n * C + c) * H + h) * W + w, at(n, c, h, w) / denom);
            }
        }
    });
}

template <template <class> class K>
void float_kernel(const KernelArgs& args) {
    if (args.inputs[0].desc->data_type == DataType::Float16) K<half>::run(args);
    else K<float>::run(args);
}

template <class T> struct BatchNorm { static void run(const KernelArgs& a) { run_batch_normalization_typed<T>(a); } };
template <class T> struct BatchNormTraining {
    static void run(const KernelArgs& a) { run_batch_normalization_training_typed<T>(a); }
};
template <class T> struct BatchNormGrad {
    static void run(const KernelArgs& a) { run_batch_normalization_grad_typed<T>(a); }
};
template <class T> struct MeanVarianceNorm {
    static void run(const KernelArgs& a) { run_mean_variance_normalization_typed<T>(a); }
};
template <class T> struct LocalResponseNorm {
    static void run(const KernelArgs& a) { run_local_response_normalization_typed<T>(a); }
};

}  // namespace

void register_normalization_kernels(KernelTable& t) {
    add_kernel<BatchNormalizationDesc>(t, {float_kernel<BatchNorm>});
    add_kernel<BatchNormalizationTrainingDesc>(t, {float_kernel<BatchNormTraining>});
    add_kernel<BatchNormalizationGradDesc>(t, {float_kernel<BatchNormGrad>});
    add_kernel<MeanVarianceNormalizationDesc>(t, {float_kernel<MeanVarianceNorm>});
    add_kernel<LocalResponseNormalizationDesc>(t, {float_kernel<LocalResponseNorm>});
}

}  // namespace dml::cpu
