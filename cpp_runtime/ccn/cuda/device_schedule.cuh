// The interface of a CUDA schedule: pf::ScheduleImpl (ccn/program.hpp) on the device.
#pragma once
#include "ccn/namespace.hpp"
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "ccn/cuda/check.cuh"
#include "ccn/program.hpp"

namespace parafuse::ccn {

// Makes `device` current for a scope and gives the caller back its own device after: every
// public entry of a schedule holds one, since a caller (or another thread) may have made
// another device current since the constructor selected this one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    PF_CUDA(cudaGetDevice(&previous_));
    if (previous_ != device) PF_CUDA(cudaSetDevice(device));
    changed_ = previous_ != device;
  }
  ~DeviceGuard() {
    if (changed_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// What every CUDA schedule adds to pf::ScheduleImpl: its tensors as device slots (data
// is device memory; the caller reads and writes it directly, between steps).
class DeviceSchedule : public ScheduleImpl {
 public:
  virtual std::vector<Slot> device_tensors() = 0;
  // Program::bind / unbind / compute_stream (see the generated header).
  virtual void bind(const std::string& name, void* device_data) = 0;
  virtual void unbind() = 0;
  virtual cudaStream_t compute_stream() = 0;
};

}  // namespace parafuse::ccn
