// Shared declarations of the binding layer: one bind_* function per file.
#pragma once
#include <nanobind/nanobind.h>

#include <optional>
#include <string>

#include "../core/graph.h"
#include "../executor/device.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace dml::binding {

void bind_core(nb::module_& m);
void bind_expression_operators(nb::class_<Expression>& cls);
void bind_elementwise(nb::module_& m);
void bind_activation(nb::module_& m);
void bind_gemm_convolution(nb::module_& m);
void bind_reduce(nb::module_& m);
void bind_data_movement(nb::module_& m);
void bind_pooling(nb::module_& m);
void bind_normalization(nb::module_& m);
void bind_indexing(nb::module_& m);
void bind_resampling(nb::module_& m);
void bind_generation(nb::module_& m);
void bind_recurrent(nb::module_& m);
void bind_attention(nb::module_& m);

// ValueError unless `buffer` is on `device`, of desc's type and element count. `who` prefixes the message.
void check_buffer_fits(const Buffer& buffer, const TensorDesc& desc, const Device& device, const std::string& who);
nb::object copy_to_numpy(const Buffer& buffer);
// An optional output of a multi-output operator: the Expression, or None where it was not asked for.
inline nb::object or_none(const std::optional<Expression>& e) { return e ? nb::cast(*e) : nb::none(); }

// The namedtuple type of a multi-output operator's results (`fields` space-separated), added to the module as
// `name` and held for the life of the process: a static nb::object would be released after the interpreter.
nb::handle outputs_type(nb::module_& m, const char* name, const char* fields);
// A DLPack-capable view of the buffer's memory that keeps it alive.
nb::object dlpack_view(const Buffer& buffer);

}  // namespace dml::binding
