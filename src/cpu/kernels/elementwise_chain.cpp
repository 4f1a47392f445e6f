// The element-wise chain (core/ops/elementwise_chain.h): a block of a row's elements at a time, its running value in
// the compute type; each step runs over the whole block with its function a constant, so that each step's loop
// vectorizes as the element-wise kernels' do, and nothing between the steps goes to memory past the block.
#include "../../core/ops/elementwise_chain.h"

#include <algorithm>

#include "../../executor/scalar_math.h"
#include "kernel.h"
#include "strided.h"

namespace dml::cpu {

namespace {

constexpr uint64_t kBlock = 256;  // compute values a step runs over: three such buffers stay in L1

// v = step(v) over m values; `start` holds chain input 0's values, `load(k, buffer)` fills `buffer` with input k's.
template <class C, class Load>
void run_step(const ChainStep& s, C* v, const C* start, uint64_t m, const Load& load) {
    switch (s.kind) {
        case ChainStep::Kind::Unary: {
            if (s.affine)
                for (uint64_t j = 0; j < m; ++j) v[j] = affine(v[j], C(s.scale), C(s.bias));
            const C p = C(s.parameter);
            return with_constant(s.unary, int_range<0, int(UnaryFunction::ConstantPow) + 1>, [&]<UnaryFunction F>() {
                for (uint64_t j = 0; j < m; ++j) v[j] = apply_unary(F, v[j], p);
            });
        }
        case ChainStep::Kind::Activation:
            return with_activation(s.activation.function, [&]<ActivationFunction A>() {
                const FusedActivation f{A, s.activation.alpha, s.activation.beta};
                for (uint64_t j = 0; j < m; ++j) v[j] = apply_activation(f, v[j]);
            });
        case ChainStep::Kind::Binary: {
            C buffer[kBlock];
            const C* o = s.operand == kChainRunning ? v : s.operand == 0 ? start : (load(s.operand, buffer), buffer);
            return with_constant(s.binary, int_range<0, int(BinaryFunction::LogicalAnd)>, [&]<BinaryFunction F>() {
                if (s.running_second)
                    for (uint64_t j = 0; j < m; ++j) v[j] = apply_binary(F, o[j], v[j]);
                else
                    for (uint64_t j = 0; j < m; ++j) v[j] = apply_binary(F, v[j], o[j]);
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
            auto load = [&](size_t k, C* buffer) {
                const T* x = in[k] + off[k + 1] + int64_t(b) * st[k + 1];
                if (st[k + 1] == 1)
                    for (uint64_t j = 0; j < m; ++j) buffer[j] = C(x[j]);
                else
                    for (uint64_t j = 0; j < m; ++j) buffer[j] = C(x[int64_t(j) * st[k + 1]]);
            };
            C start[kBlock], v[kBlock];
            load(0, start);
            std::copy(start, start + m, v);
            for (const ChainStep& s : steps) run_step(s, v, start, m, load);
            for (uint64_t j = 0; j < m; ++j) out[b + j] = T(v[j]);
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
