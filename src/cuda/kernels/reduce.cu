// DML_OPERATOR_REDUCE / ARGMAX / ARGMIN: a team of threads folds each output element's group. Floats accumulate in
// their compute type (float for float16 and float32), integers in 64 bits, wrapping when stored back, as the CPU
// kernel (cpu/kernels/reduce.cpp) does.
#include "../../core/ops/reduce.h"
#include "group.cuh"
#include "kernel.h"

namespace dml::cuda {

namespace {

template <class T>
using accum_of = std::conditional_t<is_float_v<T>, compute_of<T>,
                                    std::conditional_t<std::is_signed_v<compute_of<T>>, int64_t, uint64_t>>;

template <class I>
__device__ __forceinline__ void store_index(void* y, int64_t off, uint64_t index) {
    static_cast<I*>(y)[off] = I(index);
}

template <class T>
struct ReduceGroup {
    void* y;  // T, or the index type of ArgMax / ArgMin
    const T* x;
    ReduceFunction fn;
    DataType index_type;

    template <int TEAM>
    __device__ void run(const GroupLayout& g, const int64_t (&base)[2], unsigned lane) const {
        using A = accum_of<T>;
        using L = ::cuda::std::numeric_limits<A>;
        const uint64_t n = g.inner.count;
        auto at = [&](uint64_t i) {
            int64_t o[2];
            g.inner.offsets(i, o);
            return A(load(x + base[0] + o[0]));
        };
        if (fn == ReduceFunction::ArgMax || fn == ReduceFunction::ArgMin) {
            // The first index of the extreme value (lowest index on ties), as DirectML's default. NaN never wins,
            // as on GPUs; with nothing but NaN the index is 0.
            const bool largest = fn == ReduceFunction::ArgMax;
            ValueIndex<A> best{A(0), UINT64_MAX};
            for (uint64_t i = lane; i < n; i += TEAM) {
                A v = at(i);
                if constexpr (is_float_v<T>)
                    if (isnan(v)) continue;
                if (best.index == UINT64_MAX || (largest ? v > best.value : v < best.value)) best = {v, i};
            }
            best = team_reduce<TEAM>(best, [largest](ValueIndex<A> p, ValueIndex<A> q) {
                if (q.index == UINT64_MAX) return p;
                if (p.index == UINT64_MAX) return q;
                bool better = largest ? q.value > p.value : q.value < p.value;
                return (better || (q.value == p.value && q.index < p.index)) ? q : p;
            });
            if (lane != 0) return;
            const uint64_t index = best.index == UINT64_MAX ? 0 : best.index;
            switch (index_type) {
                case DataType::UInt32: return store_index<uint32_t>(y, base[1], index);
                case DataType::Int32: return store_index<int32_t>(y, base[1], index);
                case DataType::UInt64: return store_index<uint64_t>(y, base[1], index);
                default: return store_index<int64_t>(y, base[1], index);
            }
        }
        A acc;
        switch (fn) {
            case ReduceFunction::Max:
            case ReduceFunction::Min: {
                const bool largest = fn == ReduceFunction::Max;
                if constexpr (is_float_v<T>) {
                    // fmax / fmin skip NaN: it is the result only where every element is NaN (the start value).
                    acc = L::quiet_NaN();
                    for (uint64_t i = lane; i < n; i += TEAM) acc = largest ? fmax(acc, at(i)) : fmin(acc, at(i));
                    acc = team_reduce<TEAM>(acc, [largest](A p, A q) { return largest ? fmax(p, q) : fmin(p, q); });
                } else {
                    acc = largest ? L::lowest() : L::max();
                    for (uint64_t i = lane; i < n; i += TEAM) {
                        A v = at(i);
                        acc = largest ? (acc < v ? v : acc) : (v < acc ? v : acc);
                    }
                    acc = team_reduce<TEAM>(acc, [largest](A p, A q) { return largest ? (p < q ? q : p)
                                                                                        : (q < p ? q : p); });
                }
                break;
            }
            case ReduceFunction::Multiply:
                acc = A(1);
                for (uint64_t i = lane; i < n; i += TEAM) acc = A(acc * at(i));
                acc = team_reduce<TEAM>(acc, [](A p, A q) { return A(p * q); });
                break;
            case ReduceFunction::LogSumExp:
                if constexpr (is_float_v<T>) {
                    A mx = -L::infinity();
                    for (uint64_t i = lane; i < n; i += TEAM) mx = fmax(mx, at(i));
                    mx = team_reduce<TEAM>(mx, [](A p, A q) { return fmax(p, q); });
                    A sum = 0;
                    for (uint64_t i = lane; i < n; i += TEAM) sum += exp(at(i) - mx);
                    sum = team_reduce<TEAM>(sum, [](A p, A q) { return p + q; });
                    acc = isinf(mx) ? mx : mx + log(sum);
                    break;
                }
                [[fallthrough]];
            default: {
                acc = A(0);
                for (uint64_t i = lane; i < n; i += TEAM) {
                    A v = at(i);
                    switch (fn) {
                        case ReduceFunction::L1:
                            if constexpr (std::is_unsigned_v<A>) acc += v;
                            else acc += v < A(0) ? A(-v) : v;
                            break;
                        case ReduceFunction::L2:
                        case ReduceFunction::SumSquare: acc += A(v * v); break;
                        default: acc += v;  // Sum, Average, LogSum
                    }
                }
                acc = team_reduce<TEAM>(acc, [](A p, A q) { return A(p + q); });
                if (fn == ReduceFunction::Average) acc = A(acc / A(n));
                if (fn == ReduceFunction::L2) acc = A(sqrt(double(acc)));
                if (fn == ReduceFunction::LogSum) acc = A(log(double(acc)));
            }
        }
        if (lane == 0) store(static_cast<T*>(y) + base[1], compute_of<T>(acc));
    }
};

class ReduceKernel : public CudaKernel {
public:
    ReduceKernel(const Node& node, const CudaDevice& device)
        : desc_(static_cast<const ReduceDesc&>(*node.desc)),
          input_type_(node.inputs[0]->desc.data_type),
          output_type_(node.outputs[0].data_type),
          sm_count_(device.sm_count()) {
        const TensorDesc& x = node.inputs[0]->desc;
        // The output keeps the rank with reduced axes of size 1: address it with the input's sizes, stride 0 there.
        Strides s = node.outputs[0].effective_strides();
        for (uint32_t a : desc_.axes) s[a] = 0;
        layout_ = make_group_layout(x, TensorDesc(output_type_, x.sizes, s), desc_.axes);
    }
    void enqueue(const LaunchArgs& a) const override {
        visit_type(input_type_, [&]<class T>() {
            ReduceGroup<T> f{a.outputs[0], static_cast<const T*>(a.inputs[0]), desc_.function, output_type_};
            for_each_group(layout_, f, sm_count_, a.stream, "reduce");
        });
    }

private:
    const ReduceDesc& desc_;
    DataType input_type_, output_type_;
    GroupLayout layout_;
    int sm_count_;
};

}  // namespace

void register_reduce_kernels(KernelTable& t) {
    add_kernel<ReduceDesc>(t, [](const Node& n, CudaDevice& d) -> std::unique_ptr<CudaKernel> {
        if (int(static_cast<const ReduceDesc&>(*n.desc).function) > int(ReduceFunction::SumSquare)) unsupported(n);
        return std::make_unique<ReduceKernel>(n, d);
    });
}

}  // namespace dml::cuda
