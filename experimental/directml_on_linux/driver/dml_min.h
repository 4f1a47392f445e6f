// Minimal DirectML API declarations for the Linux experiment (issue 6).
//
// Written for this project from DirectML's public documentation (the
// DML_*_OPERATOR_DESC and IDML* reference pages); only what the driver uses.
// Layouts, enum values, IIDs and vtable order follow DirectML's ABI. Include
// after <directx/d3d12.h> (DirectX-Headers' WSL adapter: System V COM).
#pragma once

#include <cstdint>

enum DML_TENSOR_DATA_TYPE { DML_TENSOR_DATA_TYPE_UNKNOWN = 0, DML_TENSOR_DATA_TYPE_FLOAT32 = 1, DML_TENSOR_DATA_TYPE_FLOAT16 = 2 };
enum DML_TENSOR_TYPE { DML_TENSOR_TYPE_INVALID = 0, DML_TENSOR_TYPE_BUFFER = 1 };
enum DML_TENSOR_FLAGS { DML_TENSOR_FLAG_NONE = 0, DML_TENSOR_FLAG_OWNED_BY_DML = 1 };

struct DML_BUFFER_TENSOR_DESC {
    DML_TENSOR_DATA_TYPE DataType;
    DML_TENSOR_FLAGS Flags;
    UINT DimensionCount;
    const UINT* Sizes;
    const UINT* Strides;  // may be null (packed)
    UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment;
};

struct DML_TENSOR_DESC {
    DML_TENSOR_TYPE Type;
    const void* Desc;
};

// Position in DML_OPERATOR_TYPE (0 = INVALID, 1 = ELEMENT_WISE_IDENTITY, ...).
enum DML_OPERATOR_TYPE {
    DML_OPERATOR_INVALID = 0,
    DML_OPERATOR_ELEMENT_WISE_ADD = 4,
    DML_OPERATOR_CONVOLUTION = 53,
    DML_OPERATOR_GEMM = 54,
};

enum DML_MATRIX_TRANSFORM { DML_MATRIX_TRANSFORM_NONE = 0, DML_MATRIX_TRANSFORM_TRANSPOSE = 1 };
enum DML_CONVOLUTION_MODE { DML_CONVOLUTION_MODE_CONVOLUTION = 0, DML_CONVOLUTION_MODE_CROSS_CORRELATION = 1 };
enum DML_CONVOLUTION_DIRECTION { DML_CONVOLUTION_DIRECTION_FORWARD = 0, DML_CONVOLUTION_DIRECTION_BACKWARD = 1 };

struct DML_OPERATOR_DESC {
    DML_OPERATOR_TYPE Type;
    const void* Desc;
};

struct DML_ELEMENT_WISE_ADD_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_GEMM_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* CTensor;  // optional
    const DML_TENSOR_DESC* OutputTensor;
    DML_MATRIX_TRANSFORM TransA;
    DML_MATRIX_TRANSFORM TransB;
    FLOAT Alpha;
    FLOAT Beta;
    const DML_OPERATOR_DESC* FusedActivation;  // optional
};

struct DML_CONVOLUTION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* FilterTensor;
    const DML_TENSOR_DESC* BiasTensor;  // optional
    const DML_TENSOR_DESC* OutputTensor;
    DML_CONVOLUTION_MODE Mode;
    DML_CONVOLUTION_DIRECTION Direction;
    UINT DimensionCount;  // spatial dimensions
    const UINT* Strides;
    const UINT* Dilations;
    const UINT* StartPadding;
    const UINT* EndPadding;
    const UINT* OutputPadding;
    UINT GroupCount;
    const DML_OPERATOR_DESC* FusedActivation;  // optional
};

enum DML_FEATURE { DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0, DML_FEATURE_FEATURE_LEVELS = 1 };
enum DML_FEATURE_LEVEL {
    DML_FEATURE_LEVEL_1_0 = 0x1000, DML_FEATURE_LEVEL_2_0 = 0x2000, DML_FEATURE_LEVEL_2_1 = 0x2100,
    DML_FEATURE_LEVEL_3_0 = 0x3000, DML_FEATURE_LEVEL_3_1 = 0x3100, DML_FEATURE_LEVEL_4_0 = 0x4000,
    DML_FEATURE_LEVEL_4_1 = 0x4100, DML_FEATURE_LEVEL_5_0 = 0x5000, DML_FEATURE_LEVEL_5_1 = 0x5100,
    DML_FEATURE_LEVEL_5_2 = 0x5200, DML_FEATURE_LEVEL_6_0 = 0x6000, DML_FEATURE_LEVEL_6_1 = 0x6100,
    DML_FEATURE_LEVEL_6_2 = 0x6200, DML_FEATURE_LEVEL_6_3 = 0x6300, DML_FEATURE_LEVEL_6_4 = 0x6400
};
struct DML_FEATURE_QUERY_FEATURE_LEVELS {
    UINT RequestedFeatureLevelCount;
    const DML_FEATURE_LEVEL* RequestedFeatureLevels;
};
struct DML_FEATURE_DATA_FEATURE_LEVELS {
    DML_FEATURE_LEVEL MaxSupportedFeatureLevel;
};

enum DML_EXECUTION_FLAGS { DML_EXECUTION_FLAG_NONE = 0, DML_EXECUTION_FLAG_DISABLE_META_COMMANDS = 2 };
enum DML_CREATE_DEVICE_FLAGS { DML_CREATE_DEVICE_FLAG_NONE = 0, DML_CREATE_DEVICE_FLAG_DEBUG = 1 };

struct DML_BINDING_PROPERTIES {
    UINT RequiredDescriptorCount;
    UINT64 TemporaryResourceSize;
    UINT64 PersistentResourceSize;
};

enum DML_BINDING_TYPE { DML_BINDING_TYPE_NONE = 0, DML_BINDING_TYPE_BUFFER = 1, DML_BINDING_TYPE_BUFFER_ARRAY = 2 };

struct DML_BINDING_DESC {
    DML_BINDING_TYPE Type;
    const void* Desc;
};

struct DML_BUFFER_BINDING {
    ID3D12Resource* Buffer;
    UINT64 Offset;
    UINT64 SizeInBytes;
};

struct IDMLDispatchable;
struct IDMLOperator;
struct IDMLCompiledOperator;
struct IDMLPageable;

struct DML_BINDING_TABLE_DESC {
    IDMLDispatchable* Dispatchable;
    D3D12_CPU_DESCRIPTOR_HANDLE CPUDescriptorHandle;
    D3D12_GPU_DESCRIPTOR_HANDLE GPUDescriptorHandle;
    UINT SizeInDescriptors;
};

// Interfaces: declaration order is vtable order.
struct IDMLObject : public IUnknown {
    virtual HRESULT STDMETHODCALLTYPE GetPrivateData(REFGUID guid, UINT* dataSize, void* data) = 0;
    virtual HRESULT STDMETHODCALLTYPE SetPrivateData(REFGUID guid, UINT dataSize, const void* data) = 0;
    virtual HRESULT STDMETHODCALLTYPE SetPrivateDataInterface(REFGUID guid, IUnknown* data) = 0;
    virtual HRESULT STDMETHODCALLTYPE SetName(PCWSTR name) = 0;
};

struct IDMLDevice : public IDMLObject {
    virtual HRESULT STDMETHODCALLTYPE CheckFeatureSupport(DML_FEATURE feature, UINT querySize, const void* query,
                                                          UINT supportSize, void* support) = 0;
    virtual HRESULT STDMETHODCALLTYPE CreateOperator(const DML_OPERATOR_DESC* desc, REFIID riid, void** ppv) = 0;
    virtual HRESULT STDMETHODCALLTYPE CompileOperator(IDMLOperator* op, DML_EXECUTION_FLAGS flags, REFIID riid,
                                                      void** ppv) = 0;
    virtual HRESULT STDMETHODCALLTYPE CreateOperatorInitializer(UINT count, IDMLCompiledOperator* const* ops,
                                                                REFIID riid, void** ppv) = 0;
    virtual HRESULT STDMETHODCALLTYPE CreateCommandRecorder(REFIID riid, void** ppv) = 0;
    virtual HRESULT STDMETHODCALLTYPE CreateBindingTable(const DML_BINDING_TABLE_DESC* desc, REFIID riid,
                                                         void** ppv) = 0;
    virtual HRESULT STDMETHODCALLTYPE Evict(UINT count, IDMLPageable* const* objects) = 0;
    virtual HRESULT STDMETHODCALLTYPE MakeResident(UINT count, IDMLPageable* const* objects) = 0;
    virtual HRESULT STDMETHODCALLTYPE GetDeviceRemovedReason() = 0;
    virtual HRESULT STDMETHODCALLTYPE GetParentDevice(REFIID riid, void** ppv) = 0;
};

struct IDMLDeviceChild : public IDMLObject {
    virtual HRESULT STDMETHODCALLTYPE GetDevice(REFIID riid, void** ppv) = 0;
};
struct IDMLPageable : public IDMLDeviceChild {};
struct IDMLOperator : public IDMLDeviceChild {};
struct IDMLDispatchable : public IDMLPageable {
    // By-value aggregate return: matches the WSL (System V) build of DirectML.
    virtual DML_BINDING_PROPERTIES STDMETHODCALLTYPE GetBindingProperties() = 0;
};
struct IDMLCompiledOperator : public IDMLDispatchable {};
struct IDMLOperatorInitializer : public IDMLDispatchable {
    virtual HRESULT STDMETHODCALLTYPE Reset(UINT count, IDMLCompiledOperator* const* ops) = 0;
};
struct IDMLBindingTable : public IDMLDeviceChild {
    virtual void STDMETHODCALLTYPE BindInputs(UINT count, const DML_BINDING_DESC* bindings) = 0;
    virtual void STDMETHODCALLTYPE BindOutputs(UINT count, const DML_BINDING_DESC* bindings) = 0;
    virtual void STDMETHODCALLTYPE BindTemporaryResource(const DML_BINDING_DESC* binding) = 0;
    virtual void STDMETHODCALLTYPE BindPersistentResource(const DML_BINDING_DESC* binding) = 0;
    virtual HRESULT STDMETHODCALLTYPE Reset(const DML_BINDING_TABLE_DESC* desc) = 0;
};
struct IDMLCommandRecorder : public IDMLDeviceChild {
    virtual void STDMETHODCALLTYPE RecordDispatch(ID3D12CommandList* list, IDMLDispatchable* dispatchable,
                                                  IDMLBindingTable* bindings) = 0;
};

__CRT_UUID_DECL(IDMLObject, 0xc8263aac, 0x9e0c, 0x4a2d, 0x9b, 0x8e, 0x00, 0x75, 0x21, 0xa3, 0x31, 0x7c)
__CRT_UUID_DECL(IDMLDevice, 0x6dbd6437, 0x96fd, 0x423f, 0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f)
__CRT_UUID_DECL(IDMLDeviceChild, 0x27e83142, 0x8165, 0x49e3, 0x97, 0x4e, 0x2f, 0xd6, 0x6e, 0x4c, 0xb6, 0x9d)
__CRT_UUID_DECL(IDMLPageable, 0xb1ab0825, 0x4542, 0x4a4b, 0x86, 0x17, 0x6d, 0xde, 0x6e, 0x8f, 0x62, 0x01)
__CRT_UUID_DECL(IDMLOperator, 0x26caae7a, 0x3081, 0x4633, 0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d)
__CRT_UUID_DECL(IDMLDispatchable, 0xdcb821a8, 0x1039, 0x441e, 0x9f, 0x1c, 0xb1, 0x75, 0x9c, 0x2f, 0x3c, 0xec)
__CRT_UUID_DECL(IDMLCompiledOperator, 0x6b15e56a, 0xbf5c, 0x4902, 0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4)
__CRT_UUID_DECL(IDMLOperatorInitializer, 0x427c1113, 0x435c, 0x469c, 0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13)
__CRT_UUID_DECL(IDMLBindingTable, 0x29c687dc, 0xde74, 0x4e3b, 0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc)
__CRT_UUID_DECL(IDMLCommandRecorder, 0xe6857a76, 0x2e3e, 0x4fdd, 0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53)

typedef HRESULT (*PFN_DMLCreateDevice)(ID3D12Device* device, DML_CREATE_DEVICE_FLAGS flags, REFIID riid, void** ppv);
typedef HRESULT (*PFN_DMLCreateDevice1)(ID3D12Device* device, DML_CREATE_DEVICE_FLAGS flags,
                                        DML_FEATURE_LEVEL minimumFeatureLevel, REFIID riid, void** ppv);
