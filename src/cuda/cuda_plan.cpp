// The CUDA plan: a kernel object per node, built at compile, and one device arena for every intermediate value
// and kernel workspace, with offsets reused once a value's last reader has run (as the CPU plan). A dispatch is
// recorded as a CUDA graph the second time the same device addresses (inputs, outputs) come back, and replayed
// from then on; the device's caching pool hands the same addresses back when a caller's buffers come and go.
#include <cstdlib>

#include "../core/errors.h"
#include "../executor/arena_planner.h"
#include "cuda_device.h"
#include "kernels/kernel.h"

namespace dml::cuda {

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
        register_resampling_kernels(t);
        register_normalization_kernels(t);
        register_indexing_kernels(t);
        register_generation_kernels(t);
        register_recurrent_kernels(t);
        register_attention_kernels(t);
        register_quantized_kernels(t);
        return t;
    }();
    return table;
}

// Recorded graphs kept per plan: callers that keep some outputs alive alternate between a few address sets.
constexpr size_t kMaxRecordings = 4;

class CudaPlan : public Plan {
public:
    CudaPlan(std::shared_ptr<CudaDevice> device, const CompiledGraph& g) : device_(std::move(device)), graph_(g) {
        // DIRECTML_CUDA_GRAPHS: 0 never records; "always" records at the first dispatch (to test recording).
        const char* graphs = std::getenv("DIRECTML_CUDA_GRAPHS");
        use_graphs_ = !(graphs && std::string(graphs) == "0");
        record_at_once_ = graphs && std::string(graphs) == "always";
        const auto& table = kernel_table();
        const size_t n = graph_.nodes.size();
        std::vector<size_t> last_use(n, 0);
        for (size_t i = 0; i < n; ++i)
            for (const auto& op : graph_.nodes[i].inputs)
                if (op && op->value.source == Value::Source::Node) last_use[op->value.index] = i;
        ArenaPlanner arena(256);  // cudaMalloc's alignment: cuBLASLt's fast paths want it
        std::vector<std::vector<uint64_t>> to_release(n);
        for (size_t i = 0; i < n; ++i) {
            const Node& node = graph_.nodes[i];
            auto it = table.find(std::type_index(typeid(*node.desc)));
            if (it == table.end()) throw ValueError("the cuda executor has no kernel for " + node.desc->type_name());
            Step step{it->second(node, *device_), {}, 0};
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
            if (uint64_t ws = step.kernel->workspace_size()) {
                step.workspace = arena.allocate(ws);
                arena.release(step.workspace);
            }
            for (uint64_t off : to_release[i]) arena.release(off);
            steps_.push_back(std::move(step));
        }
        temporary_size_ = arena.peak();
    }

    ~CudaPlan() override {
        for (Recording& r : recordings_) cudaGraphExecDestroy(r.exec);
    }

    uint64_t temporary_size() const override { return temporary_size_; }
    uint64_t persistent_size() const override {
        uint64_t bytes = 0;
        for (const Step& s : steps_) bytes += s.kernel->persistent_size();
        return bytes;
    }

    void execute(std::span<Memory* const> inputs, std::span<Memory* const> outputs) override {
        std::lock_guard lock(device_->stream_mutex());
        DeviceGuard guard(device_->index());
        if (!arena_ && temporary_size_) arena_ = device_->allocate(temporary_size_);
        const cudaStream_t stream = device_->stream();
        std::vector<const void*> key;
        for (Memory* m : inputs) key.push_back(m->data);
        for (Memory* m : outputs) key.push_back(m->data);
        auto found =
            std::find_if(recordings_.begin(), recordings_.end(), [&](const Recording& r) { return r.key == key; });
        if (!use_graphs_) {
            enqueue(inputs, outputs, stream);
        } else if (found != recordings_.end()) {
            std::rotate(found, found + 1, recordings_.end());  // most recently used last
            check(cudaGraphLaunch(recordings_.back().exec, stream), "cudaGraphLaunch");
        } else if (key == unrecorded_ || record_at_once_) {
            record(inputs, outputs, stream, std::move(key));
        } else {
            enqueue(inputs, outputs, stream);
            unrecorded_ = std::move(key);
        }
        check(cudaStreamSynchronize(stream), "running the plan (cudaStreamSynchronize)");
    }

private:
    struct Step {
        std::unique_ptr<CudaKernel> kernel;
        std::vector<Location> outputs;
        uint64_t workspace;  // arena offset
    };
    struct Recording {
        std::vector<const void*> key;
        cudaGraphExec_t exec;
    };

    void enqueue(std::span<Memory* const> inputs, std::span<Memory* const> outputs, cudaStream_t stream) const {
        std::byte* arena = arena_ ? static_cast<std::byte*>(arena_->data) : nullptr;
        auto address = [&](const Location& l) -> std::byte* {
            switch (l.kind) {
                case Location::Kind::Input: return static_cast<std::byte*>(inputs[l.index]->data);
                case Location::Kind::Output: return static_cast<std::byte*>(outputs[l.index]->data);
                default: return arena + l.index;
            }
        };
        for (size_t i = 0; i < steps_.size(); ++i) {
            const Node& node = graph_.nodes[i];
            const Step& step = steps_[i];
            LaunchArgs args{{}, {}, step.kernel->workspace_size() ? arena + step.workspace : nullptr, stream};
            for (const auto& op : node.inputs) {
                if (!op) {
                    args.inputs.push_back(nullptr);
                    continue;
                }
                Location l = op->value.source == Value::Source::Input
                                 ? Location{Location::Kind::Input, op->value.index}
                                 : steps_[op->value.index].outputs[op->value.output];
                args.inputs.push_back(address(l));
            }
            for (const Location& l : step.outputs) args.outputs.push_back(address(l));
            step.kernel->enqueue(args);
        }
    }

    // Records the dispatch into a CUDA graph, keeps it for `key`, and launches it.
    void record(std::span<Memory* const> inputs, std::span<Memory* const> outputs, cudaStream_t stream,
                std::vector<const void*> key) {
        check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
        cudaGraph_t graph = nullptr;
        try {
            enqueue(inputs, outputs, stream);
        } catch (...) {
            cudaStreamEndCapture(stream, &graph);  // leaves the stream usable
            if (graph) cudaGraphDestroy(graph);
            cudaGetLastError();
            throw;
        }
        check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
        cudaGraphExec_t exec = nullptr;
        cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
        cudaGraphDestroy(graph);
        check(e, "cudaGraphInstantiate");
        if (recordings_.size() == kMaxRecordings) {
            cudaGraphExecDestroy(recordings_.front().exec);
            recordings_.erase(recordings_.begin());
        }
        recordings_.push_back({std::move(key), exec});
        check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    }

    std::shared_ptr<CudaDevice> device_;
    CompiledGraph graph_;  // before steps_: kernels refer to its nodes
    std::vector<Step> steps_;
    uint64_t temporary_size_ = 0;
    std::shared_ptr<Memory> arena_;
    bool use_graphs_ = true, record_at_once_ = false;
    std::vector<Recording> recordings_;    // most recently used last
    std::vector<const void*> unrecorded_;  // the addresses of the last dispatch run without a recording
};

}  // namespace

std::unique_ptr<Plan> CudaDevice::compile(const CompiledGraph& graph) {
    DeviceGuard guard(index_);
    return std::make_unique<CudaPlan>(std::static_pointer_cast<CudaDevice>(shared_from_this()), graph);
}

}  // namespace dml::cuda
