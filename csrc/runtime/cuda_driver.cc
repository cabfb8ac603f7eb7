// The driver API's functions by name from libcuda.so.1; CUresult 0 is success.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "support/error.h"

namespace uir::runtime {
namespace {

using CuResult = int;
using CuDevice = int;
// Attributes of cuDeviceGetAttribute, as the driver API numbers them.
constexpr int kMultiprocessorCount = 16;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;

template <typename F>
F Symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

CudaDriverInfo Probe() {
  CudaDriverInfo info;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    info.why = std::string("no CUDA driver: ") + (err != nullptr ? err : "libcuda.so.1 not found");
    return info;
  }
  auto init = Symbol<CuResult (*)(unsigned)>(lib, "cuInit");
  auto version = Symbol<CuResult (*)(int*)>(lib, "cuDriverGetVersion");
  auto count = Symbol<CuResult (*)(int*)>(lib, "cuDeviceGetCount");
  auto get = Symbol<CuResult (*)(CuDevice*, int)>(lib, "cuDeviceGet");
  auto name = Symbol<CuResult (*)(char*, int, CuDevice)>(lib, "cuDeviceGetName");
  auto attribute = Symbol<CuResult (*)(int*, int, CuDevice)>(lib, "cuDeviceGetAttribute");
  auto memory = Symbol<CuResult (*)(size_t*, CuDevice)>(lib, "cuDeviceTotalMem_v2");
  if (init == nullptr || count == nullptr || get == nullptr || name == nullptr ||
      attribute == nullptr || memory == nullptr || version == nullptr) {
    info.why = "libcuda.so.1 lacks the driver API's device functions";
    return info;
  }
  if (const CuResult r = init(0); r != 0) {
    info.why = "cuInit failed with CUresult " + std::to_string(r);
    return info;
  }
  version(&info.driver_version);
  int n = 0;
  if (const CuResult r = count(&n); r != 0) {
    info.why = "cuDeviceGetCount failed with CUresult " + std::to_string(r);
    return info;
  }
  for (int k = 0; k < n; ++k) {
    CuDevice d = 0;
    if (get(&d, k) != 0) continue;
    CudaDeviceInfo dev;
    dev.index = k;
    char buffer[256] = {};
    if (name(buffer, sizeof(buffer) - 1, d) == 0) dev.name = buffer;
    attribute(&dev.major, kComputeCapabilityMajor, d);
    attribute(&dev.minor, kComputeCapabilityMinor, d);
    attribute(&dev.multiprocessors, kMultiprocessorCount, d);
    size_t bytes = 0;
    if (memory(&bytes, d) == 0) dev.memory_bytes = static_cast<int64_t>(bytes);
    info.devices.push_back(dev);
  }
  info.available = !info.devices.empty();
  if (!info.available) info.why = "the CUDA driver loaded but reports no device";
  return info;
}

}  // namespace

const CudaDriverInfo& CudaDriver() {
  static const CudaDriverInfo info = Probe();
  return info;
}

namespace {

// The driver API calls a device needs, looked up once.
struct Api {
  using Ptr = unsigned long long;  // CUdeviceptr
  void* lib = nullptr;
  CuResult (*init)(unsigned) = nullptr;
  CuResult (*device_get)(CuDevice*, int) = nullptr;
  CuResult (*primary_retain)(void**, CuDevice) = nullptr;
  CuResult (*set_current)(void*) = nullptr;
  CuResult (*load)(void**, const void*, unsigned, int*, void**) = nullptr;
  CuResult (*unload)(void*) = nullptr;
  CuResult (*function)(void**, void*, const char*) = nullptr;
  CuResult (*set_attribute)(void*, int, int) = nullptr;
  CuResult (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     void*, void**, void**) = nullptr;
  CuResult (*alloc)(Ptr*, size_t) = nullptr;
  CuResult (*free)(Ptr) = nullptr;
  CuResult (*to_device)(Ptr, const void*, size_t) = nullptr;
  CuResult (*to_host)(void*, Ptr, size_t) = nullptr;
  CuResult (*copy)(Ptr, Ptr, size_t) = nullptr;
  CuResult (*synchronize)() = nullptr;
  CuResult (*error_string)(CuResult, const char**) = nullptr;
  CuResult (*event_create)(void**, unsigned) = nullptr;
  CuResult (*event_record)(void*, void*) = nullptr;
  CuResult (*event_elapsed)(float*, void*, void*) = nullptr;
  CuResult (*event_destroy)(void*) = nullptr;
};

const Api& TheApi() {
  static const Api api = [] {
    Api a;
    a.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (a.lib == nullptr) return a;
    auto get = [&](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(a.lib, name));
    };
    get(a.init, "cuInit");
    get(a.device_get, "cuDeviceGet");
    get(a.primary_retain, "cuDevicePrimaryCtxRetain");
    get(a.set_current, "cuCtxSetCurrent");
    get(a.load, "cuModuleLoadDataEx");
    get(a.unload, "cuModuleUnload");
    get(a.function, "cuModuleGetFunction");
    get(a.set_attribute, "cuFuncSetAttribute");
    get(a.launch, "cuLaunchKernel");
    get(a.alloc, "cuMemAlloc_v2");
    get(a.free, "cuMemFree_v2");
    get(a.to_device, "cuMemcpyHtoD_v2");
    get(a.to_host, "cuMemcpyDtoH_v2");
    get(a.copy, "cuMemcpyDtoD_v2");
    get(a.synchronize, "cuCtxSynchronize");
    get(a.error_string, "cuGetErrorString");
    get(a.event_create, "cuEventCreate");
    get(a.event_record, "cuEventRecord");
    get(a.event_elapsed, "cuEventElapsedTime");
    get(a.event_destroy, "cuEventDestroy_v2");
    return a;
  }();
  return api;
}

void Check(const Api& api, CuResult r, const char* what) {
  if (r == 0) return;
  const char* text = nullptr;
  if (api.error_string != nullptr) api.error_string(r, &text);
  throw DeviceError(std::string("CUDA driver: ") + what +
                    " failed: " + (text != nullptr ? text : "CUresult " + std::to_string(r)));
}

// cuBLAS, loaded on a device's first GEMM: the strided batched products
// (row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T).
struct Blas {
  void* lib = nullptr;
  int (*create)(void**) = nullptr;
  int (*sgemm)(void*, int, int, int, int, int, const float*, const float*, int, long long,
               const float*, int, long long, const float*, float*, int, long long, int) = nullptr;
  int (*dgemm)(void*, int, int, int, int, int, const double*, const double*, int, long long,
               const double*, int, long long, const double*, double*, int, long long,
               int) = nullptr;
};

const Blas& TheBlas() {
  static const Blas blas = [] {
    Blas b;
    for (const char* name :
         {"libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}) {
      b.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (b.lib != nullptr) break;
    }
    if (b.lib == nullptr) return b;
    b.create = reinterpret_cast<decltype(b.create)>(dlsym(b.lib, "cublasCreate_v2"));
    b.sgemm = reinterpret_cast<decltype(b.sgemm)>(dlsym(b.lib, "cublasSgemmStridedBatched"));
    b.dgemm = reinterpret_cast<decltype(b.dgemm)>(dlsym(b.lib, "cublasDgemmStridedBatched"));
    return b;
  }();
  return blas;
}

// Attributes and JIT options as the driver API numbers them.
constexpr int kMaxDynamicSharedBytes = 8;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
constexpr int64_t kDefaultSharedLimit = 48 << 10;

class CudaDevice : public GpuDevice {
 public:
  CudaDevice(int ordinal, const std::string& ptx, const std::vector<GpuKernelInfo>& kernels)
      : api_(TheApi()), kernels_(kernels) {
    const CudaDriverInfo& info = CudaDriver();
    if (!info.available) throw DeviceError("no GPU: " + info.why);
    if (ordinal < 0 || ordinal >= static_cast<int>(info.devices.size())) {
      throw DeviceError("no GPU " + std::to_string(ordinal) + "; the driver reports " +
                        std::to_string(info.devices.size()));
    }
    if (api_.primary_retain == nullptr || api_.load == nullptr || api_.launch == nullptr ||
        api_.alloc == nullptr || api_.copy == nullptr || api_.synchronize == nullptr ||
        api_.set_attribute == nullptr || api_.function == nullptr || api_.set_current == nullptr ||
        api_.to_device == nullptr || api_.to_host == nullptr || api_.free == nullptr) {
      throw DeviceError("libcuda.so.1 lacks the driver API's module, memory or launch functions");
    }
    CuDevice device = 0;
    Check(api_, api_.device_get(&device, ordinal), "cuDeviceGet");
    Check(api_, api_.primary_retain(&context_, device), "cuDevicePrimaryCtxRetain");
    Current();
    std::string log(8192, '\0');
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
    void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
    const CuResult r = api_.load(&module_, ptx.c_str(), 2, options, values);
    if (r != 0) {
      log.resize(log.find('\0'));
      Check(api_, r, ("loading the PTX (cuModuleLoadDataEx): " + log).c_str());
    }
    for (const GpuKernelInfo& k : kernels_) {
      void* f = nullptr;
      Check(api_, api_.function(&f, module_, k.name.c_str()), "cuModuleGetFunction");
      if (k.shared_bytes > kDefaultSharedLimit) {
        Check(api_, api_.set_attribute(f, kMaxDynamicSharedBytes, static_cast<int>(k.shared_bytes)),
              "cuFuncSetAttribute (dynamic shared memory)");
      }
      functions_.push_back(f);
    }
  }
  ~CudaDevice() override {
    if (module_ != nullptr && api_.unload != nullptr) api_.unload(module_);
  }

  void* Alloc(int64_t bytes) override {
    Current();
    Api::Ptr p = 0;
    Check(api_, api_.alloc(&p, static_cast<size_t>(bytes)), "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }
  void Free(void* p) override {
    Current();
    api_.free(reinterpret_cast<Api::Ptr>(p));
  }
  void ToDevice(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0) return;
    Current();
    Check(api_, api_.to_device(reinterpret_cast<Api::Ptr>(dst), src, static_cast<size_t>(bytes)),
          "cuMemcpyHtoD");
  }
  void ToHost(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0) return;
    Current();
    Check(api_, api_.to_host(dst, reinterpret_cast<Api::Ptr>(src), static_cast<size_t>(bytes)),
          "cuMemcpyDtoH");
  }
  void Copy(void* dst, const void* src, int64_t bytes) override {
    if (bytes == 0) return;
    Current();
    Check(api_,
          api_.copy(reinterpret_cast<Api::Ptr>(dst), reinterpret_cast<Api::Ptr>(src),
                    static_cast<size_t>(bytes)),
          "cuMemcpyDtoD");
  }
  void Launch(int64_t kernel, const std::vector<void*>& args) override {
    const GpuKernelInfo& k = kernels_.at(static_cast<size_t>(kernel));
    std::vector<Api::Ptr> values;
    for (void* a : args) values.push_back(reinterpret_cast<Api::Ptr>(a));
    std::vector<void*> params;
    for (Api::Ptr& v : values) params.push_back(&v);
    Current();
    Check(api_,
          api_.launch(functions_.at(static_cast<size_t>(kernel)), static_cast<unsigned>(k.grid), 1,
                      1, static_cast<unsigned>(k.block), 1, 1,
                      static_cast<unsigned>(k.shared_bytes), nullptr, params.data(), nullptr),
          ("cuLaunchKernel of " + k.name).c_str());
  }
  void Gemm(const GemmPlan& p, const void* a, const void* b, void* c) override {
    const Blas& blas = TheBlas();
    if (blas.create == nullptr || blas.sgemm == nullptr || blas.dgemm == nullptr) {
      throw DeviceError("a GEMM on the GPU needs cuBLAS (libcublas.so), which was not found");
    }
    Current();
    if (handle_ == nullptr && blas.create(&handle_) != 0) {
      throw DeviceError("cublasCreate failed");
    }
    constexpr int kN = 0, kT = 1;  // CUBLAS_OP_N, CUBLAS_OP_T
    // Stored row lengths: A is [m x k] ([k x m] transposed), B [k x n].
    const int64_t lda = p.lda != 0 ? p.lda : (p.trans_a ? p.m : p.k);
    const int64_t ldb = p.ldb != 0 ? p.ldb : (p.trans_b ? p.k : p.n);
    const int64_t ldc = p.ldc != 0 ? p.ldc : p.n;
    const int op_b = p.trans_b ? kT : kN, op_a = p.trans_a ? kT : kN;
    const auto i = [](int64_t v) { return static_cast<int>(v); };
    int status = 0;
    if (p.f64) {
      const double one = 1, zero = 0;
      status = blas.dgemm(handle_, op_b, op_a, i(p.n), i(p.m), i(p.k), &one,
                          static_cast<const double*>(b), i(ldb), p.b_batch_stride,
                          static_cast<const double*>(a), i(lda), p.a_batch_stride, &zero,
                          static_cast<double*>(c), i(ldc), p.c_batch_stride, i(p.batch));
    } else {
      const float one = 1, zero = 0;
      status = blas.sgemm(handle_, op_b, op_a, i(p.n), i(p.m), i(p.k), &one,
                          static_cast<const float*>(b), i(ldb), p.b_batch_stride,
                          static_cast<const float*>(a), i(lda), p.a_batch_stride, &zero,
                          static_cast<float*>(c), i(ldc), p.c_batch_stride, i(p.batch));
    }
    if (status != 0) throw DeviceError("cuBLAS GEMM failed with status " + std::to_string(status));
  }
  void Synchronize() override {
    Current();
    Check(api_, api_.synchronize(), "cuCtxSynchronize");
  }
  void* Mark() override {
    if (api_.event_create == nullptr || api_.event_record == nullptr) {
      throw DeviceError("libcuda.so.1 lacks the event functions profiles need");
    }
    Current();
    void* e = nullptr;
    Check(api_, api_.event_create(&e, 0), "cuEventCreate");
    Check(api_, api_.event_record(e, nullptr), "cuEventRecord");
    return e;
  }
  double Seconds(void* from, void* to) override {
    float ms = 0;
    Check(api_, api_.event_elapsed(&ms, from, to), "cuEventElapsedTime");
    return ms / 1e3;
  }
  void Release(void* mark) override {
    if (api_.event_destroy != nullptr) api_.event_destroy(mark);
  }

 private:
  void Current() { Check(api_, api_.set_current(context_), "cuCtxSetCurrent"); }

  const Api& api_;
  std::vector<GpuKernelInfo> kernels_;
  void* context_ = nullptr;
  void* module_ = nullptr;
  void* handle_ = nullptr;  // cuBLAS's
  std::vector<void*> functions_;
};

}  // namespace

std::unique_ptr<GpuDevice> NewCudaDevice(int ordinal, const std::string& ptx,
                                         const std::vector<GpuKernelInfo>& kernels) {
  return std::make_unique<CudaDevice>(ordinal, ptx, kernels);
}

}  // namespace uir::runtime
