// The storage types f16 and bf16 (and compute_t, round_to, store_as) of the code being
// compiled: CUDA's in device code (ccn/cuda/half.hpp), else the branch-free ones of
// ccn/cpu/half.hpp (the CPU backend, and the host code of a CUDA project: its runner
// and Python module). Both are 16-bit IEEE half and bfloat16 bit patterns.
#pragma once
#include "ccn/host_device.hpp"

#if PF_DEVICE_CODE
#include "ccn/cuda/half.hpp"
#else
#include "ccn/cpu/half.hpp"
#endif
