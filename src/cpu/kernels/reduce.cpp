// DML_OPERATOR_REDUCE / ARGMAX / ARGMIN: each output element folds the input elements of its group.
#include "../../core/ops/reduce.h"

#include <cmath>
#include <limits>

#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

// Integers accumulate in 64 bits (and wrap on storing back), floats in double for accuracy.
template <class T>
using accum_t = std::conditional_t<std::is_floating_point_v<compute_t<T>>, double,
                                   std::conditional_t<std::is_signed_v<compute_t<T>>, int64_t, uint64_t>>;

template <class T>
void run_reduce_typed(const KernelArgs& args) {
    using A = accum_t<T>;
    const auto& d = args.desc<ReduceDesc>();
    const TensorArg &x = args.inputs[0], &y = args.outputs[0];
    // The output keeps the rank with reduced axes of size 1; address it with the input's split.
    TensorDesc out_view(y.desc->data_type, x.desc->sizes, [&] {
        Strides s = y.desc->effective_strides();
        for (uint32_t a : d.axes) s[a] = 0;
        return s;
    }());
    AxisSplit s(*x.desc, out_view, d.axes);
    std::vector<int64_t> in_off(s.inner_count), unused(s.inner_count);
    for (uint64_t i = 0; i < s.inner_count; ++i)
        AxisSplit::offsets(i, s.inner_sizes, s.in_inner, s.out_inner, in_off[i], unused[i]);
    const T* in = x.as<T>();
    args.pool.parallel_for(s.outer_count, std::max<uint64_t>(1, 4096 / s.inner_count), [&](size_t b, size_t e) {
        for (size_t g = b; g < e; ++g) {
            int64_t gi, go;
            AxisSplit::offsets(g, s.outer_sizes, s.in_outer, s.out_outer, gi, go);
            auto at = [&](uint64_t i) { return A(compute_t<T>(in[gi + in_off[i]])); };
            if (d.function == ReduceFunction::ArgMax || d.function == ReduceFunction::ArgMin) {
                // First index of the extreme value, as DirectML's default (lowest index on ties).
                uint64_t best = 0;
                A bv = at(0);
                for (uint64_t i = 1; i < s.inner_count; ++i) {
                    A v = at(i);
                    if (d.function == ReduceFunction::ArgMax ? v > bv : v < bv) bv = v, best = i;
                }
                visit_data_type(y.desc->data_type, [&]<class I>() { y.as<I>()[go] = I(compute_t<I>(best)); });
                continue;
            }
            A acc;
            switch (d.function) {
                case ReduceFunction::Max:
                    acc = at(0);
                    for (uint64_t i = 1; i < s.inner_count; ++i) acc = std::max(acc, at(i));
                    break;
                case ReduceFunction::Min:
                    acc = at(0);
                    for (uint64_t i = 1; i < s.inner_count; ++i) acc = std::min(acc, at(i));
                    break;
                case ReduceFunction::Multiply:
                    acc = 1;
                    for (uint64_t i = 0; i < s.inner_count; ++i) acc *= at(i);
                    break;
                case ReduceFunction::LogSumExp: {
                    A mx = at(0);
                    for (uint64_t i = 1; i < s.inner_count; ++i) mx = std::max(mx, at(i));
                    A sum = 0;
                    for (uint64_t i = 0; i < s.inner_count; ++i) sum += std::exp(double(at(i) - mx));
                    acc = std::isinf(double(mx)) ? mx : A(mx + std::log(double(sum)));
                    break;
                }
                default: {
                    acc = 0;
                    for (uint64_t i = 0; i < s.inner_count; ++i) {
                        A v = at(i);
                        switch (d.function) {
                            case ReduceFunction::L1: acc += v < A(0) ? A(0) - v : v; break;
                            case ReduceFunction::L2: case ReduceFunction::SumSquare: acc += v * v; break;
                            default: acc += v;  // Sum, Average, LogSum
                        }
                    }
                    if (d.function == ReduceFunction::Average) acc = A(acc / A(s.inner_count));
                    if (d.function == ReduceFunction::L2) acc = A(std::sqrt(double(acc)));
                    if (d.function == ReduceFunction::LogSum) acc = A(std::log(double(acc)));
                }
            }
            y.as<T>()[go] = T(compute_t<T>(acc));
        }
    });
}

void run_reduce(const KernelArgs& args) {
    visit_data_type(args.inputs[0].desc->data_type, [&]<class T>() { run_reduce_typed<T>(args); });
}

}  // namespace

void register_reduce_kernels(KernelTable& t) { add_kernel<ReduceDesc>(t, {run_reduce}); }

}  // namespace dml::cpu
