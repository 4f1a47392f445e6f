// Memory planning shared by the executors' plans: every intermediate value and kernel workspace of a dispatch
// gets an offset in one arena, reusing the ranges of values whose last reader has run.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "../core/ops/data_movement.h"
#include "../core/readers.h"
#include "device.h"

namespace dml {

// Places blocks in one address range, reusing freed ranges (first fit); tracks the peak. Every block is rounded
// up to `alignment` bytes, which keeps it as aligned as a buffer of its own.
class ArenaPlanner {
public:
    explicit ArenaPlanner(uint64_t alignment) : alignment_(alignment) {}

    uint64_t allocate(uint64_t bytes) {
        bytes = (std::max<uint64_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_;
        uint64_t at = 0;
        for (auto& [off, size] : live_) {
            if (off >= at + bytes) break;
            at = std::max(at, off + size);
        }
        live_.emplace(at, bytes);
        peak_ = std::max(peak_, at + bytes);
        return at;
    }
    void release(uint64_t offset) { live_.erase(offset); }
    uint64_t peak() const { return peak_; }

private:
    uint64_t alignment_;
    std::map<uint64_t, uint64_t> live_;  // offset -> size, ordered by offset
    uint64_t peak_ = 0;
};

// Where a value lives during a dispatch.
struct Location {
    enum class Kind { Input, Output, Arena } kind;
    uint64_t index;       // input slot, output index, or arena offset
    uint64_t offset = 0;  // bytes into an output buffer (a value placed in a join's slice of a graph output)
};

// Where a compiled graph's values and kernel workspaces live: graph outputs in the caller's buffers, every other
// node output and workspace at an offset in one arena, a value's range reused once its last reader has run.
// With `joins_in_place` (for an executor whose join kernel copies nothing for an input already where it goes), a
// node output whose only reader is a JOIN (once, as produced, not a graph output) along an axis with no other
// dimension before it is placed at its slice of the join's output (a whole contiguous range, at a multiple of
// `alignment`), so that its producer writes it there: the join's output comes alive with its first such input.
struct MemoryPlan {
    struct Block {
        uint64_t offset, bytes;  // bytes as asked for, before rounding
    };
    std::vector<std::vector<Location>> outputs;  // by node, then by the node's output
    std::vector<uint64_t> workspace;             // by node: arena offset of its workspace (0 if it has none)
    // By node: the arena blocks that come alive as it runs (its outputs, its workspace) and those dead once it has
    // run (its workspace, the values it read last). What a sanitized build poisons between nodes.
    std::vector<std::vector<Block>> born, dead;
    uint64_t arena_size = 0;

    // `workspace_bytes(i)`: the scratch bytes node i's kernel asks for. Blocks are rounded up to `alignment`.
    template <class WorkspaceBytes>
    MemoryPlan(const CompiledGraph& g, uint64_t alignment, WorkspaceBytes workspace_bytes, bool joins_in_place = false) {
        const size_t n = g.nodes.size();
        std::vector<size_t> last_use(n, 0);
        for (size_t i = 0; i < n; ++i)
            for (const auto& op : g.nodes[i].inputs)
                if (op && op->value.source == Value::Source::Node) last_use[op->value.index] = i;
        const std::map<std::pair<size_t, uint32_t>, Slice> slices = joins_in_place ? join_slices(g, alignment)
                                                                                   : std::map<std::pair<size_t, uint32_t>, Slice>{};
        std::map<std::pair<size_t, uint32_t>, Location> placed;  // join outputs placed before the join runs
        ArenaPlanner arena(alignment);
        outputs.resize(n);
        workspace.resize(n, 0);
        born.resize(n);
        dead.resize(n);
        // Where node i's output k goes: a join's slice (the join's output placed first if not yet), the caller's
        // buffer, or a new arena block that comes alive at `now`.
        auto place = [&](auto& self, size_t i, uint32_t k, size_t now) -> Location {
            if (auto p = placed.find({i, k}); p != placed.end()) return p->second;
            Location l;
            if (auto s = slices.find({i, k}); s != slices.end()) {
                l = self(self, s->second.join, 0, now);
                (l.kind == Location::Kind::Arena ? l.index : l.offset) += s->second.offset;
            } else if (auto out = std::find(g.outputs.begin(), g.outputs.end(), Value{Value::Source::Node, uint32_t(i), k});
                       out != g.outputs.end()) {
                l = {Location::Kind::Output, uint64_t(out - g.outputs.begin())};
            } else {
                const uint64_t bytes = g.nodes[i].outputs[k].total_tensor_size_in_bytes();
                const Block b{arena.allocate(bytes), bytes};
                l = {Location::Kind::Arena, b.offset};
                born[now].push_back(b);
                dead[std::max(last_use[i], i)].push_back(b);
            }
            return placed[{i, k}] = l;
        };
        for (size_t i = 0; i < n; ++i) {
            const Node& node = g.nodes[i];
            for (uint32_t k = 0; k < node.outputs.size(); ++k) outputs[i].push_back(place(place, i, k, i));
            if (uint64_t ws = workspace_bytes(i)) {
                const Block b{arena.allocate(ws), ws};
                workspace[i] = b.offset;
                born[i].push_back(b);
                dead[i].push_back(b);
            }
            for (const Block& b : dead[i]) arena.release(b.offset);
        }
        arena_size = arena.peak();
    }

    // A node output placed in a join's output: the join node and the byte offset of its slice.
    struct Slice {
        size_t join;
        uint64_t offset;
    };

    // The node outputs joins_in_place places in joins' outputs, by (node, output).
    static std::map<std::pair<size_t, uint32_t>, Slice> join_slices(const CompiledGraph& g, uint64_t alignment) {
        const Readers readers(g);
        std::map<std::pair<size_t, uint32_t>, Slice> slices;
        for (size_t j = 0; j < g.nodes.size(); ++j) {
            const auto* join = dynamic_cast<const JoinDesc*>(g.nodes[j].desc.get());
            if (!join) continue;
            const TensorDesc& y = g.nodes[j].outputs[0];
            uint64_t outer = 1, inner = element_size(y.data_type);  // elements before the axis, bytes a step along it
            for (size_t d = 0; d < join->axis; ++d) outer *= y.sizes[d];
            for (size_t d = join->axis + 1; d < y.sizes.size(); ++d) inner *= y.sizes[d];
            uint64_t offset = 0;
            for (const auto& op : g.nodes[j].inputs) {
                const bool produced = op->value.source == Value::Source::Node;
                const std::pair<size_t, uint32_t> v{op->value.index, op->value.output};
                if (outer == 1 && produced && offset % alignment == 0 &&
                    readers.of(op->value.index, op->value.output).size() == 1 &&
                    !readers.is_graph_output(op->value.index, op->value.output)) {
                    const TensorDesc& made = g.nodes[v.first].outputs[v.second];
                    if (made.data_type == op->desc.data_type && made.sizes == op->desc.sizes &&
                        made.effective_strides() == op->desc.effective_strides())
                        slices[v] = {j, offset};
                }
                offset += op->desc.sizes[join->axis] * inner;
            }
        }
        return slices;
    }

    // Where operand `op` of a node reads its value.
    Location input(const Operand& op) const {
        return op.value.source == Value::Source::Input ? Location{Location::Kind::Input, op.value.index}
                                                       : outputs[op.value.index][op.value.output];
    }
};

// The addresses of one dispatch: the caller's input and output buffers and the plan's arena.
struct DispatchMemory {
    std::span<Memory* const> inputs, outputs;
    std::byte* arena;

    std::byte* operator()(const Location& l) const {
        switch (l.kind) {
            case Location::Kind::Input: return static_cast<std::byte*>(inputs[l.index]->data);
            case Location::Kind::Output: return static_cast<std::byte*>(outputs[l.index]->data) + l.offset;
            default: return arena + l.index;
        }
    }
};

}  // namespace dml
