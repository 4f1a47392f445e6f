// gru and its enums.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "../core/ops/recurrent.h"
#include "module.h"

namespace dml::binding {

namespace py {  // the Python result types, named as the core's result structs are
DML_OUTPUTS(GRUOutputs);
}  // namespace py

void bind_recurrent(nb::module_& m) {
    nb::enum_<RecurrentNetworkDirection>(m, "RecurrentNetworkDirection", "DML_RECURRENT_NETWORK_DIRECTION.")
        .value("FORWARD", RecurrentNetworkDirection::Forward)
        .value("BACKWARD", RecurrentNetworkDirection::Backward)
        .value("BIDIRECTIONAL", RecurrentNetworkDirection::Bidirectional);
    nb::enum_<GRUOutputOptions>(m, "GRUOutputOptions", "Which outputs gru produces (DirectMLX's GRUOutputOptions).")
        .value("BOTH", GRUOutputOptions::Both)
        .value("SEQUENCE", GRUOutputOptions::Sequence)
        .value("SINGLE", GRUOutputOptions::Single);
    Outputs<py::GRUOutputs> gru_outputs(m, "sequence single", {"sequence", "single"});

    def(m, "gru",
          [gru_outputs](const Expression& input, const Expression& weight, const Expression& recurrence,
             std::optional<Expression> bias, std::optional<Expression> hidden_init,
             std::optional<Expression> sequence_lengths, std::optional<std::vector<FusedActivation>> activation_descs,
             RecurrentNetworkDirection direction, bool linear_before_reset, GRUOutputOptions output_options) {
              // ONNX's defaults: f = sigmoid, g = tanh in every direction.
              std::vector<FusedActivation> activations;
              if (activation_descs) activations = *activation_descs;
              else
                  for (int d = direction == RecurrentNetworkDirection::Bidirectional ? 2 : 1; d > 0; --d)
                      activations.insert(activations.end(), {{ActivationFunction::Sigmoid}, {ActivationFunction::Tanh}});
              auto [sequence, single] = gru(input, weight, recurrence, bias, hidden_init, sequence_lengths, activations,
                                            direction, linear_before_reset, output_options);
              return gru_outputs(or_none(sequence), or_none(single));
          },
          "input"_a, "weight"_a, "recurrence"_a, "bias"_a = nb::none(), "hidden_init"_a = nb::none(),
          "sequence_lengths"_a = nb::none(), nb::kw_only(), "activation_descs"_a = nb::none(),
          "direction"_a = RecurrentNetworkDirection::Forward, "linear_before_reset"_a = false,
          "output_options"_a = GRUOutputOptions::Both,
          "A GRU layer (DML_OPERATOR_GRU, ONNX semantics, gates z, r, h); activation_descs are f and g per direction "
          "(default sigmoid, tanh). Returns (sequence [seq, dirs, batch, hidden], single [1, dirs, batch, hidden]), "
          "None for an output not asked for.");
}

}  // namespace dml::binding
