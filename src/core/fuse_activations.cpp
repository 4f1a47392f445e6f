#include "fuse_activations.h"

#include <optional>

#include "ops/activation.h"
#include "ops/normalization.h"

namespace dml {

void fuse_activations(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes) {
    std::vector<Node>& nodes = graph.nodes;
    std::vector<uint32_t> reads(nodes.size(), 0);  // operands reading each node's outputs
    std::vector<char> is_output(nodes.size(), 0);
    for (const Node& n : nodes)
        for (const auto& op : n.inputs)
            if (op && op->value.source == Value::Source::Node) ++reads[op->value.index];
    for (const Value& v : graph.outputs)
        if (v.source == Value::Source::Node) is_output[v.index] = 1;

    // Per node: the value that holds its output once it is folded away.
    std::vector<std::optional<Value>> folded(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto* act = dynamic_cast<const ActivationDesc*>(nodes[i].desc.get());
        if (!act) continue;
        const Operand& in = *nodes[i].inputs[0];
        if (in.value.source != Value::Source::Node) continue;
        Node& producer = nodes[in.value.index];
        const auto* mvn = dynamic_cast<const MeanVarianceNormalizationDesc*>(producer.desc.get());
        if (!mvn || !mvn->fused.is_none() || reads[in.value.index] != 1 || is_output[in.value.index]) continue;
        // The activation reads the normalization's whole output in order (perhaps reinterpreted to other sizes),
        // so its own output is that memory; a graph output keeps its description.
        const TensorDesc& made = producer.outputs[0];
        if (!in.desc.is_packed() || in.desc.data_type != made.data_type ||
            in.desc.element_count() != made.element_count() || (is_output[i] && !(nodes[i].outputs[0] == made)))
            continue;
        auto fused_desc = std::make_shared<MeanVarianceNormalizationDesc>(*mvn);
        fused_desc->fused = act->activation;
        Node fused{std::move(fused_desc), producer.inputs, producer.outputs};
        if (!executor_takes(fused)) continue;
        producer = std::move(fused);
        folded[i] = in.value;
    }

    // Drop the folded nodes; renumber what refers to nodes.
    std::vector<uint32_t> new_index(nodes.size());
    auto remap = [&](Value& v) {
        if (v.source != Value::Source::Node) return;
        if (folded[v.index]) v = *folded[v.index];  // a producer comes before, and is never folded itself
        v.index = new_index[v.index];
    };
    std::vector<Node> kept;
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (folded[i]) continue;
        new_index[i] = uint32_t(kept.size());
        for (auto& op : nodes[i].inputs)
            if (op) remap(op->value);
        kept.push_back(std::move(nodes[i]));
    }
    for (Value& v : graph.outputs) remap(v);
    nodes = std::move(kept);
}

}  // namespace dml
