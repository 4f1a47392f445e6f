// Conversions between Python objects and the core: dtypes, sizes, NumPy arrays in (under the cast rules) and
// device memory out.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../core/graph.h"
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
// A value bound to a tensor, as a host array. `literal`: it was a Python number or sequence, not an array, so its
// ints also bind to a float tensor (numpy.asarray would make them int64, which float32 cannot hold exactly).
struct HostValue {
    HostArray array;
    bool literal = false;
};
// `value` as a host array: arrays pass as they are, anything else goes through numpy.asarray. TypeError if neither.
HostValue as_host_value(nb::handle value, const std::string& who);

// Dimension i of `array` as a DirectML size; ValueError past 32 bits.
uint32_t array_dimension(const HostArray& array, size_t i, const std::string& who);
// The tensor shape an array gives when no sizes are asked for: its own, [1] for a 0-d array.
Sizes tensor_shape_of(const HostArray& array, const std::string& who);

// ValueError unless data of `shape` fills `desc`: the same sizes once axes of size 1 are set aside on both sides
// (a (2, 2) array fills [1, 1, 2, 2]), or flat (at most 1-D) with desc's element count.
void check_shape_fits(const Sizes& shape, const TensorDesc& desc, const std::string& who);

// Converts `value` to `desc`'s type and packed layout in new device memory of desc's total size (zero padded),
// or borrows it in place where allowed (same type, packed, aligned). Its shape must fit (check_shape_fits); its
// dtype must convert within a kind or safely. `who` prefixes every error ("input 2 'x'").
std::shared_ptr<Memory> array_to_memory(Device& device, const HostValue& value, const TensorDesc& desc,
                                        const std::string& who, bool allow_borrow);

// Converts `value` as array_to_memory does, into new host bytes of desc's total size (a constant's recorded data).
HostBytes array_to_bytes(const HostValue& value, const TensorDesc& desc, const std::string& who);
// The array's own bytes, which the result keeps alive (a lent constant), where they are desc's packed data as it
// stands (same type, C order, aligned, no padding to add); nullopt where a conversion or copy is needed. Its shape
// and dtype are checked as array_to_bytes checks them.
std::optional<HostBytes> lend_bytes(const HostValue& value, const TensorDesc& desc, const std::string& who);

// DLPack's description of a DataType.
nb::dlpack::dtype dlpack_dtype(DataType type);

// Whether `value` speaks DLPack from memory the host cannot read as an array (a CUDA tensor): such an object is
// wrapped in place with import_dlpack, never copied through the host.
bool is_device_dlpack(nb::handle value);
// The memory of any object with __dlpack__ as a Buffer of `device`, without a copy: its dtype and shape as they
// are. `stream` is passed to __dlpack__ (the protocol's: the consumer's stream the data must be ready on). A
// tensor of another device, or one not packed in C order, is a ValueError; the Buffer keeps `value` alive.
std::shared_ptr<Buffer> import_dlpack(const std::shared_ptr<Device>& device, nb::handle value, nb::handle stream,
                                      const std::string& who);

// Host memory for staging `bytes`, not zeroed; OutOfDeviceMemory (which is also a MemoryError) when there is none.
std::unique_ptr<std::byte[]> host_bytes(uint64_t bytes, const std::string& who);

// Device memory holding a packed tensor, returned as a NumPy array of its type and shape (no copy on the CPU).
nb::object memory_to_numpy(const std::shared_ptr<Memory>& memory, DataType type, const Sizes& shape);
// The same in a fresh host array, for any device: the array is independent of the memory.
nb::object download_to_numpy(const Memory& memory, DataType type, const Sizes& shape);

}  // namespace dml::binding
