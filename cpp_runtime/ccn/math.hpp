// The element-wise functions (maximum, minimum, gelu, ...) of the code being compiled:
// callable from host and device in device code (ccn/cuda/math.hpp), else ccn/cpu/math.hpp.
#pragma once
#include "ccn/host_device.hpp"

#if PF_DEVICE_CODE
#include "ccn/cuda/math.hpp"
#else
#include "ccn/cpu/math.hpp"
#endif
