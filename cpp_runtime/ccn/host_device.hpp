// Device code or not: nvcc compiling, or the tests compiling the CUDA backend as C++ for
// their emulated device (PF_CUDA_EMULATION, ccn/cuda_emulated/). PF_HOST_DEVICE marks
// the functions that both host and device code call.
#pragma once

#if defined(__CUDACC__) || defined(PF_CUDA_EMULATION)
#define PF_DEVICE_CODE 1
#define PF_HOST_DEVICE __host__ __device__
#else
#define PF_DEVICE_CODE 0
#define PF_HOST_DEVICE
#endif
