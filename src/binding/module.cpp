// The _core extension module: exceptions, then each layer's bindings.
#include "module.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "../core/errors.h"
#include "../runtime/executors.h"
#include "convert.h"

namespace dml::binding {

namespace {
PyObject* g_device_error = nullptr;
PyObject* g_out_of_memory = nullptr;
PyObject* g_not_supported = nullptr;

// An exception class of this module. Its qualified name follows the module's own (directml._core), so the stub
// generated from the module declares it, with its attributes (class defaults until an instance sets them).
PyObject* new_exception(nb::module_& m, const char* name, const char* doc, nb::handle bases, nb::dict attributes) {
    std::string qualified = nb::cast<std::string>(m.attr("__name__")) + "." + name;
    PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), attributes.ptr());
    if (!type) throw nb::python_error();
    m.attr(name) = nb::handle(type);
    return type;
}

void raise_device_error(PyObject* type, const DeviceError& e) {
    nb::object err = nb::steal(PyObject_CallFunction(type, "s", e.what()));
    if (!err.is_valid()) return;
    nb::setattr(err, "code", nb::str(e.code.c_str()));
    if (auto* oom = dynamic_cast<const OutOfDeviceMemory*>(&e)) nb::setattr(err, "bytes", nb::int_(oom->bytes));
    PyErr_SetObject(type, err.ptr());
}
}  // namespace

nb::object copy_to_numpy(const Buffer& buffer) {
    // A fresh host copy: the Buffer stays independent of the array.
    return download_to_numpy(*buffer.memory, buffer.data_type, buffer.shape);
}

nb::handle outputs_type(nb::module_& m, const char* name, const char* fields) {
    nb::handle type =
        nb::module_::import_("collections").attr("namedtuple")(name, fields, "module"_a = "directml").release();
    m.attr(name) = type;
    return type;
}

nb::object dlpack_view(const Buffer& buffer) {
    std::vector<size_t> dims(buffer.shape.begin(), buffer.shape.end());
    auto* keep = new std::shared_ptr<Memory>(buffer.memory);
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<Memory>*>(p); });
    DLPackDevice dev = buffer.memory->device->dlpack_device();
    // array_api: an object with __dlpack__/__dlpack_device__ that checks dl_device, max_version and copy itself.
    return nb::cast(nb::ndarray<nb::array_api>(buffer.memory->data, dims.size(), dims.data(), owner, nullptr,
                                               dlpack_dtype(buffer.data_type),
                                               dev.type, dev.id));
}

}  // namespace dml::binding

NB_MODULE(_core, m) {
    using namespace dml::binding;
    m.doc() = "directml's C++ core: graph builder, executors and operators";
    // Default arguments (FusedActivation.none(), enums) live in function records that are torn down after
    // nanobind's leak check at exit: silence its report; tests/test_leaks.py measures real leaks.
    nb::set_leak_warnings(false);

    nb::dict device_error_attributes, oom_attributes;
    device_error_attributes["code"] = "";
    oom_attributes["bytes"] = 0;
    g_device_error = new_exception(m, "DeviceError", "An executor's device failed; .code is the backend's error name.",
                                   PyExc_RuntimeError, device_error_attributes);
    g_out_of_memory = new_exception(m, "OutOfDeviceMemory",
                                    "The device could not allocate; .bytes is how much was asked for.",
                                    nb::make_tuple(nb::handle(g_device_error), nb::handle(PyExc_MemoryError)),
                                    oom_attributes);
    g_not_supported = new_exception(m, "NotSupportedError",
                                    "The device's executor does not run a node of the graph (an operator, a data type, "
                                    "a fused activation); the same graph may run on another device.",
                                    nb::handle(g_device_error), nb::dict());
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const dml::OutOfDeviceMemory& e) {
            raise_device_error(g_out_of_memory, e);
        } catch (const dml::NotSupported& e) {
            raise_device_error(g_not_supported, e);
        } catch (const dml::DeviceError& e) {
            raise_device_error(g_device_error, e);
        } catch (const dml::TypeError& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        } catch (const dml::ValueError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        }
    });

    bind_core(m);
    bind_activation(m);  // first: FusedActivation is a default argument of later functions
    bind_elementwise(m);
    bind_gemm_convolution(m);
    bind_reduce(m);
    bind_data_movement(m);
    bind_pooling(m);
    bind_normalization(m);
    bind_indexing(m);
    bind_resampling(m);
    bind_generation(m);
    bind_recurrent(m);
    bind_attention(m);

    m.def("available_device_kinds", [] { return dml::executors().available_kinds(); },
          "The device kinds this build can create here, best first.");
}
