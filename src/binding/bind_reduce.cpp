// reduce and its ReduceFunction enum.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/reduce.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

void bind_reduce(nb::module_& m) {
    nb::enum_<ReduceFunction>(m, "ReduceFunction", "DML_REDUCE_FUNCTION.")
        .value("ARGMAX", ReduceFunction::ArgMax)
        .value("ARGMIN", ReduceFunction::ArgMin)
        .value("AVERAGE", ReduceFunction::Average)
        .value("L1", ReduceFunction::L1)
        .value("L2", ReduceFunction::L2)
        .value("LOG_SUM", ReduceFunction::LogSum)
        .value("LOG_SUM_EXP", ReduceFunction::LogSumExp)
        .value("MAX", ReduceFunction::Max)
        .value("MIN", ReduceFunction::Min)
        .value("MULTIPLY", ReduceFunction::Multiply)
        .value("SUM", ReduceFunction::Sum)
        .value("SUM_SQUARE", ReduceFunction::SumSquare);
    m.def("reduce",
          [](const Expression& x, ReduceFunction f, std::optional<std::vector<uint32_t>> axes, nb::handle output_dtype) {
              DataType out = output_dtype.is_none() ? DataType::UInt32 : to_data_type(output_dtype);
              return reduce(x, f, axes.value_or(std::vector<uint32_t>{}), out);
          },
          "x"_a, nb::kw_only(), "function"_a, "axes"_a = nb::none(), "output_dtype"_a = nb::none(),
          "Reduces `axes` (default: all) to size 1; ARGMAX/ARGMIN give `output_dtype` indices (UINT32 by default).");
}

}  // namespace dml::binding
