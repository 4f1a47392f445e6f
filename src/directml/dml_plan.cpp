// The DirectML plan: the whole graph lowered to one DML_GRAPH_DESC (lowering.h), each operator first created on its
// own so that DirectML's refusal names the node, then compiled with IDMLDevice1::CompileGraph. Initialization runs
// DirectML's initializer with the weights and constants, which DirectML owns from then on; a dispatch binds the
// other inputs and the outputs in a binding table over a descriptor heap, records the dispatch and waits for it.
#include <algorithm>

#include "../core/errors.h"
#include "../core/ops/generation.h"
#include "dml_device.h"
#include "lowering.h"

namespace dml::directml {

namespace {

// "DML_OPERATOR_GEMM: FLOAT32[1, 1, 2, 3], ... -> FLOAT32[...]"
std::string describe(const Node& node) {
    std::string s = node.desc->type_name() + ": ";
    for (size_t i = 0; i < node.inputs.size(); ++i)
        s += (i ? ", " : "") + (node.inputs[i] ? node.inputs[i]->desc.to_string() : std::string("none"));
    s += " -> ";
    for (size_t i = 0; i < node.outputs.size(); ++i) s += (i ? ", " : "") + node.outputs[i].to_string();
    return s;
}

std::string describe(const Node& node, size_t index) {
    return "node " + std::to_string(index) + " (" + describe(node) + ")";
}

// Buffers are whole 4-byte words (DmlDevice::create_buffer); DirectML binds them so.
uint64_t bound_size(uint64_t bytes) { return std::max<uint64_t>(4, (bytes + 3) & ~3ull); }

DML_BINDING_DESC buffer_binding(DescStore& store, ID3D12Resource* r, uint64_t bytes) {
    return {DML_BINDING_TYPE_BUFFER, store.add(DML_BUFFER_BINDING{r, 0, bound_size(bytes)})};
}

struct Source;

// The DirectML graph being built: operators as nodes, and the edges between them and the graph's inputs and outputs.
class GraphBuilder {
public:
    GraphBuilder(IDMLDevice1* dml, DescStore& store) : dml_(dml), store_(store) {}

    // Creates the operator (DirectML validates its description here) and adds it as a node; returns its index.
    UINT add_node(const DML_OPERATOR_DESC& desc, const std::string& who) {
        Ref<IDMLOperator> op;
        HRESULT hr = dml_->CreateOperator(&desc, __uuidof(IDMLOperator), op.out());
        if (FAILED(hr)) {
            std::string name = hresult_name(hr);
            throw DeviceError(name.substr(0, name.find(' ')),
                              "DirectML refused " + who + ": CreateOperator returned " + name);
        }
        UINT index = UINT(nodes_.size());
        const char* name = store_.add(who)->c_str();
        nodes_.push_back({DML_GRAPH_NODE_TYPE_OPERATOR, store_.add(DML_OPERATOR_GRAPH_NODE_DESC{op.get(), name})});
        operators_.push_back(std::move(op));
        return index;
    }
    // An edge into input `to_input` of node `to`, from a graph input or another node's output.
    void edge(const struct Source& from, UINT to, UINT to_input);
    void output_edge(UINT from, UINT from_output, UINT graph_output) {
        outputs_.push_back({DML_GRAPH_EDGE_TYPE_OUTPUT,
                            store_.add(DML_OUTPUT_GRAPH_EDGE_DESC{from, from_output, graph_output, nullptr})});
    }

    Ref<IDMLCompiledOperator> compile(UINT input_count, UINT output_count) const {
        DML_GRAPH_DESC graph = {input_count,           output_count,          UINT(nodes_.size()),
                                nodes_.data(),         UINT(inputs_.size()),  inputs_.data(),
                                UINT(outputs_.size()), outputs_.data(),       UINT(intermediates_.size()),
                                intermediates_.data()};
        Ref<IDMLCompiledOperator> compiled;
        check(dml_->CompileGraph(&graph, DML_EXECUTION_FLAG_NONE, __uuidof(IDMLCompiledOperator), compiled.out()),
              "IDMLDevice1::CompileGraph of " + std::to_string(nodes_.size()) + " DirectML operators (each one "
              "passed CreateOperator)");
        return compiled;
    }

private:
    IDMLDevice1* dml_;
    DescStore& store_;
    std::vector<Ref<IDMLOperator>> operators_;
    std::vector<DML_GRAPH_NODE_DESC> nodes_;
    std::vector<DML_GRAPH_EDGE_DESC> inputs_, intermediates_, outputs_;
};

// Where a value comes from in the DirectML graph: a graph input, or an output of a DirectML node.
struct Source {
    bool graph_input;
    UINT index, output;
};

// The DirectML graph of a CompiledGraph: its nodes lowered into `builder`, and the data of its constant-data nodes,
// which DirectML receives as graph inputs of their own after the graph's inputs (bound from memory uploaded at
// compile).
struct LoweredGraph {
    std::vector<std::vector<Source>> produced;  // per compiled node and output
    std::vector<const ConstantDataDesc*> constants;
};

void GraphBuilder::edge(const Source& from, UINT to, UINT to_input) {
    if (from.graph_input)
        inputs_.push_back({DML_GRAPH_EDGE_TYPE_INPUT,
                           store_.add(DML_INPUT_GRAPH_EDGE_DESC{from.index, to, to_input, nullptr})});
    else
        intermediates_.push_back(
            {DML_GRAPH_EDGE_TYPE_INTERMEDIATE,
             store_.add(DML_INTERMEDIATE_GRAPH_EDGE_DESC{from.index, from.output, to, to_input, nullptr})});
}

LoweredGraph lower_graph(const CompiledGraph& g, GraphBuilder& builder, DescStore& store,
                         const OwnedByDirectML& owned) {
    LoweredGraph lowered_graph;
    auto& produced = lowered_graph.produced;
    auto source_of = [&](const Value& v) {
        return v.source == Value::Source::Input ? Source{true, v.index, 0} : produced[v.index][v.output];
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const Node& node = g.nodes[i];
        if (auto constant = dynamic_cast<const ConstantDataDesc*>(node.desc.get())) {
            produced.push_back({{true, UINT(g.inputs.size() + lowered_graph.constants.size()), 0}});
            lowered_graph.constants.push_back(constant);
            continue;
        }
        const std::string who = describe(node, i);
        const Lowering* lowering = find_lowering(node);
        if (!lowering) throw ValueError("the directml executor cannot run " + who + ": it has no lowering for it");
        LoweringContext context(node, store, owned);
        Lowered lowered;
        try {
            lowered = (*lowering)(context);
        } catch (const ValueError& e) {
            throw ValueError("the directml executor cannot run " + who + ": " + e.what());
        }
        UINT k = builder.add_node(lowered.op, who);
        for (size_t j = 0; j < node.inputs.size(); ++j)
            if (node.inputs[j]) builder.edge(source_of(node.inputs[j]->value), k, UINT(j));
        std::vector<Source> outputs;
        for (size_t j = 0; j < node.outputs.size(); ++j) outputs.push_back({false, k, UINT(j)});
        if (!lowered.unfused.is_none()) {
            // An activation DirectML cannot fuse runs as its own operator on the first output, in place of it.
            const DML_TENSOR_DESC* t = store.tensor(node.outputs[0]);
            UINT a = builder.add_node(activation_desc(store, lowered.unfused, t, t),
                                      who + ", its " + activation_type_name(lowered.unfused.function));
            builder.edge({false, k, 0}, a, 0);
            outputs[0] = {false, a, 0};
        }
        produced.push_back(std::move(outputs));
    }
    for (size_t o = 0; o < g.outputs.size(); ++o) {
        const Value& v = g.outputs[o];
        Source from = source_of(v);
        // Graph outputs leave operators: constant data that is an output is copied by an identity. So is a
        // FILL_VALUE_SEQUENCE output: DirectML's CompileGraph crashed (libdirectml.so from torch-directml
        // 0.2.5.dev240914, over vkd3d-proton) on a graph whose output it was; read by another operator it runs.
        const bool copied = from.graph_input || dynamic_cast<const FillValueSequenceDesc*>(g.nodes[v.index].desc.get());
        if (copied) {
            const TensorDesc& desc = g.nodes[v.index].outputs[v.output];
            const DML_TENSOR_DESC* in =
                store.tensor(desc, from.graph_input ? DML_TENSOR_FLAG_OWNED_BY_DML : DML_TENSOR_FLAG_NONE);
            UINT k = builder.add_node({DML_OPERATOR_ELEMENT_WISE_IDENTITY,
                                       store.add(DML_UNARY_OPERATOR_DESC{in, store.tensor(desc), nullptr, 0})},
                                      "output " + std::to_string(o) + ", a copy");
            builder.edge(from, k, 0);
            from = {false, k, 0};
        }
        builder.output_edge(from.index, from.output, UINT(o));
    }
    return lowered_graph;
}

class DmlPlan : public Plan {
public:
    DmlPlan(std::shared_ptr<DmlDevice> device, const CompiledGraph& g)
        : device_(std::move(device)), output_count_(g.outputs.size()) {
        // Weights (owned inputs), recorded constants and constant-data nodes are DirectML's to keep: bound once,
        // at initialization, where DirectML may lay them out anew in its persistent resource.
        for (const auto& in : g.inputs) owned_.push_back(in.kind != InputKind::Plain);
        OwnedByDirectML owned = [&](const Value& v) -> bool {
            if (v.source == Value::Source::Input) return owned_[v.index];
            return dynamic_cast<const ConstantDataDesc*>(g.nodes[v.index].desc.get()) != nullptr;
        };
        DescStore store;  // the descriptions live until CompileGraph has returned
        GraphBuilder builder(device_->dml(), store);
        LoweredGraph lowered = lower_graph(g, builder, store, owned);
        owned_.resize(g.inputs.size() + lowered.constants.size(), true);
        compiled_ = builder.compile(UINT(owned_.size()), UINT(output_count_));
        execute_properties_ = binding_properties(compiled_.get());
        if (!device_->validate_only())
            for (const ConstantDataDesc* c : lowered.constants)
                constants_.push_back(device_->stage(c->data.data(), c->data.size()));
    }

    uint64_t temporary_size() const override { return execute_properties_.TemporaryResourceSize; }
    uint64_t persistent_size() const override { return execute_properties_.PersistentResourceSize; }

    // Runs DirectML's initializer with the owned inputs (and the constant data) bound: called at compile when there
    // are no weights, and again whenever the weights are bound anew.
    void initialize(std::span<Memory* const> inputs) override {
        if (device_->validate_only()) return;
        Ref<IDMLOperatorInitializer> initializer;
        IDMLCompiledOperator* ops[] = {compiled_.get()};
        check(device_->dml()->CreateOperatorInitializer(1, ops, __uuidof(IDMLOperatorInitializer), initializer.out()),
              "CreateOperatorInitializer");
        const DML_BINDING_PROPERTIES init = binding_properties(initializer.get());
        prepare(init);
        table_desc_.Dispatchable = initializer.get();
        check(table_->Reset(&table_desc_), "IDMLBindingTable::Reset (initializer)");

        DescStore store;
        std::vector<DML_BUFFER_BINDING> owned;  // one per graph input: the owned ones bound, the others empty
        for (size_t i = 0; i < owned_.size(); ++i) {
            const Memory* m = !owned_[i] ? nullptr : i < inputs.size() ? inputs[i] : constants_[i - inputs.size()].get();
            owned.push_back(m ? DML_BUFFER_BINDING{resource_of(*m), 0, bound_size(m->bytes)}
                              : DML_BUFFER_BINDING{nullptr, 0, 0});
        }
        if (std::find(owned_.begin(), owned_.end(), true) != owned_.end()) {
            DML_BUFFER_ARRAY_BINDING array = {UINT(owned.size()), owned.data()};
            DML_BINDING_DESC binding = {DML_BINDING_TYPE_BUFFER_ARRAY, &array};
            table_->BindInputs(1, &binding);
        }
        if (init.TemporaryResourceSize)
            table_->BindTemporaryResource(store.add(buffer_binding(store, resource_of(*temporary_), temporary_->bytes)));
        if (persistent_)
            table_->BindOutputs(1, store.add(buffer_binding(store, resource_of(*persistent_), persistent_->bytes)));
        dispatch(initializer.get());
        table_desc_.Dispatchable = compiled_.get();
        check(table_->Reset(&table_desc_), "IDMLBindingTable::Reset");
        initialized_ = true;
    }

    void execute(std::span<Memory* const> inputs, std::span<Memory* const> outputs) override {
        if (device_->validate_only())
            throw DeviceError("VALIDATE_ONLY", "this directml device only validates (DIRECTML_VALIDATE_ONLY=1): "
                                               "DirectML accepted the graph, but nothing can run here");
        if (!initialized_) initialize(inputs);
        DescStore store;
        std::vector<DML_BINDING_DESC> in, out;
        for (size_t i = 0; i < owned_.size(); ++i)  // DirectML holds the owned ones since initialization
            in.push_back(owned_[i] ? DML_BINDING_DESC{DML_BINDING_TYPE_NONE, nullptr}
                                   : buffer_binding(store, resource_of(*inputs[i]), inputs[i]->bytes));
        for (Memory* m : outputs) out.push_back(buffer_binding(store, resource_of(*m), m->bytes));
        table_->BindInputs(UINT(in.size()), in.data());
        table_->BindOutputs(UINT(out.size()), out.data());
        if (execute_properties_.TemporaryResourceSize)
            table_->BindTemporaryResource(store.add(buffer_binding(store, resource_of(*temporary_), temporary_->bytes)));
        if (persistent_)
            table_->BindPersistentResource(store.add(buffer_binding(store, resource_of(*persistent_), persistent_->bytes)));
        dispatch(compiled_.get());
    }

private:
    // The descriptor heap, binding table and temporary / persistent resources, made once for both dispatchables.
    void prepare(const DML_BINDING_PROPERTIES& init) {
        if (table_) return;
        const UINT descriptors = std::max({1u, init.RequiredDescriptorCount, execute_properties_.RequiredDescriptorCount});
        D3D12_DESCRIPTOR_HEAP_DESC heap = {};
        heap.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
        heap.NumDescriptors = descriptors;
        heap.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
        check(device_->d3d12()->CreateDescriptorHeap(&heap, __uuidof(ID3D12DescriptorHeap), heap_.out()),
              "CreateDescriptorHeap");
        const uint64_t temporary = std::max(init.TemporaryResourceSize, execute_properties_.TemporaryResourceSize);
        if (temporary) temporary_ = device_->allocate(temporary);
        if (execute_properties_.PersistentResourceSize)
            persistent_ = device_->allocate(execute_properties_.PersistentResourceSize);
        table_desc_ = {compiled_.get(), cpu_heap_start(heap_.get()), gpu_heap_start(heap_.get()), descriptors};
        check(device_->dml()->CreateBindingTable(&table_desc_, __uuidof(IDMLBindingTable), table_.out()),
              "CreateBindingTable");
    }

    void dispatch(IDMLDispatchable* what) {
        device_->run([&](ID3D12GraphicsCommandList* list) {
            ID3D12DescriptorHeap* heaps[] = {heap_.get()};
            list->SetDescriptorHeaps(1, heaps);
            device_->recorder()->RecordDispatch(list, what, table_.get());
            D3D12_RESOURCE_BARRIER uav = {};
            uav.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;  // every buffer: the next command sees the results
            list->ResourceBarrier(1, &uav);
        });
    }

    std::shared_ptr<DmlDevice> device_;
    size_t output_count_;
    std::vector<char> owned_;  // per DirectML graph input (the graph's inputs, then constant data): owned by DirectML
    Ref<IDMLCompiledOperator> compiled_;
    DML_BINDING_PROPERTIES execute_properties_ = {};
    bool initialized_ = false;
    Ref<ID3D12DescriptorHeap> heap_;
    Ref<IDMLBindingTable> table_;
    DML_BINDING_TABLE_DESC table_desc_ = {};
    std::shared_ptr<Memory> temporary_, persistent_;
    std::vector<std::shared_ptr<Memory>> constants_;  // constant-data nodes' data, uploaded at compile
};

}  // namespace

std::vector<std::type_index> DmlDevice::operator_types() const {
    static const std::vector<std::type_index> types = [] {
        std::vector<std::type_index> t = lowered_operator_types();
        t.push_back(typeid(ConstantDataDesc));  // a graph input of DirectML's (lower_graph)
        check_registered_kernels("directml", t);
        return t;
    }();
    return types;
}

Support DmlDevice::supports(const Node& node) const {
    if (dynamic_cast<const ConstantDataDesc*>(node.desc.get())) return Support::yes();
    const Lowering* lowering = find_lowering(node);
    if (!lowering) return Support::no("the directml executor has no lowering for it");
    DescStore store;
    const OwnedByDirectML none = [](const Value&) { return false; };
    LoweringContext context(node, store, none);
    Lowered lowered;
    try {
        lowered = (*lowering)(context);
    } catch (const ValueError& e) {
        return Support::no(e.what());
    }
    std::vector<DML_OPERATOR_DESC> ops = {lowered.op};
    if (!lowered.unfused.is_none()) {
        const DML_TENSOR_DESC* t = store.tensor(node.outputs[0]);
        ops.push_back(activation_desc(store, lowered.unfused, t, t));
    }
    for (const DML_OPERATOR_DESC& op : ops) {
        Ref<IDMLOperator> created;
        if (HRESULT hr = dml_->CreateOperator(&op, __uuidof(IDMLOperator), created.out()); FAILED(hr))
            return Support::no("DirectML's CreateOperator refused " + describe(node) + ": " + hresult_name(hr) +
                               " (" + name_ + ")");
    }
    return Support::yes();
}

std::unique_ptr<Plan> DmlDevice::compile(const CompiledGraph& graph) {
    return std::make_unique<DmlPlan>(std::static_pointer_cast<DmlDevice>(shared_from_this()), graph);
}

}  // namespace dml::directml
