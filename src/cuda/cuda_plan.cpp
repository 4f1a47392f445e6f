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
        register_elementwise_chain_kernels(t);
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

// The kernel object of each node (supports() accepted every one), built (settling launch shapes, algorithms, workspaces) before the memory plan.
std::vector<std::unique_ptr<CudaKernel>> build_kernels(const CompiledGraph& g, CudaDevice& device) {
    const auto& table = kernel_table();
    std::vector<std::unique_ptr<CudaKernel>> kernels;
    for (const Node& node : g.nodes) kernels.push_back(table.at(std::type_index(typeid(*node.desc)))(node, device));
    return kernels;
}

class CudaPlan : public Plan {
public:
    CudaPlan(std::shared_ptr<CudaDevice> device, const CompiledGraph& g)
        : device_(std::move(device)),
          graph_(g),
          kernels_(build_kernels(graph_, *device_)),
          memory_(graph_, 256,  // cudaMalloc's alignment: cuBLASLt's fast paths want it
                  [&](size_t i) { return kernels_[i]->workspace_size(); }) {
        // DIRECTML_CUDA_GRAPHS: 0 never records; "always" records at the first dispatch (to test recording).
        const char* graphs = std::getenv("DIRECTML_CUDA_GRAPHS");
        use_graphs_ = !(graphs && std::string(graphs) == "0");
        record_at_once_ = graphs && std::string(graphs) == "always";
    }

    ~CudaPlan() override {
        for (Recording& r : recordings_) cudaGraphExecDestroy(r.exec);
    }

    uint64_t temporary_size() const override { return memory_.arena_size; }
    uint64_t persistent_size() const override {
        uint64_t bytes = 0;
        for (const auto& k : kernels_) bytes += k->persistent_size();
        return bytes;
    }

    void execute(std::span<Memory* const> inputs, std::span<Memory* const> outputs) override {
        std::lock_guard lock(device_->stream_mutex());
        DeviceGuard guard(device_->index());
        if (!arena_ && memory_.arena_size) arena_ = device_->allocate(memory_.arena_size);
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
    struct Recording {
        std::vector<const void*> key;
        cudaGraphExec_t exec;
    };

    void enqueue(std::span<Memory* const> inputs, std::span<Memory* const> outputs, cudaStream_t stream) const {
        const DispatchMemory address{inputs, outputs, arena_ ? static_cast<std::byte*>(arena_->data) : nullptr};
        for (size_t i = 0; i < graph_.nodes.size(); ++i) {
            const Node& node = graph_.nodes[i];
            const CudaKernel& kernel = *kernels_[i];
            LaunchArgs args{{}, {}, kernel.workspace_size() ? address.arena + memory_.workspace[i] : nullptr, stream};
            for (const auto& op : node.inputs) args.inputs.push_back(op ? address(memory_.input(*op)) : nullptr);
            for (const Location& l : memory_.outputs[i]) args.outputs.push_back(address(l));
            kernel.enqueue(args);
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
    CompiledGraph graph_;  // before kernels_ and memory_: kernels refer to its nodes
    std::vector<std::unique_ptr<CudaKernel>> kernels_;
    MemoryPlan memory_;
    std::shared_ptr<Memory> arena_;
    bool use_graphs_ = true, record_at_once_ = false;
    std::vector<Recording> recordings_;    // most recently used last
    std::vector<const void*> unrecorded_;  // the addresses of the last dispatch run without a recording
};

}  // namespace

std::vector<std::type_index> CudaDevice::operator_types() const {
    static const std::vector<std::type_index> types = registered_operator_types("cuda", kernel_table());
    return types;
}

std::unique_ptr<Plan> CudaDevice::compile(const CompiledGraph& graph) {
    DeviceGuard guard(index_);
    auto plan = std::make_unique<CudaPlan>(std::static_pointer_cast<CudaDevice>(shared_from_this()), graph);
    // The scratch blocks of the kernels' measurements (cuDNN's algorithms, attention) go back to CUDA: their sizes
    // are the problems', which dispatches rarely ask for, and kept cached they raised SDXL's peak by 8 GiB.
    free_cached();
    return plan;
}

}  // namespace dml::cuda
