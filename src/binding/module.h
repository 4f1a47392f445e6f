// Shared declarations of the binding layer: one bind_* function per file.
#pragma once
#include <nanobind/nanobind.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../core/errors.h"
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

// The results of a multi-output operator: a namedtuple of Expressions, None for an output not asked for.
// DML_OUTPUTS(MaxPoolingOutputs) declares the C++ type that names it in signatures (and so in the stubs).
#define DML_OUTPUTS(Type) \
    struct Type : nb::object { NB_OBJECT_DEFAULT(Type, nb::object, #Type, PyTuple_Check) }

// outputs_type, with each field a property typed for the stubs (Expression, or Expression | None for the fields in
// `optional`) and the module's own name, so that the stub declares the class instead of importing it.
nb::handle typed_outputs_type(nb::module_& m, const char* name, const char* fields,
                              std::initializer_list<std::string_view> optional);

// Makes the namedtuple type of T (a DML_OUTPUTS type) and its results: outputs(values, indices).
template <class T>
struct Outputs {
    nb::handle type;
    Outputs(nb::module_& m, const char* fields, std::initializer_list<std::string_view> optional = {})
        : type(typed_outputs_type(m, T::Name.text, fields, optional)) {}
    template <class... A>
    T operator()(A&&... fields) const {
        return nb::steal<T>(type(std::forward<A>(fields)...).release());
    }
};
// A DLPack-capable view of the buffer's memory that keeps it alive.
nb::object dlpack_view(const Buffer& buffer);

// A refusal rewritten to lead with the Python call the user wrote: "max(): operand shapes differ ... 
// (DML_OPERATOR_ELEMENT_WISE_MAX)" for a builder's "DML_OPERATOR_ELEMENT_WISE_MAX: operand shapes differ ...".
std::string call_error(std::string_view call, std::string_view message);

namespace detail {
template <class F>
struct signature : signature<decltype(&std::remove_reference_t<F>::operator())> {};
template <class R, class... A>
struct signature<R (*)(A...)> {
    using type = R(A...);
};
template <class C, class R, class... A>
struct signature<R (C::*)(A...) const> {
    using type = R(A...);
};
template <class R, class... A, class F>
auto leading_with_call(std::string call, F f, std::type_identity<R(A...)>) {
    return [call = std::move(call), f = std::move(f)](A... args) -> R {
        try {
            return f(std::forward<A>(args)...);
        } catch (const ValueError& e) {
            throw ValueError(call_error(call, e.what()));
        } catch (const TypeError& e) {
            throw TypeError(call_error(call, e.what()));
        }
    };
}
}  // namespace detail

// `f` with the signature it has, its ValueError / TypeError led by `call` (call_error).
template <class F>
auto leading_with_call(std::string call, F f) {
    return detail::leading_with_call(std::move(call), std::move(f), std::type_identity<typename detail::signature<F>::type>{});
}

// m.def of an operator function whose refusals lead with "name()".
template <class F, class... Extra>
void def(nb::module_& m, const char* name, F f, const Extra&... extra) {
    m.def(name, leading_with_call(std::string(name) + "()", std::move(f)), extra...);
}

}  // namespace dml::binding
