// slice, join and split.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/data_movement.h"
#include "module.h"

namespace dml::binding {

void bind_data_movement(nb::module_& m) {
    m.def("slice", &slice, "x"_a, nb::kw_only(), "input_window_offsets"_a, "input_window_sizes"_a,
          "input_window_strides"_a,
          "The window of x at the offsets and sizes, stepping by the (possibly negative) strides "
          "(DML_OPERATOR_SLICE1).");
    m.def("join", &join, "inputs"_a, nb::kw_only(), "axis"_a, "The inputs concatenated along `axis`.");
    m.def("split", &split, "x"_a, nb::kw_only(), "axis"_a, "output_axis_sizes"_a,
          "x cut along `axis` into pieces of the given sizes.");
}

}  // namespace dml::binding
