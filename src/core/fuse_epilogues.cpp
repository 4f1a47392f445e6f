#include "fuse_epilogues.h"

#include <optional>

#include "ops/activation.h"
#include "ops/convolution.h"
#include "ops/elementwise.h"
#include "ops/gemm.h"
#include "ops/normalization.h"
#include "readers.h"

namespace dml {

namespace {

// The producer's fused activation slot where it has one that is still free, else null.
FusedActivation* free_activation(OperatorDesc& d) {
    FusedActivation* f = nullptr;
    if (auto* g = dynamic_cast<GemmDesc*>(&d)) f = &g->fused;
    else if (auto* c = dynamic_cast<ConvolutionDesc*>(&d)) f = &c->fused;
    else if (auto* b = dynamic_cast<BinaryDesc*>(&d); b && b->function == BinaryFunction::Add) f = &b->fused;
    else if (auto* n = dynamic_cast<BatchNormalizationDesc*>(&d)) f = &n->fused;
    else if (auto* m = dynamic_cast<MeanVarianceNormalizationDesc*>(&d)) f = &m->fused;
    return f && f->is_none() ? f : nullptr;
}

// A copy of the operator description, to change.
std::shared_ptr<OperatorDesc> copy_desc(const OperatorDesc& d) {
    if (auto* g = dynamic_cast<const GemmDesc*>(&d)) return std::make_shared<GemmDesc>(*g);
    if (auto* c = dynamic_cast<const ConvolutionDesc*>(&d)) return std::make_shared<ConvolutionDesc>(*c);
    if (auto* b = dynamic_cast<const BinaryDesc*>(&d)) return std::make_shared<BinaryDesc>(*b);
    if (auto* n = dynamic_cast<const BatchNormalizationDesc*>(&d)) return std::make_shared<BatchNormalizationDesc>(*n);
    if (auto* m = dynamic_cast<const MeanVarianceNormalizationDesc*>(&d))
        return std::make_shared<MeanVarianceNormalizationDesc>(*m);
    return nullptr;
}

// The producer with `addend` (read through its view) added to its output and `act` applied after, where it has an
// input for it that is still free: a GEMM's C (beta 1), or a convolution's bias where the addend is constant but
// along the channels (then read as [1, channels, 1, ...]). Else nothing.
std::optional<Node> with_addend(const Node& producer, const Operand& addend, const FusedActivation& act) {
    const TensorDesc& out = producer.outputs[0];
    if (producer.inputs.size() < 3 || producer.inputs[2] || addend.desc.data_type != out.data_type ||
        addend.desc.sizes != out.sizes)
        return std::nullopt;
    if (const auto* g = dynamic_cast<const GemmDesc*>(producer.desc.get()); g && g->fused.is_none()) {
        auto desc = std::make_shared<GemmDesc>(*g);
        desc->beta = 1.0f;
        desc->fused = act;
        Node fused{std::move(desc), producer.inputs, producer.outputs};
        fused.inputs[2] = addend;
        return fused;
    }
    if (const auto* c = dynamic_cast<const ConvolutionDesc*>(producer.desc.get()); c && c->fused.is_none()) {
        const Strides st = addend.desc.effective_strides();
        Sizes sizes(out.rank(), 1u);
        Strides strides(out.rank(), 0);
        sizes[1] = out.sizes[1], strides[1] = st[1];
        for (size_t d = 0; d < out.rank(); ++d)
            if (d != 1 && st[d] != 0 && out.sizes[d] != 1) return std::nullopt;
        auto desc = std::make_shared<ConvolutionDesc>(*c);
        desc->fused = act;
        Node fused{std::move(desc), producer.inputs, producer.outputs};
        fused.inputs[2] = Operand{addend.value, TensorDesc(out.data_type, sizes, strides)};
        return fused;
    }
    return std::nullopt;
}

}  // namespace

void fuse_epilogues(CompiledGraph& graph, const std::function<bool(const Node&)>& executor_takes) {
    std::vector<Node>& nodes = graph.nodes;
    const Readers readers(graph);

    // Whether node i's operand `in` reads, in order, the whole single output of a node that nothing else reads
    // (perhaps reinterpreted to other sizes), so that node i's output can be that memory (a graph output keeps its
    // description).
    auto sole_reader = [&](size_t i, const Operand& in) {
        if (in.value.source != Value::Source::Node) return false;
        const uint32_t v = in.value.index;
        const Node& producer = nodes[v];
        if (producer.outputs.size() != 1 || readers.count(v) != 1 || readers.is_graph_output(v, 0)) return false;
        const TensorDesc& made = producer.outputs[0];
        return in.desc.is_packed() && in.desc.data_type == made.data_type &&
               in.desc.element_count() == made.element_count() &&
               (!readers.is_graph_output(uint32_t(i), 0) || nodes[i].outputs[0] == made);
    };

    // Per node: the value that holds its output once it is folded away (nothing reads a folded GEMM's).
    std::vector<std::optional<Value>> folded(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (const auto* act = dynamic_cast<const ActivationDesc*>(nodes[i].desc.get())) {
            const Operand& in = *nodes[i].inputs[0];
            // Fused activations are on floats only, as DirectML's: an integer RELU stays a node.
            if (!is_float(nodes[i].outputs[0].data_type) || !sole_reader(i, in)) continue;
            Node& producer = nodes[in.value.index];
            auto desc = copy_desc(*producer.desc);
            FusedActivation* slot = desc ? free_activation(*desc) : nullptr;
            if (!slot) continue;
            *slot = act->activation;
            Node fused{std::move(desc), producer.inputs, producer.outputs};
            if (!executor_takes(fused)) continue;
            producer = std::move(fused);
            folded[i] = in.value;
            continue;
        }
        const auto* add = dynamic_cast<const BinaryDesc*>(nodes[i].desc.get());
        if (!add || add->function != BinaryFunction::Add) continue;
        for (int side = 0; side < 2; ++side) {
            const Operand& in = *nodes[i].inputs[side];
            if (!sole_reader(i, in)) continue;
            std::optional<Node> fused = with_addend(nodes[in.value.index], *nodes[i].inputs[1 - side], add->fused);
            if (!fused || !executor_takes(*fused)) continue;
            folded[in.value.index] = Value{Value::Source::Node, uint32_t(i), 0};
            nodes[i] = std::move(*fused);
            break;
        }
    }

    drop_folded_nodes(graph, folded);
}

}  // namespace dml
