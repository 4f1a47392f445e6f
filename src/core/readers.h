// Who reads each node output of a compiled graph: every operand that reads it, and whether the graph returns it.
// The rewrites (fuse_epilogues, fuse_elementwise_chains) and the arena planner's joins ask the same question, "is
// this value read once, by this operand, and kept nowhere else?", before they let one node write another's memory.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "compiled_graph.h"

namespace dml {

class Readers {
public:
    struct Reader {
        uint32_t node;   // the reading node
        uint32_t input;  // its operand reading the value
    };

    explicit Readers(const CompiledGraph& graph);

    // The operands reading output `output` of node `node`, in node order.
    std::span<const Reader> of(uint32_t node, uint32_t output) const { return readers_[node][output]; }
    bool is_graph_output(uint32_t node, uint32_t output) const { return returned_[node][output]; }
    // Operands reading any output of the node.
    size_t count(uint32_t node) const;

private:
    std::vector<std::vector<std::vector<Reader>>> readers_;  // [node][output]
    std::vector<std::vector<char>> returned_;                  // [node][output]
};

}  // namespace dml
