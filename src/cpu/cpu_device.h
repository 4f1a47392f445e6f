// The CPU executor: host memory, our kernels (kernels/), OpenBLAS under GEMM and convolution, run by a pool of
// threads (default_thread_pool(), or one of the device's own when given a thread count).
#pragma once
#include "../executor/registry.h"
#include "thread_pool.h"

namespace dml::cpu {

class CpuDevice : public Device {
public:
    std::string kind() const override { return "cpu"; }
    std::string name() const override;
    DLPackDevice dlpack_device() const override { return {1, 0}; }
    std::shared_ptr<Memory> allocate(uint64_t bytes) override;
    void upload(Memory& dst, const void* src, uint64_t bytes) override;
    void download(const Memory& src, void* dst, uint64_t bytes) override;
    std::shared_ptr<Memory> stage(const void* host, uint64_t bytes) override;
    std::vector<std::type_index> operator_types() const override;
    std::unique_ptr<Plan> compile(const CompiledGraph& graph) override;
    void set_thread_count(uint32_t threads) override;
    ThreadPool& thread_pool() const { return pool_ ? *pool_ : *default_thread_pool(); }

private:
    // the device's own (set_thread_count); null for the shared one, which starts only when a device uses it
    std::shared_ptr<ThreadPool> pool_;
};

}  // namespace dml::cpu

namespace dml {
// Adds the cpu executor (always available, one device) to the registry; called by the runtime.
void register_cpu_executor(ExecutorRegistry& registry);
}  // namespace dml
