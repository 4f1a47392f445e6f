// The element-wise chain (core/ops/elementwise_chain.h): a block of a row's elements at a time, its running value in
// the compute type; each step runs over the whole block with its function a constant, so that each step's loop
// vectorizes as the element-wise kernels' do, and nothing between the steps goes to memory past the block. Packed
// float32 operands are read where they lie and the last step writes the output: one pass a step, none to convert;
// float16 rows are widened and narrowed a block at a time (F16C).
#include "../../core/ops/elementwise_chain.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "../../executor/scalar_math.h"
#include "float16_rows.h"
#include "kernel.h"
#include "strided.h"
#include "vector_math.h"

namespace dml::cpu {

namespace {

constexpr uint64_t kBlock = 512;  // values a step runs over: the block's buffers stay in L1

// The loops over a block, each built per vector width (vector_math.h) as map_row is: v[j] = f(x[j]) and
// f(x[j], o[j]) (v may be x), and the conversions in and out of the compute type.
template <class C, class F>
DML_VECTOR_CLONES void map_block(C* v, const C* x, uint64_t m, F f) {
    for (uint64_t j = 0; j < m; ++j) v[j] = f(x[j]);
}
template <class C, class F>
DML_VECTOR_CLONES void zip_block(C* v, const C* x, const C* o, uint64_t m, F f) {
    for (uint64_t j = 0; j < m; ++j) v[j] = f(x[j], o[j]);
}
template <class T, class C>
DML_VECTOR_CLONES void store_block(T* y, const C* v, uint64_t m) {
    if constexpr (std::is_same_v<T, half>) return narrow(v, y, m);
    for (uint64_t j = 0; j < m; ++j) y[j] = T(v[j]);
}

// v = step(x) over m values, one pass (a scale/bias with its function; a plain identity none); `start` holds chain
// input 0's values, `operand(k, buffer)` gives input k's (in `buffer`, or where they lie).
template <class C, class Operand>
void run_step(const ChainStep& s, C* v, const C* x, const C* start, uint64_t m, const Operand& operand) {
    switch (s.kind) {
        case ChainStep::Kind::Unary:
            return with_constant(s.unary, int_range<0, int(UnaryFunction::ConstantPow) + 1>, [&]<UnaryFunction F>() {
                const C p = C(s.parameter), scale = C(s.scale), bias = C(s.bias);
                if (s.affine)
                    map_block(v, x, m, [=](C e) { return apply_unary(F, affine(e, scale, bias), p); });
                else if (F != UnaryFunction::Identity)
                    map_block(v, x, m, [=](C e) { return apply_unary(F, e, p); });
                else if (v != x)
                    std::copy(x, x + m, v);
            });
        case ChainStep::Kind::Activation:
            return with_activation(s.activation.function, [&]<ActivationFunction A>() {
                map_block(v, x, m, [f = s.activation](C e) { return activate<A>(f, e); });
            });
        case ChainStep::Kind::Binary: {
            C buffer[kBlock];
            const C* o = s.operand == kChainRunning ? x : s.operand == 0 ? start : operand(s.operand, buffer);
            return with_constant(s.binary, int_range<0, int(BinaryFunction::LogicalAnd)>, [&]<BinaryFunction F>() {
                if (s.running_second) zip_block(v, x, o, m, [](C e, C f) { return apply_binary(F, f, e); });
                else zip_block(v, x, o, m, [](C e, C f) { return apply_binary(F, e, f); });
            });
        }
    }
}

template <class T>
void run_chain_typed(const KernelArgs& args) {
    using C = compute_t<T>;
    constexpr size_t N = kMaxChainInputs + 1;  // the output, then the inputs (unused ones: zero strides, never read)
    const std::vector<ChainStep>& steps = args.desc<ElementwiseChainDesc>().steps;
    const TensorArg& y = args.outputs[0];
    std::array<std::vector<int64_t>, N> strides;
    strides.fill(std::vector<int64_t>(y.desc->rank(), 0));
    strides[0] = signed_strides(y.desc->effective_strides());
    const T* in[kMaxChainInputs] = {};
    for (size_t k = 0; k < args.inputs.size(); ++k) {
        strides[k + 1] = signed_strides(args.inputs[k].desc->effective_strides());
        in[k] = args.inputs[k].template as<T>();
    }
    for_each_row<N>(args.pool, y.desc->sizes, strides, [&](auto off, auto st, uint64_t n) {
        T* out = y.as<T>() + off[0];  // packed: its inner stride is 1
        for (uint64_t b = 0; b < n; b += kBlock) {
            const uint64_t m = std::min(kBlock, n - b);
            // Input k's values: read in place where they are packed float32, else converted into `buffer`.
            auto operand = [&](size_t k, C* buffer) -> const C* {
                const T* x = in[k] + off[k + 1] + int64_t(b) * st[k + 1];
                if constexpr (std::is_same_v<T, C>)
                    if (st[k + 1] == 1) return x;
                load_block(buffer, x, int64_t(st[k + 1]), m);
                return buffer;
            };
            C start_buffer[kBlock], v[kBlock];
            const C* start = operand(0, start_buffer);
            const C* x = start;  // the running value
            for (size_t i = 0; i < steps.size(); ++i) {
                C* to = v;
                if constexpr (std::is_same_v<T, C>)
                    if (i + 1 == steps.size()) to = out + b;  // the last step writes the output
                run_step(steps[i], to, std::exchange(x, to), start, m, operand);
            }
            if constexpr (!std::is_same_v<T, C>) store_block(out + b, x, m);
        }
    });
}

void run_chain(const KernelArgs& args) {
    if (args.outputs[0].desc->data_type == DataType::Float16) return run_chain_typed<half>(args);
    run_chain_typed<float>(args);  // the rewrite makes chains of FLOAT32 and FLOAT16 only
}

}  // namespace

void register_elementwise_chain_kernels(KernelTable& t) { add_kernel<ElementwiseChainDesc>(t, {run_chain}); }

}  // namespace dml::cpu
