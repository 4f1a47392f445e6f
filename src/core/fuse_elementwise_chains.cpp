#include "fuse_elementwise_chains.h"

#include "ops/elementwise_chain.h"
#include "readers.h"

namespace dml {

void fuse_elementwise_chains(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes) {
    std::vector<Node>& nodes = graph.nodes;
    const Readers readers(graph);
    // A node joins one chain at most: a later run may reach a node an earlier chain took, as (x + y) * (x - 1)
    // does from x - 1 into the multiply that the chain from x + y took.
    std::vector<char> chained(nodes.size(), 0);
    // The one node that reads node v's output, whole and in order, and the bits of the operands it reads it
    // through; none where several nodes read it, one reads it through another view, it is a graph output, or the
    // reader is in a chain already (its node may be the chain's now).
    struct Reader {
        uint32_t node;
        unsigned inputs;
    };
    auto sole_reader = [&](uint32_t v) -> std::optional<Reader> {
        if (nodes[v].outputs.size() != 1 || readers.is_graph_output(v, 0) || readers.of(v, 0).empty())
            return std::nullopt;
        Reader sole{readers.of(v, 0)[0].node, 0};
        for (const Readers::Reader& r : readers.of(v, 0)) {
            if (r.node != sole.node || chained[r.node] || r.input >= 32 ||
                !(nodes[r.node].inputs[r.input]->desc == nodes[v].outputs[0]))
                return std::nullopt;
            sole.inputs |= 1u << r.input;
        }
        return sole;
    };

    std::vector<std::optional<Value>> folded(nodes.size());
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (chained[i]) continue;
        std::vector<ChainStep> steps;
        std::vector<Operand> inputs;
        if (!append_chain_steps(nodes[i], 0, steps, inputs)) continue;
        std::vector<uint32_t> run = {i};
        for (std::optional<Reader> next = sole_reader(i); next; next = sole_reader(run.back())) {
            const uint32_t cur = run.back();
            if (!(nodes[next->node].outputs[0] == nodes[cur].outputs[0]) ||
                !append_chain_steps(nodes[next->node], next->inputs, steps, inputs))
                break;
            run.push_back(next->node);
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
