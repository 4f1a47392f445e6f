// DML_CONVOLUTION_OPERATOR_DESC.
#include "../core/ops/convolution.h"
#include "lowering.h"

namespace dml::directml {

void register_convolution_lowerings(LoweringTable& t) {
    add_lowering<ConvolutionDesc>(t, [](LoweringContext& c, const ConvolutionDesc& d) {
        DescStore& s = c.store;
        UINT spatial = UINT(d.strides.size());
        // The output tensor's sizes already carry the backward direction's output padding. Handed OutputPadding as
        // well, DirectML leaves those trailing elements zero (on lavapipe) where our executors (and PyTorch) compute
        // them from the rest of the transposed convolution; with zeros it computes them (ONNX Runtime's DirectML
        // provider zeroes it for the same reason).
        std::vector<uint32_t> output_padding(spatial, 0);
        return c.lowered(DML_OPERATOR_CONVOLUTION,
                         DML_CONVOLUTION_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.output(0), UINT(d.mode),
                                                       UINT(d.direction), spatial, s.array(d.strides),
                                                       s.array(d.dilations), s.array(d.start_padding),
                                                       s.array(d.end_padding), s.array(output_padding),
                                                       d.group_count, c.fused(d.fused)});
    });
    add_lowering<ConvolutionIntegerDesc>(t, [](LoweringContext& c, const ConvolutionIntegerDesc& d) {
        DescStore& s = c.store;
        return c.lowered(DML_OPERATOR_CONVOLUTION_INTEGER,
                         DML_CONVOLUTION_INTEGER_OPERATOR_DESC{c.input(0), c.input(1), c.input(2), c.input(3),
                                                               c.output(0), UINT(d.strides.size()), s.array(d.strides),
                                                               s.array(d.dilations), s.array(d.start_padding),
                                                               s.array(d.end_padding), d.group_count});
    });
    add_lowering<QuantizedLinearConvolutionDesc>(t, [](LoweringContext& c, const QuantizedLinearConvolutionDesc& d) {
        DescStore& s = c.store;
        return c.lowered(DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION,
                         DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC{
                             c.input(0), c.input(1), c.input(2), c.input(3), c.input(4), c.input(5), c.input(6),
                             c.input(7), c.input(8), c.output(0), UINT(d.strides.size()), s.array(d.strides),
                             s.array(d.dilations), s.array(d.start_padding), s.array(d.end_padding), d.group_count});
    });
}

}  // namespace dml::directml
