// Memory planning shared by the executors' plans: every intermediate value and kernel workspace of a dispatch
// gets an offset in one arena, reusing the ranges of values whose last reader has run.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

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
    uint64_t index;  // input slot, output index, or arena offset
};

// Where a compiled graph's values and kernel workspaces live: graph outputs in the caller's buffers, every other
// node output and workspace at an offset in one arena, a value's range reused once its last reader has run.
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
    MemoryPlan(const CompiledGraph& g, uint64_t alignment, WorkspaceBytes workspace_bytes) {
        const size_t n = g.nodes.size();
        std::vector<size_t> last_use(n, 0);
        for (size_t i = 0; i < n; ++i)
            for (const auto& op : g.nodes[i].inputs)
                if (op && op->value.source == Value::Source::Node) last_use[op->value.index] = i;
        ArenaPlanner arena(alignment);
        outputs.resize(n);
        workspace.resize(n, 0);
        born.resize(n);
        dead.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const Node& node = g.nodes[i];
            for (uint32_t k = 0; k < node.outputs.size(); ++k) {
                Value v{Value::Source::Node, uint32_t(i), k};
                auto out = std::find(g.outputs.begin(), g.outputs.end(), v);
                if (out != g.outputs.end()) {
                    outputs[i].push_back({Location::Kind::Output, uint64_t(out - g.outputs.begin())});
                } else {
                    const uint64_t bytes = node.outputs[k].total_tensor_size_in_bytes();
                    const Block b{arena.allocate(bytes), bytes};
                    outputs[i].push_back({Location::Kind::Arena, b.offset});
                    born[i].push_back(b);
                    dead[std::max(last_use[i], i)].push_back(b);
                }
            }
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
            case Location::Kind::Output: return static_cast<std::byte*>(outputs[l.index]->data);
            default: return arena + l.index;
        }
    }
};

}  // namespace dml
