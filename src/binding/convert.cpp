#include "convert.h"

#include <nanobind/stl/string.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>
#include <new>
#include <stdexcept>
#include <vector>

#include "../core/errors.h"
#include "../platform/platform.h"

using namespace nb::literals;

namespace dml::binding {

namespace {

// Held for the life of the process: a static nb::object would be released after the interpreter is gone.
nb::handle numpy() {
    static nb::handle np = nb::module_::import_("numpy").release();
    return np;
}

// DLPack's view of an array's element type, with NumPy's bool as its own kind.
struct SourceType {
    enum Kind { Bool, Int, UInt, Float } kind;
    int bits;
};

SourceType source_type(const nb::dlpack::dtype& t, const std::string& who) {
    using C = nb::dlpack::dtype_code;
    switch (C(t.code)) {
        case C::Bool: return {SourceType::Bool, 8};
        case C::Int: return {SourceType::Int, t.bits};
        case C::UInt: return {SourceType::UInt, t.bits};
        case C::Float:
            if (t.bits == 16 || t.bits == 32 || t.bits == 64) return {SourceType::Float, t.bits};
            break;
        default: break;
    }
    const std::string bits = std::to_string(t.bits);
    const std::string name = C(t.code) == C::Complex ? "complex" + bits
                             : C(t.code) == C::Bfloat ? "bfloat" + bits
                             : C(t.code) == C::Float  ? "float" + bits
                                                      : "DLPack type code " + std::to_string(t.code) + " of " + bits + " bits";
    throw ValueError(who + ": " + name + " arrays have no DirectML tensor type; call .astype() explicitly");
}

// "an int32 array", "a uint8 array", "a bool array".
std::string source_name(SourceType s) {
    static const char* kinds[] = {"a bool", "an int", "a uint", "a float"};
    return kinds[s.kind] + (s.kind == SourceType::Bool ? std::string() : std::to_string(s.bits)) + " array";
}

// The cast rule: within a dtype kind, or where NumPy calls the cast safe.
bool castable(SourceType s, DataType t) {
    const int tb = int(element_size(t)) * 8;
    switch (s.kind) {
        case SourceType::Bool: return true;
        case SourceType::Float: return is_float(t);
        case SourceType::Int:
            return is_signed_int(t) || (is_float(t) && (tb > s.bits || tb == 64));
        case SourceType::UInt:
            return is_unsigned_int(t) || (is_signed_int(t) && tb > s.bits) || (is_float(t) && (tb > s.bits || tb == 64));
    }
    return false;
}

DataType exact_type(SourceType s) {
    switch (s.kind) {
        case SourceType::Float: return s.bits == 16 ? DataType::Float16 : s.bits == 32 ? DataType::Float32 : DataType::Float64;
        case SourceType::Int: return s.bits == 8 ? DataType::Int8 : s.bits == 16 ? DataType::Int16 : s.bits == 32 ? DataType::Int32 : DataType::Int64;
        case SourceType::UInt: return s.bits == 8 ? DataType::UInt8 : s.bits == 16 ? DataType::UInt16 : s.bits == 32 ? DataType::UInt32 : DataType::UInt64;
        default: return DataType::Unknown;
    }
}

// float64 -> float16 through float would round twice; rounding to odd in float first keeps the result the
// correctly rounded one (float has more than two bits beyond float16's precision).
float to_float_round_to_odd(double d) {
    float f = float(d);
    if (!std::isfinite(d) || double(f) == d) return f;
    if (std::fabs(double(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

// Calls f.template operator()<From>() with the stored type of source type s (bool as uint8_t).
template <class F>
void visit_source(SourceType s, F&& f) {
    switch (s.kind) {
        case SourceType::Bool: return f.template operator()<bool>();
        case SourceType::Float:
            if (s.bits == 16) return f.template operator()<half>();
            if (s.bits == 32) return f.template operator()<float>();
            return f.template operator()<double>();
        case SourceType::Int:
            if (s.bits == 8) return f.template operator()<int8_t>();
            if (s.bits == 16) return f.template operator()<int16_t>();
            if (s.bits == 32) return f.template operator()<int32_t>();
            return f.template operator()<int64_t>();
        case SourceType::UInt:
            if (s.bits == 8) return f.template operator()<uint8_t>();
            if (s.bits == 16) return f.template operator()<uint16_t>();
            if (s.bits == 32) return f.template operator()<uint32_t>();
            return f.template operator()<uint64_t>();
    }
}

// Reads element `offset` of a source array of From as the target type. Loads go through memcpy: the array may be
// misaligned.
template <class To, class From>
To read_as(const std::byte* base, int64_t offset) {
    using CT = compute_t<To>;
    if constexpr (std::is_same_v<From, bool>) {
        return To(CT(std::to_integer<uint8_t>(base[offset]) != 0));
    } else {
        From v;
        std::memcpy(&v, base + offset * int64_t(sizeof(From)), sizeof(From));
        if constexpr (std::is_same_v<To, half> && std::is_same_v<From, double>) return To(to_float_round_to_odd(v));
        else return To(CT(compute_t<From>(v)));
    }
}

// Whether an array is packed in C order (size-1 axes may have any stride).
template <class Array>
bool is_c_contiguous(const Array& a) {
    int64_t expect = 1;
    for (size_t i = a.ndim(); i-- > 0;) {
        if (a.shape(i) != 1 && a.stride(i) != expect) return false;
        expect *= int64_t(a.shape(i));
    }
    return true;
}

Sizes without_ones(const Sizes& sizes) {
    Sizes out;
    for (uint32_t s : sizes)
        if (s != 1) out.push_back(s);
    return out;
}

std::string dlpack_device_name(int type, int id) {
    const std::string kind = type == 1 ? "cpu" : type == 2 ? "cuda" : type == 3 ? "cuda_host" : type == 13 ? "cuda_managed"
                                                                                    : "DLPack device type " + std::to_string(type);
    return kind + ":" + std::to_string(id);
}

}  // namespace

DataType to_data_type(nb::handle dtype) {
    if (nb::isinstance<DataType>(dtype)) return nb::cast<DataType>(dtype);
    nb::object d;
    try {
        d = numpy().attr("dtype")(dtype);
    } catch (nb::python_error& e) {
        throw TypeError("not a dtype: " + std::string(nb::str(nb::repr(dtype)).c_str()));
    }
    std::string name = nb::cast<std::string>(d.attr("name"));
    static const std::pair<const char*, DataType> names[] = {
        {"float32", DataType::Float32}, {"float16", DataType::Float16}, {"float64", DataType::Float64},
        {"uint32", DataType::UInt32},   {"uint16", DataType::UInt16},   {"uint8", DataType::UInt8},
        {"int32", DataType::Int32},     {"int16", DataType::Int16},     {"int8", DataType::Int8},
        {"uint64", DataType::UInt64},   {"int64", DataType::Int64}};
    for (auto& [n, t] : names)
        if (name == n) return t;
    throw ValueError("dtype " + name + " has no DirectML tensor type");
}

nb::object to_numpy_dtype(DataType type) {
    std::string name(data_type_name(type));
    for (char& c : name) c = char(std::tolower(c));
    return numpy().attr("dtype")(name);
}

Sizes to_sizes(const std::vector<int64_t>& v, const std::string& what) {
    Sizes s;
    for (int64_t x : v) {
        if (x <= 0 || x > int64_t(std::numeric_limits<uint32_t>::max()))
            throw ValueError(what + " must be positive 32-bit integers, got " + std::to_string(x));
        s.push_back(uint32_t(x));
    }
    return s;
}

Strides to_strides(const std::vector<int64_t>& v, const std::string& what) {
    Strides s;
    for (int64_t x : v) {
        if (x < 0 || x > int64_t(std::numeric_limits<uint32_t>::max()))
            throw ValueError(what + " must be unsigned 32-bit integers, got " + std::to_string(x));
        s.push_back(uint32_t(x));
    }
    return s;
}

IntTuple to_tuple(const std::vector<uint32_t>& v) {
    nb::list l;
    for (uint32_t x : v) l.append(x);
    return IntTuple(nb::tuple(l));
}

HostValue as_host_value(nb::handle value, const std::string& who) {
    HostArray a;
    if (nb::try_cast(value, a, false)) return {a, false};
    const bool literal = nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value) ||
                         nb::isinstance<nb::int_>(value) || nb::isinstance<nb::float_>(value);
    nb::object converted;
    try {
        converted = numpy().attr("asarray")(value);
    } catch (nb::python_error&) {
        converted = nb::object();
    }
    if (converted.is_valid() && nb::try_cast(converted, a, false)) return {a, literal};
    throw TypeError(who + ": expected a NumPy array (or anything numpy.asarray takes) or a dml.Buffer, got " +
                    std::string(nb::str(nb::type_name(value.type())).c_str()));
}

std::unique_ptr<std::byte[]> host_bytes(uint64_t bytes, const std::string& who) {
    // More than the machine has is refused up front: an overcommitting allocator would hand the block out and the
    // process would be killed as it is written.
    static const uint64_t physical = platform::physical_memory_bytes();
    if (bytes > physical) throw OutOfDeviceMemory("ENOMEM", bytes, who + "'s host staging memory");
    try {
        return std::unique_ptr<std::byte[]>(new std::byte[bytes]);  // not zeroed: every byte is written next
    } catch (const std::bad_alloc&) {
    }
    throw OutOfDeviceMemory("ENOMEM", bytes, who + "'s host staging memory");
}

uint32_t array_dimension(const HostArray& array, size_t i, const std::string& who) {
    // Checked, not truncated: a wrapped size could match the tensor and the copy would run past it.
    if (array.shape(i) > std::numeric_limits<uint32_t>::max())
        throw ValueError(who + ": the array's dimension " + std::to_string(i) + " has " +
                         std::to_string(array.shape(i)) + " elements, more than DirectML's 32-bit sizes allow");
    return uint32_t(array.shape(i));
}

Sizes tensor_shape_of(const HostArray& array, const std::string& who) {
    Sizes shape;
    for (size_t i = 0; i < array.ndim(); ++i) shape.push_back(array_dimension(array, i, who));
    if (shape.empty()) shape.push_back(1);
    return shape;
}

void check_shape_fits(const Sizes& shape, const TensorDesc& desc, const std::string& who) {
    uint64_t count = 1;
    for (uint32_t s : shape) count *= s;
    if (without_ones(shape) == without_ones(desc.sizes) || (shape.size() <= 1 && count == desc.element_count()))
        return;
    throw ValueError(who + ": shape " + sizes_to_string(shape) + " does not match " + sizes_to_string(desc.sizes) +
                     " (only axes of size 1 may differ; flat data needs " + std::to_string(desc.element_count()) +
                     " elements)");
}

namespace {
// Checks that `value` may fill `desc` (its dtype converts, its shape fits); returns its source type.
SourceType check_fills(const HostValue& value, const TensorDesc& desc, const std::string& who) {
    const HostArray& array = value.array;
    SourceType src = source_type(array.dtype(), who);
    // A literal's ints are numbers, not int64 data: they bind to a float tensor too.
    const bool literal_number = value.literal && src.kind != SourceType::Float && is_float(desc.data_type);
    if (!castable(src, desc.data_type) && !literal_number)
        throw ValueError(who + ": cannot convert " + source_name(src) + " to " +
                         std::string(data_type_name(desc.data_type)) + " (it would change the kind of value); call .astype() explicitly");
    Sizes shape;
    for (size_t i = 0; i < array.ndim(); ++i) shape.push_back(array_dimension(array, i, who));
    check_shape_fits(shape, desc, who);
    return src;
}

// Writes `array` as desc's type, packed, into `target` (desc's total size; the bytes past the elements zeroed).
void convert_into(const HostArray& array, SourceType src, const TensorDesc& desc, std::byte* target) {
    const uint64_t count = desc.element_count();
    const uint64_t packed = count * element_size(desc.data_type);
    std::memset(target + packed, 0, desc.total_tensor_size_in_bytes() - packed);
    const std::byte* base = static_cast<const std::byte*>(array.data());
    const bool in_order = is_c_contiguous(array) && uint64_t(array.size()) == count;  // element i at offset i
    // The same type packed in C order (model weights, mostly): the bytes as they are.
    if (exact_type(src) == desc.data_type && in_order) {
        std::memcpy(target, base, packed);
        return;
    }
    visit_data_type(desc.data_type, [&]<class T>() {
        T* out = reinterpret_cast<T*>(target);
        visit_source(src, [&]<class From>() {
            if (in_order) {
                for (uint64_t i = 0; i < count; ++i) out[i] = read_as<T, From>(base, int64_t(i));
                return;
            }
            // Walk the array in C order through its strides (in elements).
            std::vector<uint64_t> idx(array.ndim(), 0);
            int64_t offset = 0;
            for (uint64_t i = 0; i < count; ++i) {
                out[i] = read_as<T, From>(base, offset);
                for (size_t d = array.ndim(); d-- > 0;) {
                    offset += array.stride(d);
                    if (++idx[d] < array.shape(d)) break;
                    offset -= array.stride(d) * int64_t(array.shape(d));
                    idx[d] = 0;
                }
            }
        });
    });
}
}  // namespace

HostBytes array_to_bytes(const HostValue& value, const TensorDesc& desc, const std::string& who) {
    SourceType src = check_fills(value, desc, who);
    const uint64_t total = desc.total_tensor_size_in_bytes();
    std::shared_ptr<std::byte[]> host = host_bytes(total, who);
    convert_into(value.array, src, desc, host.get());
    return {host.get(), total, host};
}

std::optional<HostBytes> lend_bytes(const HostValue& value, const TensorDesc& desc, const std::string& who) {
    const HostArray& array = value.array;
    SourceType src = check_fills(value, desc, who);
    const uint64_t bytes = desc.element_count() * element_size(desc.data_type);
    // As array_to_memory borrows: the kernels of a host device read the bytes in place. A float16 tensor of an odd
    // count is longer in DirectML (4-byte multiples) than the array: it is copied, padded.
    const bool aligned = reinterpret_cast<uintptr_t>(array.data()) % element_size(desc.data_type) == 0;
    if (exact_type(src) != desc.data_type || !is_c_contiguous(array) || uint64_t(array.size()) != desc.element_count() ||
        !aligned || bytes != desc.total_tensor_size_in_bytes())
        return std::nullopt;
    return HostBytes{static_cast<const std::byte*>(array.data()), bytes, std::make_shared<const HostArray>(array)};
}

std::shared_ptr<Memory> array_to_memory(Device& device, const HostValue& value, const TensorDesc& desc,
                                        const std::string& who, bool allow_borrow) {
    const HostArray& array = value.array;
    SourceType src = check_fills(value, desc, who);
    const uint64_t total = desc.total_tensor_size_in_bytes();
    // Borrowed memory is read in place by the kernels: it must be packed and aligned like memory of its own.
    const bool aligned = reinterpret_cast<uintptr_t>(array.data()) % element_size(desc.data_type) == 0;
    // The copies run without the GIL: they wait for the device's stream, which another thread's dispatch may hold
    // for its whole run. The array stays alive: `value` holds it.
    if (allow_borrow && exact_type(src) == desc.data_type && is_c_contiguous(array) && aligned) {
        nb::gil_scoped_release release;
        return device.stage(array.data(), desc.element_count() * element_size(desc.data_type));
    }
    // Device memory first: a size the device cannot hold is OutOfDeviceMemory before any host memory is taken.
    // Host memory (the CPU executor's) is written in place; another device's goes through a host staging copy.
    auto memory = device.allocate(total);
    const bool host_memory = device.dlpack_device().type == 1;
    std::unique_ptr<std::byte[]> staging = host_memory ? nullptr : host_bytes(total, who);
    std::byte* target = host_memory ? static_cast<std::byte*>(memory->data) : staging.get();
    convert_into(array, src, desc, target);
    if (!host_memory) {
        nb::gil_scoped_release release;
        device.upload(*memory, staging.get(), total);
    }
    return memory;
}

bool is_device_dlpack(nb::handle value) {
    if (!nb::hasattr(value, "__dlpack__") || !nb::hasattr(value, "__dlpack_device__")) return false;
    nb::object device = value.attr("__dlpack_device__")();
    return nb::cast<int>(device[0]) != 1;  // kDLCPU: NumPy reads it as an array
}

std::shared_ptr<Buffer> import_dlpack(const std::shared_ptr<Device>& device, nb::handle value, nb::handle stream,
                                      const std::string& who) {
    if (!nb::hasattr(value, "__dlpack__"))
        throw TypeError(who + ": " + std::string(nb::str(nb::type_name(value.type())).c_str()) +
                        " does not speak DLPack (it has no __dlpack__)");
    const DLPackDevice ours = device->dlpack_device();
    auto refuse_device = [&](int type, int id) {
        throw ValueError(who + ": the tensor is on " + dlpack_device_name(type, id) + " but the device is " +
                         dlpack_device_name(ours.type, ours.id) + " (" + device->kind() +
                         "); move it there first, or bind it as a host array");
    };
    if (nb::hasattr(value, "__dlpack_device__")) {
        nb::object d = value.attr("__dlpack_device__")();
        if (nb::cast<int>(d[0]) != ours.type || nb::cast<int>(d[1]) != ours.id)
            refuse_device(nb::cast<int>(d[0]), nb::cast<int>(d[1]));
    }
    // The protocol's stream is the consumer's: by default ours, so that the producer orders its pending work before
    // our reads (our CUDA stream does not wait for the legacy default stream that None would name); None on the CPU.
    nb::object consumer = nb::borrow(stream);
    if (consumer.is_none())
        if (const std::optional<intptr_t> s = device->dlpack_stream()) consumer = nb::int_(*s);
    nb::object capsule = value.attr("__dlpack__")("stream"_a = consumer);
    nb::ndarray<nb::ro> a;
    if (!nb::try_cast(capsule, a, false))
        throw TypeError(who + ": " + std::string(nb::str(nb::type_name(value.type())).c_str()) +
                        ".__dlpack__() returned no DLPack tensor");
    if (a.device_type() != ours.type || a.device_id() != ours.id) refuse_device(a.device_type(), a.device_id());
    const SourceType src = source_type(a.dtype(), who);
    const DataType type = exact_type(src);
    if (type == DataType::Unknown)
        throw ValueError(who + ": bool tensors have no DirectML tensor type; convert to uint8 first");
    if (!is_c_contiguous(a))
        throw ValueError(who + ": the tensor is not packed in C order (its strides skip or reorder memory); make "
                         "it contiguous first (.contiguous() in PyTorch, ascontiguousarray in NumPy / CuPy)");
    if (reinterpret_cast<uintptr_t>(a.data()) % element_size(type) != 0)
        throw ValueError(who + ": the tensor's data is not aligned to its element size");
    Sizes shape;
    for (size_t i = 0; i < a.ndim(); ++i) {
        if (a.shape(i) == 0) throw ValueError(who + ": the tensor is empty (dimension " + std::to_string(i) + " is 0)");
        if (a.shape(i) > std::numeric_limits<uint32_t>::max())
            throw ValueError(who + ": the tensor's dimension " + std::to_string(i) +
                             " is more than DirectML's 32-bit sizes allow");
        shape.push_back(uint32_t(a.shape(i)));
    }
    if (shape.empty()) shape.push_back(1);
    uint64_t bytes = element_size(type);
    for (uint32_t s : shape) bytes *= s;
    // The memory stays the producer's: the Buffer holds its DLPack tensor (and so the producer's object) alive,
    // dropped under the GIL whichever thread releases the last reference.
    auto* keep = new nb::ndarray<nb::ro>(std::move(a));
    auto memory = std::make_shared<Memory>(device, const_cast<void*>(keep->data()), bytes, [keep](void*) {
        if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing left to release into
        nb::gil_scoped_acquire gil;
        delete keep;
    });
    return std::make_shared<Buffer>(Buffer{memory, type, shape});
}

nb::dlpack::dtype dlpack_dtype(DataType type) {
    nb::dlpack::dtype dt;
    dt.lanes = 1;
    dt.bits = uint8_t(element_size(type) * 8);
    dt.code = uint8_t(is_float(type)         ? nb::dlpack::dtype_code::Float
                      : is_signed_int(type) ? nb::dlpack::dtype_code::Int
                                            : nb::dlpack::dtype_code::UInt);
    return dt;
}

nb::object download_to_numpy(const Memory& memory, DataType type, const Sizes& shape) {
    std::vector<size_t> dims(shape.begin(), shape.end());
    uint64_t bytes = element_size(type);
    for (uint32_t s : shape) bytes *= s;
    std::unique_ptr<std::byte[]> host = host_bytes(bytes, "the readback");
    {
        nb::gil_scoped_release release;
        memory.device->download(memory, host.get(), bytes);
    }
    std::byte* data = host.get();
    nb::capsule owner(host.release(), [](void* p) noexcept { delete[] static_cast<std::byte*>(p); });
    return nb::cast(nb::ndarray<nb::numpy>(data, dims.size(), dims.data(), owner, nullptr, dlpack_dtype(type)));
}

nb::object memory_to_numpy(const std::shared_ptr<Memory>& memory, DataType type, const Sizes& shape) {
    if (memory->device->dlpack_device().type != 1) return download_to_numpy(*memory, type, shape);
    // Host memory: the array keeps the memory alive, no copy.
    std::vector<size_t> dims(shape.begin(), shape.end());
    auto* keep = new std::shared_ptr<Memory>(memory);
    nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<Memory>*>(p); });
    return nb::cast(nb::ndarray<nb::numpy>(memory->data, dims.size(), dims.data(), owner, nullptr, dlpack_dtype(type)));
}

}  // namespace dml::binding
