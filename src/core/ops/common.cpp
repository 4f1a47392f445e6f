#include "common.h"

#include <algorithm>

#include "../errors.h"

namespace dml {

const std::initializer_list<DataType> kFloatTypes = {DataType::Float32, DataType::Float16, DataType::Float64};
const std::initializer_list<DataType> kAllTypes = {
    DataType::Float32, DataType::Float16, DataType::Float64, DataType::UInt32, DataType::UInt16, DataType::UInt8,
    DataType::Int32,   DataType::Int16,   DataType::Int8,    DataType::UInt64, DataType::Int64};

TensorDesc packed_like(const Expression& x, std::optional<DataType> type) {
    return TensorDesc(type ? *type : x.data_type(), x.sizes());
}

void require_types(std::string_view op, std::string_view arg, const Expression& x,
                   std::initializer_list<DataType> allowed) {
    if (std::find(allowed.begin(), allowed.end(), x.data_type()) != allowed.end()) return;
    std::string names;
    for (DataType t : allowed) names += (names.empty() ? "" : ", ") + std::string(data_type_name(t));
    throw ValueError(std::string(op) + ": " + std::string(arg) + " has type " +
                     std::string(data_type_name(x.data_type())) + "; allowed: " + names);
}

void require_rank(std::string_view op, std::string_view arg, const Expression& x, size_t min_rank, size_t max_rank) {
    size_t r = x.desc.rank();
    if (r < min_rank || r > max_rank)
        throw ValueError(std::string(op) + ": " + std::string(arg) + " must have " + std::to_string(min_rank) +
                         (min_rank == max_rank ? "" : " to " + std::to_string(max_rank)) + " dimensions, got " +
                         sizes_to_string(x.sizes()));
}

void require_same_shape_and_type(std::string_view op, const Expression& a, const Expression& b) {
    if (a.sizes() != b.sizes())
        throw ValueError(std::string(op) + ": operand shapes differ: " + sizes_to_string(a.sizes()) + " and " +
                         sizes_to_string(b.sizes()) + " (use dml.broadcast to broadcast explicitly)");
    if (a.data_type() != b.data_type())
        throw ValueError(std::string(op) + ": the element types differ: " +
                         std::string(data_type_name(a.data_type())) + " and " +
                         std::string(data_type_name(b.data_type())) + " (use dml.cast)");
}

std::vector<uint32_t> normalize_axes(std::string_view op, std::vector<uint32_t> axes, size_t rank) {
    for (uint32_t a : axes)
        if (a >= rank)
            throw ValueError(std::string(op) + ": axis " + std::to_string(a) + " is out of range for a " +
                             std::to_string(rank) + "-D tensor");
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        throw ValueError(std::string(op) + ": axes " + sizes_to_string(axes) + " repeat an axis");
    return axes;
}

std::vector<uint32_t> spatial_list(std::string_view op, std::string_view arg, const std::vector<uint32_t>& v,
                                   size_t count, uint32_t fill) {
    if (v.empty()) return std::vector<uint32_t>(count, fill);
    if (v.size() != count)
        throw ValueError(std::string(op) + ": " + std::string(arg) + " needs " + std::to_string(count) +
                         " values, got " + sizes_to_string(v));
    return v;
}

}  // namespace dml
