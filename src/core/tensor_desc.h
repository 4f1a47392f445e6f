// A DirectML buffer tensor description: element type, sizes (1 to 8 dimensions) and optional element strides.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data_type.h"

namespace dml {

constexpr size_t kMaxDimensions = 8;

using Sizes = std::vector<uint32_t>;
using Strides = std::vector<uint32_t>;  // DirectML strides are unsigned element counts; 0 broadcasts

struct TensorDesc {
    DataType data_type = DataType::Unknown;
    Sizes sizes;
    std::optional<Strides> strides;  // nullopt: packed, row-major

    TensorDesc() = default;
    // Validates: known type, 1..8 dimensions, no zero size, strides of matching rank.
    TensorDesc(DataType type, Sizes sizes, std::optional<Strides> strides = std::nullopt);

    size_t rank() const { return sizes.size(); }
    uint64_t element_count() const;
    // The strides actually used to address elements (packed strides when none are given).
    Strides effective_strides() const;
    // DirectML's rule: one past the last addressed element, in bytes, rounded up to 4.
    uint64_t total_tensor_size_in_bytes() const;
    // Bytes from the first to one past the last addressed element (no rounding): what a kernel may touch.
    uint64_t extent_in_bytes() const;
    bool is_packed() const;

    // The same description with its sizes and strides padded with leading 1s (stride 0) to `rank` dimensions.
    TensorDesc with_rank(size_t rank) const;
    std::string to_string() const;  // "FLOAT32[1, 2, 3]"

    bool operator==(const TensorDesc&) const;
};

// TensorDesc(type, sizes, strides), its errors prefixed with `who` (the call that asked for it).
TensorDesc make_tensor_desc(std::string_view who, DataType type, Sizes sizes,
                            std::optional<Strides> strides = std::nullopt);

Strides packed_strides(const Sizes& sizes);
std::string sizes_to_string(const std::vector<uint32_t>& sizes);

}  // namespace dml
