// A graph compiled for one device: the cut of the graph the outputs need, rewritten (fuse_epilogues.h,
// fuse_elementwise_chains.h) as the executor allows, the executor's plan, the constants it uploaded and the owned
// inputs (weights) bound to it.
// Checks every binding and names a wrong one as "input N 'name'".
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "../core/graph.h"
#include "../executor/device.h"

namespace dml {

class CompiledOperator {
public:
    // Compiling takes two steps, so that a caller can let other threads run during the long second one. The
    // constructor cuts out what `outputs` need, reading `graph`, which must not change meanwhile; build() rewrites
    // the cut, builds the executor's plan and uploads the constants, reading nothing of `graph`. Nothing else may
    // be called before build() has returned.
    CompiledOperator(const std::shared_ptr<Graph>& graph, const std::vector<Expression>& outputs);
    void build();

    enum class Phase { Initialize, Dispatch };
    // The compiled input slot for graph input `graph_index`, checking it may be bound in `phase`.
    uint32_t slot_for(uint32_t graph_index, Phase phase) const;
    // "input 3 'weights'"
    std::string describe_input(uint32_t graph_index) const;

    struct Binding {
        uint32_t slot;
        std::shared_ptr<Memory> memory;
    };
    // Exactly the owned inputs; replaces any earlier weights.
    void initialize(std::vector<Binding> bindings);
    // Exactly the plain inputs; returns freshly allocated output memory, one per output.
    std::vector<std::shared_ptr<Memory>> dispatch(std::vector<Binding> bindings);

    const CompiledGraph& graph() const { return compiled_; }
    // Output i as the caller asked for it: packed, with the sizes of its expression (its memory holds
    // graph().outputs[i], whose node may have produced the same bytes under other sizes).
    const TensorDesc& output_desc(size_t i) const { return output_descs_.at(i); }
    const std::shared_ptr<Device>& device() const { return device_; }
    bool initialized() const { return initialized_; }
    uint64_t temporary_size() const { return plan_->temporary_size(); }
    uint64_t persistent_size() const;
    uint64_t descriptor_count() const { return compiled_.inputs.size() + compiled_.outputs.size(); }

private:
    // Checks that `bindings` covers exactly the slots of `kind`, each once; orders them by slot.
    void check_complete(std::vector<Binding>& bindings, InputKind kind) const;

    std::shared_ptr<Device> device_;
    CompiledGraph compiled_;
    std::shared_ptr<const Graph> source_;         // names inputs added after compile
    std::vector<uint32_t> slot_of_graph_input_;   // UINT32_MAX where a graph input is not used
    std::vector<std::string> graph_input_names_;  // every graph input at compile: read during dispatch, when the
                                                  // graph may grow on another thread
    std::vector<TensorDesc> output_descs_;         // per output: see output_desc
    std::unique_ptr<Plan> plan_;
    std::vector<std::shared_ptr<Memory>> bound_;  // per slot: constants and owned inputs once initialized
    std::atomic<bool> initialized_ = false;
    std::mutex mutex_;  // one dispatch or initialize at a time: the plan's intermediate memory is shared
};

}  // namespace dml
