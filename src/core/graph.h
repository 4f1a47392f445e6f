// The graph core: inputs, nodes and expressions, built by operator builders that infer and validate shapes at the
// call that creates the node (as DirectMLX does). Executors compile a CompiledGraph cut from it.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensor_desc.h"

namespace dml {

// The device a graph is built for: carried for the runtime, never used by the core (which knows no executor).
class Device;
class Graph;

// Parameters of one operator, like DirectML's DML_*_OPERATOR_DESC. Each operator family derives its own.
struct OperatorDesc {
    virtual ~OperatorDesc() = default;
    // DirectML's operator type name, e.g. "DML_OPERATOR_GEMM": used in messages and the operator table.
    virtual std::string type_name() const = 0;
};

enum class InputKind { Plain, Owned, Constant };

// A constant's data as recorded: `size` host bytes at `data` (total_tensor_size_in_bytes() of its description),
// kept alive by `owner`: a copy of the graph's own, or memory the caller lent (graph.constant(copy=False), as
// DirectML's DML_CONSTANT_DATA_GRAPH_NODE_DESC points at the caller's data). Shared, as the graph and what was
// compiled from it refer to the same bytes; an executor uploads them when it compiles.
struct HostBytes {
    const std::byte* data = nullptr;
    uint64_t size = 0;
    std::shared_ptr<const void> owner;

    static HostBytes owning(std::vector<std::byte> bytes);
};
using ConstantBytes = std::shared_ptr<const HostBytes>;

struct GraphInput {
    std::string name;
    TensorDesc desc;
    InputKind kind;
    ConstantBytes constant;  // the recorded data of a Constant input; null otherwise
};

// One buffer-sized value: a graph input, or output `output` of node `index`.
struct Value {
    enum class Source : uint8_t { Input, Node } source;
    uint32_t index;
    uint32_t output = 0;
    bool operator==(const Value&) const = default;
};

// How an operator reads a value: through a description that may be a strided (zero-stride) view of it.
struct Operand {
    Value value;
    TensorDesc desc;
};

struct Node {
    std::shared_ptr<const OperatorDesc> desc;
    std::vector<std::optional<Operand>> inputs;  // nullopt: an optional input left out
    std::vector<TensorDesc> outputs;             // fully inferred, packed
};

// One output of one node (or a graph input), possibly viewed through other sizes and strides.
struct Expression {
    std::shared_ptr<Graph> graph;
    Value value;
    TensorDesc desc;

    DataType data_type() const { return desc.data_type; }
    const Sizes& sizes() const { return desc.sizes; }
};

class Graph : public std::enable_shared_from_this<Graph> {
public:
    static std::shared_ptr<Graph> create(std::shared_ptr<Device> device);

    Expression input(TensorDesc desc, std::optional<std::string> name, bool owned);
    // Records host bytes (converted by the caller, total_tensor_size_in_bytes() of `desc`) as a constant input.
    Expression constant(HostBytes data, TensorDesc desc, std::optional<std::string> name);

    // Appends a node whose output descriptions the builder has inferred; returns one Expression per output.
    std::vector<Expression> add_node(std::shared_ptr<const OperatorDesc> desc,
                                     std::vector<std::optional<Expression>> inputs, std::vector<TensorDesc> outputs);

    const std::shared_ptr<Device>& device() const { return device_; }
    const std::vector<GraphInput>& inputs() const { return inputs_; }
    const std::vector<Node>& nodes() const { return nodes_; }
    // The description of the whole buffer behind a value (what a view may address).
    const TensorDesc& value_desc(const Value& v) const;

private:
    explicit Graph(std::shared_ptr<Device> device) : device_(std::move(device)) {}
    void check_new_name(const std::string& name) const;
    std::string next_default_name() const;

    std::shared_ptr<Device> device_;
    std::vector<GraphInput> inputs_;
    std::vector<Node> nodes_;
};

// --- helpers shared by the operator builders -------------------------------------------------------------------

// All expressions must belong to one graph; returns it. `op` names the operator for the message.
std::shared_ptr<Graph> common_graph(std::string_view op, std::initializer_list<const Expression*> exprs);
// A single-output node.
Expression add_single(std::string_view op, std::shared_ptr<const OperatorDesc> desc,
                      std::vector<std::optional<Expression>> inputs, TensorDesc output);

// Views (no node): a zero-stride broadcast following NumPy's rules, and DirectML's general reinterpret.
Expression broadcast(const Expression& x, const Sizes& sizes);
Expression reinterpret(const Expression& x, const Sizes& sizes, std::optional<Strides> strides);
Expression reinterpret(const Expression& x, DataType type, const Sizes& sizes, std::optional<Strides> strides);

}  // namespace dml
