// The interface of a CUDA schedule: pf::ScheduleImpl (ccn/program.hpp) on the device.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "ccn/program.hpp"

namespace pf {

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

}  // namespace pf
