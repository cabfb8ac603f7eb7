#include "codegen/gpu_executable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "codegen/dot_chain_thunk.h"
#include "codegen/library_plans.h"
#include "eval/typed.h"
#include "hlo/module.h"
#include "runtime/cuda_driver.h"
#include "runtime/gpu_custom_call.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

using igraph::DramTensor;
using igraph::KernelGraph;
using igraph::KernelNode;
using runtime::GpuRef;
using runtime::GpuStep;

GpuRef Ref(const DramTensor& t) { return {t.allocation, t.offset}; }

bool Overlap(const DramTensor& a, const DramTensor& b) {
  return a.allocation == b.allocation && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

// A copy node that is one memcpy (a copy or bitcast-convert of the same
// bytes, not overlapping).
bool PlainCopy(const KernelNode& n) {
  if (n.kind != igraph::NodeKind::kCopy || n.instruction == nullptr || n.inputs.size() != 1 ||
      n.outputs.size() != 1 || n.dynamic_copy != nullptr) {
    return false;
  }
  const hlo::HloOpcode op = n.instruction->opcode();
  const DramTensor& in = n.inputs[0];
  const DramTensor& out = n.outputs[0];
  const bool bitcast = op == hlo::HloOpcode::kBitcastConvert && n.igraphs.empty();
  if (op != hlo::HloOpcode::kCopy && !bitcast) return false;
  return in.bytes == out.bytes && (bitcast || in.shape == out.shape) && !Overlap(in, out);
}

class PlanBuilder {
 public:
  PlanBuilder(const KernelGraph& top, const GpuProgram& program, runtime::GpuPlan& plan,
              std::vector<std::string>& fallbacks, std::vector<const igraph::IGraph*>& graphs)
      : plan_(plan), fallbacks_(fallbacks) {
    const std::vector<const igraph::IGraph*> all = top.AllIGraphs();
    for (size_t k = 0; k < all.size(); ++k) {
      if (program.kernel_of.at(k) >= 0) kernel_[all[k]] = program.kernel_of[k];
    }
    graphs.assign(program.kernels.size(), nullptr);
    for (const auto& [g, k] : kernel_) graphs[static_cast<size_t>(k)] = g;
  }

  std::vector<GpuStep> Emit(const KernelGraph& g) {
    std::vector<GpuStep> out;
    for (const KernelNode& n : g.nodes()) {
      if (igraph::NothingToRun(n)) continue;
      if (n.kind == igraph::NodeKind::kControlFlow && ControlFlow(g, n, out)) continue;
      if (PlainCopy(n)) {
        GpuStep s;
        s.kind = GpuStep::Kind::kCopy;
        s.name = n.name;
        s.from = Ref(n.inputs[0]);
        s.to = Ref(n.outputs[0]);
        s.bytes = n.inputs[0].bytes;
        out.push_back(std::move(s));
        continue;
      }
      if (Launchable(n)) {
        Launches(n, out, std::nullopt);
        continue;
      }
      if (LibraryGemm(n, out)) continue;
      if (CustomCall(n, out)) continue;
      if (DotChain(n, out)) continue;
      fallbacks_.push_back(n.name + ": a " + std::string(igraph::NodeKindName(n.kind)) +
                           " node with no GPU code runs on the host" +
                           (n.reason.empty() ? "" : " (" + n.reason + ")"));
      GpuStep s;
      s.kind = GpuStep::Kind::kHost;
      s.name = n.name;
      s.host = [node = &n](uint8_t* const* allocations) {
        KernelGraph::RunPrepared(*node, allocations, nullptr);
      };
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  bool Launchable(const KernelNode& n) const {
    if (n.igraphs.empty() || n.chain != nullptr || n.library != nullptr || n.windows != nullptr ||
        n.dynamic_copy != nullptr) {
      return false;
    }
    for (const igraph::IGraph& part : n.igraphs) {
      if (kernel_.count(&part) == 0) return false;
    }
    return true;
  }

  int64_t NewAllocation(int64_t bytes) {
    plan_.allocation_bytes.push_back(std::max<int64_t>(bytes, 1));
    return static_cast<int64_t>(plan_.allocation_bytes.size()) - 1;
  }

  // A dot node (lone, or with an elementwise epilogue the GEMM's output
  // then runs through) as the library GEMM: f32 and f64 only.
  bool LibraryGemm(const KernelNode& n, std::vector<GpuStep>& out) {
    if (n.chain != nullptr || n.windows != nullptr) return false;
    const std::optional<NodeGemm> gemm = GemmOf(n);
    if (!gemm || (gemm->storage != PrimitiveType::kF32 && gemm->storage != PrimitiveType::kF64)) {
      return false;
    }
    for (const igraph::IGraph& part : n.igraphs) {
      if (kernel_.count(&part) == 0) return false;
    }
    GpuStep s;
    s.kind = GpuStep::Kind::kGemm;
    s.name = n.name;
    s.gemm = gemm->plan;
    s.from = Ref(gemm->lhs);
    s.b = Ref(gemm->rhs);
    s.to = Ref(gemm->out);
    out.push_back(std::move(s));
    if (!n.igraphs.empty()) Launches(n, out, Ref(n.outputs.at(0)));
    return true;
  }

  // A custom call whose target is registered for the CUDA platform, on
  // its operands' and result's array leaves (row-major, as the frame
  // needs); else the host runs it (the CPU's target).
  bool CustomCall(const KernelNode& n, std::vector<GpuStep>& out) {
    if (n.kind != igraph::NodeKind::kCustomCall) return false;
    const std::optional<CallFrame> frame = igraph::CustomCallFrameOf(n);
    if (!frame || !runtime::HasGpuCustomCall(frame->target)) return false;
    GpuStep s;
    s.kind = GpuStep::Kind::kCustomCall;
    s.name = n.name;
    s.target = frame->target;
    s.opaque = frame->opaque;
    s.call_api = frame->api == CustomCallApi::kStatusReturning ||
                         frame->api == CustomCallApi::kStatusReturningUnified
                     ? 1
                     : 0;
    for (const DramTensor& t : n.inputs) s.args.push_back(Ref(t));
    for (const DramTensor& t : n.outputs) s.args.push_back(Ref(t));
    out.push_back(std::move(s));
    return true;
  }

  // A dot chain block by block of rows, as its CPU thunk runs it: per block
  // the first GEMM into a scratch block, the epilogue's kernels into a
  // second block, the second GEMM into the output's rows.
  bool DotChain(const KernelNode& n, std::vector<GpuStep>& out) {
    if (n.chain == nullptr) return false;
    for (const igraph::IGraph& part : n.igraphs) {
      if (kernel_.count(&part) == 0) return false;
    }
    const std::optional<ChainGemms> gemms = PlanChainGemms(n);
    if (!gemms) return false;
    const igraph::DotChainPlan& c = *n.chain;
    const int64_t first = NewAllocation(c.BlockBytes());
    const int64_t second = NewAllocation(c.BlockBytes());
    std::vector<GpuRef> ids = {{first, 0}};
    for (int64_t s : c.scalars) ids.push_back(Ref(n.inputs.at(static_cast<size_t>(s))));
    for (int64_t bytes : n.scratch_bytes) ids.push_back({NewAllocation(bytes), 0});
    for (const hlo::Literal& k : n.constants) {
      const int64_t a = NewAllocation(static_cast<int64_t>(k.bytes().size()));
      plan_.presets.push_back({a, 0, std::vector<uint8_t>(k.bytes().begin(), k.bytes().end())});
      ids.push_back({a, 0});
    }
    ids.push_back({second, 0});
    auto shifted = [](GpuRef r, int64_t bytes) {
      r.offset += bytes;
      return r;
    };
    const GpuRef a = Ref(n.inputs.at(static_cast<size_t>(c.a)));
    const GpuRef b = Ref(n.inputs.at(static_cast<size_t>(c.b)));
    const GpuRef cc = Ref(n.inputs.at(static_cast<size_t>(c.c)));
    const GpuRef o = Ref(n.outputs.at(0));
    const int64_t e = c.element_bytes;
    const int64_t per_batch = (c.rows + c.block_rows - 1) / c.block_rows;
    for (int64_t task = 0; task < c.batch * per_batch; ++task) {
      const int64_t batch = task / per_batch;
      const int64_t r0 = task % per_batch * c.block_rows;
      const int64_t rows = std::min(c.block_rows, c.rows - r0);
      GpuStep g1;
      g1.kind = GpuStep::Kind::kGemm;
      g1.name = n.name;
      g1.gemm = gemms->first;
      g1.gemm.m = rows;
      g1.from = shifted(a, (batch * gemms->a_batch + r0 * gemms->a_row) * e);
      g1.b = shifted(b, batch * gemms->b_batch * e);
      g1.to = {first, 0};
      out.push_back(std::move(g1));
      const size_t from = rows == c.block_rows ? 0 : c.full_parts;
      const size_t to = rows == c.block_rows ? c.full_parts : n.igraphs.size();
      for (size_t k = from; k < to; ++k) out.push_back(Launch(n, n.igraphs[k], ids));
      GpuStep g2;
      g2.kind = GpuStep::Kind::kGemm;
      g2.name = n.name;
      g2.gemm = gemms->second;
      g2.gemm.m = rows;
      g2.from = {second, 0};
      g2.b = shifted(cc, batch * gemms->c_batch * e);
      g2.to = shifted(o, (batch * gemms->out_batch + r0 * gemms->out_row) * e);
      out.push_back(std::move(g2));
    }
    return true;
  }

  GpuStep Launch(const KernelNode& n, const igraph::IGraph& part, const std::vector<GpuRef>& ids) {
    GpuStep s;
    s.kind = GpuStep::Kind::kLaunch;
    s.name = n.name;
    s.kernel = kernel_.at(&part);
    for (const igraph::IPointer& p : part.pointers()) {
      if (p.level != igraph::Level::kDram) continue;
      UIR_CHECK(p.id >= 0 && p.id < static_cast<int64_t>(ids.size()))
          << "iGraph " << part.name() << " of " << n.name << ": dram id " << p.id;
      s.args.push_back(ids[static_cast<size_t>(p.id)]);
    }
    return s;
  }

  // One launch per part; the node's dram ids are its inputs, scratch,
  // constants and outputs, in that order. A library node's first scratch
  // id is its output (`library_out`), which the library op wrote.
  void Launches(const KernelNode& n, std::vector<GpuStep>& out, std::optional<GpuRef> library_out) {
    std::vector<GpuRef> ids;
    for (const DramTensor& t : n.inputs) ids.push_back(Ref(t));
    for (size_t k = 0; k < n.scratch_bytes.size(); ++k) {
      if (k == 0 && library_out) {
        ids.push_back(*library_out);
        continue;
      }
      ids.push_back({NewAllocation(n.scratch_bytes[k]), 0});
    }
    for (const hlo::Literal& c : n.constants) {
      const int64_t a = NewAllocation(static_cast<int64_t>(c.bytes().size()));
      plan_.presets.push_back({a, 0, std::vector<uint8_t>(c.bytes().begin(), c.bytes().end())});
      ids.push_back({a, 0});
    }
    for (const DramTensor& t : n.outputs) ids.push_back(Ref(t));
    for (const igraph::IGraph& part : n.igraphs) out.push_back(Launch(n, part, ids));
  }

  bool ControlFlow(const KernelGraph& g, const KernelNode& n, std::vector<GpuStep>& out) {
    const buffers::BufferAssignment& ba = g.assignment();
    GpuStep s;
    s.name = n.name;
    if (const std::optional<igraph::WhileLoop> loop = igraph::InPlaceWhile(n, ba)) {
      if (loop->predicate.bytes != 1) return false;
      s.kind = GpuStep::Kind::kWhile;
      s.from = Ref(loop->predicate);
      s.body.push_back(Emit(*loop->condition));
      s.body.push_back(Emit(*loop->body));
    } else if (const std::optional<igraph::Branches> b = igraph::InPlaceBranches(n, ba)) {
      const PrimitiveType t = b->selector.shape.element_type();
      if (t != PrimitiveType::kPred && t != PrimitiveType::kS32) return false;
      s.kind = GpuStep::Kind::kConditional;
      s.from = Ref(b->selector);
      s.bytes = t == PrimitiveType::kPred ? 1 : 4;
      for (const KernelGraph* branch : b->graphs) s.body.push_back(Emit(*branch));
    } else if (const KernelGraph* callee = igraph::InPlaceCall(n, ba)) {
      s.kind = GpuStep::Kind::kCall;
      s.body.push_back(Emit(*callee));
    } else {
      return false;
    }
    out.push_back(std::move(s));
    return true;
  }

  runtime::GpuPlan& plan_;
  std::vector<std::string>& fallbacks_;
  std::map<const igraph::IGraph*, int64_t> kernel_;
};

// The simulator as a device: host memory, each launch run by GpuSimulator
// on the kernel's iGraph.
class SimulatedDevice : public runtime::GpuDevice {
 public:
  SimulatedDevice(const GpuSimulator& simulator, const std::vector<const igraph::IGraph*>& graphs)
      : simulator_(simulator), graphs_(graphs) {}
  void* Alloc(int64_t bytes) override {
    void* p = std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64));
    if (p == nullptr)
      throw OutOfMemoryError("the simulated GPU could not allocate " +
                             DescribeBytes(static_cast<uint64_t>(bytes)));
    std::memset(p, 0, static_cast<size_t>(bytes));
    return p;
  }
  void Free(void* p) override { std::free(p); }
  void ToDevice(void* dst, const void* src, int64_t bytes) override {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
  void ToHost(void* dst, const void* src, int64_t bytes) override {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
  }
  void Copy(void* dst, const void* src, int64_t bytes) override {
    std::memmove(dst, src, static_cast<size_t>(bytes));
  }
  void Launch(int64_t kernel, const std::vector<void*>& args) override {
    const igraph::IGraph& g = *graphs_.at(static_cast<size_t>(kernel));
    igraph::DramBuffers dram;
    size_t k = 0;
    for (const igraph::IPointer& p : g.pointers()) {
      if (p.level != igraph::Level::kDram) continue;
      dram[p.id] = std::span<uint8_t>(static_cast<uint8_t*>(args.at(k++)),
                                      static_cast<size_t>(p.size * StorageBytes(p.dtype)));
    }
    simulator_.Run(g, dram);
  }
  void Gemm(const runtime::GemmPlan& plan, const void* a, const void* b, void* c) override {
    runtime::RunGemm(plan, a, b, c);
  }
  void Synchronize() override {}
  bool HostVisible() const override { return true; }
  void* Mark() override { return new std::chrono::steady_clock::time_point(Clock::now()); }
  double Seconds(void* from, void* to) override {
    const std::chrono::duration<double> d =
        *static_cast<Clock::time_point*>(to) - *static_cast<Clock::time_point*>(from);
    return d.count();
  }
  void Release(void* mark) override { delete static_cast<Clock::time_point*>(mark); }

 private:
  using Clock = std::chrono::steady_clock;

 public:
 private:
  const GpuSimulator& simulator_;
  const std::vector<const igraph::IGraph*>& graphs_;
};

}  // namespace

GpuExecutable::GpuExecutable(const KernelGraph& graph, const GpuOptions& options) : graph_(&graph) {
  program_ = CompileGpu(graph, options);
  fallbacks_ = program_.refused;
  plan_.ptx = program_.ptx;
  plan_.sm = program_.sm;
  for (const GpuLaunch& k : program_.kernels) {
    plan_.kernels.push_back({k.name, k.grid, k.block, k.shared_bytes});
  }
  const buffers::BufferAssignment& ba = graph.assignment();
  for (const buffers::Allocation& a : ba.allocations()) plan_.allocation_bytes.push_back(a.size);
  // Constants outside fusions, written where buffer assignment put them.
  std::vector<std::vector<uint8_t>> staging;
  std::vector<uint8_t*> bases;
  for (const buffers::Allocation& a : ba.allocations()) {
    staging.emplace_back(static_cast<size_t>(std::max<int64_t>(a.size, 1)), 0);
    bases.push_back(staging.back().data());
  }
  graph.WriteConstants(bases.data());
  for (const buffers::Allocation& a : ba.allocations()) {
    if (a.kind == analysis::BufferKind::kConstant && a.size > 0) {
      plan_.presets.push_back({a.index, 0, std::move(staging[static_cast<size_t>(a.index)])});
    }
  }
  PlanBuilder builder(graph, program_, plan_, fallbacks_, kernel_graphs_);
  plan_.steps = builder.Emit(graph);
  for (const igraph::IGraph* g : kernel_graphs_) plan_.kernel_igraphs.push_back(igraph::ToText(*g));
  const hlo::HloComputation& entry = *graph.module().entry();
  auto leaf = [](const DramTensor& t) {
    return runtime::GpuPlan::Leaf{Ref(t), t.bytes, t.shape.element_type(), t.shape.dimensions(),
                                  igraph::IsRowMajorTensor(t)};
  };
  for (const hlo::HloInstruction* p : entry.parameters()) {
    for (const DramTensor& t : igraph::ValueLeaves(ba, p)) {
      parameter_leaves_.push_back(t);
      plan_.parameters.push_back(leaf(t));
    }
  }
  for (const DramTensor& t : igraph::ValueLeaves(ba, entry.root())) {
    result_leaves_.push_back(t);
    plan_.results.push_back(leaf(t));
  }
  plan_.tuple_result = entry.root()->shape().IsTuple();
}

GpuExecutable::GpuExecutable(std::string_view serialized)
    : plan_(runtime::DeserializeGpuPlan(serialized)) {
  program_.sm = plan_.sm;
  program_.ptx = plan_.ptx;
  for (const runtime::GpuKernelInfo& k : plan_.kernels) {
    GpuLaunch launch;
    launch.name = k.name;
    launch.grid = k.grid;
    launch.block = k.block;
    launch.shared_bytes = k.shared_bytes;
    program_.kernels.push_back(launch);
  }
  for (const std::string& text : plan_.kernel_igraphs) {
    try {
      owned_graphs_.push_back(std::make_unique<igraph::IGraph>(igraph::Parse(text)));
    } catch (const Error& e) {
      throw SerializationError(std::string("a kernel's iGraph does not parse: ") + e.what());
    }
    kernel_graphs_.push_back(owned_graphs_.back().get());
  }
  auto tensor = [](const runtime::GpuPlan::Leaf& l) {
    DramTensor t;
    t.allocation = l.at.allocation;
    t.offset = l.at.offset;
    t.bytes = l.bytes;
    t.shape = hlo::Shape(l.type, l.dims);
    return t;
  };
  for (const runtime::GpuPlan::Leaf& l : plan_.parameters) parameter_leaves_.push_back(tensor(l));
  for (const runtime::GpuPlan::Leaf& l : plan_.results) result_leaves_.push_back(tensor(l));
}

GpuExecutable::~GpuExecutable() = default;

hlo::Literal GpuExecutable::RunOn(runtime::GpuDevice& device, const std::vector<hlo::Literal>& args,
                                  std::vector<runtime::GpuStepTime>* times) const {
  // The arguments' array leaves, in order, each checked against the
  // parameter leaf it fills and written in that leaf's layout.
  std::vector<const hlo::Literal*> leaves;
  std::function<void(const hlo::Literal&)> flatten = [&](const hlo::Literal& v) {
    if (v.shape().IsTuple()) {
      for (const hlo::Literal& e : v.tuple_elements()) flatten(e);
    } else if (v.shape().IsArray()) {
      leaves.push_back(&v);
    }
  };
  for (const hlo::Literal& a : args) flatten(a);
  if (graph_ != nullptr) {
    const hlo::HloComputation& entry = *graph_->module().entry();
    if (args.size() != static_cast<size_t>(entry.num_parameters())) {
      throw ShapeError(entry.name() + " takes " + std::to_string(entry.num_parameters()) +
                       " arguments, got " + std::to_string(args.size()));
    }
  }
  if (leaves.size() != parameter_leaves_.size()) {
    throw ShapeError("the GPU executable takes " + std::to_string(parameter_leaves_.size()) +
                     " arrays, got " + std::to_string(leaves.size()));
  }
  std::vector<std::vector<uint8_t>> in;
  std::vector<const uint8_t*> in_ptrs;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const DramTensor& t = parameter_leaves_[k];
    const hlo::Shape& s = leaves[k]->shape();
    if (s.element_type() != t.shape.element_type() || s.dimensions() != t.shape.dimensions()) {
      throw ShapeError("argument array " + std::to_string(k) + " is " + s.ToString() +
                       "; the executable takes " +
                       hlo::Shape(t.shape.element_type(), t.shape.dimensions()).ToString());
    }
    in.emplace_back(static_cast<size_t>(std::max<int64_t>(t.bytes, 1)), 0);
    igraph::WriteTensor(in.back().data(), t, leaves[k]->bytes().data());
    in_ptrs.push_back(in.back().data());
  }
  std::vector<std::vector<uint8_t>> out;
  std::vector<uint8_t*> out_ptrs;
  for (const DramTensor& t : result_leaves_) {
    out.emplace_back(static_cast<size_t>(std::max<int64_t>(t.bytes, 1)), 0);
    out_ptrs.push_back(out.back().data());
  }
  runtime::RunGpuPlan(plan_, device, in_ptrs, out_ptrs, times);
  size_t next = 0;
  auto read = [&]() {
    const DramTensor& t = result_leaves_.at(next);
    hlo::Literal v(hlo::Shape(t.shape.element_type(), t.shape.dimensions()));
    igraph::ReadTensor(out.at(next).data(), t, v.mutable_bytes().data());
    ++next;
    return v;
  };
  std::function<hlo::Literal(const hlo::Shape&)> assemble = [&](const hlo::Shape& s) {
    if (s.IsArray()) return read();
    std::vector<hlo::Literal> parts;
    if (s.IsTuple()) {
      for (const hlo::Shape& e : s.tuple_shapes()) parts.push_back(assemble(e));
      return eval::TupleOf(std::move(parts));
    }
    return hlo::Literal(s);
  };
  if (graph_ != nullptr) return assemble(graph_->module().entry()->root()->shape());
  // Loaded: the result's leaves, as a flat tuple when it was a tuple.
  if (!plan_.tuple_result && result_leaves_.size() == 1) return read();
  std::vector<hlo::Literal> parts;
  while (next < result_leaves_.size()) parts.push_back(read());
  return eval::TupleOf(std::move(parts));
}

hlo::Literal GpuExecutable::Run(const std::vector<hlo::Literal>& args,
                                std::vector<runtime::GpuStepTime>* times) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (cuda_ == nullptr) cuda_ = runtime::NewCudaDevice(0, plan_.ptx, plan_.kernels);
  return RunOn(*cuda_, args, times);
}

hlo::Literal GpuExecutable::Simulate(const std::vector<hlo::Literal>& args,
                                     std::vector<runtime::GpuStepTime>* times) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (simulator_ == nullptr) simulator_ = std::make_unique<GpuSimulator>();
  SimulatedDevice device(*simulator_, kernel_graphs_);
  return RunOn(device, args, times);
}

int64_t GpuExecutable::BytesOf(const runtime::GpuStep& s) const {
  switch (s.kind) {
    case GpuStep::Kind::kLaunch: {
      const auto k = static_cast<size_t>(s.kernel);
      if (k >= kernel_graphs_.size() || kernel_graphs_[k] == nullptr) return 0;
      return kernel_graphs_[k]->DramBytesRead() + kernel_graphs_[k]->DramBytesWritten();
    }
    case GpuStep::Kind::kCopy:
      return 2 * s.bytes;
    case GpuStep::Kind::kGemm: {
      const runtime::GemmPlan& g = s.gemm;
      return g.batch * (g.m * g.k + g.k * g.n + g.m * g.n) * (g.f64 ? 8 : 4);
    }
    default:
      return 0;
  }
}

int64_t GpuExecutable::FlopsOf(const runtime::GpuStep& s) const {
  if (s.kind != GpuStep::Kind::kGemm) return 0;
  return 2 * s.gemm.batch * s.gemm.m * s.gemm.n * s.gemm.k;
}

}  // namespace uir::codegen
