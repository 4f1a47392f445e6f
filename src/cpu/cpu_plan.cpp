// The CPU plan: a kernel object per node, built at compile, and one arena for every intermediate value and kernel
// workspace, with offsets reused once a value's last reader has run. Under AddressSanitizer the arena is poisoned
// but for the blocks alive as each node runs, so that a kernel touching an intermediate past its extent, or one no
// longer (or not yet) alive, is reported even though the arena itself is one allocation.
#include <algorithm>

#include "../core/errors.h"
#include "../executor/arena_planner.h"
#include "cpu_device.h"
#include "kernels/kernel.h"

#if defined(__SANITIZE_ADDRESS__)
#define DML_POISON_ARENA 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DML_POISON_ARENA 1
#endif
#endif
#ifdef DML_POISON_ARENA
#include <sanitizer/asan_interface.h>
#endif

namespace dml::cpu {

namespace {

// Marks arena blocks usable or not for AddressSanitizer (nothing in other builds). The whole arena is poisoned
// while it lives and usable again when it goes, exceptions included.
class ArenaPoison {
public:
    ArenaPoison(std::byte* arena, uint64_t bytes) : arena_(arena), bytes_(bytes) { mark(0, bytes_, true); }
    ~ArenaPoison() { mark(0, bytes_, false); }
    ArenaPoison(const ArenaPoison&) = delete;
    ArenaPoison& operator=(const ArenaPoison&) = delete;

    void usable(const std::vector<MemoryPlan::Block>& blocks) const {
        for (const auto& b : blocks) mark(b.offset, b.bytes, false);
    }
    void unusable(const std::vector<MemoryPlan::Block>& blocks) const {
        for (const auto& b : blocks) mark(b.offset, b.bytes, true);
    }

private:
    void mark(uint64_t offset, uint64_t bytes, bool poison) const {
#ifdef DML_POISON_ARENA
        if (!arena_) return;
        if (poison) ASAN_POISON_MEMORY_REGION(arena_ + offset, bytes);
        else ASAN_UNPOISON_MEMORY_REGION(arena_ + offset, bytes);
#else
        (void)offset, (void)bytes, (void)poison;
#endif
    }

    std::byte* arena_;
    uint64_t bytes_;
};

const KernelTable& kernel_table() {
    static const KernelTable table = [] {
        KernelTable t;
        register_elementwise_kernels(t);
        register_activation_kernels(t);
        register_elementwise_chain_kernels(t);
        register_gemm_kernels(t);
        register_convolution_kernels(t);
        register_reduce_kernels(t);
        register_data_movement_kernels(t);
        register_pooling_kernels(t);
        register_normalization_kernels(t);
        register_indexing_kernels(t);
        register_resampling_kernels(t);
        register_generation_kernels(t);
        register_recurrent_kernels(t);
        register_attention_kernels(t);
        return t;
    }();
    return table;
}

// The kernel object of each node (supports() accepted every one), built before the memory plan asks for their
// workspaces.
std::vector<std::unique_ptr<CpuKernel>> build_kernels(const CompiledGraph& g) {
    std::vector<std::unique_ptr<CpuKernel>> kernels;
    for (const Node& node : g.nodes) kernels.push_back(kernel_table().at(std::type_index(typeid(*node.desc)))(node));
    return kernels;
}

class CpuPlan : public Plan {
public:
    CpuPlan(std::shared_ptr<Device> device, const CompiledGraph& g)
        : device_(std::move(device)),
          graph_(g),
          kernels_(build_kernels(graph_)),
          // 64-byte blocks: vectors; the join kernel skips an input already in its slice
          memory_(graph_, 64, [&](size_t i) { return kernels_[i]->workspace_size(); }, true) {}

    uint64_t temporary_size() const override { return memory_.arena_size; }

    uint64_t persistent_size() const override {
        uint64_t bytes = 0;
        for (const auto& k : kernels_) bytes += k->persistent_size();
        return bytes;
    }

    void initialize(std::span<Memory* const> inputs) override {
        for (size_t i = 0; i < graph_.nodes.size(); ++i) {
            std::vector<TensorArg> constants;
            for (const auto& op : graph_.nodes[i].inputs) {
                const bool fixed = op && op->value.source == Value::Source::Input &&
                                   graph_.inputs[op->value.index].kind != InputKind::Plain && inputs[op->value.index];
                constants.push_back(fixed ? TensorArg{&op->desc, static_cast<std::byte*>(inputs[op->value.index]->data)}
                                          : TensorArg{});
            }
            kernels_[i]->initialize(constants);
        }
    }

    void execute(std::span<Memory* const> inputs, std::span<Memory* const> outputs) override {
        if (!arena_ && memory_.arena_size) arena_ = device_->allocate(memory_.arena_size);
        const DispatchMemory address{inputs, outputs, arena_ ? static_cast<std::byte*>(arena_->data) : nullptr};
        ThreadPool& pool = static_cast<CpuDevice&>(*device_).thread_pool();
        const ArenaPoison poison(address.arena, memory_.arena_size);
        const ThreadPool::Hold hold(pool);
        for (size_t i = 0; i < graph_.nodes.size(); ++i) {
            const Node& node = graph_.nodes[i];
            KernelArgs args{node, {}, {}, address.arena ? address.arena + memory_.workspace[i] : nullptr, pool};
            for (const auto& op : node.inputs)
                args.inputs.push_back(op ? TensorArg{&op->desc, address(memory_.input(*op))} : TensorArg{});
            for (size_t k = 0; k < node.outputs.size(); ++k)
                args.outputs.push_back({&node.outputs[k], address(memory_.outputs[i][k])});
            poison.usable(memory_.born[i]);
            kernels_[i]->run(args);
            poison.unusable(memory_.dead[i]);
        }
    }

private:
    std::shared_ptr<Device> device_;
    CompiledGraph graph_;  // before kernels_ and memory_, which read it
    std::vector<std::unique_ptr<CpuKernel>> kernels_;
    MemoryPlan memory_;
    std::shared_ptr<Memory> arena_;
};

}  // namespace

std::vector<std::type_index> CpuDevice::operator_types() const {
    static const std::vector<std::type_index> types = registered_operator_types("cpu", kernel_table());
    return types;
}

std::unique_ptr<Plan> CpuDevice::compile(const CompiledGraph& graph) {
    return std::make_unique<CpuPlan>(shared_from_this(), graph);
}

}  // namespace dml::cpu
