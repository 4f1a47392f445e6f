// For kernels that only move elements (copies, gathers, scatters, fills): an element is a word of its size,
// whatever its type.
#pragma once
#include <cstddef>
#include <cstdint>

namespace dml::cuda {

// Calls f.template operator()<U>() with the unsigned word of `element_size` bytes (1, 2, 4 or 8).
template <class F>
void visit_storage(size_t element_size, F&& f) {
    switch (element_size) {
        case 1: return f.template operator()<uint8_t>();
        case 2: return f.template operator()<uint16_t>();
        case 4: return f.template operator()<uint32_t>();
        default: return f.template operator()<uint64_t>();
    }
}

}  // namespace dml::cuda
