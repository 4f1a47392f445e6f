#include "convert.h"

#include <nanobind/stl/string.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <limits>
#include <vector>

#include "../core/errors.h"

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

// Reads element `offset` of a source array as the target type. Loads go through memcpy: the array may be
// misaligned.
template <class To>
To read_as(const std::byte* base, SourceType s, int64_t offset) {
    using CT = compute_t<To>;
    auto get = [&]<class From>() {
        From v;
        std::memcpy(&v, base + offset * int64_t(sizeof(From)), sizeof(From));
        if constexpr (std::is_same_v<To, half> && std::is_same_v<From, double>) return To(to_float_round_to_odd(v));
        else return To(CT(compute_t<From>(v)));
    };
    switch (s.kind) {
        case SourceType::Bool: return To(CT(std::to_integer<uint8_t>(base[offset]) != 0));
        case SourceType::Float:
            if (s.bits == 16) return get.template operator()<half>();
            if (s.bits == 32) return get.template operator()<float>();
            return get.template operator()<double>();
        case SourceType::Int:
            if (s.bits == 8) return get.template operator()<int8_t>();
            if (s.bits == 16) return get.template operator()<int16_t>();
            if (s.bits == 32) return get.template operator()<int32_t>();
            return get.template operator()<int64_t>();
        case SourceType::UInt:
            if (s.bits == 8) return get.template operator()<uint8_t>();
            if (s.bits == 16) return get.template operator()<uint16_t>();
            if (s.bits == 32) return get.template operator()<uint32_t>();
            return get.template operator()<uint64_t>();
    }
    return To();
}

bool is_c_contiguous(const HostArray& a) {
    int64_t expect = 1;
    for (size_t i = a.ndim(); i-- > 0;) {
        if (a.shape(i) != 1 && a.stride(i) != expect) return false;
        expect *= int64_t(a.shape(i));
    }
    return true;
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

HostArray as_host_array(nb::handle value, const std::string& who) {
    HostArray a;
    if (nb::try_cast(value, a, false)) return a;
    nb::object converted;
    try {
        converted = numpy().attr("asarray")(value);
    } catch (nb::python_error&) {
        converted = nb::object();
    }
    if (converted.is_valid() && nb::try_cast(converted, a, false)) return a;
    throw TypeError(who + ": expected a NumPy array or a dml.Buffer, got " +
                    std::string(nb::str(nb::type_name(value.type())).c_str()));
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

namespace {
// Checks that `array` may fill `desc` (its dtype converts, its shape fits); returns its source type.
SourceType check_fills(const HostArray& array, const TensorDesc& desc, const std::string& who) {
    SourceType src = source_type(array.dtype(), who);
    if (!castable(src, desc.data_type))
        throw ValueError(who + ": cannot convert " + source_name(src) + " to " +
                         std::string(data_type_name(desc.data_type)) + " (it would change the kind of value); call .astype() explicitly");
    uint64_t count = 1;
    Sizes shape;
    for (size_t i = 0; i < array.ndim(); ++i) {
        count *= array.shape(i);
        shape.push_back(array_dimension(array, i, who));
    }
    const bool flat = array.ndim() <= 1;
    if (!(array.ndim() == desc.rank() && shape == desc.sizes) && !(flat && count == desc.element_count()))
        throw ValueError(who + ": an array of shape " + sizes_to_string(shape) + " (" + std::to_string(count) +
                         (count == 1 ? " element" : " elements") + ") does not fill the tensor " + desc.to_string());
    return src;
}

std::vector<std::byte> convert(const HostArray& array, SourceType src, const TensorDesc& desc) {
    std::vector<std::byte> host(desc.total_tensor_size_in_bytes(), std::byte{0});
    const uint64_t count = desc.element_count();
    const std::byte* base = static_cast<const std::byte*>(array.data());
    visit_data_type(desc.data_type, [&]<class T>() {
        T* out = reinterpret_cast<T*>(host.data());
        // Walk the array in C order through its strides (in elements).
        std::vector<uint64_t> idx(array.ndim(), 0);
        int64_t offset = 0;
        for (uint64_t i = 0; i < count; ++i) {
            out[i] = read_as<T>(base, src, offset);
            for (size_t d = array.ndim(); d-- > 0;) {
                offset += array.stride(d);
                if (++idx[d] < array.shape(d)) break;
                offset -= array.stride(d) * int64_t(array.shape(d));
                idx[d] = 0;
            }
        }
    });
    return host;
}
}  // namespace

std::vector<std::byte> array_to_bytes(const HostArray& array, const TensorDesc& desc, const std::string& who) {
    return convert(array, check_fills(array, desc, who), desc);
}

std::shared_ptr<Memory> array_to_memory(Device& device, const HostArray& array, const TensorDesc& desc,
                                        const std::string& who, bool allow_borrow) {
    SourceType src = check_fills(array, desc, who);
    // Borrowed memory is read in place by the kernels: it must be packed and aligned like memory of its own.
    const bool aligned = reinterpret_cast<uintptr_t>(array.data()) % element_size(desc.data_type) == 0;
    if (allow_borrow && exact_type(src) == desc.data_type && is_c_contiguous(array) && aligned)
        return device.stage(array.data(), desc.element_count() * element_size(desc.data_type));
    std::vector<std::byte> host = convert(array, src, desc);
    auto memory = device.allocate(host.size());
    device.upload(*memory, host.data(), host.size());
    return memory;
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
    auto* host = new std::vector<std::byte>(bytes);
    nb::capsule owner(host, [](void* p) noexcept { delete static_cast<std::vector<std::byte>*>(p); });
    {
        nb::gil_scoped_release release;
        memory.device->download(memory, host->data(), bytes);
    }
    return nb::cast(nb::ndarray<nb::numpy>(host->data(), dims.size(), dims.data(), owner, nullptr, dlpack_dtype(type)));
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
