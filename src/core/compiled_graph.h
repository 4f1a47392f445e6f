// The graph as executors receive it: only what the outputs need, in execution order, after the rewrites. The core
// builds and rewrites it; the runtime hands it to an executor.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph.h"

namespace dml {

struct CompiledGraph {
    struct Input {
        uint32_t graph_index;  // position among the graph's inputs, as error messages name it
        std::string name;
        TensorDesc desc;
        InputKind kind;
        ConstantBytes constant;  // a Constant input's recorded host bytes; null otherwise
    };
    std::vector<Node> nodes;    // operands refer to Value::Source::Input by position in `inputs`
    std::vector<Input> inputs;  // the graph inputs the outputs depend on
    std::vector<Value> outputs; // node outputs, packed, each at most once
};

// The rewrites' last step: drops every node i with a `folded[i]`, the value that now holds its output (never itself
// folded), and renumbers what refers to nodes.
void drop_folded_nodes(CompiledGraph& graph, const std::vector<std::optional<Value>>& folded);

}  // namespace dml
