#include "fuse_elementwise_chains.h"

#include "ops/elementwise_chain.h"

namespace dml {

void fuse_elementwise_chains(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes) {
    std::vector<Node>& nodes = graph.nodes;
    // Per node: the one node that reads its output, whole and in order, and the bits of the inputs it reads it
    // through; none where several nodes read it, one reads it through another view, or it is a graph output.
    struct Reader {
        uint32_t node;
        unsigned inputs;
    };
    std::vector<std::optional<Reader>> sole(nodes.size());
    std::vector<char> shared(nodes.size(), 0);
    for (uint32_t j = 0; j < nodes.size(); ++j)
        for (size_t k = 0; k < nodes[j].inputs.size(); ++k) {
            const auto& op = nodes[j].inputs[k];
            if (!op || op->value.source != Value::Source::Node) continue;
            const uint32_t v = op->value.index;
            const bool whole = k < 32 && op->value.output == 0 && op->desc == nodes[v].outputs[0];
            if (!whole || (sole[v] && sole[v]->node != j))
                shared[v] = 1;
            else if (sole[v])
                sole[v]->inputs |= 1u << k;
            else
                sole[v] = Reader{j, 1u << k};
        }
    for (const Value& v : graph.outputs)
        if (v.source == Value::Source::Node) shared[v.index] = 1;

    std::vector<std::optional<Value>> folded(nodes.size());
    // A node joins one chain at most: a later run may reach a node an earlier chain took, as (x + y) * (x - 1)
    // does from x - 1 into the multiply that the chain from x + y took.
    std::vector<char> chained(nodes.size(), 0);
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (chained[i]) continue;
        std::vector<ChainStep> steps;
        std::vector<Operand> inputs;
        if (!append_chain_steps(nodes[i], 0, steps, inputs)) continue;
        std::vector<uint32_t> run = {i};
        for (uint32_t cur = i; !shared[cur] && sole[cur]; cur = run.back()) {
            const Reader next = *sole[cur];
            if (chained[next.node] || !(nodes[next.node].outputs[0] == nodes[cur].outputs[0]) ||
                !append_chain_steps(nodes[next.node], next.inputs, steps, inputs))
                break;
            run.push_back(next.node);
        }
        if (run.size() < 2) continue;
        const uint32_t last = run.back();
        Node chain = elementwise_chain(std::move(steps), std::move(inputs), nodes[last].outputs[0]);
        if (!executor_takes(chain)) continue;
        // The chain runs where its last node ran: every input it reads is computed before that one.
        nodes[last] = std::move(chain);
        for (uint32_t r : run) chained[r] = 1;
        run.pop_back();
        for (uint32_t r : run) folded[r] = Value{Value::Source::Node, last, 0};
    }
    drop_folded_nodes(graph, folded);
}

}  // namespace dml
