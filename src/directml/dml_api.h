// Our own declarations of the DirectML API the executor uses, written from DirectML's reference pages (the
// DML_*_OPERATOR_DESC structures, the enumerations and the IDML* interfaces): layouts, enumeration values, IIDs and
// vtable order follow DirectML's ABI. DirectML itself is loaded at run time (dml_runtime.cpp), never linked.
// Direct3D 12 comes from DirectX-Headers; on Linux through its WSL adapter (System V COM, as libdirectml.so expects).
#pragma once

#ifdef _WIN32
#include <windows.h>  // first, as Windows code does: mingw-w64's rpcndr.h is older than d3d12.h asks when it comes first
#else
#include <wsl/winadapter.h>
#endif
#include <directx/d3d12.h>
#include <dxguids/dxguids.h>

#include <cstdint>

// Numbered as dml::DataType, which follows this enumeration.
enum DML_TENSOR_DATA_TYPE : uint32_t { DML_TENSOR_DATA_TYPE_UNKNOWN = 0 };
enum DML_TENSOR_TYPE : uint32_t { DML_TENSOR_TYPE_INVALID = 0, DML_TENSOR_TYPE_BUFFER = 1 };
enum DML_TENSOR_FLAGS : uint32_t { DML_TENSOR_FLAG_NONE = 0, DML_TENSOR_FLAG_OWNED_BY_DML = 1 };

struct DML_BUFFER_TENSOR_DESC {
    DML_TENSOR_DATA_TYPE DataType;
    DML_TENSOR_FLAGS Flags;
    UINT DimensionCount;
    const UINT* Sizes;
    const UINT* Strides;  // null: packed
    UINT64 TotalTensorSizeInBytes;
    UINT GuaranteedBaseOffsetAlignment;
};

struct DML_TENSOR_DESC {
    DML_TENSOR_TYPE Type;
    const void* Desc;
};

// The operator types the lowering produces, by their position in DML_OPERATOR_TYPE.
enum DML_OPERATOR_TYPE : uint32_t {
    DML_OPERATOR_INVALID = 0,
    DML_OPERATOR_ELEMENT_WISE_IDENTITY = 1,
    DML_OPERATOR_ELEMENT_WISE_ABS = 2,
    DML_OPERATOR_ELEMENT_WISE_ACOS = 3,
    DML_OPERATOR_ELEMENT_WISE_ADD = 4,
    DML_OPERATOR_ELEMENT_WISE_ASIN = 5,
    DML_OPERATOR_ELEMENT_WISE_ATAN = 6,
    DML_OPERATOR_ELEMENT_WISE_CEIL = 7,
    DML_OPERATOR_ELEMENT_WISE_COS = 9,
    DML_OPERATOR_ELEMENT_WISE_DIVIDE = 10,
    DML_OPERATOR_ELEMENT_WISE_EXP = 11,
    DML_OPERATOR_ELEMENT_WISE_FLOOR = 12,
    DML_OPERATOR_ELEMENT_WISE_LOG = 13,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_AND = 14,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_EQUALS = 15,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_GREATER_THAN = 16,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_LESS_THAN = 17,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_NOT = 18,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_OR = 19,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_XOR = 20,
    DML_OPERATOR_ELEMENT_WISE_MAX = 21,
    DML_OPERATOR_ELEMENT_WISE_MEAN = 22,
    DML_OPERATOR_ELEMENT_WISE_MIN = 23,
    DML_OPERATOR_ELEMENT_WISE_MULTIPLY = 24,
    DML_OPERATOR_ELEMENT_WISE_POW = 25,
    DML_OPERATOR_ELEMENT_WISE_CONSTANT_POW = 26,
    DML_OPERATOR_ELEMENT_WISE_RECIP = 27,
    DML_OPERATOR_ELEMENT_WISE_SIN = 28,
    DML_OPERATOR_ELEMENT_WISE_SQRT = 29,
    DML_OPERATOR_ELEMENT_WISE_SUBTRACT = 30,
    DML_OPERATOR_ELEMENT_WISE_TAN = 31,
    DML_OPERATOR_ELEMENT_WISE_THRESHOLD = 32,
    DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR = 33,
    DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR = 34,
    DML_OPERATOR_ACTIVATION_ELU = 35,
    DML_OPERATOR_ACTIVATION_HARD_SIGMOID = 37,
    DML_OPERATOR_ACTIVATION_IDENTITY = 38,
    DML_OPERATOR_ACTIVATION_LEAKY_RELU = 39,
    DML_OPERATOR_ACTIVATION_LINEAR = 40,
    DML_OPERATOR_ACTIVATION_PARAMETERIZED_RELU = 42,
    DML_OPERATOR_ACTIVATION_PARAMETRIC_SOFTPLUS = 43,
    DML_OPERATOR_ACTIVATION_RELU = 44,
    DML_OPERATOR_ACTIVATION_SCALED_ELU = 45,
    DML_OPERATOR_ACTIVATION_SCALED_TANH = 46,
    DML_OPERATOR_ACTIVATION_SIGMOID = 47,
    DML_OPERATOR_ACTIVATION_SOFTPLUS = 49,
    DML_OPERATOR_ACTIVATION_SOFTSIGN = 50,
    DML_OPERATOR_ACTIVATION_TANH = 51,
    DML_OPERATOR_ACTIVATION_THRESHOLDED_RELU = 52,
    DML_OPERATOR_CONVOLUTION = 53,
    DML_OPERATOR_GEMM = 54,
    DML_OPERATOR_REDUCE = 55,
    DML_OPERATOR_AVERAGE_POOLING = 56,
    DML_OPERATOR_CAST = 61,
    DML_OPERATOR_SPLIT = 62,
    DML_OPERATOR_JOIN = 63,
    DML_OPERATOR_VALUE_SCALE_2D = 65,
    DML_OPERATOR_UPSAMPLE_2D = 66,
    DML_OPERATOR_GATHER = 67,
    DML_OPERATOR_TILE = 70,
    DML_OPERATOR_BATCH_NORMALIZATION = 72,
    DML_OPERATOR_LOCAL_RESPONSE_NORMALIZATION = 74,
    DML_OPERATOR_GRU = 78,
    DML_OPERATOR_ELEMENT_WISE_SIGN = 79,
    DML_OPERATOR_ELEMENT_WISE_IS_NAN = 80,
    DML_OPERATOR_ELEMENT_WISE_ERF = 81,
    DML_OPERATOR_ELEMENT_WISE_SINH = 82,
    DML_OPERATOR_ELEMENT_WISE_COSH = 83,
    DML_OPERATOR_ELEMENT_WISE_TANH = 84,
    DML_OPERATOR_ELEMENT_WISE_ASINH = 85,
    DML_OPERATOR_ELEMENT_WISE_ACOSH = 86,
    DML_OPERATOR_ELEMENT_WISE_ATANH = 87,
    DML_OPERATOR_ELEMENT_WISE_IF = 88,
    DML_OPERATOR_ELEMENT_WISE_ADD1 = 89,
    DML_OPERATOR_ACTIVATION_SHRINK = 90,
    DML_OPERATOR_SCATTER_ELEMENTS = 94,
    DML_OPERATOR_ONE_HOT = 95,
    DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_LEFT = 97,
    DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_RIGHT = 98,
    DML_OPERATOR_ELEMENT_WISE_ROUND = 99,
    DML_OPERATOR_ELEMENT_WISE_IS_INFINITY = 100,
    DML_OPERATOR_ELEMENT_WISE_MODULUS_TRUNCATE = 101,
    DML_OPERATOR_ELEMENT_WISE_MODULUS_FLOOR = 102,
    DML_OPERATOR_FILL_VALUE_CONSTANT = 103,
    DML_OPERATOR_FILL_VALUE_SEQUENCE = 104,
    DML_OPERATOR_CUMULATIVE_SUMMATION = 105,
    DML_OPERATOR_REVERSE_SUBSEQUENCES = 106,
    DML_OPERATOR_GATHER_ELEMENTS = 107,
    DML_OPERATOR_SCATTER_ND = 109,
    DML_OPERATOR_MAX_POOLING2 = 110,
    DML_OPERATOR_SLICE1 = 111,
    DML_OPERATOR_TOP_K1 = 112,
    DML_OPERATOR_DEPTH_TO_SPACE1 = 113,
    DML_OPERATOR_SPACE_TO_DEPTH1 = 114,
    DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION1 = 115,
    DML_OPERATOR_MATRIX_MULTIPLY_INTEGER = 117,
    DML_OPERATOR_QUANTIZED_LINEAR_MATRIX_MULTIPLY = 118,
    DML_OPERATOR_CONVOLUTION_INTEGER = 119,
    DML_OPERATOR_QUANTIZED_LINEAR_CONVOLUTION = 120,
    DML_OPERATOR_ELEMENT_WISE_BIT_AND = 121,
    DML_OPERATOR_ELEMENT_WISE_BIT_OR = 122,
    DML_OPERATOR_ELEMENT_WISE_BIT_XOR = 123,
    DML_OPERATOR_ELEMENT_WISE_BIT_NOT = 124,
    DML_OPERATOR_ELEMENT_WISE_BIT_COUNT = 125,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL = 126,
    DML_OPERATOR_ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL = 127,
    DML_OPERATOR_ACTIVATION_CELU = 128,
    DML_OPERATOR_RANDOM_GENERATOR = 132,
    DML_OPERATOR_NONZERO_COORDINATES = 133,
    DML_OPERATOR_SLICE_GRAD = 135,
    DML_OPERATOR_GATHER_ND1 = 140,
    DML_OPERATOR_ELEMENT_WISE_ATAN_YX = 141,
    DML_OPERATOR_ELEMENT_WISE_DIFFERENCE_SQUARE = 143,
    DML_OPERATOR_CUMULATIVE_PRODUCT = 145,
    DML_OPERATOR_BATCH_NORMALIZATION_GRAD = 146,
    DML_OPERATOR_ROI_ALIGN1 = 149,
    DML_OPERATOR_ROI_ALIGN_GRAD = 150,
    DML_OPERATOR_BATCH_NORMALIZATION_TRAINING = 151,
    DML_OPERATOR_BATCH_NORMALIZATION_TRAINING_GRAD = 152,
    DML_OPERATOR_ELEMENT_WISE_CLIP1 = 153,
    DML_OPERATOR_ELEMENT_WISE_CLIP_GRAD1 = 154,
    DML_OPERATOR_PADDING1 = 155,
    DML_OPERATOR_ELEMENT_WISE_NEGATE = 156,
    DML_OPERATOR_ACTIVATION_GELU = 157,
    DML_OPERATOR_ACTIVATION_SOFTMAX1 = 158,
    DML_OPERATOR_ACTIVATION_LOG_SOFTMAX1 = 159,
    DML_OPERATOR_ACTIVATION_HARDMAX1 = 160,
    DML_OPERATOR_RESAMPLE2 = 161,
    DML_OPERATOR_RESAMPLE_GRAD1 = 162,
    DML_OPERATOR_MULTIHEAD_ATTENTION = 164,
    DML_OPERATOR_AVERAGE_POOLING1 = 166,
    DML_OPERATOR_ACTIVATION_SWISH = 167,
    DML_OPERATOR_ACTIVATION_HARD_SWISH = 168,
    DML_OPERATOR_MEAN_VARIANCE_NORMALIZATION2 = 171,
    DML_OPERATOR_QUANTIZE = 173,
    DML_OPERATOR_DEQUANTIZE = 174,
    DML_OPERATOR_RESAMPLE3 = 175,
};

struct DML_OPERATOR_DESC {
    DML_OPERATOR_TYPE Type;
    const void* Desc;
};

struct DML_SCALE_BIAS {
    FLOAT Scale;
    FLOAT Bias;
};

// A scalar in a tensor's data type (CLIP1's bounds, PADDING1's value).
union DML_SCALAR_UNION {
    BYTE Bytes[8];
    INT8 Int8;
    UINT8 UInt8;
    INT16 Int16;
    UINT16 UInt16;
    INT32 Int32;
    UINT32 UInt32;
    INT64 Int64;
    UINT64 UInt64;
    FLOAT Float32;
    DOUBLE Float64;
};

// --- operator descriptions ------------------------------------------------------------------------------------
// Several DirectML structures share one layout; where they do, one structure here stands for all of them, and a
// structure's trailing fields that an operator lacks are never read by it.

// Element-wise unary operators: {Input, Output, ScaleBias} (IDENTITY, ABS, EXP, ...), also THRESHOLD (Min) and
// CONSTANT_POW (Exponent) with their one parameter; {Input, Output} ones (SIGN, NEGATE, IS_NAN, ...) read the first
// two fields only.
struct DML_UNARY_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_SCALE_BIAS* ScaleBias;
    FLOAT Parameter;
};

// ROUND (RoundingMode) and IS_INFINITY (InfinityMode): {Input, Output, an enumeration}.
struct DML_UNARY_MODE_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT Mode;
};

// Binary element-wise operators and comparisons: {A, B, Output}; ADD1 adds a fused activation.
struct DML_BINARY_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_OPERATOR_DESC* FusedActivation;  // ADD1 only
};

struct DML_ELEMENT_WISE_POW_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ExponentTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_SCALE_BIAS* ScaleBias;
};

struct DML_ELEMENT_WISE_IF_OPERATOR_DESC {
    const DML_TENSOR_DESC* ConditionTensor;
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_SCALE_BIAS* ScaleBias;
    DML_TENSOR_DATA_TYPE MinMaxDataType;
    DML_SCALAR_UNION Min;
    DML_SCALAR_UNION Max;
};

struct DML_CAST_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

// Every DML_ACTIVATION_*_OPERATOR_DESC but PARAMETERIZED_RELU and the softmax family: {Input, Output} and up to
// two FLOAT parameters in DirectML's order (Alpha, Beta / Gamma / Steepness / Bias, Threshold ...). As a fused
// activation both tensors are null.
struct DML_ACTIVATION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    FLOAT Parameters[2];
};

struct DML_ACTIVATION_PARAMETERIZED_RELU_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* SlopeTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

// SOFTMAX1, LOG_SOFTMAX1 and HARDMAX1.
struct DML_ACTIVATION_SOFTMAX1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT AxisCount;
    const UINT* Axes;
};

enum DML_MATRIX_TRANSFORM : uint32_t { DML_MATRIX_TRANSFORM_NONE = 0, DML_MATRIX_TRANSFORM_TRANSPOSE = 1 };

struct DML_GEMM_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* CTensor;
    const DML_TENSOR_DESC* OutputTensor;
    DML_MATRIX_TRANSFORM TransA;
    DML_MATRIX_TRANSFORM TransB;
    FLOAT Alpha;
    FLOAT Beta;
    const DML_OPERATOR_DESC* FusedActivation;
};

// DML_CONVOLUTION_MODE and DML_CONVOLUTION_DIRECTION are numbered as dml::ConvolutionMode / ConvolutionDirection.
struct DML_CONVOLUTION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* FilterTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT Mode;
    UINT Direction;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* Dilations;
    const UINT* StartPadding;
    const UINT* EndPadding;
    const UINT* OutputPadding;
    UINT GroupCount;
    const DML_OPERATOR_DESC* FusedActivation;
};

// DML_REDUCE_FUNCTION is numbered as dml::ReduceFunction.
struct DML_REDUCE_OPERATOR_DESC {
    UINT Function;
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT AxisCount;
    const UINT* Axes;
};

struct DML_MEAN_VARIANCE_NORMALIZATION1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT AxisCount;
    const UINT* Axes;
    BOOL NormalizeVariance;
    FLOAT Epsilon;
    const DML_OPERATOR_DESC* FusedActivation;
};

// DML_FEATURE_LEVEL_6_3: UseMean FALSE takes the mean as 0.
struct DML_MEAN_VARIANCE_NORMALIZATION2_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT AxisCount;
    const UINT* Axes;
    BOOL UseMean;
    BOOL UseVariance;
    FLOAT Epsilon;
    const DML_OPERATOR_DESC* FusedActivation;
};

struct DML_BATCH_NORMALIZATION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* MeanTensor;
    const DML_TENSOR_DESC* VarianceTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* OutputTensor;
    BOOL Spatial;
    FLOAT Epsilon;
    const DML_OPERATOR_DESC* FusedActivation;
};

struct DML_AVERAGE_POOLING_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* WindowSize;
    const UINT* StartPadding;
    const UINT* EndPadding;
    BOOL IncludePadding;
};

struct DML_AVERAGE_POOLING1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* WindowSize;
    const UINT* StartPadding;
    const UINT* EndPadding;
    const UINT* Dilations;
    BOOL IncludePadding;
};

struct DML_MAX_POOLING2_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_TENSOR_DESC* OutputIndicesTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* WindowSize;
    const UINT* StartPadding;
    const UINT* EndPadding;
    const UINT* Dilations;
};

struct DML_SLICE1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* InputWindowOffsets;
    const UINT* InputWindowSizes;
    const INT* InputWindowStrides;
};

struct DML_JOIN_OPERATOR_DESC {
    UINT InputCount;
    const DML_TENSOR_DESC* InputTensors;  // an array of descriptions, not of pointers
    const DML_TENSOR_DESC* OutputTensor;
    UINT Axis;
};

struct DML_SPLIT_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    UINT OutputCount;
    const DML_TENSOR_DESC* OutputTensors;  // an array of descriptions
    UINT Axis;
};

// DML_PADDING_MODE is numbered as dml::PaddingMode.
struct DML_PADDING1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT PaddingMode;
    DML_TENSOR_DATA_TYPE PaddingValueDataType;
    DML_SCALAR_UNION PaddingValue;
    UINT DimensionCount;
    const UINT* StartPadding;
    const UINT* EndPadding;
};

struct DML_TILE_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT RepeatsCount;
    const UINT* Repeats;
};

// SPACE_TO_DEPTH1 and DEPTH_TO_SPACE1; DML_DEPTH_SPACE_ORDER is numbered as dml::DepthSpaceOrder.
struct DML_DEPTH_SPACE1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT BlockSize;
    UINT Order;
};

struct DML_ELEMENT_WISE_CLIP_GRAD1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputGradientTensor;
    const DML_TENSOR_DESC* OutputGradientTensor;
    DML_TENSOR_DATA_TYPE MinMaxDataType;
    DML_SCALAR_UNION Min;
    DML_SCALAR_UNION Max;
};

// QUANTIZE_LINEAR and DEQUANTIZE_LINEAR.
struct DML_ELEMENT_WISE_QUANTIZATION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* ZeroPointTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_MATRIX_MULTIPLY_INTEGER_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* AZeroPointTensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* BZeroPointTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY_OPERATOR_DESC {
    const DML_TENSOR_DESC* ATensor;
    const DML_TENSOR_DESC* AScaleTensor;
    const DML_TENSOR_DESC* AZeroPointTensor;
    const DML_TENSOR_DESC* BTensor;
    const DML_TENSOR_DESC* BScaleTensor;
    const DML_TENSOR_DESC* BZeroPointTensor;
    const DML_TENSOR_DESC* OutputScaleTensor;
    const DML_TENSOR_DESC* OutputZeroPointTensor;
    const DML_TENSOR_DESC* OutputTensor;
};

struct DML_CONVOLUTION_INTEGER_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputZeroPointTensor;
    const DML_TENSOR_DESC* FilterTensor;
    const DML_TENSOR_DESC* FilterZeroPointTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* Dilations;
    const UINT* StartPadding;
    const UINT* EndPadding;
    UINT GroupCount;
};

struct DML_QUANTIZED_LINEAR_CONVOLUTION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputScaleTensor;
    const DML_TENSOR_DESC* InputZeroPointTensor;
    const DML_TENSOR_DESC* FilterTensor;
    const DML_TENSOR_DESC* FilterScaleTensor;
    const DML_TENSOR_DESC* FilterZeroPointTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* OutputScaleTensor;
    const DML_TENSOR_DESC* OutputZeroPointTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT DimensionCount;
    const UINT* Strides;
    const UINT* Dilations;
    const UINT* StartPadding;
    const UINT* EndPadding;
    UINT GroupCount;
};

// CUMULATIVE_SUMMATION (HasExclusiveSum) and CUMULATIVE_PRODUCT (HasExclusiveProduct); DML_AXIS_DIRECTION is
// numbered as dml::AxisDirection.
struct DML_CUMULATIVE_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT Axis;
    UINT AxisDirection;
    BOOL HasExclusive;
};

struct DML_TOP_K1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputValueTensor;
    const DML_TENSOR_DESC* OutputIndexTensor;
    UINT Axis;
    UINT K;
    UINT AxisDirection;
};

struct DML_NONZERO_COORDINATES_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputCountTensor;
    const DML_TENSOR_DESC* OutputCoordinatesTensor;
};

struct DML_LOCAL_RESPONSE_NORMALIZATION_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    BOOL CrossChannel;
    UINT LocalSize;
    FLOAT Alpha;
    FLOAT Beta;
    FLOAT Bias;
};

struct DML_BATCH_NORMALIZATION_TRAINING_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* FusedAddTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_TENSOR_DESC* OutputMeanTensor;
    const DML_TENSOR_DESC* OutputVarianceTensor;
    FLOAT Epsilon;
    const DML_OPERATOR_DESC* FusedActivation;
};

// BATCH_NORMALIZATION_GRAD and BATCH_NORMALIZATION_TRAINING_GRAD.
struct DML_BATCH_NORMALIZATION_GRAD_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputGradientTensor;
    const DML_TENSOR_DESC* MeanTensor;
    const DML_TENSOR_DESC* VarianceTensor;
    const DML_TENSOR_DESC* ScaleTensor;
    const DML_TENSOR_DESC* OutputGradientTensor;
    const DML_TENSOR_DESC* OutputScaleGradientTensor;
    const DML_TENSOR_DESC* OutputBiasGradientTensor;
    FLOAT Epsilon;
};

// DML_INTERPOLATION_MODE is numbered as dml::InterpolationMode.
struct DML_ROI_ALIGN1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* ROITensor;
    const DML_TENSOR_DESC* BatchIndicesTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT ReductionFunction;
    UINT InterpolationMode;
    FLOAT SpatialScaleX;
    FLOAT SpatialScaleY;
    FLOAT InputPixelOffset;
    FLOAT OutputPixelOffset;
    FLOAT OutOfBoundsInputValue;
    UINT MinimumSamplesPerOutput;
    UINT MaximumSamplesPerOutput;
    BOOL AlignRegionsToCorners;
};

struct DML_ROI_ALIGN_GRAD_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* InputGradientTensor;
    const DML_TENSOR_DESC* ROITensor;
    const DML_TENSOR_DESC* BatchIndicesTensor;
    const DML_TENSOR_DESC* OutputGradientTensor;
    const DML_TENSOR_DESC* OutputROIGradientTensor;
    UINT ReductionFunction;
    UINT InterpolationMode;
    FLOAT SpatialScaleX;
    FLOAT SpatialScaleY;
    FLOAT InputPixelOffset;
    FLOAT OutputPixelOffset;
    UINT MinimumSamplesPerOutput;
    UINT MaximumSamplesPerOutput;
    BOOL AlignRegionsToCorners;
};

struct DML_SLICE_GRAD_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputGradientTensor;
    const DML_TENSOR_DESC* OutputGradientTensor;
    UINT DimensionCount;
    const UINT* InputWindowOffsets;
    const UINT* InputWindowSizes;
    const INT* InputWindowStrides;
};

struct DML_REVERSE_SUBSEQUENCES_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* SequenceLengthsTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT Axis;
};

// GATHER (Axis, IndexDimensions), GATHER_ELEMENTS and ONE_HOT (Axis): {two inputs, output, parameters}.
struct DML_GATHER_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* IndicesTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT Axis;
    UINT IndexDimensions;
};

struct DML_GATHER_ND1_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* IndicesTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT InputDimensionCount;
    UINT IndicesDimensionCount;
    UINT BatchDimensionCount;
};

// SCATTER_ELEMENTS (Axis) and SCATTER_ND (InputDimensionCount, IndicesDimensionCount).
struct DML_SCATTER_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* IndicesTensor;
    const DML_TENSOR_DESC* UpdatesTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT Parameters[2];
};

struct DML_RESAMPLE2_OPERATOR_DESC {  // also RESAMPLE_GRAD1 (InputGradient, OutputGradient)
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT InterpolationMode;
    UINT RoundingDirection;
    UINT DimensionCount;
    const FLOAT* Scales;
    const FLOAT* InputPixelOffsets;
    const FLOAT* OutputPixelOffsets;
};

// DML_FEATURE_LEVEL_6_4: RESAMPLE2's fields and Antialiased.
struct DML_RESAMPLE3_OPERATOR_DESC {
    DML_RESAMPLE2_OPERATOR_DESC resample2;  // the same layout as its fields written out
    BOOL Antialiased;
};

struct DML_UPSAMPLE_2D_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    UINT ScaleWidth;  // DML_SIZE_2D {Width, Height}
    UINT ScaleHeight;
    UINT InterpolationMode;
};

struct DML_VALUE_SCALE_2D_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* OutputTensor;
    FLOAT Scale;
    UINT ChannelCount;
    const FLOAT* Bias;
};

struct DML_FILL_VALUE_CONSTANT_OPERATOR_DESC {
    const DML_TENSOR_DESC* OutputTensor;
    DML_TENSOR_DATA_TYPE ValueDataType;
    DML_SCALAR_UNION Value;
};

struct DML_FILL_VALUE_SEQUENCE_OPERATOR_DESC {
    const DML_TENSOR_DESC* OutputTensor;
    DML_TENSOR_DATA_TYPE ValueDataType;
    DML_SCALAR_UNION ValueStart;
    DML_SCALAR_UNION ValueDelta;
};

struct DML_RANDOM_GENERATOR_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputStateTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_TENSOR_DESC* OutputStateTensor;
    UINT Type;  // DML_RANDOM_GENERATOR_TYPE_PHILOX_4X32_10 = 0
};

// QUANTIZE and DEQUANTIZE; DML_QUANTIZATION_TYPE is numbered as dml::QuantizationType.
struct DML_QUANTIZE_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    UINT QuantizationType;
    UINT QuantizationTensorCount;
    const DML_TENSOR_DESC* QuantizationTensors;  // an array of descriptions: the scale, then the zero point
    const DML_TENSOR_DESC* OutputTensor;
};

// DML_RECURRENT_NETWORK_DIRECTION is numbered as dml::RecurrentNetworkDirection.
struct DML_GRU_OPERATOR_DESC {
    const DML_TENSOR_DESC* InputTensor;
    const DML_TENSOR_DESC* WeightTensor;
    const DML_TENSOR_DESC* RecurrenceTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* HiddenInitTensor;
    const DML_TENSOR_DESC* SequenceLengthsTensor;
    const DML_TENSOR_DESC* OutputSequenceTensor;
    const DML_TENSOR_DESC* OutputSingleTensor;
    UINT ActivationDescCount;
    const DML_OPERATOR_DESC* ActivationDescs;  // an array of fused-activation descriptions
    UINT Direction;
    BOOL LinearBeforeReset;
};

// DML_MULTIHEAD_ATTENTION_MASK_TYPE is numbered as dml::MultiheadAttentionMaskType.
struct DML_MULTIHEAD_ATTENTION_OPERATOR_DESC {
    const DML_TENSOR_DESC* QueryTensor;
    const DML_TENSOR_DESC* KeyTensor;
    const DML_TENSOR_DESC* ValueTensor;
    const DML_TENSOR_DESC* StackedQueryKeyTensor;
    const DML_TENSOR_DESC* StackedKeyValueTensor;
    const DML_TENSOR_DESC* StackedQueryKeyValueTensor;
    const DML_TENSOR_DESC* BiasTensor;
    const DML_TENSOR_DESC* MaskTensor;
    const DML_TENSOR_DESC* RelativePositionBiasTensor;
    const DML_TENSOR_DESC* PastKeyTensor;
    const DML_TENSOR_DESC* PastValueTensor;
    const DML_TENSOR_DESC* OutputTensor;
    const DML_TENSOR_DESC* OutputPresentKeyTensor;
    const DML_TENSOR_DESC* OutputPresentValueTensor;
    FLOAT Scale;
    FLOAT MaskFilterValue;
    UINT HeadCount;
    UINT MaskType;
};

// --- graphs ----------------------------------------------------------------------------------------------------

struct IDMLOperator;

enum DML_GRAPH_NODE_TYPE : uint32_t { DML_GRAPH_NODE_TYPE_INVALID = 0, DML_GRAPH_NODE_TYPE_OPERATOR = 1 };
enum DML_GRAPH_EDGE_TYPE : uint32_t {
    DML_GRAPH_EDGE_TYPE_INVALID = 0,
    DML_GRAPH_EDGE_TYPE_INPUT = 1,
    DML_GRAPH_EDGE_TYPE_OUTPUT = 2,
    DML_GRAPH_EDGE_TYPE_INTERMEDIATE = 3,
};

struct DML_OPERATOR_GRAPH_NODE_DESC {
    IDMLOperator* Operator;
    const char* Name;
};
struct DML_GRAPH_NODE_DESC {
    DML_GRAPH_NODE_TYPE Type;
    const void* Desc;
};
struct DML_INPUT_GRAPH_EDGE_DESC {
    UINT GraphInputIndex;
    UINT ToNodeIndex;
    UINT ToNodeInputIndex;
    const char* Name;
};
struct DML_OUTPUT_GRAPH_EDGE_DESC {
    UINT FromNodeIndex;
    UINT FromNodeOutputIndex;
    UINT GraphOutputIndex;
    const char* Name;
};
struct DML_INTERMEDIATE_GRAPH_EDGE_DESC {
    UINT FromNodeIndex;
    UINT FromNodeOutputIndex;
    UINT ToNodeIndex;
    UINT ToNodeInputIndex;
    const char* Name;
};
struct DML_GRAPH_EDGE_DESC {
    DML_GRAPH_EDGE_TYPE Type;
    const void* Desc;
};
struct DML_GRAPH_DESC {
    UINT InputCount;
    UINT OutputCount;
    UINT NodeCount;
    const DML_GRAPH_NODE_DESC* Nodes;
    UINT InputEdgeCount;
    const DML_GRAPH_EDGE_DESC* InputEdges;
    UINT OutputEdgeCount;
    const DML_GRAPH_EDGE_DESC* OutputEdges;
    UINT IntermediateEdgeCount;
    const DML_GRAPH_EDGE_DESC* IntermediateEdges;
};

// --- device, binding, dispatch ----------------------------------------------------------------------------------

enum DML_FEATURE : uint32_t { DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0, DML_FEATURE_FEATURE_LEVELS = 1 };
enum DML_FEATURE_LEVEL : uint32_t {
    DML_FEATURE_LEVEL_1_0 = 0x1000,
    DML_FEATURE_LEVEL_2_0 = 0x2000,
    DML_FEATURE_LEVEL_2_1 = 0x2100,
    DML_FEATURE_LEVEL_3_0 = 0x3000,
    DML_FEATURE_LEVEL_3_1 = 0x3100,
    DML_FEATURE_LEVEL_4_0 = 0x4000,
    DML_FEATURE_LEVEL_4_1 = 0x4100,
    DML_FEATURE_LEVEL_5_0 = 0x5000,
    DML_FEATURE_LEVEL_5_1 = 0x5100,
    DML_FEATURE_LEVEL_5_2 = 0x5200,
    DML_FEATURE_LEVEL_6_0 = 0x6000,
    DML_FEATURE_LEVEL_6_1 = 0x6100,
    DML_FEATURE_LEVEL_6_2 = 0x6200,
    DML_FEATURE_LEVEL_6_3 = 0x6300,
    DML_FEATURE_LEVEL_6_4 = 0x6400,
};
struct DML_FEATURE_QUERY_FEATURE_LEVELS {
    UINT RequestedFeatureLevelCount;
    const DML_FEATURE_LEVEL* RequestedFeatureLevels;
};
struct DML_FEATURE_DATA_FEATURE_LEVELS {
    DML_FEATURE_LEVEL MaxSupportedFeatureLevel;
};

enum DML_EXECUTION_FLAGS : uint32_t { DML_EXECUTION_FLAG_NONE = 0 };
enum DML_CREATE_DEVICE_FLAGS : uint32_t { DML_CREATE_DEVICE_FLAG_NONE = 0 };

struct DML_BINDING_PROPERTIES {
    UINT RequiredDescriptorCount;
    UINT64 TemporaryResourceSize;
    UINT64 PersistentResourceSize;
};

enum DML_BINDING_TYPE : uint32_t {
    DML_BINDING_TYPE_NONE = 0,
    DML_BINDING_TYPE_BUFFER = 1,
    DML_BINDING_TYPE_BUFFER_ARRAY = 2,
};
struct DML_BINDING_DESC {
    DML_BINDING_TYPE Type;
    const void* Desc;
};
struct DML_BUFFER_BINDING {
    ID3D12Resource* Buffer;
    UINT64 Offset;
    UINT64 SizeInBytes;
};

struct DML_BUFFER_ARRAY_BINDING {
    UINT BindingCount;
    const DML_BUFFER_BINDING* Bindings;
};

struct IDMLDispatchable;
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
    virtual HRESULT STDMETHODCALLTYPE GetPrivateData(REFGUID guid, UINT* size, void* data) = 0;
    virtual HRESULT STDMETHODCALLTYPE SetPrivateData(REFGUID guid, UINT size, const void* data) = 0;
    virtual HRESULT STDMETHODCALLTYPE SetPrivateDataInterface(REFGUID guid, IUnknown* data) = 0;
    virtual HRESULT STDMETHODCALLTYPE SetName(PCWSTR name) = 0;
};

struct IDMLDevice : public IDMLObject {
    virtual HRESULT STDMETHODCALLTYPE CheckFeatureSupport(DML_FEATURE feature, UINT query_size, const void* query,
                                                          UINT support_size, void* support) = 0;
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

struct IDMLDevice1 : public IDMLDevice {
    virtual HRESULT STDMETHODCALLTYPE CompileGraph(const DML_GRAPH_DESC* desc, DML_EXECUTION_FLAGS flags, REFIID riid,
                                                   void** ppv) = 0;
};

struct IDMLDeviceChild : public IDMLObject {
    virtual HRESULT STDMETHODCALLTYPE GetDevice(REFIID riid, void** ppv) = 0;
};
struct IDMLPageable : public IDMLDeviceChild {};
struct IDMLOperator : public IDMLDeviceChild {};
// Methods returning an aggregate: declared by value where the compiler returns it as DirectML does (MSVC; GCC and
// Clang against the System V build of DirectML on WSL and Linux), and with an explicit result pointer for MinGW,
// whose C++ ABI differs from MSVC's there (DirectX-Headers do the same for D3D12's getters).
#if defined(_WIN32) && !defined(_MSC_VER)
#define DIRECTML_RETURNS_THROUGH_POINTER 1
#endif

struct IDMLDispatchable : public IDMLPageable {
#ifdef DIRECTML_RETURNS_THROUGH_POINTER
    virtual DML_BINDING_PROPERTIES* STDMETHODCALLTYPE GetBindingProperties(DML_BINDING_PROPERTIES* result) = 0;
#else
    virtual DML_BINDING_PROPERTIES STDMETHODCALLTYPE GetBindingProperties() = 0;
#endif
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
__CRT_UUID_DECL(IDMLDevice1, 0xa0884f9a, 0xd2be, 0x4355, 0xaa, 0x5d, 0x59, 0x01, 0x28, 0x1a, 0xd1, 0xd2)
__CRT_UUID_DECL(IDMLDeviceChild, 0x27e83142, 0x8165, 0x49e3, 0x97, 0x4e, 0x2f, 0xd6, 0x6e, 0x4c, 0xb6, 0x9d)
__CRT_UUID_DECL(IDMLPageable, 0xb1ab0825, 0x4542, 0x4a4b, 0x86, 0x17, 0x6d, 0xde, 0x6e, 0x8f, 0x62, 0x01)
__CRT_UUID_DECL(IDMLOperator, 0x26caae7a, 0x3081, 0x4633, 0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d)
__CRT_UUID_DECL(IDMLDispatchable, 0xdcb821a8, 0x1039, 0x441e, 0x9f, 0x1c, 0xb1, 0x75, 0x9c, 0x2f, 0x3c, 0xec)
__CRT_UUID_DECL(IDMLCompiledOperator, 0x6b15e56a, 0xbf5c, 0x4902, 0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4)
__CRT_UUID_DECL(IDMLOperatorInitializer, 0x427c1113, 0x435c, 0x469c, 0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13)
__CRT_UUID_DECL(IDMLBindingTable, 0x29c687dc, 0xde74, 0x4e3b, 0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc)
__CRT_UUID_DECL(IDMLCommandRecorder, 0xe6857a76, 0x2e3e, 0x4fdd, 0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53)

inline DML_BINDING_PROPERTIES binding_properties(IDMLDispatchable* d) {
#ifdef DIRECTML_RETURNS_THROUGH_POINTER
    DML_BINDING_PROPERTIES p;
    return *d->GetBindingProperties(&p);
#else
    return d->GetBindingProperties();
#endif
}

// A descriptor heap's first descriptors (DirectX-Headers declare the getters as above).
inline D3D12_CPU_DESCRIPTOR_HANDLE cpu_heap_start(ID3D12DescriptorHeap* heap) {
#ifdef DIRECTML_RETURNS_THROUGH_POINTER
    D3D12_CPU_DESCRIPTOR_HANDLE h;
    return *heap->GetCPUDescriptorHandleForHeapStart(&h);
#else
    return heap->GetCPUDescriptorHandleForHeapStart();
#endif
}
inline D3D12_GPU_DESCRIPTOR_HANDLE gpu_heap_start(ID3D12DescriptorHeap* heap) {
#ifdef DIRECTML_RETURNS_THROUGH_POINTER
    D3D12_GPU_DESCRIPTOR_HANDLE h;
    return *heap->GetGPUDescriptorHandleForHeapStart(&h);
#else
    return heap->GetGPUDescriptorHandleForHeapStart();
#endif
}

using PFN_DMLCreateDevice = HRESULT (*)(ID3D12Device* device, DML_CREATE_DEVICE_FLAGS flags, REFIID riid, void** ppv);
using PFN_D3D12CreateDevice = HRESULT (*)(IUnknown* adapter, D3D_FEATURE_LEVEL level, REFIID riid, void** ppv);
