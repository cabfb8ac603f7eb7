// Serialized executables: a length-prefixed binary record (aot.h lists
// its fields) ending in a SHA-256 of the bytes before it.
#include "codegen/aot.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "codegen/host.h"
#include "codegen/library_plans.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "igraph/igraph.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::codegen {
namespace {

constexpr char kMagic[8] = {'u', 'i', 'r', 'e', 'x', 'e', 'c', '\n'};
constexpr uint64_t kFormatVersion = 2;
constexpr size_t kDigestBytes = 32;

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string Sha256(std::string_view data) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(data.data(), data.size()));
  const std::array<uint8_t, 32> digest = h.final();
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

class Writer {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof(v)); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s);
  }
  void Strs(const std::vector<std::string>& v) {
    U64(v.size());
    for (const std::string& s : v) Str(s);
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U64(uint64_t& v) {
    if (in_.size() - at_ < sizeof(v)) return false;
    std::memcpy(&v, in_.data() + at_, sizeof(v));
    at_ += sizeof(v);
    return true;
  }
  bool Str(std::string& s) {
    uint64_t n;
    if (!U64(n) || n > in_.size() - at_) return false;
    s.assign(in_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool Strs(std::vector<std::string>& v) {
    uint64_t n;
    if (!U64(n) || n > in_.size() - at_) return false;
    v.resize(n);
    for (std::string& s : v) {
      if (!Str(s)) return false;
    }
    return true;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

// A buffer as text: an allocation and offset, or a constant by its index in
// the loop's table (its address is of this process only).
void AppendRef(std::ostringstream& key, const BufferRef& r,
               const std::vector<const void*>& constants) {
  if (r.allocation >= 0) {
    key << r.allocation << "+" << r.offset << " ";
    return;
  }
  const auto at = std::find(constants.begin(), constants.end(), r.address);
  key << "c" << (at - constants.begin()) << " ";
}

// A block program as text, for the digest: everything the compiled loop
// computes an offset from.
void AppendProgram(std::ostringstream& key, const BlockProgram& p,
                   const std::vector<const void*>& constants) {
  key << "program[";
  for (const igraph::IndexStep& s : p.steps) {
    key << static_cast<int>(s.kind) << ":" << static_cast<int>(s.opcode) << ":"
        << static_cast<int>(s.direction) << ":" << static_cast<int>(s.type) << ":" << s.input << ":"
        << s.element << ":" << s.constant << ":";
    for (int o : s.operands) key << o << ",";
    key << ";";
  }
  auto list = [&](const char* name, const auto& v) {
    key << name;
    for (auto x : v) key << x << ",";
  };
  list(" starts ", p.starts);
  list(" dims ", p.dims);
  list(" sizes ", p.sizes);
  list(" strides ", p.strides);
  key << " inputs ";
  for (const BufferRef& r : p.inputs) AppendRef(key, r, constants);
  key << "] ";
}

[[noreturn]] void Refuse(const std::string& why) {
  throw SerializationError("cannot load this serialized executable: " + why);
}

// Reads one field or refuses the blob naming it (after the checksum
// matched, only a blob written wrongly gets here).
template <typename T>
void Read(Reader& r, T& value, const char* what) {
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>) {
    ok = r.Str(value);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    ok = r.Strs(value);
  } else {
    uint64_t v = 0;
    ok = r.U64(v);
    value = static_cast<T>(v);
  }
  if (!ok) Refuse(std::string("its ") + what + " runs past its end");
}

// Everything a blob holds, as written.
struct Blob {
  AotHost host;
  igraph::HardwareModel hardware;
  int opt_level = 3, plan_threads = 1;
  CompileFlags flags;
  std::string module_text, placement, thunk_text, digest;
  std::vector<std::string> parameters, results;  // leaf shapes
  std::vector<CpuExecutable::Donation> donations;
  KernelObjects kernels;
};

std::string Write(const Blob& b) {
  Writer w;
  w.bytes().append(kMagic, sizeof(kMagic));
  w.U64(kFormatVersion);
  w.Str(b.host.uir_version);
  w.Str(b.host.llvm_version);
  w.Str(b.host.triple);
  w.Str(b.host.cpu_name);
  w.Strs(b.host.features);
  w.Str(b.hardware.target);
  for (int64_t v : {b.hardware.num_group, b.hardware.num_unit, b.hardware.reg_bytes,
                    b.hardware.sram_bytes, b.hardware.vector_bytes}) {
    w.U64(static_cast<uint64_t>(v));
  }
  w.U64(static_cast<uint64_t>(b.opt_level));
  w.U64(static_cast<uint64_t>(b.plan_threads));
  for (const CompileFlagInfo& f : CompileFlagTable()) {
    w.U64(static_cast<uint64_t>(GetCompileFlag(b.flags, f.name)));
  }
  w.Str(b.module_text);
  w.Str(b.placement);
  w.Strs(b.parameters);
  w.Strs(b.results);
  w.U64(b.donations.size());
  for (const CpuExecutable::Donation& d : b.donations) {
    w.U64(static_cast<uint64_t>(d.argument));
    w.U64(static_cast<uint64_t>(d.result));
  }
  w.Str(b.thunk_text);
  w.Str(b.digest);
  const KernelObjects& k = b.kernels;
  w.Strs(k.objects);
  w.Strs(k.names);
  w.Strs(k.reasons);
  w.Strs(k.streaming_names);
  w.U64(k.streaming_buffers.size());
  for (const std::vector<int>& list : k.streaming_buffers) {
    w.U64(list.size());
    for (int v : list) w.U64(static_cast<uint64_t>(v));
  }
  w.Strs(k.loop_names);
  w.bytes() += Sha256(w.bytes());
  return std::move(w.bytes());
}

Blob ReadBlob(std::string_view bytes) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    Refuse("it is not one (" + std::to_string(bytes.size()) +
           " bytes that do not start as uir's serialized executables do)");
  }
  if (bytes.size() < sizeof(kMagic) + kDigestBytes) {
    Refuse("it is cut short (" + std::to_string(bytes.size()) + " bytes)");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - kDigestBytes);
  if (Sha256(body) != bytes.substr(body.size())) {
    Refuse("it is damaged or cut short (" + std::to_string(bytes.size()) +
           " bytes whose SHA-256 does not match the one stored at their end)");
  }
  Reader r(body.substr(sizeof(kMagic)));
  uint64_t version = 0;
  Read(r, version, "format version");
  if (version != kFormatVersion) {
    Refuse("it is in format " + std::to_string(version) + "; this uir reads format " +
           std::to_string(kFormatVersion));
  }
  Blob b;
  Read(r, b.host.uir_version, "uir version");
  Read(r, b.host.llvm_version, "LLVM version");
  Read(r, b.host.triple, "target triple");
  Read(r, b.host.cpu_name, "CPU name");
  Read(r, b.host.features, "CPU features");
  Read(r, b.hardware.target, "hardware model");
  for (int64_t* v : {&b.hardware.num_group, &b.hardware.num_unit, &b.hardware.reg_bytes,
                     &b.hardware.sram_bytes, &b.hardware.vector_bytes}) {
    Read(r, *v, "hardware model");
  }
  Read(r, b.opt_level, "options");
  Read(r, b.plan_threads, "options");
  for (const CompileFlagInfo& f : CompileFlagTable()) {
    int64_t value = 0;
    Read(r, value, "options");
    try {
      SetCompileFlag(b.flags, f.name, value);
    } catch (const std::invalid_argument& e) {
      Refuse(std::string("its options are out of range (") + e.what() + ")");
    }
  }
  Read(r, b.module_text, "module");
  Read(r, b.placement, "buffer assignment");
  Read(r, b.parameters, "signature");
  Read(r, b.results, "signature");
  uint64_t donations = 0;
  Read(r, donations, "donations");
  if (donations > body.size()) Refuse("its donations run past its end");
  b.donations.resize(donations);
  for (CpuExecutable::Donation& d : b.donations) {
    Read(r, d.argument, "donations");
    Read(r, d.result, "donations");
  }
  Read(r, b.thunk_text, "thunk sequence");
  Read(r, b.digest, "program digest");
  KernelObjects& k = b.kernels;
  Read(r, k.objects, "machine code");
  Read(r, k.names, "kernel names");
  Read(r, k.reasons, "kernel names");
  Read(r, k.streaming_names, "kernel names");
  uint64_t lists = 0;
  Read(r, lists, "streaming buffers");
  if (lists > body.size()) Refuse("its streaming buffers run past its end");
  k.streaming_buffers.resize(lists);
  for (std::vector<int>& list : k.streaming_buffers) {
    uint64_t n = 0;
    Read(r, n, "streaming buffers");
    if (n > body.size()) Refuse("its streaming buffers run past its end");
    list.resize(n);
    for (int& v : list) Read(r, v, "streaming buffers");
  }
  Read(r, k.loop_names, "loop names");
  if (!r.done()) Refuse("it has bytes after its last field");
  return b;
}

AotHost ThisHost() {
  const HostInfo& info = GetHostInfo();
  AotHost h;
#ifdef UIR_VERSION
  h.uir_version = UIR_VERSION;
#endif
  h.llvm_version = info.llvm_version;
  h.triple = info.triple;
  h.cpu_name = info.cpu_name;
  h.features = info.features;
  return h;
}

std::vector<std::string> ShapeTexts(const std::vector<hlo::Shape>& shapes) {
  std::vector<std::string> out;
  for (const hlo::Shape& s : shapes) out.push_back(s.ToString());
  return out;
}

// The first line where `a` and `b` differ, for a refusal.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "";
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(line) + ": stored '" + (more_a ? la : "") + "', now '" +
             (more_b ? lb : "") + "'";
    }
  }
}

}  // namespace

std::string KernelProgramDigest(const std::vector<const igraph::IGraph*>& graphs,
                                const KernelCompileOptions& options) {
  std::ostringstream key;
  key << "opt " << options.opt_level << " " << CompileFlagsText(options.flags, /*code_only=*/true)
      << "\n";
  for (size_t k = 0; k < graphs.size(); ++k) {
    key << "graph " << k << "\n" << igraph::ToText(*graphs[k]) << "\n";
    if (k < options.aliasing.size()) {
      const DramAliasing& a = options.aliasing[k];
      key << "aliasing";
      for (size_t p = 0; p < a.same_as.size(); ++p) {
        key << " " << a.same_as[p] << (p < a.disjoint.size() && a.disjoint[p] ? "d" : "");
      }
      key << "\n";
    }
  }
  for (const LoopDriver& loop : options.loops) {
    const std::vector<const void*>& constants = loop.constants;
    key << "loop " << constants.size() << " constants";
    for (const auto* calls : {&loop.condition, &loop.body}) {
      key << " |";
      for (const KernelCall& c : *calls) {
        key << " " << c.graph << "x" << c.num_parallel << "(";
        for (const BufferRef& r : c.buffers) AppendRef(key, r, constants);
        for (const MovedBuffer& m : c.moved) {
          key << "moved " << m.buffer << " ";
          if (m.program) {
            AppendProgram(key, *m.program, constants);
          } else {
            key << "hook " << m.hook << " ";
          }
        }
        if (c.copy) {
          key << "copy ";
          AppendRef(key, c.copy->whole, constants);
          AppendRef(key, c.copy->block, constants);
          key << c.copy->bytes << (c.copy->into_whole ? " in " : " out ");
          AppendProgram(key, *c.copy->program, constants);
        }
        if (c.host >= 0) key << "host " << c.host << " ";
        key << ")";
      }
    }
    key << " ? ";
    AppendRef(key, loop.predicate, constants);
    key << "\n";
  }
  return Hex(Sha256(key.str()));
}

std::string PlacementText(const buffers::BufferAssignment& assignment) {
  std::string out;
  for (const buffers::Allocation& a : assignment.allocations()) {
    out += "allocation " + std::to_string(a.index) + " " + a.Describe() + "\n";
    std::vector<std::string> lines;
    for (const analysis::HloBuffer* buffer : a.buffers) {
      const buffers::Slice& s = assignment.SliceOf(*buffer);
      for (const analysis::HloValue* v : buffer->values()) {
        lines.push_back(" " + v->ToShortString() + " at " + std::to_string(s.offset) + " size " +
                        std::to_string(s.size) + "\n");
      }
    }
    std::sort(lines.begin(), lines.end());
    for (const std::string& l : lines) out += l;
  }
  return out;
}

std::vector<std::string> MissingFeatures(const std::vector<std::string>& required) {
  const std::vector<std::string>& have = GetHostInfo().features;
  std::vector<std::string> missing;
  for (const std::string& f : required) {
    if (!std::binary_search(have.begin(), have.end(), f)) missing.push_back(f);
  }
  return missing;
}

std::string SerializeExecutable(const CpuExecutable& exe) {
  const igraph::KernelGraph& graph = exe.graph();
  const CpuExecutableOptions& options = exe.options();
  UIR_CHECK(exe.kernels().objects != nullptr && !options.time_loop_bodies)
      << "an executable without its machine code, or with loop-body timers";
  Blob b;
  b.host = ThisHost();
  b.hardware = graph.hardware();
  b.opt_level = options.opt_level;
  b.plan_threads = options.plan_threads;
  b.flags = options.flags;
  hlo::PrintOptions print;
  print.print_metadata = false;
  b.module_text = hlo::PrintModule(graph.module(), print);
  b.placement = PlacementText(graph.assignment());
  {
    // The module is stored as text: its values must land where they are
    // now when that text is parsed and assigned again. (A module built by
    // passes numbers its values in the order they were made, the parsed
    // one in text order, and the numbering orders the allocations.)
    const std::unique_ptr<hlo::HloModule> again = hlo::ParseModule(b.module_text);
    if (PlacementText(*buffers::BufferAssignment::Run(*again)) != b.placement) {
      throw SerializationError(
          "cannot serialize this executable as compiled: its module's text, parsed again, "
          "gets another buffer assignment; compile the module parsed from its text, "
          "then serialize that");
    }
  }
  b.parameters = ShapeTexts(exe.ParameterShapes());
  b.results = ShapeTexts(exe.ResultShapes());
  b.donations = exe.Donations();
  b.thunk_text = exe.thunks().ToText();
  b.digest = KernelProgramDigest(graph.AllIGraphs(), exe.compile_options());
  b.kernels = *exe.kernels().objects;
  return Write(b);
}

LoadedExecutable DeserializeExecutable(std::string_view bytes) {
  Blob b = ReadBlob(bytes);
  const AotHost here = ThisHost();
  if (b.host.uir_version != here.uir_version) {
    Refuse("it was written by uir " + b.host.uir_version + "; this is uir " + here.uir_version);
  }
  if (b.host.triple != here.triple) {
    Refuse("it holds machine code for " + b.host.triple + "; this host is " + here.triple);
  }
  if (const std::vector<std::string> missing = MissingFeatures(b.host.features); !missing.empty()) {
    std::string list;
    for (const std::string& f : missing) list += (list.empty() ? "" : ", ") + f;
    Refuse("its machine code was compiled for a " + b.host.cpu_name +
           " and may use CPU features this " + here.cpu_name + " lacks: " + list);
  }
  LoadedExecutable out;
  out.host = b.host;
  try {
    out.module = std::shared_ptr<hlo::HloModule>(hlo::ParseModule(b.module_text));
  } catch (const ParseError& e) {
    Refuse(std::string("its module does not parse: ") + e.what());
  }
  if (!out.module->has_schedule()) Refuse("its module is not scheduled");
  out.assignment = buffers::BufferAssignment::Run(*out.module);
  if (const std::string now = PlacementText(*out.assignment); now != b.placement) {
    Refuse("its buffer assignment differs from the one this uir makes for its module (" +
           FirstDifference(b.placement, now) + ")");
  }
  out.graph = std::make_shared<igraph::KernelGraph>(
      igraph::KernelGraph::Lower(*out.module, *out.assignment, b.hardware, CpuLibrary()));
  CpuExecutableOptions options;
  options.opt_level = b.opt_level;
  options.plan_threads = b.plan_threads;
  options.flags = b.flags;
  options.objects = std::make_shared<const KernelObjects>(std::move(b.kernels));
  out.executable = std::make_unique<CpuExecutable>(*out.graph, options);
  const CpuExecutable& exe = *out.executable;
  if (KernelProgramDigest(out.graph->AllIGraphs(), exe.compile_options()) != b.digest) {
    Refuse(
        "the kernels this uir lowers from its module are not the ones its machine code "
        "was compiled from");
  }
  if (ShapeTexts(exe.ParameterShapes()) != b.parameters ||
      ShapeTexts(exe.ResultShapes()) != b.results) {
    Refuse("its signature differs from its module's");
  }
  const auto& donations = exe.Donations();
  if (donations.size() != b.donations.size() ||
      !std::equal(donations.begin(), donations.end(), b.donations.begin(),
                  [](const auto& x, const auto& y) {
                    return x.argument == y.argument && x.result == y.result;
                  })) {
    Refuse("the arguments it may compute its results in differ from its module's");
  }
  // Whether a sequence runs its thunks in order depends on the worker
  // count too; compare where it is the same.
  if (b.plan_threads == NumThreads()) {
    if (const std::string now = exe.thunks().ToText(); now != b.thunk_text) {
      Refuse("the thunks this uir emits for it differ from the stored ones (" +
             FirstDifference(b.thunk_text, now) + ")");
    }
  }
  return out;
}

}  // namespace uir::codegen
