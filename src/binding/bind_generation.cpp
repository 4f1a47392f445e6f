// Generation and quantization: fill_value_*, random_generator, quantize/dequantize (linear and block-wise),
// constant_data.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <limits>

#include "../core/errors.h"
#include "../core/ops/generation.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace py {  // the Python result types, named as the core's result structs are
DML_OUTPUTS(RandomGeneratorOutputs);
}  // namespace py

namespace {

// A Python number as a DML_SCALAR_UNION of `type`: any real number for a float type, an int in range for an
// integer type. An unsigned type also takes negative ints down to -2^(bits-1), stored in two's complement as C's
// conversion would store them: DirectML's own FILL_VALUE_SEQUENCE example steps a UINT8 sequence by -2.
ScalarUnion to_scalar(DataType type, nb::handle value, const char* what) {
    return visit_data_type(type, [&]<class T>() {
        using C = compute_t<T>;
        if constexpr (std::is_floating_point_v<C>) {
            double v = PyFloat_AsDouble(value.ptr());
            if (v == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                throw TypeError(std::string(what) + " must be a real number");
            }
            return ScalarUnion::of<T>(T(C(v)));
        } else {
            nb::object index = nb::steal(PyNumber_Index(value.ptr()));
            if (!index.is_valid()) {
                PyErr_Clear();
                throw TypeError(std::string(what) + " must be an int for " + std::string(data_type_name(type)));
            }
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
            bool in_range;
            if (overflow == 0) {
                using S = std::make_signed_t<T>;
                in_range = v >= int64_t(std::numeric_limits<S>::min()) &&
                           (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max()));
            } else {
                // Above INT64_MAX: only a UINT64 can hold it.
                unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(index.ptr()) : 0;
                in_range = overflow > 0 && !PyErr_Occurred() && std::is_same_v<T, uint64_t>;
                PyErr_Clear();
                if (in_range) return ScalarUnion::of<T>(T(u));
            }
            if (!in_range)
                throw ValueError(std::string(what) + " " + nb::str(value).c_str() + " is out of range for " +
                                 std::string(data_type_name(type)));
            return ScalarUnion::of<T>(T(v));
        }
    });
}

std::optional<DataType> optional_type(nb::handle dtype) {
    return dtype.is_none() ? std::nullopt : std::optional<DataType>(to_data_type(dtype));
}

Expression constant_data_from(const std::shared_ptr<Graph>& graph, nb::handle data, nb::handle dtype,
                              std::optional<std::vector<int64_t>> sizes) {
    HostValue host = as_host_value(data, "constant_data");
    DataType type = dtype.is_none() ? to_data_type(nb::cast(host.array).attr("dtype")) : to_data_type(dtype);
    Sizes shape = sizes ? to_sizes(*sizes, "constant_data sizes") : tensor_shape_of(host.array, "constant_data");
    TensorDesc desc(type, shape);
    // Converted under the cast rules on the host, then recorded in the node.
    HostBytes bytes = array_to_bytes(host, desc, "constant_data");
    return constant_data(graph, desc, std::vector<std::byte>(bytes.data, bytes.data + desc.extent_in_bytes()));
}

}  // namespace

void bind_generation(nb::module_& m) {
    nb::enum_<RandomGeneratorType>(m, "RandomGeneratorType", "DML_RANDOM_GENERATOR_TYPE.")
        .value("PHILOX_4X32_10", RandomGeneratorType::Philox4x32_10);
    Outputs<py::RandomGeneratorOutputs> random_generator_outputs(m, "values state", {"state"});

    def(m, "fill_value_constant",
          [](const std::shared_ptr<Graph>& graph, std::vector<int64_t> sizes, nb::handle value, nb::handle dtype) {
              DataType type = to_data_type(dtype);
              return fill_value_constant(graph, to_sizes(sizes, "sizes"), type, to_scalar(type, value, "value"));
          },
          "graph"_a, nb::kw_only(), "sizes"_a, "value"_a, "dtype"_a = nb::cast(DataType::Float32),
          "A tensor of `sizes` and `dtype` (float32 by default) filled with `value` "
          "(DML_OPERATOR_FILL_VALUE_CONSTANT).");
    def(m, "fill_value_sequence",
          [](const std::shared_ptr<Graph>& graph, std::vector<int64_t> sizes, nb::handle value_start,
             nb::handle value_delta, nb::handle dtype) {
              DataType type = to_data_type(dtype);
              return fill_value_sequence(graph, to_sizes(sizes, "sizes"), type, to_scalar(type, value_start, "value_start"),
                                         to_scalar(type, value_delta, "value_delta"));
          },
          "graph"_a, nb::kw_only(), "sizes"_a, "value_start"_a = 0, "value_delta"_a = 1,
          "dtype"_a = nb::cast(DataType::Float32),
          "Element i (row-major) is value_start + i * value_delta, of `dtype` (float32 by default) "
          "(DML_OPERATOR_FILL_VALUE_SEQUENCE).");
    def(m, "random_generator",
          [random_generator_outputs](const Expression& state, std::vector<int64_t> output_sizes, bool output_state,
                                     RandomGeneratorType type) {
              auto outs = random_generator(state, to_sizes(output_sizes, "output_sizes"),
                                           output_state, type);
              return random_generator_outputs(outs[0], output_state ? nb::cast(outs[1]) : nb::none());
          },
          "input_state"_a, nb::kw_only(), "output_sizes"_a, "output_state"_a = true,
          "type"_a = RandomGeneratorType::Philox4x32_10,
          "UINT32 random bits from a {1,1,1,6} Philox state; returns (values, state), state advanced by "
          "ceil(count / 4) or None (DML_OPERATOR_RANDOM_GENERATOR).");
    def(m, "quantize_linear",
          [](const Expression& x, const Expression& scale, std::optional<Expression> zero_point, nb::handle output_dtype) {
              return quantize_linear(x, scale, zero_point, optional_type(output_dtype));
          },
          "input"_a, "scale"_a, "zero_point"_a = nb::none(), nb::kw_only(), "output_dtype"_a = nb::none(),
          "clamp(round(input / scale) + zero_point) as INT8 / UINT8 (the zero point's type; UINT8 without one) "
          "(DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR).");
    def(m, "dequantize_linear", &dequantize_linear, "input"_a, "scale"_a, "zero_point"_a = nb::none(),
          "(input - zero_point) * scale in the scale's type (DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR).");
    def(m, "quantize",
          [](const Expression& x, const Expression& scale, std::optional<Expression> zero_point, nb::handle output_dtype) {
              return quantize(x, scale, zero_point, optional_type(output_dtype));
          },
          "input"_a, "scale"_a, "zero_point"_a = nb::none(), nb::kw_only(), "output_dtype"_a = nb::none(),
          "Linear quantization with per-tensor, per-axis or block-wise parameters (DML_OPERATOR_QUANTIZE).");
    def(m, "dequantize", &dequantize, "input"_a, "scale"_a, "zero_point"_a = nb::none(),
          "Linear dequantization with per-tensor, per-axis or block-wise parameters (DML_OPERATOR_DEQUANTIZE).");
    def(m, "constant_data", &constant_data_from, "graph"_a, "data"_a, "dtype"_a = nb::none(), nb::kw_only(),
          "sizes"_a = nb::none(),
          "A node holding a copy of `data` (converted under the cast rules) in the graph itself.");
}

}  // namespace dml::binding
