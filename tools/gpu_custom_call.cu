// The GPU check's custom-call target, in XLA's GPU convention (original
// API): out = a * 3 over 2^20 floats, launched on the stream it is given.
// tools/gpu_check.sh builds it with nvcc on the GPU machine.
#include <cuda_runtime.h>

#include <cstddef>

namespace {
__global__ void Scale(const float* a, float* out, int n, float s) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * s;
}
}  // namespace

extern "C" void uir_check_scale(cudaStream_t stream, void** buffers, const char* opaque,
                                size_t opaque_len) {
  const int n = 1 << 20;
  Scale<<<(n + 255) / 256, 256, 0, stream>>>(static_cast<const float*>(buffers[0]),
                                              static_cast<float*>(buffers[1]), n, 3.0f);
}
