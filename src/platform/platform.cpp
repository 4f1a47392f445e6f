#include "platform.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#ifdef _WIN32
#define NOMINMAX
#include <windows.h>
#include <intrin.h>
#include <malloc.h>
#else
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fstream>
#endif

namespace dml::platform {

#ifdef _WIN32

void* open_library(const std::string& path, std::string& error) {
    HMODULE h = LoadLibraryA(path.c_str());
    if (!h) error = path + ": LoadLibrary failed with error " + std::to_string(GetLastError());
    return reinterpret_cast<void*>(h);
}

void* find_symbol(void* library, const char* name) {
    return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(library), name));
}

size_t usable_cpu_count() {
    DWORD_PTR process = 0, system = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &process, &system) && process)
        return size_t(std::popcount(uint64_t(process)));
    return std::max(1u, std::thread::hardware_concurrency());
}

int current_processor() { return -1; }
std::vector<int> thread_processors() { return {}; }
void run_thread_on(const std::vector<int>&, int) {}
void name_thread(const char*) {}

uint64_t physical_memory_bytes() {
    MEMORYSTATUSEX status{};
    status.dwLength = sizeof status;
    return GlobalMemoryStatusEx(&status) ? status.ullTotalPhys : 0;
}

std::string cpu_model_name() {
#if defined(_M_X64) || defined(_M_IX86)
    int regs[4];
    __cpuid(regs, 0x80000000);
    if (unsigned(regs[0]) < 0x80000004u) return "CPU";
    char brand[49] = {};
    for (int i = 0; i < 3; ++i) {
        __cpuid(regs, 0x80000002 + i);
        std::memcpy(brand + 16 * i, regs, 16);
    }
    std::string name(brand);
    size_t first = name.find_first_not_of(' ');
    return first == std::string::npos ? "CPU" : name.substr(first);
#else
    return "CPU";
#endif
}

size_t second_level_cache_bytes() {
    DWORD bytes = 0;
    GetLogicalProcessorInformation(nullptr, &bytes);
    std::vector<SYSTEM_LOGICAL_PROCESSOR_INFORMATION> info(bytes / sizeof(SYSTEM_LOGICAL_PROCESSOR_INFORMATION));
    if (info.empty() || !GetLogicalProcessorInformation(info.data(), &bytes)) return 0;
    for (const auto& i : info)
        if (i.Relationship == RelationCache && i.Cache.Level == 2) return i.Cache.Size;
    return 0;
}

void* aligned_allocate(size_t alignment, size_t bytes) { return _aligned_malloc(bytes ? bytes : 1, alignment); }

void aligned_free(void* p) { _aligned_free(p); }

#else

void* open_library(const std::string& path, std::string& error) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) error = dlerror();
    return h;
}

void* find_symbol(void* library, const char* name) { return dlsym(library, name); }

size_t usable_cpu_count() {
    const size_t allowed = thread_processors().size();  // 0 where the system does not say
    return allowed ? allowed : std::max(1u, std::thread::hardware_concurrency());
}

int current_processor() {
#ifdef __linux__
    return sched_getcpu();
#else
    return -1;
#endif
}

std::vector<int> thread_processors() {
    std::vector<int> processors;
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int p = 0; p < CPU_SETSIZE; ++p)
            if (CPU_ISSET(p, &set)) processors.push_back(p);
#endif
    return processors;
}

void run_thread_on(const std::vector<int>& processors, int except) {
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int p : processors)
        if (p != except && p >= 0 && p < CPU_SETSIZE) CPU_SET(p, &set);
    if (CPU_COUNT(&set) > 0) sched_setaffinity(0, sizeof(set), &set);
#else
    (void)processors, (void)except;
#endif
}

void name_thread(const char* name) {
#ifdef __linux__
    char shortened[16] = {};
    std::strncpy(shortened, name, sizeof shortened - 1);
    pthread_setname_np(pthread_self(), shortened);
#else
    (void)name;
#endif
}

uint64_t physical_memory_bytes() { return uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)); }

size_t second_level_cache_bytes() {
#ifdef _SC_LEVEL2_CACHE_SIZE  // glibc
    const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return bytes > 0 ? size_t(bytes) : 0;
#else
    return 0;
#endif
}

std::string cpu_model_name() {
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);)
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "CPU";
}

void* aligned_allocate(size_t alignment, size_t bytes) {
    // aligned_alloc wants the size a multiple of the alignment.
    size_t rounded = ((bytes ? bytes : 1) + alignment - 1) & ~(alignment - 1);
    void* p = std::aligned_alloc(alignment, rounded);
#ifdef __linux__
    // Where transparent huge pages are "madvise" (this project's machine), a large block not asked for them is
    // faulted in 4 KiB pages on first touch: 4096 faults for a fresh 16 MiB output, paid by the kernel writing
    // it. NumPy asks for huge pages from 4 MiB on; so do we, for the whole pages inside the block.
    constexpr size_t kHugeFrom = size_t(4) << 20, kPage = 4096;
    if (p && rounded >= kHugeFrom) {
        const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~uintptr_t(kPage - 1);
        const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + rounded) & ~uintptr_t(kPage - 1);
        madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // advice only: failure is harmless
    }
#endif
    return p;
}

void aligned_free(void* p) { std::free(p); }

#endif

}  // namespace dml::platform
