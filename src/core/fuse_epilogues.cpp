#include "fuse_epilogues.h"

#include <optional>

#include "ops/activation.h"
#include "ops/convolution.h"
#include "ops/elementwise.h"
#include "ops/gemm.h"
#include "ops/normalization.h"

namespace dml {

namespace {

// The producer's fused activation slot where it has one that is still free, else null.
FusedActivation* free_activation(OperatorDesc& d) {
    FusedActivation* f = nullptr;
    if (auto* g = dynamic_cast<GemmDesc*>(&d)) f = &g->fused;
    else if (auto* c = dynamic_cast<ConvolutionDesc*>(&d)) f = &c->fused;
    else if (auto* b = dynamic_cast<BinaryDesc*>(&d); b && b->function == BinaryFunction::Add) f = &b->fused;
    else if (auto* n = dynamic_cast<BatchNormalizationDesc*>(&d)) f = &n->fused;
    return f && f->is_none() ? f : nullptr;
}

// A copy of the operator description, to change.
std::shared_ptr<OperatorDesc> copy_desc(const OperatorDesc& d) {
    if (auto* g = dynamic_cast<const GemmDesc*>(&d)) return std::make_shared<GemmDesc>(*g);
    if (auto* c = dynamic_cast<const ConvolutionDesc*>(&d)) return std::make_shared<ConvolutionDesc>(*c);
    if (auto* b = dynamic_cast<const BinaryDesc*>(&d)) return std::make_shared<BinaryDesc>(*b);
    if (auto* n = dynamic_cast<const BatchNormalizationDesc*>(&d)) return std::make_shared<BatchNormalizationDesc>(*n);
    return nullptr;
}

}  // namespace

void fuse_epilogues(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes) {
    std::vector<Node>& nodes = graph.nodes;
    std::vector<uint32_t> reads(nodes.size(), 0);  // operands reading each node's outputs
    std::vector<char> is_output(nodes.size(), 0);
    for (const Node& n : nodes)
        for (const auto& op : n.inputs)
            if (op && op->value.source == Value::Source::Node) ++reads[op->value.index];
    for (const Value& v : graph.outputs)
        if (v.source == Value::Source::Node) is_output[v.index] = 1;

    // Whether node i's operand `in` reads, in order, the whole single output of a node that nothing else reads
    // (perhaps reinterpreted to other sizes), so that node i's output can be that memory (a graph output keeps its
    // description).
    auto sole_reader = [&](size_t i, const Operand& in) {
        if (in.value.source != Value::Source::Node || reads[in.value.index] != 1 || is_output[in.value.index])
            return false;
        const Node& producer = nodes[in.value.index];
        const TensorDesc& made = producer.outputs[0];
        return producer.outputs.size() == 1 && in.desc.is_packed() && in.desc.data_type == made.data_type &&
               in.desc.element_count() == made.element_count() && (!is_output[i] || nodes[i].outputs[0] == made);
    };

    // Per node: the value that holds its output once it is folded away (nothing reads a folded GEMM's).
    std::vector<std::optional<Value>> folded(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (const auto* act = dynamic_cast<const ActivationDesc*>(nodes[i].desc.get())) {
            const Operand& in = *nodes[i].inputs[0];
            if (!sole_reader(i, in)) continue;
            Node& producer = nodes[in.value.index];
            auto desc = copy_desc(*producer.desc);
            FusedActivation* slot = desc ? free_activation(*desc) : nullptr;
            if (!slot) continue;
            *slot = act->activation;
            Node fused{std::move(desc), producer.inputs, producer.outputs};
            if (!executor_takes(fused)) continue;
            producer = std::move(fused);
            folded[i] = in.value;
            continue;
        }
        const auto* add = dynamic_cast<const BinaryDesc*>(nodes[i].desc.get());
        if (!add || add->function != BinaryFunction::Add) continue;
        for (int side = 0; side < 2; ++side) {
            const Operand& in = *nodes[i].inputs[side];
            const Operand& other = *nodes[i].inputs[1 - side];
            if (!sole_reader(i, in)) continue;
            const Node& gemm = nodes[in.value.index];
            const auto* g = dynamic_cast<const GemmDesc*>(gemm.desc.get());
            if (!g || gemm.inputs.size() < 3 || gemm.inputs[2] || !g->fused.is_none() ||
                other.desc.data_type != gemm.outputs[0].data_type || other.desc.sizes != gemm.outputs[0].sizes)
                continue;
            auto desc = std::make_shared<GemmDesc>(*g);
            desc->beta = 1.0f;
            desc->fused = add->fused;
            Node fused{std::move(desc), gemm.inputs, gemm.outputs};
            fused.inputs[2] = other;
            if (!executor_takes(fused)) continue;
            folded[in.value.index] = Value{Value::Source::Node, uint32_t(i), 0};
            nodes[i] = std::move(fused);
            break;
        }
    }

    // Drop the folded nodes; renumber what refers to nodes.
    std::vector<uint32_t> new_index(nodes.size());
    auto remap = [&](Value& v) {
        if (v.source != Value::Source::Node) return;
        if (folded[v.index]) v = *folded[v.index];  // never itself folded
        v.index = new_index[v.index];
    };
    std::vector<Node> kept;
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (folded[i]) continue;
        new_index[i] = uint32_t(kept.size());
        kept.push_back(std::move(nodes[i]));
    }
    for (Node& n : kept)
        for (auto& op : n.inputs)
            if (op) remap(op->value);
    for (Value& v : graph.outputs) remap(v);
    nodes = std::move(kept);
}

}  // namespace dml
