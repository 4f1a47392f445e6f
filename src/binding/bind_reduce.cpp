// reduce, the cumulative scans, top_k and non_zero_coordinates, with the ReduceFunction and AxisDirection enums.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/reduce.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace py {  // the Python result types, named as the core's result structs are
DML_OUTPUTS(TopKOutputs);
DML_OUTPUTS(NonZeroCoordinatesOutputs);
}  // namespace py

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
    nb::enum_<AxisDirection>(m, "AxisDirection", "DML_AXIS_DIRECTION.")
        .value("INCREASING", AxisDirection::Increasing)
        .value("DECREASING", AxisDirection::Decreasing);

    Outputs<py::TopKOutputs> top_k_outputs(m, "values indices");
    Outputs<py::NonZeroCoordinatesOutputs> non_zero_outputs(m, "count coordinates");

    def(m, "reduce",
          [](const Expression& x, ReduceFunction f, std::optional<std::vector<uint32_t>> axes,
             nb::handle output_dtype) {
              DataType out = output_dtype.is_none() ? DataType::UInt32 : to_data_type(output_dtype);
              return reduce(x, f, axes.value_or(std::vector<uint32_t>{}), out);
          },
          "x"_a, nb::kw_only(), "function"_a, "axes"_a = nb::none(), "output_dtype"_a = nb::none(),
          "Reduces `axes` (default: all) to size 1 (DML_OPERATOR_REDUCE); ARGMAX/ARGMIN give the first extreme's "
          "row-major index within the reduced axes as `output_dtype` (UINT32 by default).");
    def(m, "cumulative_summation", &cumulative_summation, "x"_a, nb::kw_only(), "axis"_a,
        "axis_direction"_a = AxisDirection::Increasing, "has_exclusive_sum"_a = false,
        "Running sums along `axis`, forward and inclusive by default (DML_OPERATOR_CUMULATIVE_SUMMATION).");
    def(m, "cumulative_product", &cumulative_product, "x"_a, nb::kw_only(), "axis"_a,
        "axis_direction"_a = AxisDirection::Increasing, "has_exclusive_product"_a = false,
        "Running products along `axis`, forward and inclusive by default (DML_OPERATOR_CUMULATIVE_PRODUCT).");
    def(m, "top_k",
          [top_k_outputs](const Expression& x, uint32_t axis, uint32_t k, AxisDirection direction,
                          nb::handle output_dtype) {
              DataType index_type = to_data_type(output_dtype);
              TopKOutputs r = top_k(x, axis, k, direction, index_type);
              return top_k_outputs(nb::cast(r.values), nb::cast(r.indices));
          },
          "x"_a, nb::kw_only(), "axis"_a, "k"_a, "axis_direction"_a = AxisDirection::Decreasing,
          "output_dtype"_a = nb::cast(DataType::UInt32),
          "The k largest (DECREASING, the default) or smallest (INCREASING) elements along `axis`, sorted, ties by "
          "ascending index (DML_OPERATOR_TOP_K1): TopKOutputs(values, indices); indices are `output_dtype`, UINT32 "
          "(default) or UINT64.");
    def(m, "non_zero_coordinates",
          [non_zero_outputs](const Expression& x) {
              NonZeroCoordinatesOutputs r = non_zero_coordinates(x);
              return non_zero_outputs(nb::cast(r.count), nb::cast(r.coordinates));
          },
          "x"_a,
          "Coordinates of the non-zero elements in ascending element order (DML_OPERATOR_NONZERO_COORDINATES): "
          "NonZeroCoordinatesOutputs(count UINT32[1], coordinates UINT32[elements, rank]); rows past count are 0.");
}

}  // namespace dml::binding
