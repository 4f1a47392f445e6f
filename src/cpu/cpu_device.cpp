#include "cpu_device.h"

#include <cstring>

#include "../core/errors.h"
#include "../platform/platform.h"
#include "blas.h"

namespace dml::cpu {

std::string CpuDevice::name() const { return platform::cpu_model_name(); }

std::shared_ptr<Memory> CpuDevice::allocate(uint64_t bytes) {
    // The CPU's device memory is the machine's: a block larger than all of it is refused up front, not left to
    // an overcommitting allocator (whose pages would fail later, at first touch).
    static const uint64_t physical = platform::physical_memory_bytes();
    if (bytes > physical) throw OutOfDeviceMemory("ENOMEM", bytes, "a CPU allocation");
    void* p = platform::aligned_allocate(64, bytes);  // 64 bytes: vector loads
    if (!p) throw OutOfDeviceMemory("ENOMEM", bytes, "a CPU allocation");
    return std::make_shared<Memory>(shared_from_this(), p, bytes, [](void* q) { platform::aligned_free(q); });
}

void CpuDevice::upload(Memory& dst, const void* src, uint64_t bytes) { std::memcpy(dst.data, src, bytes); }

void CpuDevice::download(const Memory& src, void* dst, uint64_t bytes) { std::memcpy(dst, src.data, bytes); }

void CpuDevice::set_thread_count(uint32_t threads) {
    if (threads < 1 || threads > 1024) throw ValueError("threads must be between 1 and 1024, got " + std::to_string(threads));
    pool_ = std::make_shared<ThreadPool>(threads);
}

std::shared_ptr<Memory> CpuDevice::stage(const void* host, uint64_t bytes) {
    // The CPU reads host memory where it lies: borrow it for the dispatch.
    return std::make_shared<Memory>(shared_from_this(), const_cast<void*>(host), bytes, nullptr);
}

}  // namespace dml::cpu

namespace dml {

void register_cpu_executor(ExecutorRegistry& registry) {
    registry.add({"cpu", 10, [] { return std::optional<DeviceError>(); }, [](int index) -> std::shared_ptr<Device> {
                      if (index != 0)
                          throw ValueError("the cpu executor has one device, index 0; got " + std::to_string(index));
                      blas::load();
                      default_thread_count();  // a bad DIRECTML_NUM_THREADS fails here, not at the first dispatch
                      return std::make_shared<cpu::CpuDevice>();
                  }});
}

}  // namespace dml
