// Element types, numbered as DirectML's DML_TENSOR_DATA_TYPE so the DirectML executor can pass them through.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "half.h"

namespace dml {

enum class DataType : uint32_t {
    Unknown = 0,
    Float32 = 1,
    Float16 = 2,
    UInt32 = 3,
    UInt16 = 4,
    UInt8 = 5,
    Int32 = 6,
    Int16 = 7,
    Int8 = 8,
    Float64 = 9,
    UInt64 = 10,
    Int64 = 11,
};

size_t element_size(DataType type);
std::string_view data_type_name(DataType type);  // "FLOAT32", as DirectML spells it
bool is_float(DataType type);
bool is_signed_int(DataType type);
bool is_unsigned_int(DataType type);
inline bool is_integer(DataType type) { return is_signed_int(type) || is_unsigned_int(type); }

// Calls f.template operator()<T>() with the C++ type stored for `type`.
template <class F>
decltype(auto) visit_data_type(DataType type, F&& f) {
    switch (type) {
        case DataType::Float32: return f.template operator()<float>();
        case DataType::Float16: return f.template operator()<half>();
        case DataType::Float64: return f.template operator()<double>();
        case DataType::UInt32: return f.template operator()<uint32_t>();
        case DataType::UInt16: return f.template operator()<uint16_t>();
        case DataType::UInt8: return f.template operator()<uint8_t>();
        case DataType::Int32: return f.template operator()<int32_t>();
        case DataType::Int16: return f.template operator()<int16_t>();
        case DataType::Int8: return f.template operator()<int8_t>();
        case DataType::UInt64: return f.template operator()<uint64_t>();
        case DataType::Int64: return f.template operator()<int64_t>();
        default: break;
    }
    throw std::invalid_argument("unknown tensor data type");
}

// The arithmetic type kernels compute in: float16 is widened to float, everything else is itself.
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<half> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

}  // namespace dml
