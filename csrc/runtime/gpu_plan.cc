#include "runtime/gpu_plan.h"

#include <chrono>
#include <cstring>

#include "runtime/gpu_custom_call.h"
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

  double Time(const std::vector<const uint8_t*>& args, int warmup, int iterations) {
    In(args, plan_.results.size());
    for (int k = 0; k < warmup; ++k) Steps(plan_.steps);
    device_.Synchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < iterations; ++k) Steps(plan_.steps);
    device_.Synchronize();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    return took.count() / std::max(iterations, 1);
  }

  void Go(const std::vector<const uint8_t*>& args, const std::vector<uint8_t*>& results,
          std::vector<GpuStepTime>* times) {
    In(args, results.size());
    if (times != nullptr) origin_ = device_.Mark();
    Steps(plan_.steps);
    device_.Synchronize();
    if (times != nullptr) {
      for (const Timed& t : timed_) {
        times->push_back(
            {t.step, t.depth, device_.Seconds(origin_, t.from), device_.Seconds(origin_, t.to)});
        device_.Release(t.from);
        device_.Release(t.to);
      }
      device_.Release(origin_);
      timed_.clear();
    }
    for (size_t k = 0; k < results.size(); ++k) {
      device_.ToHost(results[k], At(plan_.results[k].at), plan_.results[k].bytes);
    }
  }

 private:
  void In(const std::vector<const uint8_t*>& args, size_t results) {
    if (args.size() != plan_.parameters.size() || results != plan_.results.size()) {
      throw ShapeError("the GPU executable takes " + std::to_string(plan_.parameters.size()) +
                       " argument and " + std::to_string(plan_.results.size()) +
                       " result buffers, got " + std::to_string(args.size()) + " and " +
                       std::to_string(results));
    }
    for (const GpuPlan::Preset& p : plan_.presets) {
      device_.ToDevice(At({p.allocation, p.offset}), p.bytes.data(),
                       static_cast<int64_t>(p.bytes.size()));
    }
    for (size_t k = 0; k < args.size(); ++k) {
      device_.ToDevice(At(plan_.parameters[k].at), args[k], plan_.parameters[k].bytes);
    }
  }

  uint8_t* At(const GpuRef& r) { return memory_.at(static_cast<size_t>(r.allocation)) + r.offset; }

  // A predicate or selector read back from the device.
  int64_t Scalar(const GpuRef& at, int64_t bytes) {
    int32_t v = 0;
    device_.ToHost(&v, At(at), bytes);
    return bytes == 1 ? static_cast<int64_t>(static_cast<uint8_t>(v) != 0) : v;
  }

  void Steps(const std::vector<GpuStep>& steps) {
    for (const GpuStep& s : steps) {
      if (origin_ == nullptr) {
        Step(s);
        continue;
      }
      Timed t{&s, depth_, device_.Mark(), nullptr};
      ++depth_;
      Step(s);
      --depth_;
      t.to = device_.Mark();
      timed_.push_back(t);
    }
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
      case GpuStep::Kind::kCustomCall: {
        std::vector<void*> buffers;
        for (const GpuRef& r : s.args) buffers.push_back(At(r));
        CallGpuCustomCall(s.target, FindGpuCustomCall(s.target),
                          s.call_api == 1 ? GpuCallApi::kStatus : GpuCallApi::kOriginal,
                          device_.Stream(), buffers, s.opaque);
        return;
      }
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

  struct Timed {
    const GpuStep* step;
    int depth;
    void* from;
    void* to;
  };
  const GpuPlan& plan_;
  GpuDevice& device_;
  std::vector<uint8_t*> memory_;
  void* origin_ = nullptr;  // profiling: the first mark
  int depth_ = 0;
  std::vector<Timed> timed_;
};

}  // namespace

void RunGpuPlan(const GpuPlan& plan, GpuDevice& device, const std::vector<const uint8_t*>& args,
                const std::vector<uint8_t*>& results, std::vector<GpuStepTime>* times) {
  Run(plan, device).Go(args, results, times);
}

double TimeGpuPlan(const GpuPlan& plan, GpuDevice& device, const std::vector<const uint8_t*>& args,
                   int warmup, int iterations) {
  return Run(plan, device).Time(args, warmup, iterations);
}

namespace {

constexpr std::string_view kMagic = "UIRGPU01";

class Writer {
 public:
  void U64(uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Str(std::string_view s) {
    U64(s.size());
    out.append(s);
  }
  void Ref(const GpuRef& r) {
    I64(r.allocation);
    I64(r.offset);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint64_t U64() {
    Need(sizeof(uint64_t));
    uint64_t v = 0;
    std::memcpy(&v, in_.data() + at_, sizeof(v));
    at_ += sizeof(v);
    return v;
  }
  int64_t I64() { return static_cast<int64_t>(U64()); }
  // A count of things of at least `each` bytes still to read.
  size_t Count(size_t each) {
    const uint64_t n = U64();
    if (each != 0 && n > (in_.size() - at_) / each) Damaged("a count past the end");
    return static_cast<size_t>(n);
  }
  std::string Str() {
    const size_t n = Count(1);
    Need(n);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  GpuRef Ref() {
    GpuRef r;
    r.allocation = I64();
    r.offset = I64();
    return r;
  }
  bool Done() const { return at_ == in_.size(); }
  [[noreturn]] static void Damaged(const std::string& what) {
    throw SerializationError("the serialized GPU executable is damaged or cut short (" + what +
                             ")");
  }

 private:
  void Need(size_t n) {
    if (n > in_.size() - at_) Damaged("it ends early");
  }
  std::string_view in_;
  size_t at_ = 0;
};

void WriteSteps(Writer& w, const std::vector<GpuStep>& steps) {
  w.U64(steps.size());
  for (const GpuStep& s : steps) {
    if (s.kind == GpuStep::Kind::kHost) {
      throw SerializationError("node " + s.name +
                               " runs on the host (it has no GPU code); only executables whose "
                               "every node runs on the GPU serialize");
    }
    w.U64(static_cast<uint64_t>(s.kind));
    w.Str(s.name);
    w.I64(s.kernel);
    w.U64(s.args.size());
    for (const GpuRef& r : s.args) w.Ref(r);
    w.Ref(s.from);
    w.Ref(s.to);
    w.Ref(s.b);
    w.I64(s.bytes);
    w.Str(s.target);
    w.Str(s.opaque);
    w.I64(s.call_api);
    const GemmPlan& g = s.gemm;
    for (int64_t v : {static_cast<int64_t>(g.f64), g.batch, g.m, g.n, g.k,
                      static_cast<int64_t>(g.trans_a), static_cast<int64_t>(g.trans_b),
                      g.a_batch_stride, g.b_batch_stride, g.c_batch_stride, g.lda, g.ldb, g.ldc}) {
      w.I64(v);
    }
    w.U64(s.body.size());
    for (const std::vector<GpuStep>& b : s.body) WriteSteps(w, b);
  }
}

std::vector<GpuStep> ReadSteps(Reader& r, const GpuPlan& plan, int depth) {
  if (depth > 64) Reader::Damaged("steps nested too deep");
  std::vector<GpuStep> steps(r.Count(8));
  const auto allocations = static_cast<int64_t>(plan.allocation_bytes.size());
  auto ref = [&] {
    GpuRef g = r.Ref();
    if (g.allocation < 0 || g.allocation >= allocations || g.offset < 0 ||
        g.offset > plan.allocation_bytes[static_cast<size_t>(g.allocation)]) {
      Reader::Damaged("a reference outside the allocations");
    }
    return g;
  };
  for (GpuStep& s : steps) {
    const uint64_t kind = r.U64();
    if (kind > static_cast<uint64_t>(GpuStep::Kind::kCustomCall)) {
      Reader::Damaged("an unknown step");
    }
    s.kind = static_cast<GpuStep::Kind>(kind);
    s.name = r.Str();
    s.kernel = r.I64();
    if (s.kind == GpuStep::Kind::kLaunch &&
        (s.kernel < 0 || s.kernel >= static_cast<int64_t>(plan.kernels.size()))) {
      Reader::Damaged("a launch of a kernel it does not have");
    }
    s.args.resize(r.Count(16));
    for (GpuRef& a : s.args) a = ref();
    s.from = ref();
    s.to = ref();
    s.b = ref();
    s.bytes = r.I64();
    s.target = r.Str();
    s.opaque = r.Str();
    s.call_api = r.I64();
    GemmPlan& g = s.gemm;
    g.f64 = r.I64() != 0;
    g.batch = r.I64();
    g.m = r.I64();
    g.n = r.I64();
    g.k = r.I64();
    g.trans_a = r.I64() != 0;
    g.trans_b = r.I64() != 0;
    g.a_batch_stride = r.I64();
    g.b_batch_stride = r.I64();
    g.c_batch_stride = r.I64();
    g.lda = r.I64();
    g.ldb = r.I64();
    g.ldc = r.I64();
    s.body.resize(r.Count(8));
    for (std::vector<GpuStep>& b : s.body) b = ReadSteps(r, plan, depth + 1);
    if ((s.kind == GpuStep::Kind::kWhile && s.body.size() != 2) ||
        (s.kind == GpuStep::Kind::kCall && s.body.size() != 1) ||
        (s.kind == GpuStep::Kind::kConditional && s.body.empty())) {
      Reader::Damaged("control flow without its sequences");
    }
  }
  return steps;
}

void WriteLeaves(Writer& w, const std::vector<GpuPlan::Leaf>& leaves) {
  w.U64(leaves.size());
  for (const GpuPlan::Leaf& l : leaves) {
    if (!l.row_major) {
      throw SerializationError(
          "a parameter or result is not row-major in memory; a serialized GPU executable "
          "takes and gives row-major arrays");
    }
    w.Ref(l.at);
    w.I64(l.bytes);
    w.Str(PrimitiveTypeName(l.type));
    w.U64(l.dims.size());
    for (int64_t d : l.dims) w.I64(d);
  }
}

std::vector<GpuPlan::Leaf> ReadLeaves(Reader& r) {
  std::vector<GpuPlan::Leaf> leaves(r.Count(32));
  for (GpuPlan::Leaf& l : leaves) {
    l.at = r.Ref();
    l.bytes = r.I64();
    const std::optional<PrimitiveType> t = PrimitiveTypeFromName(r.Str());
    if (!t) Reader::Damaged("an unknown element type");
    l.type = *t;
    l.dims.resize(r.Count(8));
    for (int64_t& d : l.dims) d = r.I64();
  }
  return leaves;
}

}  // namespace

bool IsGpuPlan(std::string_view bytes) { return bytes.substr(0, kMagic.size()) == kMagic; }

std::string SerializeGpuPlan(const GpuPlan& plan) {
  Writer w;
  w.out.append(kMagic);
  w.Str(plan.sm);
  w.Str(plan.ptx);
  w.U64(plan.kernels.size());
  for (const GpuKernelInfo& k : plan.kernels) {
    w.Str(k.name);
    w.I64(k.grid);
    w.I64(k.block);
    w.I64(k.shared_bytes);
  }
  w.U64(plan.allocation_bytes.size());
  for (int64_t b : plan.allocation_bytes) w.I64(b);
  w.U64(plan.presets.size());
  for (const GpuPlan::Preset& p : plan.presets) {
    w.I64(p.allocation);
    w.I64(p.offset);
    w.Str(std::string_view(reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size()));
  }
  WriteLeaves(w, plan.parameters);
  WriteLeaves(w, plan.results);
  w.U64(plan.tuple_result ? 1 : 0);
  WriteSteps(w, plan.steps);
  w.U64(plan.kernel_igraphs.size());
  for (const std::string& t : plan.kernel_igraphs) w.Str(t);
  return std::move(w.out);
}

GpuPlan DeserializeGpuPlan(std::string_view bytes) {
  if (!IsGpuPlan(bytes)) {
    throw SerializationError(
        "these bytes are not a serialized GPU executable of this uir version (no UIRGPU01 "
        "header)");
  }
  Reader r(bytes.substr(kMagic.size()));
  GpuPlan plan;
  plan.sm = r.Str();
  plan.ptx = r.Str();
  plan.kernels.resize(r.Count(32));
  for (GpuKernelInfo& k : plan.kernels) {
    k.name = r.Str();
    k.grid = r.I64();
    k.block = r.I64();
    k.shared_bytes = r.I64();
    if (k.grid < 1 || k.block < 1 || k.block > 1024 || k.shared_bytes < 0) {
      Reader::Damaged("a kernel launch out of range");
    }
  }
  plan.allocation_bytes.resize(r.Count(8));
  for (int64_t& b : plan.allocation_bytes) {
    b = r.I64();
    if (b < 0) Reader::Damaged("a negative allocation");
  }
  plan.presets.resize(r.Count(24));
  for (GpuPlan::Preset& p : plan.presets) {
    p.allocation = r.I64();
    p.offset = r.I64();
    const std::string data = r.Str();
    p.bytes.assign(data.begin(), data.end());
    if (p.allocation < 0 || p.allocation >= static_cast<int64_t>(plan.allocation_bytes.size()) ||
        p.offset < 0 ||
        p.offset + static_cast<int64_t>(p.bytes.size()) >
            plan.allocation_bytes[static_cast<size_t>(p.allocation)]) {
      Reader::Damaged("a constant outside its allocation");
    }
  }
  plan.parameters = ReadLeaves(r);
  plan.results = ReadLeaves(r);
  for (const auto* leaves : {&plan.parameters, &plan.results}) {
    for (const GpuPlan::Leaf& l : *leaves) {
      if (l.at.allocation < 0 ||
          l.at.allocation >= static_cast<int64_t>(plan.allocation_bytes.size()) ||
          l.at.offset < 0 || l.bytes < 0 ||
          l.at.offset + l.bytes > plan.allocation_bytes[static_cast<size_t>(l.at.allocation)]) {
        Reader::Damaged("a parameter or result outside the allocations");
      }
    }
  }
  plan.tuple_result = r.U64() != 0;
  plan.steps = ReadSteps(r, plan, 0);
  plan.kernel_igraphs.resize(r.Count(8));
  for (std::string& t : plan.kernel_igraphs) t = r.Str();
  if (!r.Done()) Reader::Damaged("bytes after the end");
  return plan;
}

}  // namespace uir::runtime
