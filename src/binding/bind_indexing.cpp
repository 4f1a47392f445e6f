// Indexing: gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot.
#include <nanobind/nanobind.h>

#include "../core/ops/indexing.h"
#include "module.h"

namespace dml::binding {

// Appended to each docstring (literal concatenation: nanobind keeps the pointer).
#define DML_INDICES_NOTE                                                                                        \
    " Indices are INT32, UINT32, INT64 or UINT64; negative ones count from the end; an index still out of "    \
    "range reads 0 (writes nothing for scatters)."

void bind_indexing(nb::module_& m) {
    def(m, "gather", &gather, "input"_a, "indices"_a, nb::kw_only(), "axis"_a, "index_dimensions"_a,
          "input's slices on `axis` picked by the trailing `index_dimensions` of indices "
          "(DML_OPERATOR_GATHER)." DML_INDICES_NOTE);
    def(m, "gather_elements", &gather_elements, "input"_a, "indices"_a, nb::kw_only(), "axis"_a,
          "input's elements picked on `axis` by indices, element for element "
          "(DML_OPERATOR_GATHER_ELEMENTS)." DML_INDICES_NOTE);
    def(m, "gather_nd", &gather_nd, "input"_a, "indices"_a, nb::kw_only(), "input_dimension_count"_a,
          "indices_dimension_count"_a, "batch_dimension_count"_a = 0u,
          "input's blocks addressed by the index tuples in the last dimension of indices, per batch "
          "(DML_OPERATOR_GATHER_ND1)." DML_INDICES_NOTE);
    def(m, "scatter_elements", &scatter_elements, "input"_a, "indices"_a, "updates"_a, nb::kw_only(), "axis"_a,
          "input with updates written on `axis` where indices say; a later update wins "
          "(DML_OPERATOR_SCATTER_ELEMENTS)." DML_INDICES_NOTE);
    def(m, "scatter_nd", &scatter_nd, "input"_a, "indices"_a, "updates"_a, nb::kw_only(), "input_dimension_count"_a,
          "indices_dimension_count"_a,
          "input with blocks of updates written where the index tuples say; a later tuple wins "
          "(DML_OPERATOR_SCATTER_ND)." DML_INDICES_NOTE);
    def(m, "one_hot", &one_hot, "indices"_a, "values"_a, nb::kw_only(), "output_length"_a, "axis"_a,
          "indices (size 1 on `axis`) spread to output_length along `axis`: values' on value (its "
          "second element) at the index, its off value (first element) elsewhere "
          "(DML_OPERATOR_ONE_HOT)." DML_INDICES_NOTE);
}

#undef DML_INDICES_NOTE

}  // namespace dml::binding
