// Conversions between Python objects and the core: dtypes, sizes, NumPy arrays in (under the cast rules) and
// device memory out.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>
#include <string>
#include <vector>

#include "../core/tensor_desc.h"
#include "../executor/device.h"

namespace nb = nanobind;

namespace dml::binding {

// Accepts a dml.TensorDataType or anything numpy.dtype() accepts.
DataType to_data_type(nb::handle dtype);
nb::object to_numpy_dtype(DataType type);
// Sizes from a sequence of Python ints; ValueError for a non-positive or oversized one. `what` names it.
Sizes to_sizes(const std::vector<int64_t>& v, const std::string& what);
// Strides from a sequence of Python ints; ValueError for a negative or oversized one. `what` names them.
Strides to_strides(const std::vector<int64_t>& v, const std::string& what);
using IntTuple = nb::typed<nb::tuple, int, nb::ellipsis>;  // tuple[int, ...] in the stubs
IntTuple to_tuple(const std::vector<uint32_t>& v);

// A host array viewed as DLPack describes it (any dtype NumPy has, any strides).
using HostArray = nb::ndarray<nb::ro, nb::device::cpu>;
// `value` as a host array: arrays pass as they are, anything else goes through numpy.asarray. TypeError if neither.
HostArray as_host_array(nb::handle value, const std::string& who);

// Dimension i of `array` as a DirectML size; ValueError past 32 bits.
uint32_t array_dimension(const HostArray& array, size_t i, const std::string& who);
// The tensor shape an array gives when no sizes are asked for: its own, [1] for a 0-d array.
Sizes tensor_shape_of(const HostArray& array, const std::string& who);

// Converts `array` to `desc`'s type and packed layout in new device memory of desc's total size (zero padded).
// The array must have desc's shape or be flat with its element count; its dtype must convert within a kind or
// safely. `who` prefixes every error ("input 2 'x'").
std::shared_ptr<Memory> array_to_memory(Device& device, const HostArray& array, const TensorDesc& desc,
                                        const std::string& who, bool allow_borrow);

// Converts `array` as array_to_memory does, into host bytes (a constant's recorded data).
std::vector<std::byte> array_to_bytes(const HostArray& array, const TensorDesc& desc, const std::string& who);

// DLPack's description of a DataType.
nb::dlpack::dtype dlpack_dtype(DataType type);
// Device memory holding a packed tensor, returned as a NumPy array of its type and shape (no copy on the CPU).
nb::object memory_to_numpy(const std::shared_ptr<Memory>& memory, DataType type, const Sizes& shape);
// The same in a fresh host array, for any device: the array is independent of the memory.
nb::object download_to_numpy(const Memory& memory, DataType type, const Sizes& shape);

}  // namespace dml::binding
