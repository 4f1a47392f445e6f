// Data movement: slice (and its gradient), join, split, padding, tile, space/depth and reverse_subsequences, with
// the PaddingMode and DepthSpaceOrder enums.
#include <nanobind/nanobind.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/data_movement.h"
#include "module.h"

namespace dml::binding {

void bind_data_movement(nb::module_& m) {
    nb::enum_<PaddingMode>(m, "PaddingMode", "DML_PADDING_MODE.")
        .value("CONSTANT", PaddingMode::Constant)
        .value("EDGE", PaddingMode::Edge)
        .value("REFLECTION", PaddingMode::Reflection)
        .value("SYMMETRIC", PaddingMode::Symmetric)
        .value("WRAP", PaddingMode::Wrap);
    nb::enum_<DepthSpaceOrder>(m, "DepthSpaceOrder", "DML_DEPTH_SPACE_ORDER.")
        .value("DEPTH_COLUMN_ROW", DepthSpaceOrder::DepthColumnRow)
        .value("COLUMN_ROW_DEPTH", DepthSpaceOrder::ColumnRowDepth);

    def(m, "slice",
        [](const Expression& input, std::vector<uint32_t> offsets, std::vector<uint32_t> sizes,
           std::vector<int32_t> strides) {
            if (strides.empty()) strides.assign(sizes.size(), 1);  // every element of the window
            return slice(input, std::move(offsets), std::move(sizes), std::move(strides));
        },
        "input"_a, nb::kw_only(), "input_window_offsets"_a, "input_window_sizes"_a,
        "input_window_strides"_a = std::vector<int32_t>{},
        "The window of input at the offsets and sizes, stepping by the (possibly negative) strides, 1 by default "
        "(DML_OPERATOR_SLICE1).");
    def(m, "slice_grad", &slice_grad, "input_gradient"_a, nb::kw_only(), "output_gradient_sizes"_a,
          "input_window_offsets"_a, "input_window_sizes"_a, "input_window_strides"_a,
          "The gradient of slice: input_gradient placed where slice read it, zeros elsewhere "
          "(DML_OPERATOR_SLICE_GRAD).");
    def(m, "join", &join, "inputs"_a, nb::kw_only(), "axis"_a, "The inputs concatenated along `axis`.");
    def(m, "split", &split, "input"_a, nb::kw_only(), "axis"_a, "output_axis_sizes"_a,
          "input cut along `axis` into pieces of the given sizes.");
    def(m, "padding", &padding, "input"_a, nb::kw_only(), "padding_mode"_a = PaddingMode::Constant,
        "padding_value"_a = 0.0, "start_padding"_a, "end_padding"_a,
          "input grown by start_padding / end_padding elements per dimension, filled by the mode; "
          "padding_value (CONSTANT) must be a value of the tensor's type (DML_OPERATOR_PADDING1).");
    def(m, "tile", &tile, "input"_a, nb::kw_only(), "repeats"_a, "input repeated `repeats` times per dimension.");
    def(m, "space_to_depth", &space_to_depth, "input"_a, nb::kw_only(), "block_size"_a,
          "order"_a = DepthSpaceOrder::DepthColumnRow,
          "[N, C, H, W] blocks of block_size x block_size moved into channels: [N, C*b*b, H/b, W/b] "
          "(DML_OPERATOR_SPACE_TO_DEPTH1).");
    def(m, "depth_to_space", &depth_to_space, "input"_a, nb::kw_only(), "block_size"_a,
          "order"_a = DepthSpaceOrder::DepthColumnRow,
          "The inverse of space_to_depth: [N, C, H, W] to [N, C/(b*b), H*b, W*b] (DML_OPERATOR_DEPTH_TO_SPACE1).");
    def(m, "reverse_subsequences", &reverse_subsequences, "input"_a, "sequence_lengths"_a, nb::kw_only(), "axis"_a,
          "Each line along `axis` with its first sequence_lengths elements reversed (UINT32 or UINT64 lengths, "
          "clamped to the line).");
}

}  // namespace dml::binding
