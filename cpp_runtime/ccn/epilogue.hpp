// What a GEMM applies to its f32 sums before it rounds them to the product's dtype, as the
// lowering plan decides (emitters/ccn/epilogues.py): a bias along the product's columns,
// GELU in its tanh form, ReLU, or the bias then either.
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>

#include "ccn/host_device.hpp"
#include "ccn/math.hpp"

namespace parafuse::ccn {

enum class Epilogue { none, bias, gelu, relu, bias_gelu, bias_relu };

PF_HOST_DEVICE inline bool adds_bias(Epilogue e) {
  return e == Epilogue::bias || e == Epilogue::bias_gelu || e == Epilogue::bias_relu;
}

// The epilogue of the sum `v` of column `column`.
template <typename B>
PF_HOST_DEVICE inline float apply_epilogue(Epilogue e, float v, const B* bias, int64_t column) {
  if (adds_bias(e)) v += static_cast<float>(bias[column]);
  if (e == Epilogue::gelu || e == Epilogue::bias_gelu) return gelu<float>(v);
  if (e == Epilogue::relu || e == Epilogue::bias_relu) return relu<float>(v);
  return v;
}

template <typename T> struct NotDeduced {  // a parameter of type T that does not deduce T
  using type = T;
};

}  // namespace parafuse::ccn
