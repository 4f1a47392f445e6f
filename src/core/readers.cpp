#include "readers.h"

namespace dml {

Readers::Readers(const CompiledGraph& graph) : readers_(graph.nodes.size()), returned_(graph.nodes.size()) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
        readers_[i].resize(graph.nodes[i].outputs.size());
        returned_[i].resize(graph.nodes[i].outputs.size(), 0);
    }
    for (uint32_t j = 0; j < graph.nodes.size(); ++j)
        for (uint32_t k = 0; k < graph.nodes[j].inputs.size(); ++k)
            if (const auto& op = graph.nodes[j].inputs[k]; op && op->value.source == Value::Source::Node)
                readers_[op->value.index][op->value.output].push_back({j, k});
    for (const Value& v : graph.outputs)
        if (v.source == Value::Source::Node) returned_[v.index][v.output] = 1;
}

size_t Readers::count(uint32_t node) const {
    size_t n = 0;
    for (const auto& r : readers_[node]) n += r.size();
    return n;
}

}  // namespace dml
