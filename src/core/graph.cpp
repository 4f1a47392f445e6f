#include "graph.h"

#include <algorithm>

#include "errors.h"

namespace dml {

std::shared_ptr<Graph> Graph::create(std::shared_ptr<Device> device) {
    if (!device) throw ValueError("Graph needs a Device");
    return std::shared_ptr<Graph>(new Graph(std::move(device)));
}

void Graph::check_new_name(const std::string& name) const {
    if (name.empty()) throw ValueError("an input name must not be empty");
    for (const GraphInput& in : inputs_)
        if (in.name == name) throw ValueError("this graph already has an input named '" + name + "'");
}

std::string Graph::next_default_name() const {
    for (size_t i = inputs_.size();; ++i) {
        std::string name = "input" + std::to_string(i);
        if (std::none_of(inputs_.begin(), inputs_.end(), [&](const GraphInput& in) { return in.name == name; }))
            return name;
    }
}

Expression Graph::input(TensorDesc desc, std::optional<std::string> name, bool owned) {
    if (!desc.is_packed()) throw ValueError("a graph input is packed; view it with reinterpret() instead");
    std::string n = name ? *name : next_default_name();
    check_new_name(n);
    inputs_.push_back({n, desc, owned ? InputKind::Owned : InputKind::Plain, nullptr});
    return {shared_from_this(), {Value::Source::Input, uint32_t(inputs_.size() - 1)}, desc};
}

HostBytes HostBytes::owning(std::vector<std::byte> bytes) {
    auto kept = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    return {kept->data(), kept->size(), kept};
}

Expression Graph::constant(HostBytes data, TensorDesc desc, std::optional<std::string> name) {
    if (!desc.is_packed()) throw ValueError("a constant is packed; view it with reinterpret() instead");
    if (data.size != desc.total_tensor_size_in_bytes())
        throw ValueError("a constant " + desc.to_string() + " needs " +
                         std::to_string(desc.total_tensor_size_in_bytes()) + " bytes, got " +
                         std::to_string(data.size));
    std::string n = name ? *name : next_default_name();
    check_new_name(n);
    inputs_.push_back({n, desc, InputKind::Constant, std::make_shared<const HostBytes>(std::move(data))});
    return {shared_from_this(), {Value::Source::Input, uint32_t(inputs_.size() - 1)}, desc};
}

const TensorDesc& Graph::value_desc(const Value& v) const {
    if (v.source == Value::Source::Input) return inputs_.at(v.index).desc;
    return nodes_.at(v.index).outputs.at(v.output);
}

std::vector<Expression> Graph::add_node(std::shared_ptr<const OperatorDesc> desc,
                                        std::vector<std::optional<Expression>> inputs,
                                        std::vector<TensorDesc> outputs) {
    Node node{std::move(desc), {}, outputs};
    for (auto& in : inputs) {
        if (!in) {
            node.inputs.emplace_back();
            continue;
        }
        if (in->graph.get() != this) throw ValueError(node.desc->type_name() + ": an input belongs to another graph");
        node.inputs.push_back(Operand{in->value, in->desc});
    }
    nodes_.push_back(std::move(node));
    std::vector<Expression> result;
    for (uint32_t i = 0; i < outputs.size(); ++i)
        result.push_back({shared_from_this(), {Value::Source::Node, uint32_t(nodes_.size() - 1), i}, outputs[i]});
    return result;
}

std::shared_ptr<Graph> common_graph(std::string_view op, std::initializer_list<const Expression*> exprs) {
    std::shared_ptr<Graph> g;
    for (const Expression* e : exprs) {
        if (!e) continue;
        if (!e->graph) throw ValueError(std::string(op) + ": an expression has no graph");
        if (g && g != e->graph) throw ValueError(std::string(op) + ": the operands belong to different graphs");
        g = e->graph;
    }
    return g;
}

Expression add_single(std::string_view op, std::shared_ptr<const OperatorDesc> desc,
                      std::vector<std::optional<Expression>> inputs, TensorDesc output) {
    std::shared_ptr<Graph> g;
    for (auto& in : inputs)
        if (in) {
            if (g && g != in->graph) throw ValueError(std::string(op) + ": the operands belong to different graphs");
            g = in->graph;
        }
    return g->add_node(std::move(desc), std::move(inputs), {std::move(output)})[0];
}

Expression broadcast(const Expression& x, const Sizes& sizes) {
    const Sizes& from = x.sizes();
    if (sizes.size() < from.size() || sizes.size() > kMaxDimensions)
        throw ValueError("broadcast: cannot broadcast " + sizes_to_string(from) + " to " + sizes_to_string(sizes));
    Strides st = x.desc.effective_strides();
    size_t pad = sizes.size() - from.size();
    Strides out(sizes.size(), 0);
    for (size_t i = 0; i < from.size(); ++i) {
        uint32_t want = sizes[pad + i];
        if (from[i] == want) out[pad + i] = st[i];
        else if (from[i] == 1) out[pad + i] = 0;
        else throw ValueError("broadcast: cannot broadcast " + sizes_to_string(from) + " to " + sizes_to_string(sizes));
    }
    return {x.graph, x.value, make_tensor_desc("broadcast", x.data_type(), sizes, out)};
}

Expression reinterpret(const Expression& x, DataType type, const Sizes& sizes, std::optional<Strides> strides) {
    TensorDesc view = make_tensor_desc("reinterpret", type, sizes, std::move(strides));
    const TensorDesc& whole = x.graph->value_desc(x.value);
    if (view.extent_in_bytes() > whole.extent_in_bytes())
        throw ValueError("reinterpret: the view " + view.to_string() + " addresses " +
                         std::to_string(view.extent_in_bytes()) + " bytes but its buffer " + whole.to_string() +
                         " holds " + std::to_string(whole.extent_in_bytes()));
    return {x.graph, x.value, view};
}

Expression reinterpret(const Expression& x, const Sizes& sizes, std::optional<Strides> strides) {
    return reinterpret(x, x.data_type(), sizes, std::move(strides));
}

}  // namespace dml
