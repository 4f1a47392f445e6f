#include "cpu_device.h"

#include <cstdlib>
#include <cstring>
#include <fstream>

#include <unistd.h>

#include "../core/errors.h"
#include "blas.h"

namespace dml::cpu {

std::string CpuDevice::name() const {
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);)
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "CPU";
}

std::shared_ptr<Memory> CpuDevice::allocate(uint64_t bytes) {
    // The CPU's device memory is the machine's: a block larger than all of it is refused up front, not left to
    // an overcommitting allocator (whose pages would fail later, at first touch).
    static const uint64_t physical = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    if (bytes > physical) throw OutOfDeviceMemory("ENOMEM", bytes, "a CPU allocation");
    // 64-byte alignment for vector loads; size rounded up as aligned_alloc requires.
    uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 63) & ~uint64_t(63);
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw OutOfDeviceMemory("ENOMEM", bytes, "a CPU allocation");
    return std::make_shared<Memory>(shared_from_this(), p, bytes, [](void* q) { std::free(q); });
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
                      return std::make_shared<cpu::CpuDevice>();
                  }});
}

}  // namespace dml
