#include "compiled_operator.h"

#include <algorithm>
#include <climits>

#include "../core/errors.h"
#include "../core/fuse_elementwise_chains.h"
#include "../core/fuse_epilogues.h"
#include "../core/ops/elementwise.h"

namespace dml {

namespace {
constexpr uint32_t kUnused = UINT32_MAX;
}

CompiledOperator::CompiledOperator(const std::shared_ptr<Graph>& graph, const std::vector<Expression>& outputs)
    : device_(graph->device()), source_(graph) {
    if (outputs.empty()) throw ValueError("compile: needs at least one output");
    for (const Expression& e : outputs)
        if (e.graph != graph) throw ValueError("compile: an output belongs to another graph");

    const auto& nodes = graph->nodes();
    const auto& inputs = graph->inputs();
    // Mark what the outputs need, walking back from them (nodes only refer to earlier nodes).
    std::vector<char> node_needed(nodes.size(), 0), input_needed(inputs.size(), 0);
    auto mark = [&](const Value& v) {
        (v.source == Value::Source::Input ? input_needed : node_needed)[v.index] = 1;
    };
    for (const Expression& e : outputs) mark(e.value);
    for (size_t i = nodes.size(); i-- > 0;)
        if (node_needed[i])
            for (const auto& op : nodes[i].inputs)
                if (op) mark(op->value);

    slot_of_graph_input_.assign(inputs.size(), kUnused);
    for (const GraphInput& in : inputs) graph_input_names_.push_back(in.name);
    for (uint32_t i = 0; i < inputs.size(); ++i)
        if (input_needed[i]) {
            slot_of_graph_input_[i] = uint32_t(compiled_.inputs.size());
            compiled_.inputs.push_back({i, inputs[i].name, inputs[i].desc, inputs[i].kind, inputs[i].constant});
        }
    std::vector<uint32_t> new_index(nodes.size(), kUnused);
    auto remap = [&](Value v) {
        v.index = v.source == Value::Source::Input ? slot_of_graph_input_[v.index] : new_index[v.index];
        return v;
    };
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (!node_needed[i]) continue;
        Node n = nodes[i];
        for (auto& op : n.inputs)
            if (op) op->value = remap(op->value);
        new_index[i] = uint32_t(compiled_.nodes.size());
        compiled_.nodes.push_back(std::move(n));
    }
    // Outputs are packed node outputs, each once, returned with the sizes asked for: a packed reshape of a node's
    // output (group normalization's [N, C, H, W] view of its [N, G, C / G, H, W] result) is the same bytes.
    // Anything else (an input, a strided view, a repeat) gets a copy.
    for (const Expression& e : outputs) {
        Value v = remap(e.value);
        const TensorDesc* produced = v.source == Value::Source::Node ? &compiled_.nodes[v.index].outputs[v.output]
                                                                      : nullptr;
        const bool same_bytes = produced && (e.desc == *produced || (e.desc.is_packed() && produced->is_packed() &&
                                                                     e.data_type() == produced->data_type &&
                                                                     e.desc.total_tensor_size_in_bytes() ==
                                                                         produced->total_tensor_size_in_bytes()));
        bool usable = same_bytes &&
                      std::find(compiled_.outputs.begin(), compiled_.outputs.end(), v) == compiled_.outputs.end();
        if (!usable) {
            auto copy = std::make_shared<UnaryDesc>();
            copy->function = UnaryFunction::Identity;
            compiled_.nodes.push_back(Node{copy, {Operand{v, e.desc}}, {TensorDesc(e.data_type(), e.sizes())}});
            v = {Value::Source::Node, uint32_t(compiled_.nodes.size() - 1), 0};
        }
        compiled_.outputs.push_back(v);
        output_descs_.push_back(TensorDesc(e.data_type(), e.sizes()));
    }
}

void CompiledOperator::build() {
    if (plan_) throw std::logic_error("CompiledOperator::build: called twice");
    const auto executor_takes = [&](const Node& n) { return bool(device_->supports(n)); };
    // Epilogues first: a GEMM's or convolution's library applies them at no pass of its own, and a chain formed
    // first would take the activation or ADD that the producer could have absorbed. Chains then fuse what is left.
    fuse_epilogues(compiled_, executor_takes);
    fuse_elementwise_chains(compiled_, executor_takes);
    for (const Node& n : compiled_.nodes)
        if (Support s = device_->supports(n); !s) throw NotSupported(n.desc->type_name(), device_->kind(), s.reason());
    plan_ = device_->compile(compiled_);
    // The constants go to the device now (borrowed where it reads host memory): the graph holds their host bytes,
    // which compiled_ keeps alive.
    for (const auto& in : compiled_.inputs)
        bound_.push_back(in.constant ? device_->stage(in.constant->data, in.constant->size) : nullptr);
    // With no owned inputs (constants at most) there is nothing to wait for.
    if (std::none_of(compiled_.inputs.begin(), compiled_.inputs.end(),
                     [](const auto& in) { return in.kind == InputKind::Owned; })) {
        std::vector<Memory*> mem;
        for (auto& m : bound_) mem.push_back(m.get());
        plan_->initialize(mem);
        initialized_ = true;
    }
}

std::string CompiledOperator::describe_input(uint32_t graph_index) const {
    const std::string& name = graph_index < graph_input_names_.size() ? graph_input_names_[graph_index]
                                                                      : source_->inputs().at(graph_index).name;
    return "input " + std::to_string(graph_index) + " '" + name + "'";
}

uint32_t CompiledOperator::slot_for(uint32_t graph_index, Phase phase) const {
    if (graph_index >= slot_of_graph_input_.size())
        throw ValueError(describe_input(graph_index) + " was added to the graph after compile()");
    if (slot_of_graph_input_[graph_index] == kUnused)
        throw ValueError(describe_input(graph_index) + " is not used by this operator's outputs");
    uint32_t slot = slot_of_graph_input_[graph_index];
    const auto& in = compiled_.inputs[slot];
    std::string who = describe_input(graph_index);
    if (in.kind == InputKind::Constant)
        throw ValueError(who + " is a constant: its data was recorded by graph.constant() and cannot be bound");
    if (phase == Phase::Dispatch && in.kind == InputKind::Owned)
        throw ValueError(who + " is owned: bind it with initialize(), not at dispatch");
    if (phase == Phase::Initialize && in.kind == InputKind::Plain)
        throw ValueError(who + " is not owned: bind it at dispatch, not with initialize()");
    return slot;
}

void CompiledOperator::check_complete(std::vector<Binding>& bindings, InputKind kind) const {
    std::sort(bindings.begin(), bindings.end(), [](const Binding& a, const Binding& b) { return a.slot < b.slot; });
    for (size_t i = 1; i < bindings.size(); ++i)
        if (bindings[i].slot == bindings[i - 1].slot)
            throw ValueError(describe_input(compiled_.inputs[bindings[i].slot].graph_index) + " is bound twice");
    size_t next = 0;
    for (uint32_t slot = 0; slot < compiled_.inputs.size(); ++slot) {
        if (compiled_.inputs[slot].kind != kind) continue;
        if (next < bindings.size() && bindings[next].slot == slot) {
            ++next;
            continue;
        }
        throw ValueError(describe_input(compiled_.inputs[slot].graph_index) + " is missing" +
                         (kind == InputKind::Owned ? " from initialize()" : ""));
    }
}

void CompiledOperator::initialize(std::vector<Binding> bindings) {
    check_complete(bindings, InputKind::Owned);
    std::lock_guard lock(mutex_);
    for (auto& b : bindings) bound_[b.slot] = std::move(b.memory);
    std::vector<Memory*> mem;
    for (auto& m : bound_) mem.push_back(m.get());
    plan_->initialize(mem);
    initialized_ = true;
}

std::vector<std::shared_ptr<Memory>> CompiledOperator::dispatch(std::vector<Binding> bindings) {
    std::lock_guard lock(mutex_);  // also orders this dispatch after a concurrent initialize()
    if (!initialized_) {
        for (const auto& in : compiled_.inputs)
            if (in.kind == InputKind::Owned)
                throw ValueError("the operator is not initialized: " + describe_input(in.graph_index) +
                                 " is owned; call initialize() first");
    }
    check_complete(bindings, InputKind::Plain);
    std::vector<std::shared_ptr<Memory>> outputs;
    std::vector<Memory*> out_mem;
    for (const Value& v : compiled_.outputs) {
        outputs.push_back(device_->allocate(compiled_.nodes[v.index].outputs[v.output].total_tensor_size_in_bytes()));
        out_mem.push_back(outputs.back().get());
    }
    std::vector<Memory*> in_mem;
    for (auto& m : bound_) in_mem.push_back(m.get());
    for (auto& b : bindings) in_mem[b.slot] = b.memory.get();
    plan_->execute(in_mem, out_mem);
    return outputs;
}

uint64_t CompiledOperator::persistent_size() const {
    uint64_t bytes = plan_->persistent_size();
    for (const auto& in : compiled_.inputs)
        if (in.kind != InputKind::Plain) bytes += in.desc.total_tensor_size_in_bytes();
    return bytes;
}

}  // namespace dml
