// The operator table (operators.def) as data: each OperatorDesc type with its family, DirectML's operator type and
// the Python builders that make it. Executors check their kernel registrations against it; the binding lists it.
#pragma once
#include <string_view>
#include <typeindex>
#include <vector>

namespace dml {

struct OperatorEntry {
    std::type_index type;
    std::string_view desc;      // the C++ type's name, e.g. "GemmDesc"
    std::string_view family;    // e.g. "gemm"
    std::string_view directml;  // e.g. "DML_OPERATOR_GEMM" (space-separated where the desc stands for several)
    std::string_view builders;  // the Python functions, space-separated
};

const std::vector<OperatorEntry>& operator_table();
// The entry of an OperatorDesc type; null for a type the table lacks.
const OperatorEntry* find_operator(std::type_index type);

}  // namespace dml
