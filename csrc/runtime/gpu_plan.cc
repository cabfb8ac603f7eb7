#include "runtime/gpu_plan.h"

#include <cstring>

#include "support/error.h"

namespace uir::runtime {
namespace {

class Run {
 public:
  Run(const GpuPlan& plan, GpuDevice& device) : plan_(plan), device_(device) {
    for (int64_t bytes : plan.allocation_bytes) {
      memory_.push_back(static_cast<uint8_t*>(device_.Alloc(std::max<int64_t>(bytes, 16))));
    }
  }
  ~Run() {
    for (uint8_t* p : memory_) device_.Free(p);
  }
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  void Go(const std::vector<const uint8_t*>& args, const std::vector<uint8_t*>& results) {
    if (args.size() != plan_.parameters.size() || results.size() != plan_.results.size()) {
      throw ShapeError("the GPU executable takes " + std::to_string(plan_.parameters.size()) +
                       " argument and " + std::to_string(plan_.results.size()) +
                       " result buffers, got " + std::to_string(args.size()) + " and " +
                       std::to_string(results.size()));
    }
    for (const GpuPlan::Preset& p : plan_.presets) {
      device_.ToDevice(At({p.allocation, p.offset}), p.bytes.data(),
                       static_cast<int64_t>(p.bytes.size()));
    }
    for (size_t k = 0; k < args.size(); ++k) {
      device_.ToDevice(At(plan_.parameters[k].at), args[k], plan_.parameters[k].bytes);
    }
    Steps(plan_.steps);
    device_.Synchronize();
    for (size_t k = 0; k < results.size(); ++k) {
      device_.ToHost(results[k], At(plan_.results[k].at), plan_.results[k].bytes);
    }
  }

 private:
  uint8_t* At(const GpuRef& r) { return memory_.at(static_cast<size_t>(r.allocation)) + r.offset; }

  // A predicate or selector read back from the device.
  int64_t Scalar(const GpuRef& at, int64_t bytes) {
    int32_t v = 0;
    device_.ToHost(&v, At(at), bytes);
    return bytes == 1 ? static_cast<int64_t>(static_cast<uint8_t>(v) != 0) : v;
  }

  void Steps(const std::vector<GpuStep>& steps) {
    for (const GpuStep& s : steps) Step(s);
  }

  void Step(const GpuStep& s) {
    switch (s.kind) {
      case GpuStep::Kind::kLaunch: {
        std::vector<void*> args;
        for (const GpuRef& r : s.args) args.push_back(At(r));
        device_.Launch(s.kernel, args);
        return;
      }
      case GpuStep::Kind::kCopy:
        device_.Copy(At(s.to), At(s.from), s.bytes);
        return;
      case GpuStep::Kind::kGemm:
        device_.Gemm(s.gemm, At(s.from), At(s.b), At(s.to));
        return;
      case GpuStep::Kind::kWhile:
        for (;;) {
          Steps(s.body[0]);
          if (Scalar(s.from, 1) == 0) return;
          Steps(s.body[1]);
        }
      case GpuStep::Kind::kConditional: {
        int64_t branch = Scalar(s.from, s.bytes);
        const auto n = static_cast<int64_t>(s.body.size());
        // A pred selects branch 0 when true; an index out of range runs
        // the last branch, as HLO says.
        if (s.bytes == 1) branch = branch != 0 ? 0 : 1;
        if (branch < 0 || branch >= n) branch = n - 1;
        Steps(s.body[static_cast<size_t>(branch)]);
        return;
      }
      case GpuStep::Kind::kCall:
        Steps(s.body[0]);
        return;
      case GpuStep::Kind::kHost:
        Host(s);
        return;
    }
  }

  void Host(const GpuStep& s) {
    if (device_.HostVisible()) {
      device_.Synchronize();
      s.host(memory_.data());
      return;
    }
    device_.Synchronize();
    std::vector<std::vector<uint8_t>> mirror;
    std::vector<uint8_t*> bases;
    for (size_t a = 0; a < memory_.size(); ++a) {
      mirror.emplace_back(static_cast<size_t>(std::max<int64_t>(plan_.allocation_bytes[a], 16)));
      device_.ToHost(mirror.back().data(), memory_[a], plan_.allocation_bytes[a]);
      bases.push_back(mirror.back().data());
    }
    s.host(bases.data());
    for (size_t a = 0; a < memory_.size(); ++a) {
      device_.ToDevice(memory_[a], mirror[a].data(), plan_.allocation_bytes[a]);
    }
  }

  const GpuPlan& plan_;
  GpuDevice& device_;
  std::vector<uint8_t*> memory_;
};

}  // namespace

void RunGpuPlan(const GpuPlan& plan, GpuDevice& device, const std::vector<const uint8_t*>& args,
                const std::vector<uint8_t*>& results) {
  Run(plan, device).Go(args, results);
}

}  // namespace uir::runtime
