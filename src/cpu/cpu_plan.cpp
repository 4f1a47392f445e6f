// The CPU plan: a kernel per node, looked up at compile, and one arena for every intermediate value and kernel
// workspace, with offsets reused once a value's last reader has run.
#include <algorithm>

#include "../core/errors.h"
#include "../executor/arena_planner.h"
#include "cpu_device.h"
#include "kernels/kernel.h"

namespace dml::cpu {

namespace {

const KernelTable& kernel_table() {
    static const KernelTable table = [] {
        KernelTable t;
        register_elementwise_kernels(t);
        register_activation_kernels(t);
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

class CpuPlan : public Plan {
public:
    CpuPlan(std::shared_ptr<Device> device, const CompiledGraph& g) : device_(std::move(device)), graph_(g) {
        const auto& table = kernel_table();
        const size_t n = graph_.nodes.size();
        std::vector<size_t> last_use(n, 0);
        for (size_t i = 0; i < n; ++i)
            for (const auto& op : graph_.nodes[i].inputs)
                if (op && op->value.source == Value::Source::Node) last_use[op->value.index] = i;
        ArenaPlanner arena(64);  // vector loads
        std::vector<std::vector<uint64_t>> to_release(n);
        for (size_t i = 0; i < n; ++i) {
            const Node& node = graph_.nodes[i];
            auto it = table.find(std::type_index(typeid(*node.desc)));
            if (it == table.end())
                throw ValueError("the cpu executor has no kernel for " + node.desc->type_name());
            Step step{it->second, {}, 0};
            for (uint32_t k = 0; k < node.outputs.size(); ++k) {
                Value v{Value::Source::Node, uint32_t(i), k};
                auto out = std::find(graph_.outputs.begin(), graph_.outputs.end(), v);
                if (out != graph_.outputs.end()) {
                    step.outputs.push_back({Location::Kind::Output, uint64_t(out - graph_.outputs.begin())});
                } else {
                    uint64_t off = arena.allocate(node.outputs[k].total_tensor_size_in_bytes());
                    step.outputs.push_back({Location::Kind::Arena, off});
                    to_release[std::max(last_use[i], i)].push_back(off);
                }
            }
            uint64_t ws = step.kernel.workspace ? step.kernel.workspace(node) : 0;
            if (ws) {
                step.workspace = arena.allocate(ws);
                arena.release(step.workspace);
            }
            for (uint64_t off : to_release[i]) arena.release(off);
            steps_.push_back(std::move(step));
        }
        temporary_size_ = arena.peak();
    }

    uint64_t temporary_size() const override { return temporary_size_; }

    void execute(std::span<Memory* const> inputs, std::span<Memory* const> outputs) override {
        if (!arena_ && temporary_size_) arena_ = device_->allocate(temporary_size_);
        std::byte* arena = arena_ ? static_cast<std::byte*>(arena_->data) : nullptr;
        auto address = [&](const Location& l) -> std::byte* {
            switch (l.kind) {
                case Location::Kind::Input: return static_cast<std::byte*>(inputs[l.index]->data);
                case Location::Kind::Output: return static_cast<std::byte*>(outputs[l.index]->data);
                default: return arena + l.index;
            }
        };
        ThreadPool& pool = cpu_thread_pool();
        for (size_t i = 0; i < steps_.size(); ++i) {
            const Node& node = graph_.nodes[i];
            KernelArgs args{node, {}, {}, arena ? arena + steps_[i].workspace : nullptr, pool};
            for (const auto& op : node.inputs) {
                if (!op) {
                    args.inputs.push_back({});
                    continue;
                }
                Location l = op->value.source == Value::Source::Input
                                 ? Location{Location::Kind::Input, op->value.index}
                                 : steps_[op->value.index].outputs[op->value.output];
                args.inputs.push_back({&op->desc, address(l)});
            }
            for (size_t k = 0; k < node.outputs.size(); ++k)
                args.outputs.push_back({&node.outputs[k], address(steps_[i].outputs[k])});
            steps_[i].kernel.run(args);
        }
    }

private:
    struct Step {
        Kernel kernel;
        std::vector<Location> outputs;
        uint64_t workspace;  // arena offset
    };
    std::shared_ptr<Device> device_;
    CompiledGraph graph_;
    std::vector<Step> steps_;
    uint64_t temporary_size_ = 0;
    std::shared_ptr<Memory> arena_;
};

}  // namespace

std::unique_ptr<Plan> CpuDevice::compile(const CompiledGraph& graph) {
    return std::make_unique<CpuPlan>(shared_from_this(), graph);
}

}  // namespace dml::cpu
