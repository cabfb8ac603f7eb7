// Compiling a Kernel Graph's iGraphs and running them on the thread pool.
#include "codegen/cpu_executable.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "hlo/collective_groups.h"
#include "runtime/async_thunk.h"
#include "runtime/buffer_pool.h"
#include "runtime/collectives.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::codegen {
namespace {

// A node's block at run-time start indices, as a program the loop driver
// compiles: the node's index steps, reading its inputs where they lie.
std::shared_ptr<const BlockProgram> ProgramOf(const igraph::KernelNode& m,
                                              const std::vector<int>& starts,
                                              const std::vector<int64_t>& dims,
                                              const std::vector<int64_t>& sizes,
                                              const std::vector<int64_t>& strides) {
  auto p = std::make_shared<BlockProgram>();
  p->steps = m.windows->steps;
  p->starts = starts;
  p->dims = dims;
  p->sizes = sizes;
  p->strides = strides;
  for (const igraph::DramTensor& t : m.inputs)
    p->inputs.push_back({t.allocation, t.offset, nullptr});
  return p;
}

// Where each dram id of a kernel node lives: a slice of an allocation, or
// memory of its own (scratch other than the library result, constants).
struct Place {
  int64_t allocation = -1;  // -1: its own memory
  int64_t offset = 0, bytes = 0;
};

void CollectPlaces(const igraph::KernelGraph& graph,
                   std::map<const igraph::IGraph*, std::map<int64_t, Place>>& out) {
  for (const igraph::KernelNode& n : graph.nodes()) {
    std::map<int64_t, Place> places;
    int64_t id = 0;
    auto tensor = [](const igraph::DramTensor& t) {
      return Place{t.allocation, t.offset, t.bytes};
    };
    if (n.chain != nullptr) {
      // A dot chain's epilogue: its blocks, the scalars, scratch,
      // constants, the second block (igraph::DotChainPlan).
      places[id++] = Place{};
      for (int64_t s : n.chain->scalars) places[id++] = tensor(n.inputs.at(static_cast<size_t>(s)));
      for (size_t k = 0; k < n.scratch_bytes.size(); ++k) places[id++] = Place{};
      id += static_cast<int64_t>(n.constants.size());
      places[id++] = Place{};
      for (const igraph::IGraph& g : n.igraphs) out[&g] = places;
      continue;
    }
    for (const igraph::DramTensor& t : n.inputs) places[id++] = tensor(t);
    if (n.windows != nullptr) {
      // A window lies somewhere in its source, which nothing writes while
      // the node runs (buffer assignment gives an output of its own memory
      // only to a result that reads its operand element by element): read
      // only, it is as good as memory of its own. Never the same address as
      // another window or its source.
      for (const igraph::DynamicWindow& w : n.windows->windows) places[w.input] = Place{};
    }
    for (size_t k = 0; k < n.scratch_bytes.size(); ++k) {
      places[id++] =
          k == 0 && n.library != nullptr && !n.outputs.empty() ? tensor(n.outputs[0]) : Place{};
    }
    id += static_cast<int64_t>(n.constants.size());  // their own memory
    for (const igraph::DramTensor& t : n.outputs) {
      // An update's block: somewhere in the output, which nothing else
      // the node touches holds (or a buffer of the run's own).
      const bool update = n.windows != nullptr && n.windows->update;
      places[id++] = update ? Place{} : tensor(t);
    }
    for (const igraph::IGraph& g : n.igraphs) out[&g] = places;
    for (const igraph::KernelGraph& sub : n.subgraphs) CollectPlaces(sub, out);
  }
}

// Per graph: where buffer assignment put its dram iPointers, as the
// emitter uses it (DramAliasing).
std::vector<DramAliasing> DramAliasingOf(const igraph::KernelGraph& graph,
                                         const std::vector<const igraph::IGraph*>& graphs) {
  std::map<const igraph::IGraph*, std::map<int64_t, Place>> places;
  CollectPlaces(graph, places);
  std::vector<DramAliasing> out(graphs.size());
  for (size_t k = 0; k < graphs.size(); ++k) {
    const igraph::IGraph& g = *graphs[k];
    auto found = places.find(&g);
    if (found == places.end()) continue;
    const std::map<int64_t, Place>& at = found->second;
    const auto& pointers = g.pointers();
    const int n = static_cast<int>(pointers.size());
    auto place = [&](int p) -> const Place* {
      auto it = at.find(pointers[static_cast<size_t>(p)].id);
      return it == at.end() ? nullptr : &it->second;
    };
    auto dram = [&](int p) {
      return pointers[static_cast<size_t>(p)].level == igraph::Level::kDram;
    };
    // The same address: the same dram id, or the same offset in the same
    // allocation (memory of its own is never shared).
    auto same = [&](int p, int q) {
      if (pointers[static_cast<size_t>(p)].id == pointers[static_cast<size_t>(q)].id) return true;
      const Place* a = place(p);
      const Place* b = place(q);
      return a != nullptr && b != nullptr && a->allocation >= 0 && a->allocation == b->allocation &&
             a->offset == b->offset;
    };
    DramAliasing& d = out[k];
    d.same_as.resize(static_cast<size_t>(n));
    d.disjoint.assign(static_cast<size_t>(n), false);
    for (int p = 0; p < n; ++p) {
      int first = p;
      for (int q = 0; q < p && first == p; ++q) {
        if (dram(p) && dram(q) && same(p, q)) first = q;
      }
      d.same_as[static_cast<size_t>(p)] = first;
    }
    for (int p = 0; p < n; ++p) {
      if (!dram(p) || place(p) == nullptr) continue;
      bool alone = true;
      for (int q = 0; q < n && alone; ++q) {
        if (q == p || !dram(q) || same(p, q)) continue;
        const Place* a = place(p);
        const Place* b = place(q);
        alone =
            b != nullptr && !(a->allocation >= 0 && a->allocation == b->allocation &&
                              a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes);
      }
      d.disjoint[static_cast<size_t>(p)] = alone;
    }
    // iPointers at one address share a base pointer, so one scope: the
    // scope holds only if it holds for each of them (a longer one may
    // reach a neighbour the others do not).
    std::vector<bool> all(static_cast<size_t>(n), true);
    for (int p = 0; p < n; ++p) {
      const auto first = static_cast<size_t>(d.same_as[static_cast<size_t>(p)]);
      all[first] = all[first] && d.disjoint[static_cast<size_t>(p)];
    }
    for (int p = 0; p < n; ++p) {
      d.disjoint[static_cast<size_t>(p)] =
          all[static_cast<size_t>(d.same_as[static_cast<size_t>(p)])];
    }
  }
  return out;
}

}  // namespace

CpuExecutable::CpuExecutable(const igraph::KernelGraph& graph, const CpuExecutableOptions& options)
    : graph_(graph), options_(options) {
  if (options_.plan_threads <= 0) options_.plan_threads = NumThreads();
  // The plan of a run: which allocations are the caller's buffers.
  const auto& allocations = graph.assignment().allocations();
  placement_.assign(allocations.size(), Placement{});
  auto exclusive = [&](const igraph::DramTensor& t) {
    const buffers::Allocation& a = allocations[t.allocation];
    return t.offset == 0 && a.size == t.bytes && a.buffers.size() == 1 &&
           igraph::IsRowMajorTensor(t);
  };
  std::vector<int> uses(allocations.size(), 0);
  const hlo::HloComputation& entry = *graph.module().entry();
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    for (igraph::DramTensor& t : graph.ParameterLeaves(i)) {
      parameter_shapes_.push_back(t.shape);
      arg_leaves_.push_back(std::move(t));
    }
  }
  for (igraph::DramTensor& t : graph.ResultLeaves()) {
    result_shapes_.push_back(t.shape);
    result_leaves_.push_back(std::move(t));
  }
  for (const auto* leaves : {&arg_leaves_, &result_leaves_}) {
    for (const igraph::DramTensor& t : *leaves) ++uses[t.allocation];
  }
  for (size_t i = 0; i < arg_leaves_.size(); ++i) {
    const igraph::DramTensor& t = arg_leaves_[i];
    const buffers::Allocation& a = allocations[t.allocation];
    if (a.kind == analysis::BufferKind::kParameter && !a.live_out && uses[t.allocation] == 1 &&
        exclusive(t)) {
      placement_[t.allocation] = {Source::kArgument, static_cast<int64_t>(i)};
    }
  }
  for (size_t i = 0; i < result_leaves_.size(); ++i) {
    const igraph::DramTensor& t = result_leaves_[i];
    const buffers::Allocation& a = allocations[t.allocation];
    if (a.kind != analysis::BufferKind::kParameter && a.kind != analysis::BufferKind::kConstant &&
        uses[t.allocation] == 1 && exclusive(t)) {
      placement_[t.allocation] = {Source::kResult, static_cast<int64_t>(i)};
    }
  }
  // A parameter allocation that also holds one result (input_output_alias),
  // each filling it whole: the caller may donate the argument's memory.
  std::vector<int64_t> argument_of(allocations.size(), -1);
  for (size_t i = 0; i < arg_leaves_.size(); ++i) {
    argument_of[arg_leaves_[i].allocation] = static_cast<int64_t>(i);
  }
  auto whole = [&](const igraph::DramTensor& t) {
    return t.offset == 0 && allocations[t.allocation].size == t.bytes &&
           igraph::IsRowMajorTensor(t);
  };
  for (size_t i = 0; i < result_leaves_.size(); ++i) {
    const igraph::DramTensor& t = result_leaves_[i];
    const buffers::Allocation& a = allocations[t.allocation];
    const int64_t arg = argument_of[t.allocation];
    if (a.kind != analysis::BufferKind::kParameter || !a.live_out || uses[t.allocation] != 2 ||
        arg < 0 || !whole(t) || !whole(arg_leaves_[static_cast<size_t>(arg)])) {
      continue;
    }
    placement_[t.allocation] = {Source::kDonated, arg, static_cast<int64_t>(i)};
    donations_.push_back({arg, static_cast<int64_t>(i)});
  }
  const std::vector<const igraph::IGraph*> graphs = graph.AllIGraphs();
  KernelCompileOptions compile;
  compile.opt_level = options.opt_level;
  compile.keep_text = options.keep_text;
  compile.flags = options.flags;
  compile.objects = options.objects;
  compile.time_loop_bodies = options.time_loop_bodies;
  compile.aliasing = DramAliasingOf(graph, graphs);
  LayOutNodes(graph, graphs);
  std::vector<const igraph::KernelNode*> loop_nodes;
  PlanLoops(graph, graphs, compile.loops, loop_nodes);
  kernels_ = CompileKernels(graphs, compile);
  compile_options_ = compile;
  compile_options_.objects = nullptr;
  for (size_t k = 0; k < graphs.size(); ++k) {
    const igraph::IGraph& g = *graphs[k];
    if (kernels_.functions[k] == nullptr) {
      fallbacks_.push_back("iGraph " + g.name() + ": " + kernels_.reasons[k]);
      continue;
    }
    runtime::KernelPart part;
    part.name = g.name();
    part.fn = kernels_.functions[k];
    part.streaming = kernels_.streaming[k];
    part.streaming_buffers = kernels_.streaming_buffers[k];
    part.scratch_bytes = ScratchBytes(g);
    part.num_parallel = g.num_parallel();
    part.bytes_moved = g.DramBytesRead() + g.DramBytesWritten();
    parts_[&g] = std::move(part);
  }
  // The nodes whose every part compiled, with their buffers.
  for (const auto& [node, layout] : layouts_) {
    if (node->windows != nullptr) continue;  // host thunks outside native loops
    std::vector<runtime::KernelPart> parts;
    for (const PartLayout& l : layout) {
      auto it = parts_.find(graphs[l.graph]);
      if (it == parts_.end()) break;
      parts.push_back(it->second);
      parts.back().buffers = l.buffers;
    }
    if (parts.size() == layout.size()) node_parts_[node] = std::move(parts);
  }
  for (size_t k = 0; k < loop_nodes.size(); ++k) {
    if (kernels_.loops[k] == nullptr) continue;
    NativeLoop loop;
    loop.fn = kernels_.loops[k];
    loop.hooks = planned_hooks_[k];
    loop.constants = compile.loops[k].constants;
    for (const auto* calls : {&compile.loops[k].condition, &compile.loops[k].body}) {
      for (const KernelCall& c : *calls) {
        if (!c.is_kernel()) continue;
        loop.scratch_bytes = std::max(loop.scratch_bytes, ScratchBytes(*graphs[c.graph]));
      }
    }
    loops_[loop_nodes[k]] = loop;
  }
  ThunkEmitterInputs emit;
  emit.kernels = &node_parts_;
  emit.loops = &loops_;
  emit.code = this;
  emit.options.concurrent_bytes = options.flags.concurrent_bytes;
  emit.fallbacks = &fallbacks_;
  emit.fallback_bytes = &fallback_bytes_;
  emit.collectives = &collectives_;
  fallback_bytes_.assign(fallbacks_.size(), 0);  // the refused iGraphs'
  participants_ = hlo::RequiredParticipants(graph.module());
  fingerprint_ = graph.module().Fingerprint();
  thunks_ = std::make_unique<runtime::ThunkExecutor>(EmitThunks(graph, emit));
}

std::vector<CpuExecutable::LoopBodyTime> CpuExecutable::LoopBodyTimes() const {
  std::vector<LoopBodyTime> out;
  if (kernels_.body_times.empty()) return out;
  absl::flat_hash_map<const igraph::IGraph*, size_t> index;
  const std::vector<const igraph::IGraph*> graphs = graph_.AllIGraphs();
  for (size_t k = 0; k < graphs.size(); ++k) index[graphs[k]] = k;
  // Every node's iGraphs (kernel thunks, native loops, host thunks running
  // parts), in the order the Kernel Graph lists them, sub-graphs in place.
  std::function<void(const igraph::KernelGraph&)> walk = [&](const igraph::KernelGraph& g) {
    for (const igraph::KernelNode& n : g.nodes()) {
      for (const igraph::IGraph& ig : n.igraphs) {
        const auto it = index.find(&ig);
        if (it == index.end()) continue;
        const int64_t* counters = kernels_.body_times[it->second];
        if (counters == nullptr) continue;
        out.push_back({n.name, ig.name(), __atomic_load_n(&counters[0], __ATOMIC_RELAXED),
                       __atomic_load_n(&counters[1], __ATOMIC_RELAXED)});
      }
      for (const igraph::KernelGraph& sub : n.subgraphs) walk(sub);
    }
  };
  walk(graph_);
  return out;
}

void CpuExecutable::ResetLoopBodyTimes() const {
  for (int64_t* counters : kernels_.body_times) {
    if (counters == nullptr) continue;
    __atomic_store_n(&counters[0], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&counters[1], 0, __ATOMIC_RELAXED);
  }
}

double CpuExecutable::TicksPerSecond() {
  static const double rate = [] {
#if defined(__x86_64__) || defined(__i386__)
    // The time-stamp counter against the steady clock over 20 ms.
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = __rdtsc();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(20)) {
    }
    const uint64_t c1 = __rdtsc();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(c1 - c0) / seconds;
#else
    return 0.0;
#endif
  }();
  return rate;
}

void CpuExecutable::LayOutNodes(const igraph::KernelGraph& graph,
                                const std::vector<const igraph::IGraph*>& graphs) {
  absl::flat_hash_map<const igraph::IGraph*, size_t> index;
  for (size_t k = 0; k < graphs.size(); ++k) index[graphs[k]] = k;
  std::vector<const igraph::KernelGraph*> work = {&graph};
  while (!work.empty()) {
    const igraph::KernelGraph* g = work.back();
    work.pop_back();
    for (const igraph::KernelNode& n : g->nodes()) {
      for (const igraph::KernelGraph& sub : n.subgraphs) work.push_back(&sub);
      const bool kernel = n.kind == igraph::NodeKind::kKernel || n.kind == igraph::NodeKind::kCopy;
      // A library node's epilogue: its one scratch id is the output the
      // library op wrote.
      const bool epilogue = n.kind == igraph::NodeKind::kLibrary && n.library != nullptr &&
                            n.scratch_bytes.size() == 1 && !n.outputs.empty();
      // Windowed kernels are laid out for native loops (which place their
      // windows through hooks), not for kernel thunks.
      const bool windows_ok =
          n.windows == nullptr || !n.windows->update || n.windows->update->contiguous;
      if ((!kernel && !epilogue) || n.igraphs.empty() || n.chain != nullptr ||
          (n.library != nullptr && !epilogue) || (!n.scratch_bytes.empty() && !epilogue) ||
          !windows_ok) {
        continue;
      }
      std::vector<const uint8_t*> constants;
      for (const hlo::Literal& c : n.constants) {
        constant_memory_.emplace_back(c.bytes().begin(), c.bytes().end());
        constants.push_back(constant_memory_.back().data());
      }
      const auto inputs = static_cast<int64_t>(n.inputs.size());
      const auto num_scratch = static_cast<int64_t>(n.scratch_bytes.size());
      const auto num_constants = static_cast<int64_t>(n.constants.size());
      std::vector<PartLayout> parts;
      bool ok = true;
      for (const igraph::IGraph& part : n.igraphs) {
        PartLayout layout;
        layout.graph = index.at(&part);
        for (const igraph::IPointer& p : part.pointers()) {
          if (p.level != igraph::Level::kDram) continue;
          const int64_t id = p.id;
          layout.ids.push_back(id);
          if (id < inputs) {
            layout.buffers.push_back({n.inputs[id].allocation, n.inputs[id].offset, nullptr});
          } else if (id < inputs + num_scratch) {
            layout.buffers.push_back({n.outputs[0].allocation, n.outputs[0].offset, nullptr});
          } else if (id < inputs + num_scratch + num_constants) {
            layout.buffers.push_back({-1, 0, constants[id - inputs - num_scratch]});
          } else if (id - inputs - num_scratch - num_constants <
                     static_cast<int64_t>(n.outputs.size())) {
            const igraph::DramTensor& t = n.outputs[id - inputs - num_scratch - num_constants];
            layout.buffers.push_back({t.allocation, t.offset, nullptr});
          } else {
            ok = false;
          }
        }
        parts.push_back(std::move(layout));
      }
      if (ok) layouts_[&n] = std::move(parts);
    }
  }
}

void CpuExecutable::PlanLoops(const igraph::KernelGraph& graph,
                              const std::vector<const igraph::IGraph*>& graphs,
                              std::vector<LoopDriver>& drivers,
                              std::vector<const igraph::KernelNode*>& nodes) {
  const int threads = options_.plan_threads;
  for (const igraph::KernelNode& n : graph.nodes()) {
    for (const igraph::KernelGraph& sub : n.subgraphs) PlanLoops(sub, graphs, drivers, nodes);
    const std::optional<igraph::WhileLoop> loop = igraph::InPlaceWhile(n, graph.assignment());
    if (!loop || loop->predicate.shape.element_type() != PrimitiveType::kPred) continue;
    // Every node a kernel laid out (its dynamic windows placed by index
    // programs the loop computes) or a dynamic block copy (compiled when
    // the block is contiguous, else a hook), every kernel one a single
    // thread runs.
    std::vector<runtime::LoopHook> hooks;
    auto hook = [&](LoopHookContext::Kind kind, const igraph::KernelNode& m) {
      hook_contexts_.push_back({kind, &m});
      hooks.push_back({&RunLoopHook, &hook_contexts_.back()});
      return hooks.size() - 1;
    };
    auto same_memory = [](const igraph::DramTensor& a, const igraph::DramTensor& b) {
      return a.allocation == b.allocation && a.offset == b.offset;
    };
    auto calls = [&](const igraph::KernelGraph& g, std::vector<KernelCall>& out) {
      for (const igraph::KernelNode& m : g.nodes()) {
        if (m.kind == igraph::NodeKind::kCopy && m.igraphs.empty() && m.instruction != nullptr &&
            igraph::IsDynamicCopy(*m.instruction) && m.outputs.size() == 1 &&
            m.inputs.size() == static_cast<size_t>(m.instruction->operand_count())) {
          KernelCall c;
          c.copy = CompiledBlockCopy(m);
          if (!c.copy) {
            c.host = static_cast<int64_t>(hook(LoopHookContext::Kind::kDynamicCopy, m));
          }
          out.push_back(std::move(c));
          continue;
        }
        auto it = layouts_.find(&m);
        if (it == layouts_.end() || m.library != nullptr) return false;
        const igraph::DynamicWindows* windows = m.windows.get();
        if (windows != nullptr && windows->update &&
            !same_memory(m.inputs.at(static_cast<size_t>(windows->update->source)),
                         m.outputs.at(0))) {
          KernelCall c;
          c.host = static_cast<int64_t>(hook(LoopHookContext::Kind::kCopyOperand, m));
          out.push_back(std::move(c));
        }
        for (const PartLayout& part : it->second) {
          const igraph::IGraph& ig = *graphs[part.graph];
          const int64_t bytes = ig.DramBytesRead() + ig.DramBytesWritten();
          if (threads > 1 && ig.num_parallel() > 1 && bytes >= runtime::kParallelBytes)
            return false;
          KernelCall c;
          c.graph = part.graph;
          c.num_parallel = ig.num_parallel();
          c.buffers = part.buffers;
          auto buffer_of = [&](int64_t id) -> int64_t {
            for (size_t b = 0; b < part.ids.size(); ++b) {
              if (part.ids[b] == id) return static_cast<int64_t>(b);
            }
            return -1;
          };
          if (windows != nullptr) {
            for (const igraph::DynamicWindow& w : windows->windows) {
              const int64_t b = buffer_of(w.input);
              if (b >= 0) {
                MovedBuffer moved;
                moved.buffer = static_cast<size_t>(b);
                moved.program = ProgramOf(m, w.starts, w.dims, w.sizes, w.strides);
                c.moved.push_back(std::move(moved));
              }
            }
            if (windows->update) {
              // The update is written at its place in the output (the
              // node's first output, after its inputs and constants).
              const auto first_output = static_cast<int64_t>(
                  m.inputs.size() + m.scratch_bytes.size() + m.constants.size());
              const int64_t b = buffer_of(first_output);
              if (b >= 0) {
                const igraph::DynamicUpdate& u = *windows->update;
                MovedBuffer moved;
                moved.buffer = static_cast<size_t>(b);
                moved.program = ProgramOf(m, u.starts, u.dims, u.sizes, u.strides);
                c.moved.push_back(std::move(moved));
              }
            }
          }
          out.push_back(std::move(c));
        }
      }
      return true;
    };
    LoopDriver driver;
    if (!calls(*loop->condition, driver.condition) || !calls(*loop->body, driver.body)) continue;
    driver.predicate = {loop->predicate.allocation, loop->predicate.offset, nullptr};
    auto note = [&](const BufferRef& r) {
      if (r.allocation < 0 && std::find(driver.constants.begin(), driver.constants.end(),
                                        r.address) == driver.constants.end()) {
        driver.constants.push_back(r.address);
      }
    };
    for (const auto* list : {&driver.condition, &driver.body}) {
      for (const KernelCall& c : *list) {
        for (const BufferRef& r : c.buffers) note(r);
        for (const MovedBuffer& m : c.moved) {
          if (m.program) {
            for (const BufferRef& r : m.program->inputs) note(r);
          }
        }
        if (c.copy) {
          note(c.copy->whole);
          note(c.copy->block);
          for (const BufferRef& r : c.copy->program->inputs) note(r);
        }
      }
    }
    note(driver.predicate);
    drivers.push_back(std::move(driver));
    planned_hooks_.push_back(std::move(hooks));
    nodes.push_back(&n);
  }
}

// A lone dynamic-slice, or a dynamic-update-slice in place, of a block
// that is contiguous in the row-major whole: one memmove at the offset
// its start operands give. nullopt for the others (a hook copies them).
std::optional<BlockCopy> CpuExecutable::CompiledBlockCopy(const igraph::KernelNode& m) {
  const hlo::HloInstruction& inst = *m.instruction;
  const bool update = inst.opcode() == hlo::HloOpcode::kDynamicUpdateSlice;
  const hlo::Shape& whole = inst.operand(0)->shape();
  const hlo::Shape& block = update ? inst.operand(1)->shape() : inst.shape();
  const int64_t rank = whole.rank();
  if (!hlo::IsContiguousBlock(whole.dimensions(), block.dimensions())) return std::nullopt;
  const igraph::DramTensor& out = m.outputs.at(0);
  const igraph::DramTensor& operand = m.inputs.at(0);
  if (update && (operand.allocation != out.allocation || operand.offset != out.offset)) {
    return std::nullopt;
  }
  auto p = std::make_shared<BlockProgram>();
  const int64_t first_index = update ? 2 : 1;
  p->strides = igraph::RowMajorByteStrides(whole);
  for (int64_t d = 0; d < rank; ++d) {
    igraph::IndexStep s;
    s.kind = igraph::IndexStep::Kind::kInput;
    s.type = inst.operand(first_index + d)->shape().element_type();
    s.input = first_index + d;
    p->steps.push_back(s);
    p->starts.push_back(static_cast<int>(d));
    p->dims.push_back(whole.dimensions(d));
    p->sizes.push_back(block.dimensions(d));
  }
  for (const igraph::DramTensor& t : m.inputs)
    p->inputs.push_back({t.allocation, t.offset, nullptr});
  BlockCopy copy;
  copy.program = std::move(p);
  copy.whole = update ? BufferRef{out.allocation, out.offset, nullptr}
                      : BufferRef{operand.allocation, operand.offset, nullptr};
  const igraph::DramTensor& b = update ? m.inputs.at(1) : out;
  copy.block = {b.allocation, b.offset, nullptr};
  copy.bytes = block.element_count() * StorageBytes(whole.element_type());
  copy.into_whole = update;
  return copy;
}

int64_t CpuExecutable::RunLoopHook(const void* ctx, uint8_t* const* allocations) {
  const auto& h = *static_cast<const LoopHookContext*>(ctx);
  const igraph::KernelNode& n = *h.node;
  auto at = [&](const igraph::DramTensor& t) {
    return allocations[t.allocation] + static_cast<size_t>(t.offset);
  };
  switch (h.kind) {
    case LoopHookContext::Kind::kCopyOperand: {
      const igraph::DramTensor& operand = n.inputs[static_cast<size_t>(n.windows->update->source)];
      std::memmove(at(n.outputs[0]), at(operand), static_cast<size_t>(operand.bytes));
      return 0;
    }
    case LoopHookContext::Kind::kDynamicCopy: {
      std::vector<const uint8_t*> in;
      in.reserve(n.inputs.size());
      for (const igraph::DramTensor& t : n.inputs) in.push_back(at(t));
      igraph::RunDynamicCopy(*n.dynamic_copy, in, at(n.outputs[0]));
      return 0;
    }
  }
  return 0;
}

struct CpuExecutable::Memory {
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<uint8_t, Free>> blocks;  // per allocation; null if not pooled
};

CpuExecutable::~CpuExecutable() = default;

namespace {

// Why a run's memory could not be had: the allocation's largest value
// (its op and shape) and the bytes asked for.
std::string AllocationFailure(const buffers::Allocation& a, size_t bytes) {
  const analysis::HloValue* largest = nullptr;
  size_t values = 0;
  for (const analysis::HloBuffer* b : a.buffers) {
    for (const analysis::HloValue* v : b->values()) {
      ++values;
      if (largest == nullptr || v->bytes() > largest->bytes()) largest = v;
    }
  }
  std::string what = "allocation " + std::to_string(a.index);
  if (largest != nullptr) {
    what += ", which holds " + largest->ToShortString() + " (" +
            std::string(hlo::OpcodeName(largest->instruction()->opcode())) + ", " +
            largest->shape().ToString() + ")";
    if (values > 1) {
      what +=
          " and " + std::to_string(values - 1) + (values == 2 ? " other value" : " other values");
    }
  }
  return "cannot allocate " + DescribeBytes(bytes) + " for " + what;
}

}  // namespace

std::unique_ptr<CpuExecutable::Memory> CpuExecutable::TakeMemory() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!pool_.empty()) {
      std::unique_ptr<Memory> m = std::move(pool_.back());
      pool_.pop_back();
      return m;
    }
  }
  auto m = std::make_unique<Memory>();
  const auto& allocations = graph_.assignment().allocations();
  for (size_t k = 0; k < allocations.size(); ++k) {
    // A donated parameter's allocation gets a block too, for the runs
    // whose caller does not donate.
    if (placement_[k].source != Source::kPool && placement_[k].source != Source::kDonated) {
      m->blocks.emplace_back();
      continue;
    }
    // Large blocks start a page, as the buffer pool's do (runtime/buffer_pool.h:
    // a kernel whose output sits a little below its inputs' page offset
    // does not wait on 4K aliasing), and span a whole number of their
    // alignment, as aligned_alloc requires.
    const int64_t bytes = std::max<int64_t>(allocations[k].size, 1);
    const int64_t align = runtime::PageAligned(bytes) ? 4096 : 64;
    const auto size = static_cast<size_t>((bytes + align - 1) / align * align);
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(static_cast<size_t>(align), size));
    if (p == nullptr) throw OutOfMemoryError(AllocationFailure(allocations[k], size));
    std::memset(p, 0, size);
    m->blocks.emplace_back(p);
  }
  return m;
}

void CpuExecutable::GiveBack(std::unique_ptr<Memory> memory) const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.push_back(std::move(memory));
}

void CpuExecutable::Execute(const std::vector<const uint8_t*>& args,
                            const std::vector<uint8_t*>& results, runtime::Profiler* profiler,
                            runtime::Communicator* communicator) const {
  UIR_CHECK(args.size() == arg_leaves_.size() && results.size() == result_leaves_.size());
  // A single participant meets nobody: its collectives run on a clique of one.
  std::optional<runtime::InProcessClique> alone;
  if (communicator == nullptr && participants_ == 1 && !collectives_.empty()) {
    communicator = &alone.emplace(1).Member(0);
  }
  if (!collectives_.empty()) {
    if (communicator == nullptr || communicator->size() != participants_) {
      throw DistributedError(
          graph_.module().name() + " runs as " + std::to_string(participants_) +
          " participants (replica_count x num_partitions, or the ids its collectives name); " +
          (communicator == nullptr
               ? std::string("run it with replicas=") + std::to_string(participants_) + ", or in " +
                     std::to_string(participants_) + " processes under uir.distributed"
               : "this run has " + std::to_string(communicator->size())));
    }
    try {
      communicator->Prepare(fingerprint_, collectives_);
    } catch (const std::exception& e) {
      communicator->Fail(e.what());
      throw;
    }
  }
  std::unique_ptr<Memory> memory = TakeMemory();
  struct Return {
    const CpuExecutable* self;
    std::unique_ptr<Memory>& memory;
    ~Return() { self->GiveBack(std::move(memory)); }
  } give_back{this, memory};
  std::vector<uint8_t*> bases(placement_.size());
  for (size_t k = 0; k < placement_.size(); ++k) {
    const Placement& p = placement_[k];
    switch (p.source) {
      case Source::kPool:
        bases[k] = memory->blocks[k].get();
        break;
      case Source::kArgument:
        // Read in place: nothing writes a parameter allocation that holds
        // no output.
        bases[k] = const_cast<uint8_t*>(args[p.leaf]);
        break;
      case Source::kResult:
        bases[k] = results[p.leaf];
        break;
      case Source::kDonated:
        // In the caller's array when donated; else in the run's own block,
        // the argument copied in and the result copied out.
        bases[k] = results[p.result] == args[p.leaf] ? results[p.result] : memory->blocks[k].get();
        break;
    }
  }
  // In place: an argument read where it is, a result computed where it goes.
  auto in_place = [&](const igraph::DramTensor& t, const uint8_t* caller) {
    return bases[t.allocation] + t.offset == caller;
  };
  for (size_t i = 0; i < arg_leaves_.size(); ++i) {
    const igraph::DramTensor& t = arg_leaves_[i];
    if (placement_[t.allocation].source == Source::kArgument || in_place(t, args[i])) continue;
    igraph::WriteTensor(bases[t.allocation] + t.offset, t, args[i]);
  }
  graph_.WriteConstants(bases.data());
  // Declared before the try: work still in flight when a thunk fails is
  // waited for only after the other participants were told.
  runtime::AsyncRuns async;
  try {
    thunks_->Execute({bases.data(), profiler, 0, &async, communicator});
  } catch (const std::exception& e) {
    if (communicator != nullptr && !collectives_.empty()) communicator->Fail(e.what());
    throw;
  }
  for (size_t i = 0; i < result_leaves_.size(); ++i) {
    const igraph::DramTensor& t = result_leaves_[i];
    if (in_place(t, results[i])) continue;
    igraph::ReadTensor(bases[t.allocation] + t.offset, t, results[i]);
  }
}

bool CpuExecutable::Run(const igraph::IGraph& graph, const igraph::DramBuffers& dram) const {
  auto it = parts_.find(&graph);
  if (it == parts_.end()) return false;
  const runtime::KernelPart& part = it->second;
  size_t count = 0;
  for (const igraph::IPointer& p : graph.pointers()) count += p.level == igraph::Level::kDram;
  runtime::BufferTable table;
  void** buffers = table.Get(count);
  size_t k = 0;
  for (const igraph::IPointer& p : graph.pointers()) {
    if (p.level != igraph::Level::kDram) continue;
    auto found = dram.find(p.id);
    UIR_CHECK(found != dram.end())
        << "no buffer for dram iPointer " << p.id << " of " << graph.name();
    buffers[k++] = found->second.data();
  }
  runtime::LaunchKernel(part, buffers);
  return true;
}

}  // namespace uir::codegen
