// The C interface of the runtime-only build (uir_runtime.py calls it with
// ctypes): load a serialized GPU executable, read its signature, run it on
// a GPU. Every failure comes back as a message, never as an exception
// across the C boundary.
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda_driver.h"
#include "runtime/gpu_custom_call.h"
#include "runtime/gpu_plan.h"
#include "support/error.h"

namespace {

struct Handle {
  uir::runtime::GpuPlan plan;
  std::map<int, std::unique_ptr<uir::runtime::GpuDevice>> devices;
  std::vector<std::string> type_names[2];
};

void Fill(char* error, size_t len, const std::string& message) {
  if (error == nullptr || len == 0) return;
  const size_t n = std::min(len - 1, message.size());
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

template <typename F>
int Guard(char* error, size_t len, F&& f) {
  try {
    f();
    return 0;
  } catch (const uir::Error& e) {
    Fill(error, len, std::string(uir::ErrorKindName(e.kind())) + ": " + e.what());
  } catch (const std::exception& e) {
    Fill(error, len, std::string("internal: ") + e.what());
  }
  return 1;
}

// The CUDA device `ordinal` with the plan's PTX loaded, made on first use.
uir::runtime::GpuDevice& DeviceOf(Handle* h, int ordinal) {
  auto& device = h->devices[ordinal];
  if (device == nullptr) {
    device = uir::runtime::NewCudaDevice(ordinal, h->plan.ptx, h->plan.kernels);
  }
  return *device;
}

std::vector<const uint8_t*> Inputs(const Handle* h, const void* const* args) {
  std::vector<const uint8_t*> in;
  for (size_t k = 0; k < h->plan.parameters.size(); ++k) {
    in.push_back(static_cast<const uint8_t*>(args[k]));
  }
  return in;
}

const std::vector<uir::runtime::GpuPlan::Leaf>& Leaves(const Handle* h, int results) {
  return results != 0 ? h->plan.results : h->plan.parameters;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void* uir_rt_load(const char* bytes, size_t n, char* error,
                                                         size_t error_len) {
  Handle* out = nullptr;
  Guard(error, error_len, [&] {
    auto h = std::make_unique<Handle>();
    h->plan = uir::runtime::DeserializeGpuPlan(std::string_view(bytes, n));
    for (int r = 0; r < 2; ++r) {
      for (const auto& l : Leaves(h.get(), r)) {
        h->type_names[r].emplace_back(uir::PrimitiveTypeName(l.type));
      }
    }
    out = h.release();
  });
  return out;
}

__attribute__((visibility("default"))) void uir_rt_free(void* h) { delete static_cast<Handle*>(h); }

__attribute__((visibility("default"))) int64_t uir_rt_count(void* h, int results) {
  return static_cast<int64_t>(Leaves(static_cast<Handle*>(h), results).size());
}

__attribute__((visibility("default"))) const char* uir_rt_leaf_type(void* h, int results,
                                                                    int64_t k) {
  return static_cast<Handle*>(h)->type_names[results != 0].at(static_cast<size_t>(k)).c_str();
}

__attribute__((visibility("default"))) int64_t uir_rt_leaf_rank(void* h, int results, int64_t k) {
  return static_cast<int64_t>(
      Leaves(static_cast<Handle*>(h), results).at(static_cast<size_t>(k)).dims.size());
}

__attribute__((visibility("default"))) int64_t uir_rt_leaf_dim(void* h, int results, int64_t k,
                                                               int64_t d) {
  return Leaves(static_cast<Handle*>(h), results)
      .at(static_cast<size_t>(k))
      .dims.at(static_cast<size_t>(d));
}

__attribute__((visibility("default"))) int uir_rt_tuple_result(void* h) {
  return static_cast<Handle*>(h)->plan.tuple_result ? 1 : 0;
}

__attribute__((visibility("default"))) const char* uir_rt_sm(void* h) {
  return static_cast<Handle*>(h)->plan.sm.c_str();
}

__attribute__((visibility("default"))) int uir_rt_run(void* handle, int ordinal,
                                                      const void* const* args, void* const* results,
                                                      char* error, size_t error_len) {
  auto* h = static_cast<Handle*>(handle);
  return Guard(error, error_len, [&] {
    uir::runtime::GpuDevice& device = DeviceOf(h, ordinal);
    const std::vector<const uint8_t*> in = Inputs(h, args);
    std::vector<uint8_t*> out;
    for (size_t k = 0; k < h->plan.results.size(); ++k) {
      out.push_back(static_cast<uint8_t*>(results[k]));
    }
    uir::runtime::RunGpuPlan(h->plan, device, in, out);
  });
}

// Seconds per run of the executable's steps on GPU `ordinal` (memory and
// arguments set up once; runtime/gpu_plan.h's TimeGpuPlan), or -1 with
// `error` filled.
__attribute__((visibility("default"))) double uir_rt_time(void* handle, int ordinal,
                                                          const void* const* args, int warmup,
                                                          int iterations, char* error,
                                                          size_t error_len) {
  auto* h = static_cast<Handle*>(handle);
  double seconds = -1;
  Guard(error, error_len, [&] {
    uir::runtime::GpuDevice& device = DeviceOf(h, ordinal);
    const std::vector<const uint8_t*> in = Inputs(h, args);
    seconds = uir::runtime::TimeGpuPlan(h->plan, device, in, warmup, iterations);
  });
  return seconds;
}

// Runs once with every step timed by CUDA events around it and writes the
// steps as a Chrome trace (JSON) into `out`; 0, or 1 with `error` filled
// (also when `out` is too small).
__attribute__((visibility("default"))) int uir_rt_profile(void* handle, int ordinal,
                                                          const void* const* args,
                                                          void* const* results, char* out,
                                                          size_t out_len, char* error,
                                                          size_t error_len) {
  auto* h = static_cast<Handle*>(handle);
  return Guard(error, error_len, [&] {
    uir::runtime::GpuDevice& device = DeviceOf(h, ordinal);
    const std::vector<const uint8_t*> in = Inputs(h, args);
    std::vector<uint8_t*> res;
    for (size_t k = 0; k < h->plan.results.size(); ++k) {
      res.push_back(static_cast<uint8_t*>(results[k]));
    }
    std::vector<uir::runtime::GpuStepTime> times;
    uir::runtime::RunGpuPlan(h->plan, device, in, res, &times);
    static const char* const kKinds[] = {"kernel",      "copy", "gemm",        "while",
                                         "conditional", "call", "custom-call", "host"};
    std::string json = "{\"traceEvents\": [";
    for (size_t k = 0; k < times.size(); ++k) {
      const auto& t = times[k];
      std::string name;
      for (char c : t.step->name) name += (c == '"' || c == '\\') ? '_' : c;
      if (t.step->kind == uir::runtime::GpuStep::Kind::kLaunch) {
        name += " (" + h->plan.kernels.at(static_cast<size_t>(t.step->kernel)).name + ")";
      }
      json += (k == 0 ? "" : ", ");
      json += "{\"name\": \"" + name + "\", \"cat\": \"" + kKinds[static_cast<int>(t.step->kind)] +
              "\", \"ph\": \"X\", \"ts\": " + std::to_string(t.start * 1e6) +
              ", \"dur\": " + std::to_string((t.end - t.start) * 1e6) +
              ", \"pid\": 0, \"tid\": " + std::to_string(t.depth) + "}";
    }
    json += "], \"displayTimeUnit\": \"ms\"}";
    if (json.size() + 1 > out_len)
      throw uir::UserError(uir::ErrorKind::kShape,
                           "the trace needs " + std::to_string(json.size() + 1) + " bytes");
    std::memcpy(out, json.c_str(), json.size() + 1);
  });
}

// Registers C function `fn` as CUDA custom-call target `name` in XLA's GPU
// convention: api 1 original, 2 status, 0 as each instruction says.
__attribute__((visibility("default"))) void uir_rt_register_custom_call(const char* name, void* fn,
                                                                        int api) {
  uir::runtime::RegisterGpuCustomCall(name, fn,
                                      api == 1   ? uir::runtime::GpuCallApi::kOriginal
                                      : api == 0 ? uir::runtime::GpuCallApi::kFromInstruction
                                                 : uir::runtime::GpuCallApi::kStatus);
}

// The devices the CUDA driver reports, one line each ("index name sm_XY
// bytes"), or why there are none; returns the number of devices.
__attribute__((visibility("default"))) int uir_rt_devices(char* out, size_t len) {
  const uir::runtime::CudaDriverInfo& info = uir::runtime::CudaDriver();
  std::string text = info.available ? "" : info.why;
  for (const auto& d : info.devices) {
    text += std::to_string(d.index) + " " + d.name + " sm_" + std::to_string(d.major) +
            std::to_string(d.minor) + " " + std::to_string(d.memory_bytes) + "\n";
  }
  Fill(out, len, text);
  return static_cast<int>(info.devices.size());
}

}  // extern "C"
