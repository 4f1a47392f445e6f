// Memory planning shared by the executors' plans: every intermediate value and kernel workspace of a dispatch
// gets an offset in one arena, reusing the ranges of values whose last reader has run.
#pragma once
#include <algorithm>
#include <cstdint>
#include <map>

namespace dml {

// Places blocks in one address range, reusing freed ranges (first fit); tracks the peak. Every block is rounded
// up to `alignment` bytes, which keeps it as aligned as a buffer of its own.
class ArenaPlanner {
public:
    explicit ArenaPlanner(uint64_t alignment) : alignment_(alignment) {}

    uint64_t allocate(uint64_t bytes) {
        bytes = (std::max<uint64_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_;
        uint64_t at = 0;
        for (auto& [off, size] : live_) {
            if (off >= at + bytes) break;
            at = std::max(at, off + size);
        }
        live_.emplace(at, bytes);
        peak_ = std::max(peak_, at + bytes);
        return at;
    }
    void release(uint64_t offset) { live_.erase(offset); }
    uint64_t peak() const { return peak_; }

private:
    uint64_t alignment_;
    std::map<uint64_t, uint64_t> live_;  // offset -> size, ordered by offset
    uint64_t peak_ = 0;
};

// Where a value lives during a dispatch.
struct Location {
    enum class Kind { Input, Output, Arena } kind;
    uint64_t index;  // input slot, output index, or arena offset
};

}  // namespace dml
