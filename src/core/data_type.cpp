#include "data_type.h"

#include <stdexcept>

namespace dml {

size_t element_size(DataType type) {
    switch (type) {
        case DataType::Float64: case DataType::UInt64: case DataType::Int64: return 8;
        case DataType::Float32: case DataType::UInt32: case DataType::Int32: return 4;
        case DataType::Float16: case DataType::UInt16: case DataType::Int16: return 2;
        case DataType::UInt8: case DataType::Int8: return 1;
        default: throw std::invalid_argument("unknown tensor data type");
    }
}

std::string_view data_type_name(DataType type) {
    switch (type) {
        case DataType::Float32: return "FLOAT32";
        case DataType::Float16: return "FLOAT16";
        case DataType::Float64: return "FLOAT64";
        case DataType::UInt32: return "UINT32";
        case DataType::UInt16: return "UINT16";
        case DataType::UInt8: return "UINT8";
        case DataType::Int32: return "INT32";
        case DataType::Int16: return "INT16";
        case DataType::Int8: return "INT8";
        case DataType::UInt64: return "UINT64";
        case DataType::Int64: return "INT64";
        default: return "UNKNOWN";
    }
}

bool is_float(DataType t) { return t == DataType::Float32 || t == DataType::Float16 || t == DataType::Float64; }
bool is_signed_int(DataType t) {
    return t == DataType::Int8 || t == DataType::Int16 || t == DataType::Int32 || t == DataType::Int64;
}
bool is_unsigned_int(DataType t) {
    return t == DataType::UInt8 || t == DataType::UInt16 || t == DataType::UInt32 || t == DataType::UInt64;
}

}  // namespace dml
