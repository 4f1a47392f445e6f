// Indexing: gather, gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot.
#include "../core/ops/indexing.h"
#include "module.h"

namespace dml::binding {

void bind_indexing(nb::module_&) {}

}  // namespace dml::binding
