#include "codegen/gpu_executable.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "codegen/library_plans.h"
#include "eval/typed.h"
#include "hlo/module.h"
#include "runtime/cuda_driver.h"
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
    for (const igraph::IGraph& part : n.igraphs) {
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
      out.push_back(std::move(s));
    }
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

 private:
  const GpuSimulator& simulator_;
  const std::vector<const igraph::IGraph*>& graphs_;
};

}  // namespace

GpuExecutable::GpuExecutable(const KernelGraph& graph, const GpuOptions& options) : graph_(graph) {
  program_ = CompileGpu(graph, options);
  fallbacks_ = program_.refused;
  plan_.ptx = program_.ptx;
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
  const hlo::HloComputation& entry = *graph.module().entry();
  for (const hlo::HloInstruction* p : entry.parameters()) {
    for (const DramTensor& t : igraph::ValueLeaves(ba, p)) {
      parameter_leaves_.push_back(t);
      plan_.parameters.push_back({Ref(t), t.bytes});
    }
  }
  for (const DramTensor& t : igraph::ValueLeaves(ba, entry.root())) {
    result_leaves_.push_back(t);
    plan_.results.push_back({Ref(t), t.bytes});
  }
}

GpuExecutable::~GpuExecutable() = default;

hlo::Literal GpuExecutable::RunOn(runtime::GpuDevice& device,
                                  const std::vector<hlo::Literal>& args) const {
  const hlo::HloComputation& entry = *graph_.module().entry();
  if (args.size() != static_cast<size_t>(entry.num_parameters())) {
    throw ShapeError(entry.name() + " takes " + std::to_string(entry.num_parameters()) +
                     " arguments, got " + std::to_string(args.size()));
  }
  // Arguments into the arena's layouts, leaf by leaf.
  std::vector<std::vector<uint8_t>> in;
  std::vector<const uint8_t*> in_ptrs;
  size_t leaf = 0;
  std::function<void(const hlo::Literal&)> stage = [&](const hlo::Literal& v) {
    if (v.shape().IsTuple()) {
      for (const hlo::Literal& e : v.tuple_elements()) stage(e);
      return;
    }
    if (!v.shape().IsArray()) return;
    const DramTensor& t = parameter_leaves_.at(leaf++);
    in.emplace_back(static_cast<size_t>(std::max<int64_t>(t.bytes, 1)), 0);
    igraph::WriteTensor(in.back().data(), t, v.bytes().data());
    in_ptrs.push_back(in.back().data());
  };
  for (const hlo::HloInstruction* p : entry.parameters()) {
    const hlo::Literal& arg = args[static_cast<size_t>(p->parameter_number())];
    if (!eval::SameArrays(arg.shape(), p->shape())) {
      throw ShapeError("argument " + std::to_string(p->parameter_number()) + " has shape " +
                       arg.shape().ToString() + "; parameter %" + p->name() + " is " +
                       p->shape().ToString());
    }
  }
  for (const hlo::HloInstruction* p : entry.parameters()) {
    stage(args[static_cast<size_t>(p->parameter_number())]);
  }
  std::vector<std::vector<uint8_t>> out;
  std::vector<uint8_t*> out_ptrs;
  for (const DramTensor& t : result_leaves_) {
    out.emplace_back(static_cast<size_t>(std::max<int64_t>(t.bytes, 1)), 0);
    out_ptrs.push_back(out.back().data());
  }
  runtime::RunGpuPlan(plan_, device, in_ptrs, out_ptrs);
  size_t next = 0;
  std::function<hlo::Literal(const hlo::Shape&)> assemble = [&](const hlo::Shape& s) {
    if (s.IsArray()) {
      const DramTensor& t = result_leaves_.at(next);
      hlo::Literal v(hlo::Shape(t.shape.element_type(), t.shape.dimensions()));
      igraph::ReadTensor(out.at(next).data(), t, v.mutable_bytes().data());
      ++next;
      return v;
    }
    std::vector<hlo::Literal> parts;
    if (s.IsTuple()) {
      for (const hlo::Shape& e : s.tuple_shapes()) parts.push_back(assemble(e));
      return eval::TupleOf(std::move(parts));
    }
    return hlo::Literal(s);
  };
  return assemble(entry.root()->shape());
}

hlo::Literal GpuExecutable::Run(const std::vector<hlo::Literal>& args) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (cuda_ == nullptr) cuda_ = runtime::NewCudaDevice(0, plan_.ptx, plan_.kernels);
  return RunOn(*cuda_, args);
}

hlo::Literal GpuExecutable::Simulate(const std::vector<hlo::Literal>& args) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (simulator_ == nullptr) simulator_ = std::make_unique<GpuSimulator>();
  SimulatedDevice device(*simulator_, kernel_graphs_);
  return RunOn(device, args);
}

}  // namespace uir::codegen
