// The operating system's services the core and the CPU executor use, in one place: POSIX (Linux, macOS) or Windows
// behind one small interface, so that the rest of the code builds on both.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dml::platform {

// Opens a shared library by path; null on failure, with the system's reason in `error`.
void* open_library(const std::string& path, std::string& error);
// A symbol of a library open_library opened; null when it lacks it.
void* find_symbol(void* library, const char* name);

// The processors this process may run on (a container's or job's limit, not all the machine's); at least 1.
size_t usable_cpu_count();
// Where threads run (Linux; elsewhere the system places them): the processor the calling thread runs on now, or -1;
// the processors it may run on (empty off Linux); and a restriction of it to `processors` but `except` (no change
// where none is left or the system refuses).
int current_processor();
std::vector<int> thread_processors();
void run_thread_on(const std::vector<int>& processors, int except);
// Names the calling thread, as `top -H` and debuggers show it (Linux: the first 15 characters).
void name_thread(const char* name);
// The machine's physical memory in bytes.
uint64_t physical_memory_bytes();
// The second-level cache of one core in bytes; 0 when the system does not say.
size_t second_level_cache_bytes();
// What the processor calls itself (e.g. "AMD EPYC 9654 96-Core Processor"); "CPU" when it cannot be read.
std::string cpu_model_name();

// `bytes` (at least 1) aligned to `alignment`, a power of two; null when out of memory. Freed by aligned_free.
// On Linux, blocks of 4 MiB or more are advised to use transparent huge pages (as NumPy does for its arrays).
void* aligned_allocate(size_t alignment, size_t bytes);
void aligned_free(void* p);

}  // namespace dml::platform
