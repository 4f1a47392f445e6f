// Validation helpers shared by the operator builders: each throws a ValueError naming the operator and argument.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "../graph.h"

namespace dml {

// A packed description with x's type and sizes (most operators' output).
TensorDesc packed_like(const Expression& x, std::optional<DataType> type = std::nullopt);
void require_types(std::string_view op, std::string_view arg, const Expression& x,
                   std::initializer_list<DataType> allowed);
void require_rank(std::string_view op, std::string_view arg, const Expression& x, size_t min_rank, size_t max_rank);
// Both operands have the same sizes and type: nothing broadcasts implicitly.
void require_same_shape_and_type(std::string_view op, const Expression& a, const Expression& b);
// Sorted, unique, each < rank.
std::vector<uint32_t> normalize_axes(std::string_view op, std::vector<uint32_t> axes, size_t rank);
// A list argument that must hold exactly `count` entries, or be empty (then `fill` of length count).
std::vector<uint32_t> spatial_list(std::string_view op, std::string_view arg, const std::vector<uint32_t>& v,
                                   size_t count, uint32_t fill);

extern const std::initializer_list<DataType> kFloatTypes;
extern const std::initializer_list<DataType> kAllTypes;

}  // namespace dml
