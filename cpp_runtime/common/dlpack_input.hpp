// parafuse: the bytes of a DLPack tensor handed to a boostfsm GPU module's run() (the
// module's pybind11 code alone includes this): where they are, how many, and the tensor
// held until the run is done (the capsule is marked used; the producer's deleter is called
// when the DlpackBytes goes).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/dlpack.hpp"

namespace parafuse {

struct DlpackBytes {
  const uint8_t* data = nullptr;
  size_t n = 0;
  bool on_device = false;  // CUDA device memory; else the host's
  std::unique_ptr<DLManagedTensor, void (*)(DLManagedTensor*)> owner{nullptr, nullptr};
};

// `who`: the function, for its errors (a tensor that is not C-contiguous, or elsewhere).
inline DlpackBytes dlpack_bytes(const pybind11::object& tensor, const std::string& who) {
  pybind11::object capsule = tensor.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!managed) throw pybind11::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  DlpackBytes bytes;
  bytes.owner = {managed, [](DLManagedTensor* m) { if (m->deleter) m->deleter(m); }};
  const DLTensor& t = managed->dl_tensor;
  int64_t elements = 1, stride = 1;
  bool contiguous = true;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    contiguous = contiguous && (!t.strides || t.shape[d] == 1 || t.strides[d] == stride);
    stride *= t.shape[d], elements *= t.shape[d];
  }
  if (!contiguous) throw pybind11::value_error(who + " needs a C-contiguous tensor");
  if (t.device.device_type != kDLCUDA && t.device.device_type != kDLCPU &&
      t.device.device_type != kDLCUDAHost)
    throw pybind11::value_error(who + " takes tensors on a CUDA device or the host, not on "
                                "device type " + std::to_string(t.device.device_type));
  bytes.n = size_t(elements) * ((t.dtype.bits * t.dtype.lanes + 7) / 8);
  bytes.data = static_cast<const uint8_t*>(t.data) + t.byte_offset;
  bytes.on_device = t.device.device_type == kDLCUDA;
  return bytes;
}

}  // namespace parafuse
