// The CUDA executor: device memory from a caching pool, one stream per device, our kernels (kernels/) and cuBLASLt
// (loaded at run time) under GEMM and convolution. Plans record their dispatch as a CUDA graph and replay it.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../executor/registry.h"

namespace dml::cuda {

struct CublasLt;

// Throws dml::DeviceError carrying CUDA's error name unless `e` is cudaSuccess. `what` says which call failed.
void check(cudaError_t e, std::string_view what);
// Checks the launch of the kernel just enqueued (`what` names it).
void check_launch(std::string_view what);
// Milliseconds per run of `f` (which enqueues on `stream`), timed over a few runs after a first one. Where the
// first alone takes more than `enough_ms`, its time is returned without repeating: a choice that slow has lost.
float time_ms(cudaStream_t stream, const std::function<void()>& f,
              float enough_ms = std::numeric_limits<float>::infinity());

// Choices measured at compile (an algorithm, a kernel), kept for the process by key (device and problem): a key is
// measured once. `measure` runs without the lock held, as it may wait for the device's stream; a measurement that
// throws is not kept.
template <class V>
class Measurements {
public:
    template <class F>
    V get(const std::vector<int64_t>& key, F&& measure) {
        {
            std::lock_guard lock(mutex_);
            if (auto it = kept_.find(key); it != kept_.end()) return it->second;
        }
        V v = measure();
        std::lock_guard lock(mutex_);
        return kept_.emplace(key, std::move(v)).first->second;
    }

private:
    std::mutex mutex_;
    std::map<std::vector<int64_t>, V> kept_;
};

// Makes device `index` current for the calling thread while it lives.
class DeviceGuard {
public:
    explicit DeviceGuard(int index);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1, index_;
};

class CudaDevice : public Device {
public:
    explicit CudaDevice(int index);  // DeviceError when there is no such device or no driver
    ~CudaDevice() override;

    std::string kind() const override { return "cuda"; }
    std::string name() const override { return name_; }
    DLPackDevice dlpack_device() const override { return {2, index_}; }
    std::optional<intptr_t> dlpack_stream() const override { return reinterpret_cast<intptr_t>(stream_); }
    std::shared_ptr<Memory> allocate(uint64_t bytes) override;
    void upload(Memory& dst, const void* src, uint64_t bytes) override;
    void download(const Memory& src, void* dst, uint64_t bytes) override;
    std::shared_ptr<Memory> stage(const void* host, uint64_t bytes) override;
    std::vector<std::type_index> operator_types() const override;
    std::unique_ptr<Plan> compile(const CompiledGraph& graph) override;

    int index() const { return index_; }
    int sm_count() const { return sm_count_; }
    int compute_capability_major() const { return compute_major_; }
    cudaStream_t stream() const { return stream_; }
    // Held by whoever enqueues work on stream(): a capture must see no other thread's work.
    std::mutex& stream_mutex() { return stream_mutex_; }
    // cuBLASLt with a handle for this device, loaded on first use; DeviceError "CUBLASLT_NOT_FOUND" if missing.
    const CublasLt& cublaslt();

private:
    void release(void* p, uint64_t rounded);
    void free_cached();  // returns every cached block to CUDA

    int index_;
    std::string name_;
    int sm_count_ = 0, compute_major_ = 0;
    cudaStream_t stream_ = nullptr;
    std::mutex stream_mutex_;
    // Freed blocks by rounded size, reused last-in first-out: cudaMalloc and cudaFree are slow (cudaFree
    // synchronizes the device), and stable addresses let plans replay their recorded CUDA graphs. Blocks are
    // reused in stream order, since every use of the memory is on stream_.
    std::mutex pool_mutex_;
    std::unordered_map<uint64_t, std::vector<void*>> cached_;
    std::mutex blas_mutex_;
    std::unique_ptr<CublasLt> blas_;
};

}  // namespace dml::cuda

namespace dml {
// Adds the cuda executor (available where the driver reports a device) to the registry; called by the runtime.
void register_cuda_executor(ExecutorRegistry& registry);
}  // namespace dml
