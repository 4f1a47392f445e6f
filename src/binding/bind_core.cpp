// Device, Graph, Expression, TensorDesc, TensorDataType, CompiledOperator, Buffer and the views.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "../core/errors.h"
#include "../core/ops/elementwise.h"
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
            std::string who = op->describe_input(index);
            if (nb::isinstance<Buffer>(value)) {
                auto buffer = nb::cast<std::shared_ptr<Buffer>>(value);
                check_buffer_fits(*buffer, desc, *op->device(), who);
                out.push_back({slot, buffer->memory});
            } else {
                HostArray a = as_host_array(value, who);
                keep.push_back(nb::cast(a));  // the array stays alive while a borrowed view of it is used
                out.push_back({slot, array_to_memory(*op->device(), a, desc, who, phase == CompiledOperator::Phase::Dispatch)});
            }
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
        const CompiledGraph& g = op->graph();
        for (size_t i = 0; i < outputs.size(); ++i) {
            const TensorDesc& d = g.nodes[g.outputs[i].index].outputs[g.outputs[i].output];
            if (readback) result.append(memory_to_numpy(outputs[i], d.data_type, d.sizes));
            else result.append(nb::cast(std::make_shared<Buffer>(Buffer{outputs[i], d.data_type, d.sizes})));
        }
        return result;
    }
};

std::shared_ptr<Buffer> make_buffer(const std::shared_ptr<Device>& device, nb::handle array, nb::handle dtype) {
    HostArray a = as_host_array(array, "Buffer");
    Sizes shape = tensor_shape_of(a, "Buffer");
    DataType type = dtype.is_none() ? to_data_type(nb::cast(a).attr("dtype")) : to_data_type(dtype);
    TensorDesc desc = make_tensor_desc("Buffer", type, shape);
    auto memory = array_to_memory(*device, a, desc, "Buffer", false);
    return std::make_shared<Buffer>(Buffer{memory, type, shape});
}

Expression graph_constant(Graph& g, nb::handle data, nb::handle dtype, std::optional<std::vector<int64_t>> sizes,
                          std::optional<std::string> name) {
    std::string who = "constant" + (name ? " '" + *name + "'" : std::string());
    if (nb::isinstance<Buffer>(data)) {
        auto buffer = nb::cast<std::shared_ptr<Buffer>>(data);
        DataType type = dtype.is_none() ? buffer->data_type : to_data_type(dtype);
        TensorDesc desc = make_tensor_desc(who, type, sizes ? to_sizes(*sizes, who + " sizes") : buffer->shape);
        check_buffer_fits(*buffer, desc, *g.device(), who);
        // Recorded as host bytes, as every constant is: the executor uploads them when it compiles.
        std::vector<std::byte> bytes(desc.total_tensor_size_in_bytes(), std::byte{0});
        {
            nb::gil_scoped_release release;
            buffer->memory->device->download(*buffer->memory, bytes.data(), buffer->nbytes());
        }
        return g.constant(std::move(bytes), desc, name);
    }
    HostArray a = as_host_array(data, who);
    DataType type = dtype.is_none() ? to_data_type(nb::cast(a).attr("dtype")) : to_data_type(dtype);
    Sizes shape = sizes ? to_sizes(*sizes, who + " sizes") : tensor_shape_of(a, who);
    TensorDesc desc = make_tensor_desc(who, type, shape);
    return g.constant(array_to_bytes(a, desc, who), desc, name);
}

nb::object dtype_of(const Expression& e) { return to_numpy_dtype(e.data_type()); }

// Signatures of what returns NumPy objects, for the stubs. Arrays are spelled numpy.ndarray[] so that the stub
// names them NDArray: inside class Buffer, `numpy` is the method.
const auto kDtypeSig = nb::for_getter(nb::sig("def dtype(self, /) -> numpy.dtype"));

// The Buffer's contents in new memory of its device (what __dlpack__(copy=True) exports).
Buffer copy_buffer(const Buffer& b) {
    Device& device = *b.memory->device;
    std::vector<std::byte> host(b.nbytes());
    auto memory = device.allocate(b.nbytes());
    nb::gil_scoped_release release;
    device.download(*b.memory, host.data(), host.size());
    device.upload(*memory, host.data(), host.size());
    return Buffer{memory, b.data_type, b.shape};
}

}  // namespace

void check_buffer_fits(const Buffer& buffer, const TensorDesc& desc, const Device& device, const std::string& who) {
    if (buffer.memory->device.get() != &device)
        throw ValueError(who + ": the Buffer belongs to a different device (" + buffer.memory->device->kind() +
                         " " + buffer.memory->device->name() + ")");
    if (buffer.data_type != desc.data_type)
        throw ValueError(who + ": the Buffer holds " + std::string(data_type_name(buffer.data_type)) +
                         " but the tensor is " + std::string(data_type_name(desc.data_type)) +
                         " (a Buffer is never converted)");
    uint64_t count = 1;
    for (uint32_t s : buffer.shape) count *= s;
    if (count != desc.element_count())
        throw ValueError(who + ": the Buffer holds " + std::to_string(count) + " elements " +
                         sizes_to_string(buffer.shape) + " but the tensor " + desc.to_string() + " needs " +
                         std::to_string(desc.element_count()));
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
        .def("__repr__", [](const Device& d) { return "Device('" + d.kind() + "', name='" + d.name() + "')"; });

    nb::class_<Buffer>(m, "Buffer", "A tensor resident on a device; binds in place of an array.")
        .def(nb::new_(&make_buffer), "device"_a, "array"_a, "dtype"_a = nb::none())
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
            return "Buffer(" + std::string(data_type_name(b.data_type)) + sizes_to_string(b.shape) + ", " +
                   b.memory->device->kind() + ")";
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
        .def("__repr__", [](const Expression& e) { return "Expression(" + describe(e) + ")"; });
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
        .def_prop_ro("device", [](const PythonOperator& p) { return p.op->device(); });

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
             "name"_a = nb::none(), "An owned input whose data is recorded now (converted under the cast rules).")
        .def("compile",
             [](const std::shared_ptr<Graph>& g, std::vector<Expression> outputs) {
                 return PythonOperator{g, std::make_shared<CompiledOperator>(g, outputs)};
             },
             "outputs"_a, "Compiles the graph's outputs for its device.")
        .def_prop_ro("device", [](const Graph& g) { return g.device(); });

    m.def("broadcast",
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
    m.def("reinterpret",
          [](const Expression& x, std::vector<int64_t> sizes, std::optional<std::vector<int64_t>> strides, nb::handle dtype) {
              std::optional<Strides> st;
              if (strides) st = to_strides(*strides, "reinterpret strides");
              return reinterpret(x, dtype.is_none() ? x.data_type() : to_data_type(dtype), to_sizes(sizes, "reinterpret sizes"), st);
          },
          "x"_a, "sizes"_a, "strides"_a = nb::none(), nb::kw_only(), "dtype"_a = nb::none(),
          "A view of x's buffer with other sizes and strides (bounds-checked against the buffer).");
}

}  // namespace dml::binding
