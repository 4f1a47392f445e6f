// Lowering: each node of a CompiledGraph becomes one DML_OPERATOR_DESC (one lowering file per operator family,
// registered by type as the CUDA kernels are). The descriptions point into a DescStore that lives until DirectML
// has created the operators.
#pragma once
#include <functional>
#include <memory>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "../core/graph.h"
#include "../core/ops/activation.h"
#include "dml_api.h"

namespace dml::directml {

// Owns everything the descriptions point to.
class DescStore {
public:
    template <class T>
    T* add(T value) {
        auto p = std::make_shared<T>(std::move(value));
        kept_.push_back(p);
        return p.get();
    }
    template <class T>
    const T* array(std::vector<T> values) {
        return values.empty() ? nullptr : add(std::move(values))->data();
    }
    // A DirectML buffer tensor description of `desc` (a view's strides become DirectML strides).
    const DML_TENSOR_DESC* tensor(const TensorDesc& desc, DML_TENSOR_FLAGS flags = DML_TENSOR_FLAG_NONE);
    // `desc` as DirectML's description by value (JOIN, SPLIT and QUANTIZE take arrays of them).
    DML_TENSOR_DESC tensor_value(const TensorDesc& desc, DML_TENSOR_FLAGS flags = DML_TENSOR_FLAG_NONE);
    const DML_OPERATOR_DESC* op(DML_OPERATOR_TYPE type, const void* desc) { return add(DML_OPERATOR_DESC{type, desc}); }

private:
    std::vector<std::shared_ptr<void>> kept_;
};

// An activation as DirectML's operator description; `input` and `output` are null for a fused activation.
DML_OPERATOR_DESC activation_desc(DescStore& store, const FusedActivation& f, const DML_TENSOR_DESC* input,
                                  const DML_TENSOR_DESC* output);
// Whether DirectML accepts `f` as an operator's fused activation (its list has no GELU, SWISH or HARD_SWISH).
bool fusable(const FusedActivation& f);

// What one node becomes: its operator and, when the node carries an activation DirectML cannot fuse, that
// activation, which the plan runs as a node of its own on the operator's first output.
struct Lowered {
    DML_OPERATOR_DESC op;
    FusedActivation unfused;
};

// Whether DirectML owns a value: weights and constants, bound once at initialization (their descriptions carry
// OWNED_BY_DML).
using OwnedByDirectML = std::function<bool(const Value&)>;

// The node being lowered, with the store its descriptions go into.
class LoweringContext {
public:
    LoweringContext(const Node& node, DescStore& store, const OwnedByDirectML& owned)
        : node(node), store(store), owned_(owned) {}
    const Node& node;
    DescStore& store;

    // The node's input `i` as it reads it (null when an optional input is left out) and its output `i`.
    const DML_TENSOR_DESC* input(size_t i) const;
    DML_TENSOR_DESC input_value(size_t i) const;  // a present input, by value
    const DML_TENSOR_DESC* output(size_t i) const;
    // The node's fused activation as DirectML's description: null for none, and for one DirectML cannot fuse,
    // which is then run after the operator.
    const DML_OPERATOR_DESC* fused(const FusedActivation& f);
    // The node's activation run after the operator as a node of its own, fusable or not (null): for GEMM, whose
    // fused activation DirectML's CompileGraph misplaces when it folds a following ADD into the GEMM (it computes
    // act(x w + r) for act(x w) + r).
    const DML_OPERATOR_DESC* after(const FusedActivation& f);
    // The result: `desc` of operator `type`, kept in the store.
    template <class T>
    Lowered lowered(DML_OPERATOR_TYPE type, T desc) {
        return {DML_OPERATOR_DESC{type, store.add(std::move(desc))}, unfused_};
    }

private:
    DML_TENSOR_FLAGS flags(size_t i) const;

    const OwnedByDirectML& owned_;
    FusedActivation unfused_;
};

using Lowering = std::function<Lowered(LoweringContext&)>;
using LoweringTable = std::unordered_map<std::type_index, Lowering>;

template <class D>
void add_lowering(LoweringTable& table, std::function<Lowered(LoweringContext&, const D&)> f) {
    table[std::type_index(typeid(D))] = [f](LoweringContext& c) { return f(c, static_cast<const D&>(*c.node.desc)); };
}

// One per operator family (lower_*.cpp).
void register_elementwise_lowerings(LoweringTable& t);
void register_activation_lowerings(LoweringTable& t);
void register_gemm_lowerings(LoweringTable& t);
void register_convolution_lowerings(LoweringTable& t);
void register_reduce_lowerings(LoweringTable& t);
void register_normalization_lowerings(LoweringTable& t);
void register_pooling_lowerings(LoweringTable& t);
void register_data_movement_lowerings(LoweringTable& t);
void register_indexing_lowerings(LoweringTable& t);
void register_resampling_lowerings(LoweringTable& t);
void register_generation_lowerings(LoweringTable& t);
void register_attention_lowerings(LoweringTable& t);
void register_recurrent_lowerings(LoweringTable& t);

// The operator types that have a lowering.
std::vector<std::type_index> lowered_operator_types();
// The lowering of `node`'s operator, or null when the executor has none.
const Lowering* find_lowering(const Node& node);

// A scalar holding `value` in `type` (CLIP1's bounds, PADDING1's value); integers truncate toward zero and saturate.
DML_SCALAR_UNION scalar(DataType type, double value);

}  // namespace dml::directml
