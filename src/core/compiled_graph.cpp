#include "compiled_graph.h"

namespace dml {

void drop_folded_nodes(CompiledGraph& graph, const std::vector<std::optional<Value>>& folded) {
    std::vector<Node>& nodes = graph.nodes;
    std::vector<uint32_t> new_index(nodes.size());
    auto remap = [&](Value& v) {
        if (v.source != Value::Source::Node) return;
        if (folded[v.index]) v = *folded[v.index];
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
