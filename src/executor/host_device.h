// DML_HOST_DEVICE marks a function both executors run: on the CPU, and inside CUDA kernels when nvcc compiles it.
#pragma once

#ifdef __CUDACC__
#define DML_HOST_DEVICE __host__ __device__
#else
#define DML_HOST_DEVICE
#endif
