// Device, Graph, Expression, TensorDesc, TensorDataType, CompiledOperator, Buffer and the views.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <list>

#include "../core/errors.h"
#include "../core/ops/elementwise.h"
#include "../core/ops/operator_table.h"
#include "../runtime/compiled_operator.h"
#include "../runtime/executors.h"
#include "convert.h"
#include "module.h"

namespace dml::binding {

namespace {

std::string describe(const Expression& e) { return e.desc.to_string(); }

// The graph input index a binding key (an input's name or its Expression) refers to.
uint32_t resolve_key(const Graph& graph, nb::handle key) {
    if (nb::isinstance<nb::str>(key)) {
        std::string name = nb::cast<std::string>(key);
        const auto& inputs = graph.inputs();
        for (uint32_t i = 0; i < inputs.size(); ++i)
            if (inputs[i].name == name) return i;
        throw ValueError("unknown input '" + name + "': the graph has no input of that name");
    }
    if (nb::isinstance<Expression>(key)) {
        const Expression& e = nb::cast<const Expression&>(key);
        if (e.graph.get() != &graph) throw ValueError("an Expression bound as an input belongs to another graph");
        if (e.value.source != Value::Source::Input || !(e.desc == graph.inputs()[e.value.index].desc))
            throw ValueError("an Expression bound as an input is not a graph input but " + describe(e));
        return e.value.index;
    }
    throw TypeError("binding keys are Expressions or input names, not " +
                    std::string(nb::str(nb::type_name(key.type())).c_str()));
}

// The memory a bound value gives a tensor: a Buffer's, or a device tensor's own (DLPack, no copy), either of the
// exact dtype and a shape that fits; or a host array converted under the cast rules (kept alive in `keep` while a
// borrowed view of it is in use).
std::shared_ptr<Memory> bound_memory(const std::shared_ptr<Device>& device, nb::handle value, const TensorDesc& desc,
                                     const std::string& who, bool allow_borrow, std::vector<nb::object>& keep) {
    if (nb::isinstance<Buffer>(value) || is_device_dlpack(value)) {
        auto buffer = nb::isinstance<Buffer>(value) ? nb::cast<std::shared_ptr<Buffer>>(value)
                                                    : import_dlpack(device, value, nb::none(), who);
        check_buffer_fits(*buffer, desc, *device, who);
        return buffer->memory;
    }
    HostValue host = as_host_value(value, who);
    keep.push_back(nb::cast(host.array));
    return array_to_memory(*device, host, desc, who, allow_borrow);
}

std::string input_kind_name(InputKind kind) {
    return kind == InputKind::Plain ? "input" : kind == InputKind::Owned ? "owned input" : "constant";
}

struct PythonOperator {
    std::shared_ptr<Graph> graph;
    std::shared_ptr<CompiledOperator> op;

    // Converts each (key, value) into device memory, checking what the core cannot see (types, devices, shapes).
    std::vector<CompiledOperator::Binding> convert(nb::handle bindings, CompiledOperator::Phase phase,
                                                   std::vector<nb::object>& keep) {
        std::vector<CompiledOperator::Binding> out;
        if (bindings.is_none()) return out;
        if (!nb::isinstance<nb::dict>(bindings))
            throw TypeError("bindings are a dict of {Expression or input name: array or Buffer}");
        for (auto [key, value] : nb::borrow<nb::dict>(bindings)) {
            uint32_t index = resolve_key(*graph, key);
            uint32_t slot = op->slot_for(index, phase);
            const TensorDesc& desc = op->graph().inputs[slot].desc;
            out.push_back({slot, bound_memory(op->device(), value, desc, op->describe_input(index),
                                              phase == CompiledOperator::Phase::Dispatch, keep)});
        }
        return out;
    }

    void initialize(nb::handle bindings) {
        std::vector<nb::object> keep;
        auto b = convert(bindings, CompiledOperator::Phase::Initialize, keep);
        nb::gil_scoped_release release;
        op->initialize(std::move(b));
    }

    nb::list call(nb::handle bindings, bool readback) {
        std::vector<nb::object> keep;
        auto b = convert(bindings, CompiledOperator::Phase::Dispatch, keep);
        std::vector<std::shared_ptr<Memory>> outputs;
        {
            nb::gil_scoped_release release;
            outputs = op->dispatch(std::move(b));
        }
        nb::list result;
        for (size_t i = 0; i < outputs.size(); ++i) {
            const TensorDesc& d = op->output_desc(i);
            if (readback) result.append(memory_to_numpy(outputs[i], d.data_type, d.sizes));
            else result.append(nb::cast(std::make_shared<Buffer>(Buffer{outputs[i], d.data_type, d.sizes})));
        }
        return result;
    }

    // CompiledOperator(cpu, inputs=['x' FLOAT32[1, 4], ...], outputs=[FLOAT32[1, 2]], initialized=True, ...).
    std::string repr() const {
        const CompiledGraph& g = op->graph();
        std::string inputs, outputs;
        for (const auto& in : g.inputs)
            inputs += (inputs.empty() ? "" : ", ") + (in.kind == InputKind::Plain ? "" : input_kind_name(in.kind) + " ") +
                      "'" + in.name + "' " + in.desc.to_string();
        for (size_t i = 0; i < g.outputs.size(); ++i)
            outputs += (outputs.empty() ? "" : ", ") + op->output_desc(i).to_string();
        return "CompiledOperator(" + op->device()->kind() + ", inputs=[" + inputs + "], outputs=[" + outputs +
               "], initialized=" + (op->initialized() ? "True" : "False") +
               ", temporary_size=" + std::to_string(op->temporary_size()) +
               ", persistent_size=" + std::to_string(op->persistent_size()) +
               ", descriptor_count=" + std::to_string(op->descriptor_count()) + ")";
    }
};

// Expression(FLOAT32[1, 4], input 'x'), Expression(FLOAT32[1, 2], output 0 of DML_OPERATOR_GEMM).
std::string expression_repr(const Expression& e) {
    std::string source;
    if (e.value.source == Value::Source::Input) {
        const GraphInput& in = e.graph->inputs()[e.value.index];
        source = input_kind_name(in.kind) + " '" + in.name + "'";
        if (!(e.desc == in.desc)) source = "a view of " + source;
    } else {
        const Node& node = e.graph->nodes()[e.value.index];
        source = "output " + std::to_string(e.value.output) + " of " + node.desc->type_name();
        if (!(e.desc == node.outputs[e.value.output])) source = "a view of " + source;
    }
    return "Expression(" + describe(e) + ", " + source + ")";
}

std::shared_ptr<Buffer> make_buffer(const std::shared_ptr<Device>& device, nb::handle array, nb::handle dtype) {
    if (is_device_dlpack(array))
        throw TypeError("Buffer: the " + std::string(nb::str(nb::type_name(array.type())).c_str()) +
                        " is in device memory; dml.Buffer.from_dlpack(device, tensor) wraps it without a copy");
    HostValue host = as_host_value(array, "Buffer");
    Sizes shape = tensor_shape_of(host.array, "Buffer");
    DataType type = dtype.is_none() ? to_data_type(nb::cast(host.array).attr("dtype")) : to_data_type(dtype);
    TensorDesc desc = make_tensor_desc("Buffer", type, shape);
    auto memory = array_to_memory(*device, host, desc, "Buffer", false);
    return std::make_shared<Buffer>(Buffer{memory, type, shape});
}

// `copy`, as NumPy's: True records a copy now (converted under the cast rules); False lends the array's own bytes
// to the graph, which keeps the array alive and reads it when compile() uploads it (as DirectML reads the data
// of a DML_CONSTANT_DATA_GRAPH_NODE_DESC at CompileGraph), and refuses where they are not the tensor's packed data
// as they stand; None lends where it can and copies otherwise. Lending spares the host a copy of every weight.
Expression graph_constant(Graph& g, nb::handle data, nb::handle dtype, std::optional<std::vector<int64_t>> sizes,
                          std::optional<std::string> name, std::optional<bool> copy) {
    std::string who = "constant" + (name ? " '" + *name + "'" : std::string());
    const bool must_copy = copy.value_or(false), must_lend = !copy.value_or(true);
    if (nb::isinstance<Buffer>(data) || is_device_dlpack(data)) {
        if (must_lend)
            throw ValueError(who + ": copy=False lends host memory, and this is device memory; a constant is host "
                                   "bytes, so a Buffer is read back (copy=True or None)");
        auto buffer = nb::isinstance<Buffer>(data) ? nb::cast<std::shared_ptr<Buffer>>(data)
                                                   : import_dlpack(g.device(), data, nb::none(), who);
        DataType type = dtype.is_none() ? buffer->data_type : to_data_type(dtype);
        TensorDesc desc = make_tensor_desc(who, type, sizes ? to_sizes(*sizes, who + " sizes") : buffer->shape);
        check_buffer_fits(*buffer, desc, *g.device(), who);
        // Recorded as host bytes, as every constant is: the executor uploads them when it compiles.
        const uint64_t total = desc.total_tensor_size_in_bytes();
        std::shared_ptr<std::byte[]> bytes = host_bytes(total, who);
        std::memset(bytes.get() + buffer->nbytes(), 0, total - buffer->nbytes());  // DirectML's padding
        {
            nb::gil_scoped_release release;
            buffer->memory->device->download(*buffer->memory, bytes.get(), buffer->nbytes());
        }
        return g.constant({bytes.get(), total, bytes}, desc, name);
    }
    HostValue host = as_host_value(data, who);
    DataType type = dtype.is_none() ? to_data_type(nb::cast(host.array).attr("dtype")) : to_data_type(dtype);
    Sizes shape = sizes ? to_sizes(*sizes, who + " sizes") : tensor_shape_of(host.array, who);
    TensorDesc desc = make_tensor_desc(who, type, shape);
    if (!must_copy)
        if (std::optional<HostBytes> lent = lend_bytes(host, desc, who)) return g.constant(std::move(*lent), desc, name);
    if (must_lend)
        throw ValueError(who + ": copy=False needs the array's bytes to be the tensor's as they stand: " +
                         std::string(data_type_name(desc.data_type)) + ", C-contiguous, aligned, " +
                         std::to_string(desc.total_tensor_size_in_bytes()) + " bytes (DirectML's size of " +
                         desc.to_string() + "); this one would need a copy (copy=None makes it)");
    return g.constant(array_to_bytes(host, desc, who), desc, name);
}

nb::object dtype_of(const Expression& e) { return to_numpy_dtype(e.data_type()); }

// Signatures of what returns NumPy objects, for the stubs. Arrays are spelled numpy.ndarray[] so that the stub
// names them NDArray: inside class Buffer, `numpy` is the method.
const auto kDtypeSig = nb::for_getter(nb::sig("def dtype(self, /) -> numpy.dtype"));

// The Buffer's contents in new memory of its device (what __dlpack__(copy=True) exports).
Buffer copy_buffer(const Buffer& b) {
    Device& device = *b.memory->device;
    auto memory = device.allocate(b.nbytes());
    std::unique_ptr<std::byte[]> host = host_bytes(b.nbytes(), "the Buffer copy");
    nb::gil_scoped_release release;
    device.download(*b.memory, host.get(), b.nbytes());
    device.upload(*memory, host.get(), b.nbytes());
    return Buffer{memory, b.data_type, b.shape};
}

}  // namespace

nb::handle typed_outputs_type(nb::module_& m, const char* name, const char* fields,
                              std::initializer_list<std::string_view> optional) {
    nb::handle type = outputs_type(m, name, fields);
    type.attr("__module__") = m.attr("__name__");
    nb::object property = nb::module_::import_("builtins").attr("property");
    static std::list<std::string> sigs;  // nb::sig keeps the pointer
    std::string_view all(fields);
    for (size_t i = 0, start = 0; start < all.size(); ++i) {
        size_t end = std::min(all.find(' ', start), all.size());
        const std::string field(all.substr(start, end - start));
        start = end + 1;
        const bool maybe_none = std::find(optional.begin(), optional.end(), field) != optional.end();
        // A field that shadows a tuple method (count, index) is typed Any: type checkers refuse another type there.
        const std::string result = nb::hasattr(nb::handle((PyObject*)&PyTuple_Type), field.c_str()) ? "typing.Any"
                                   : maybe_none ? "Expression | None" : "Expression";
        const std::string& sig = sigs.emplace_back("def " + field + "(self, /) -> " + result);
        type.attr(field.c_str()) = property(nb::cpp_function(
            [i](nb::handle self) { return nb::borrow(PyTuple_GetItem(self.ptr(), Py_ssize_t(i))); }, nb::is_method(),
            nb::sig(sig.c_str())));
    }
    return type;
}

std::string call_error(std::string_view call, std::string_view message) {
    // A message that already names the function ("fill_value_constant: ...") loses that name; a DirectML type
    // that leads it moves to the end.
    const std::string_view name = call.substr(0, call.find('('));
    if (message.starts_with(name) && message.substr(name.size()).starts_with(": ")) message.remove_prefix(name.size() + 2);
    std::string out(call);
    if (message.starts_with("DML_OPERATOR_")) {
        if (size_t colon = message.find(": "); colon != std::string_view::npos)
            return out.append(": ").append(message.substr(colon + 2)).append(" (").append(message.substr(0, colon)).append(")");
    }
    return out.append(": ").append(message);
}

void check_buffer_fits(const Buffer& buffer, const TensorDesc& desc, const Device& device, const std::string& who) {
    if (buffer.memory->device.get() != &device)
        throw ValueError(who + ": the Buffer belongs to a different device (" + buffer.memory->device->kind() +
                         " " + buffer.memory->device->name() + ")");
    if (buffer.data_type != desc.data_type)
        throw ValueError(who + ": the Buffer holds " + std::string(data_type_name(buffer.data_type)) +
                         " but the tensor is " + std::string(data_type_name(desc.data_type)) +
                         " (a Buffer is never converted)");
    check_shape_fits(buffer.shape, desc, who + " (a Buffer)");
}

void bind_core(nb::module_& m) {
    nb::enum_<DataType>(m, "TensorDataType", "DirectML's tensor element types (DML_TENSOR_DATA_TYPE).")
        .value("FLOAT32", DataType::Float32)
        .value("FLOAT16", DataType::Float16)
        .value("FLOAT64", DataType::Float64)
        .value("UINT32", DataType::UInt32)
        .value("UINT16", DataType::UInt16)
        .value("UINT8", DataType::UInt8)
        .value("INT32", DataType::Int32)
        .value("INT16", DataType::Int16)
        .value("INT8", DataType::Int8)
        .value("UINT64", DataType::UInt64)
        .value("INT64", DataType::Int64);

    nb::class_<TensorDesc>(m, "TensorDesc", "A DirectML buffer tensor description: type, sizes, optional strides.")
        .def("__init__",
             [](TensorDesc* self, nb::handle dtype, std::vector<int64_t> sizes, std::optional<std::vector<int64_t>> strides) {
                 std::optional<Strides> st;
                 if (strides) st = to_strides(*strides, "TensorDesc: strides");
                 new (self) TensorDesc(make_tensor_desc("TensorDesc", to_data_type(dtype), to_sizes(sizes, "TensorDesc: sizes"), st));
             },
             "dtype"_a, "sizes"_a, "strides"_a = nb::none())
        .def_prop_ro("data_type", [](const TensorDesc& d) { return d.data_type; })
        .def_prop_ro("sizes", [](const TensorDesc& d) { return to_tuple(d.sizes); })
        .def_prop_ro("strides", [](const TensorDesc& d) -> std::optional<IntTuple> {
            if (d.strides) return to_tuple(*d.strides);
            return std::nullopt;
        }, "The element strides, or None when packed.")
        .def_prop_ro("total_tensor_size_in_bytes", &TensorDesc::total_tensor_size_in_bytes,
                     "DirectML's size rule: the end of the last addressed element, rounded up to 4 bytes.")
        .def("__eq__", [](const TensorDesc& a, const TensorDesc& b) { return a == b; }, nb::is_operator(),
             nb::sig("def __eq__(self, other: object, /) -> bool"))
        .def("__hash__", [](const TensorDesc& d) { return nb::hash(nb::make_tuple(int(d.data_type), to_tuple(d.effective_strides()), to_tuple(d.sizes))); })
        .def("__repr__", [](const TensorDesc& d) { return "TensorDesc(" + d.to_string() + ")"; });

    nb::class_<Device>(m, "Device",
                       "An executor's device: 'cpu', 'cuda' or 'directml'. threads= (cpu): the host threads its kernels "
                       "use; by default DIRECTML_NUM_THREADS, else every processor this process may use.")
        .def(nb::new_([](std::optional<std::string> kind, int index, std::optional<uint32_t> threads) {
                 auto device = executors().create(kind.value_or(""), index);
                 if (threads) device->set_thread_count(*threads);
                 return device;
             }),
             "kind"_a = nb::none(), "index"_a = 0, nb::kw_only(), "threads"_a = nb::none())
        .def_prop_ro("kind", &Device::kind)
        .def_prop_ro("name", &Device::name)
        .def_prop_ro("_operator_types", [](const Device& d) {
                         std::vector<std::string> names;
                         for (std::type_index t : d.operator_types())
                             if (const OperatorEntry* e = find_operator(t)) names.emplace_back(e->desc);
                         return names;
                     }, "The operator table's desc types this device's executor has kernels for.")
        .def("__repr__", [](const Device& d) { return "Device('" + d.kind() + "', name='" + d.name() + "')"; });

    nb::class_<Buffer>(m, "Buffer", "A tensor resident on a device; binds in place of an array.")
        .def(nb::new_(&make_buffer), "device"_a, "array"_a, "dtype"_a = nb::none())
        .def_static("from_dlpack",
                    [](const std::shared_ptr<Device>& device, nb::handle tensor, nb::handle stream) {
                        return import_dlpack(device, tensor, stream, "Buffer.from_dlpack");
                    },
                    "device"_a, "tensor"_a, nb::kw_only(), "stream"_a = nb::none(),
                    "The memory of any DLPack tensor on `device` (a NumPy array on cpu, a PyTorch or CuPy tensor on "
                    "cuda) as a Buffer, without a copy: its dtype and shape as they are; it must be packed in C "
                    "order. `stream` goes to tensor.__dlpack__ (the stream the data must be ready on): by default the "
                    "device's own, so that the producer's pending work is ordered before our reads.")
        .def_prop_ro("shape", [](const Buffer& b) { return to_tuple(b.shape); })
        .def_prop_ro("dtype", [](const Buffer& b) { return to_numpy_dtype(b.data_type); }, kDtypeSig)
        .def_prop_ro("nbytes", &Buffer::nbytes)
        .def_prop_ro("device", [](const Buffer& b) { return b.memory->device; })
        .def("numpy", [](const Buffer& b) { return copy_to_numpy(b); }, nb::sig("def numpy(self) -> numpy.ndarray[]"),
             "A copy of the contents as a NumPy array.")
        .def("__array__", [](const Buffer& b, nb::handle dtype, nb::handle copy) {
                 // NumPy's protocol: copy=False asks for a view, which only host memory allows.
                 bool view = copy.ptr() == Py_False;
                 if (view && b.memory->device->dlpack_device().type != 1)
                     throw ValueError("Buffer.__array__: the Buffer is in device memory; it cannot be viewed without a copy");
                 nb::object a = view ? memory_to_numpy(b.memory, b.data_type, b.shape) : copy_to_numpy(b);
                 if (dtype.is_none()) return a;
                 nb::object converted = a.attr("astype")(dtype, "copy"_a = false);
                 if (view && !converted.is(a))
                     throw ValueError("Buffer.__array__: converting the element type needs a copy");
                 return converted;
             }, "dtype"_a = nb::none(), "copy"_a = nb::none(),
             nb::sig("def __array__(self, dtype: object | None = None, copy: bool | None = None) -> numpy.ndarray[]"))
        .def("__dlpack__", [](const Buffer& b, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                              std::optional<bool> copy) {
                 // The view checks dl_device and max_version; stream needs no synchronization (work is done when
                 // a dispatch returns). copy=True exports a copy in new memory of the Buffer's device.
                 nb::object view = dlpack_view(copy.value_or(false) ? copy_buffer(b) : b);
                 return view.attr("__dlpack__")("stream"_a = stream, "max_version"_a = max_version,
                                                "dl_device"_a = dl_device);
             }, nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
             "copy"_a = nb::none(), "The DLPack capsule of the Buffer's memory (no copy unless copy=True).")
        .def("__dlpack_device__", [](const Buffer& b) {
                 DLPackDevice d = b.memory->device->dlpack_device();
                 return nb::typed<nb::tuple, int, int>(nb::make_tuple(d.type, d.id));
             })
        .def("__repr__", [](const Buffer& b) {
            return "Buffer(" + std::string(data_type_name(b.data_type)) + sizes_to_string(b.shape) + ", device='" +
                   b.memory->device->kind() + "', nbytes=" + std::to_string(b.nbytes()) + ")";
        });

    auto expression = nb::class_<Expression>(m, "Expression", "One output of one node of a graph (possibly a strided view).")
        .def_prop_ro("shape", [](const Expression& e) { return to_tuple(e.sizes()); })
        .def_prop_ro("dtype", &dtype_of, kDtypeSig)
        .def_prop_ro("strides", [](const Expression& e) -> std::optional<IntTuple> {
            if (e.desc.strides) return to_tuple(*e.desc.strides);
            return std::nullopt;
        }, "The element strides of a view, or None when packed.")
        .def_prop_ro("desc", [](const Expression& e) { return e.desc; })
        .def_prop_ro("name", [](const Expression& e) -> std::optional<std::string> {
            if (e.value.source == Value::Source::Input && e.desc == e.graph->inputs()[e.value.index].desc)
                return e.graph->inputs()[e.value.index].name;
            return std::nullopt;
        }, "The name of a graph input; None for anything else.")
        .def_prop_ro("graph", [](const Expression& e) { return e.graph; })
        .def("__repr__", &expression_repr);
    bind_expression_operators(expression);
    // NumPy defers to Expression's operators: `array + x` is a TypeError, not an object array of Expressions.
    expression.attr("__array_ufunc__") = nb::none();

    nb::class_<PythonOperator>(m, "CompiledOperator", "A graph compiled for a device: initialize, then call.")
        .def("initialize", &PythonOperator::initialize, "bindings"_a,
             "Binds exactly the owned inputs (weights); replaces earlier ones.")
        .def("__call__", &PythonOperator::call, "bindings"_a = nb::none(), nb::kw_only(), "readback"_a = true,
             "Dispatches with the plain inputs bound; returns one ndarray (or Buffer) per output.")
        .def_prop_ro("initialized", [](const PythonOperator& p) { return p.op->initialized(); })
        .def_prop_ro("temporary_size", [](const PythonOperator& p) { return p.op->temporary_size(); })
        .def_prop_ro("persistent_size", [](const PythonOperator& p) { return p.op->persistent_size(); })
        .def_prop_ro("descriptor_count", [](const PythonOperator& p) { return p.op->descriptor_count(); })
        .def_prop_ro("_node_types", [](const PythonOperator& p) {
                         std::vector<std::string> names;
                         for (const Node& n : p.op->graph().nodes) names.push_back(n.desc->type_name());
                         return names;
                     }, "The operator type of each node the executor compiled, after compile's rewrites, in order.")
        .def_prop_ro("device", [](const PythonOperator& p) { return p.op->device(); })
        .def("__repr__", &PythonOperator::repr);

    nb::class_<Graph>(m, "Graph", "A graph of DirectML operators under construction, for one device.")
        .def(nb::new_([](std::shared_ptr<Device> device) { return Graph::create(std::move(device)); }), "device"_a)
        .def("input",
             [](Graph& g, std::vector<int64_t> sizes, nb::handle dtype, std::optional<std::string> name, bool owned) {
                 DataType type = dtype.is_none() ? DataType::Float32 : to_data_type(dtype);
                 return g.input(make_tensor_desc("input", type, to_sizes(sizes, "input sizes")), name, owned);
             },
             "sizes"_a, "dtype"_a = nb::none(), nb::kw_only(), "name"_a = nb::none(), "owned"_a = false,
             "A graph input (float32 by default); owned inputs are bound once with initialize().")
        .def("constant", &graph_constant, "data"_a, "dtype"_a = nb::none(), nb::kw_only(), "sizes"_a = nb::none(),
             "name"_a = nb::none(), "copy"_a = true,
             "An owned input whose data is recorded now (converted under the cast rules); copy=False lends the "
             "array itself (kept alive, not to be modified, read at compile), copy=None lends where it can.")
        .def("compile",
             [](const std::shared_ptr<Graph>& g, std::vector<Expression> outputs) {
                 auto op = std::make_shared<CompiledOperator>(g, outputs);
                 {
                     // Other Python threads run meanwhile (SDXL's pipeline builds its next graph): the lent
                     // constants' arrays stay alive in g, which the caller holds, and build() reads nothing of g.
                     nb::gil_scoped_release release;
                     op->build();
                 }
                 return PythonOperator{g, std::move(op)};
             },
             "outputs"_a, "Compiles the graph's outputs for its device; other Python threads run meanwhile.")
        .def_prop_ro("device", [](const Graph& g) { return g.device(); })
        .def("__repr__", [](const Graph& g) {
            return "Graph(" + g.device()->kind() + ", inputs=" + std::to_string(g.inputs().size()) +
                   ", nodes=" + std::to_string(g.nodes().size()) + ")";
        });

    def(m, "broadcast",
          [](nb::typed<nb::object, Expression> x, std::vector<int64_t> shape) -> nb::typed<nb::object, Expression> {
              if (!nb::isinstance<Expression>(x))
                  throw TypeError("broadcast: x must be an Expression, not " +
                                  std::string(nb::str(nb::type_name(x.type())).c_str()));
              const Expression& e = nb::cast<const Expression&>(x);
              Sizes s = to_sizes(shape, "broadcast shape");
              if (s == e.sizes()) return x;  // same shape: the expression itself
              return nb::cast(broadcast(e, s));
          },
          "x"_a, "shape"_a, "A zero-stride view of x at `shape`, by NumPy's broadcasting rules.");
    def(m, "reinterpret",
          [](const Expression& x, std::vector<int64_t> sizes, std::optional<std::vector<int64_t>> strides, nb::handle dtype) {
              std::optional<Strides> st;
              if (strides) st = to_strides(*strides, "reinterpret strides");
              return reinterpret(x, dtype.is_none() ? x.data_type() : to_data_type(dtype), to_sizes(sizes, "reinterpret sizes"), st);
          },
          "x"_a, "sizes"_a, "strides"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(),
          "A view of x's buffer with other sizes and strides (bounds-checked against the buffer).");
}

}  // namespace dml::binding
