// gemm and convolution, with their enums.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/convolution.h"
#include "../core/ops/gemm.h"
#include "module.h"

namespace dml::binding {

void bind_gemm_convolution(nb::module_& m) {
    nb::enum_<MatrixTransform>(m, "MatrixTransform", "DML_MATRIX_TRANSFORM.")
        .value("NONE", MatrixTransform::None)
        .value("TRANSPOSE", MatrixTransform::Transpose);
    nb::enum_<ConvolutionMode>(m, "ConvolutionMode", "DML_CONVOLUTION_MODE.")
        .value("CONVOLUTION", ConvolutionMode::Convolution)
        .value("CROSS_CORRELATION", ConvolutionMode::CrossCorrelation);
    nb::enum_<ConvolutionDirection>(m, "ConvolutionDirection", "DML_CONVOLUTION_DIRECTION.")
        .value("FORWARD", ConvolutionDirection::Forward)
        .value("BACKWARD", ConvolutionDirection::Backward);

    m.def("gemm", &gemm, "a"_a, "b"_a, "c"_a = nb::none(), nb::kw_only(), "trans_a"_a = MatrixTransform::None,
          "trans_b"_a = MatrixTransform::None, "alpha"_a = 1.0f, "beta"_a = 1.0f,
          "fused_activation"_a = FusedActivation{},
          "alpha * op(a) @ op(b) + beta * c over 4-D [batch, channel, rows, columns] tensors (DML_OPERATOR_GEMM).");
    m.def("convolution", &convolution, "input"_a, "filter"_a, "bias"_a = nb::none(), nb::kw_only(),
          "mode"_a = ConvolutionMode::CrossCorrelation, "direction"_a = ConvolutionDirection::Forward,
          "strides"_a = std::vector<uint32_t>{}, "dilations"_a = std::vector<uint32_t>{},
          "start_padding"_a = std::vector<uint32_t>{}, "end_padding"_a = std::vector<uint32_t>{},
          "output_padding"_a = std::vector<uint32_t>{}, "group_count"_a = 1u, "fused_activation"_a = FusedActivation{},
          "output_sizes"_a = std::vector<uint32_t>{},
          "N-D convolution over [N, C, spatial...] (DML_OPERATOR_CONVOLUTION); empty lists take DirectML's defaults.");
}

}  // namespace dml::binding
