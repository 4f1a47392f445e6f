// CPU kernels of the reduce family: REDUCE (every function), CUMULATIVE_SUMMATION / PRODUCT, TOP_K1 and
// NONZERO_COORDINATES. Each reads its input through arbitrary strides.
#include "../../core/ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

// Accumulator arithmetic: floats accumulate in double; integers in uint64_t, which wraps modulo 2^64 (so signed
// overflow is never undefined) and converts back modulo the element's width, as a GPU's integer unit does.
template <class T>
struct Accum {
    using C = compute_t<T>;
    using type = std::conditional_t<std::is_floating_point_v<C>, double, uint64_t>;
    static type of(C v) { return type(v); }
    static T store(type a) { return T(C(a)); }
    static type abs(C v) {
        if constexpr (std::is_signed_v<C> && !std::is_floating_point_v<C>) return v < 0 ? type(0) - type(v) : type(v);
        else return type(v < C(0) ? -v : v);
    }
};

// Calls f(outer_offset_in, outer_offset_out, inner_offsets_in) for each group of `s`, spread over the pool.
template <class F>
void for_each_group(ThreadPool& pool, const AxisSplit& s, F&& f) {
    std::vector<int64_t> in_off(s.inner_count), unused(s.inner_count);
    for (uint64_t i = 0; i < s.inner_count; ++i)
        AxisSplit::offsets(i, s.inner_sizes, s.in_inner, s.out_inner, in_off[i], unused[i]);
    pool.parallel_for(s.outer_count, std::max<uint64_t>(1, 4096 / s.inner_count), [&](size_t b, size_t e) {
        for (size_t g = b; g < e; ++g) {
            int64_t gi, go;
            AxisSplit::offsets(g, s.outer_sizes, s.in_outer, s.out_outer, gi, go);
            f(gi, go, in_off);
        }
    });
}

// Stores index `i` into element `at` of an index tensor of any integer type.
void store_index(const TensorArg& t, int64_t at, uint64_t i) {
    visit_data_type(t.desc->data_type, [&]<class I>() {
        if constexpr (std::is_integral_v<I>) t.as<I>()[at] = I(i);
    });
}

template <class T>
void run_reduce_typed(const KernelArgs& args) {
    using A = Accum<T>;
    using C = typename A::C;
    using V = typename A::type;
    const auto& d = args.desc<ReduceDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    // The output keeps the rank with reduced axes of size 1; address it with the input's split.
    TensorDesc out_view(y.desc->data_type, x.desc->sizes, [&] {
        Strides s = y.desc->effective_strides();
        for (uint32_t a : d.axes) s[a] = 0;
        return s;
    }());
    AxisSplit s(*x.desc, out_view, d.axes);
    const T* in = x.as<T>();
    const uint64_t n = s.inner_count;
    for_each_group(args.pool, s, [&](int64_t gi, int64_t go, const std::vector<int64_t>& off) {
        auto at = [&](uint64_t i) { return C(in[gi + off[i]]); };
        if (d.function == ReduceFunction::ArgMax || d.function == ReduceFunction::ArgMin) {
            // The index within the reduced axes (row-major) of the first extreme value: REDUCE's ARGMAX/ARGMIN
            // equal ARGMAX/ARGMIN with DML_AXIS_DIRECTION_INCREASING.
            uint64_t best = 0;
            for (uint64_t i = 1; i < n; ++i)
                if (replaces_extreme(at(i), at(best), d.function == ReduceFunction::ArgMax)) best = i;
            store_index(y, go, best);
            return;
        }
        V acc;
        switch (d.function) {
            case ReduceFunction::Max: case ReduceFunction::Min: {
                uint64_t best = 0;
                for (uint64_t i = 1; i < n; ++i)
                    if (replaces_extreme(at(i), at(best), d.function == ReduceFunction::Max)) best = i;
                y.as<T>()[go] = in[gi + off[best]];
                return;
            }
            case ReduceFunction::Multiply:
                acc = 1;
                for (uint64_t i = 0; i < n; ++i) acc *= A::of(at(i));
                break;
            case ReduceFunction::LogSumExp:
                acc = 0;
                if constexpr (std::is_floating_point_v<V>) {  // float-only, as the builder checks
                    // Shifted by the maximum so that large inputs do not overflow.
                    double mx = at(0);
                    for (uint64_t i = 1; i < n; ++i) mx = std::max(mx, double(at(i)));
                    double sum = 0;
                    for (uint64_t i = 0; i < n; ++i) sum += std::exp(double(at(i)) - mx);
                    acc = std::isinf(mx) ? mx : mx + std::log(sum);
                }
                break;
            default:
                acc = 0;
                for (uint64_t i = 0; i < n; ++i) {
                    switch (d.function) {
                        case ReduceFunction::L1: acc += A::abs(at(i)); break;
                        case ReduceFunction::L2: case ReduceFunction::SumSquare: acc += A::of(at(i)) * A::of(at(i)); break;
                        default: acc += A::of(at(i));  // SUM, AVERAGE, LOG_SUM
                    }
                }
                if constexpr (std::is_floating_point_v<V>) {  // the float-only functions
                    if (d.function == ReduceFunction::Average) acc /= double(n);
                    if (d.function == ReduceFunction::L2) acc = std::sqrt(acc);
                    if (d.function == ReduceFunction::LogSum) acc = std::log(acc);
                }
        }
        y.as<T>()[go] = A::store(acc);
    });
}

template <class T>
void run_cumulative_typed(const KernelArgs& args) {
    using A = Accum<T>;
    const auto& d = args.desc<CumulativeDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    AxisSplit s(*x.desc, *y.desc, {d.axis});
    const int64_t out_step = s.out_inner[0];
    const uint64_t n = s.inner_count;
    const T* in = x.as<T>();
    T* out = y.as<T>();
    for_each_group(args.pool, s, [&](int64_t gi, int64_t go, const std::vector<int64_t>& off) {
        typename A::type acc = d.product ? 1 : 0;
        for (uint64_t j = 0; j < n; ++j) {
            const uint64_t i = d.direction == AxisDirection::Increasing ? j : n - 1 - j;
            const auto v = A::of(compute_t<T>(in[gi + off[i]]));
            if (d.exclusive) out[go + int64_t(i) * out_step] = A::store(acc);
            acc = d.product ? acc * v : acc + v;
            if (!d.exclusive) out[go + int64_t(i) * out_step] = A::store(acc);
        }
    });
}

// NaN sorts above every number (equal to other NaNs), which keeps the ordering strict-weak whatever the data.
template <class C>
bool greater(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(a)) return !std::isnan(b);
        if (std::isnan(b)) return false;
    }
    return a > b;
}

template <class T>
void run_top_k_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    const auto& d = args.desc<TopKDesc>();
    const TensorArg &x = args.inputs[0], &values = args.outputs[0], &indices = args.outputs[1];
    // Address the k outputs with the input's split: the sequence axis is walked through the output's stride.
    AxisSplit s(*x.desc, *values.desc, {d.axis});
    const int64_t out_step = s.out_inner[0];
    const uint64_t n = s.inner_count;
    const bool largest = d.direction == AxisDirection::Decreasing;
    const T* in = x.as<T>();
    for_each_group(args.pool, s, [&](int64_t gi, int64_t go, const std::vector<int64_t>& off) {
        std::vector<uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        // Largest (or smallest) first; ties keep ascending element index whatever the direction.
        std::partial_sort(order.begin(), order.begin() + d.k, order.end(), [&](uint32_t a, uint32_t b) {
            C va = C(in[gi + off[a]]), vb = C(in[gi + off[b]]);
            if (largest ? greater(va, vb) : greater(vb, va)) return true;
            if (largest ? greater(vb, va) : greater(va, vb)) return false;
            return a < b;
        });
        for (uint32_t j = 0; j < d.k; ++j) {
            values.as<T>()[go + int64_t(j) * out_step] = in[gi + off[order[j]]];
            store_index(indices, go + int64_t(j) * out_step, order[j]);
        }
    });
}

template <class T>
void run_non_zero_typed(const KernelArgs& args) {
    const TensorArg &x = args.inputs[0], &count = args.outputs[0], &coords = args.outputs[1];
    const size_t rank = x.desc->rank();
    std::vector<uint32_t> all(rank);
    std::iota(all.begin(), all.end(), 0u);
    AxisSplit s(*x.desc, *x.desc, all);
    uint32_t* out = coords.as<uint32_t>();
    // Rows past the count are left undefined by DirectML; zero them so results are deterministic.
    std::fill(out, out + coords.desc->element_count(), 0u);
    uint32_t found = 0;
    std::vector<uint32_t> index(rank, 0);  // the coordinates of element i, advanced as an odometer
    for (uint64_t i = 0; i < s.inner_count; ++i) {
        int64_t at, unused;
        AxisSplit::offsets(i, s.inner_sizes, s.in_inner, s.in_inner, at, unused);
        if (compute_t<T>(x.as<T>()[at]) != compute_t<T>(0)) {  // -0.0 counts as zero; NaN does not
            std::copy(index.begin(), index.end(), out + uint64_t(found) * rank);
            ++found;
        }
        for (size_t dim = rank; dim-- > 0;) {
            if (++index[dim] < x.desc->sizes[dim]) break;
            index[dim] = 0;
        }
    }
    count.as<uint32_t>()[0] = found;
}

template <template <class> class Typed>
void by_input_type(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() { Typed<T>::run(args); });
}

template <class T> struct Reduce { static void run(const KernelArgs& a) { run_reduce_typed<T>(a); } };
template <class T> struct Cumulative { static void run(const KernelArgs& a) { run_cumulative_typed<T>(a); } };
template <class T> struct TopK { static void run(const KernelArgs& a) { run_top_k_typed<T>(a); } };
template <class T> struct NonZero { static void run(const KernelArgs& a) { run_non_zero_typed<T>(a); } };

}  // namespace

void register_reduce_kernels(KernelTable& t) {
    add_kernel<ReduceDesc>(t, {by_input_type<Reduce>});
    add_kernel<CumulativeDesc>(t, {by_input_type<Cumulative>});
    add_kernel<TopKDesc>(t, {by_input_type<TopK>});
    add_kernel<NonZeroCoordinatesDesc>(t, {by_input_type<NonZero>});
}

}  // namespace dml::cpu
