// Kernel cache entries: a length-prefixed binary record with a SHA-256 of
// its contents at the end, one file per key.
#include "codegen/kernel_cache.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/host.h"
#include "igraph/igraph.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SHA256.h"

namespace uir::codegen {
namespace {

constexpr char kMagic[8] = {'u', 'i', 'r', 'k', 'c', 'a', 'c', '1'};

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

// A block program as text, for the key: everything the compiled loop
// computes an offset from.
void AppendProgram(std::ostringstream& key, const BlockProgram& p) {
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
  for (const BufferRef& r : p.inputs) key << r.allocation << "+" << r.offset << ",";
  key << "] ";
}

std::filesystem::path EntryPath(const std::string& directory, const std::string& key) {
  return std::filesystem::path(directory) / (key + ".uirkc");
}

}  // namespace

std::string KernelCacheKey(const std::vector<const igraph::IGraph*>& graphs,
                           const KernelCompileOptions& options) {
  if (options.keep_text) return "";
  for (const LoopDriver& loop : options.loops) {
    for (const auto* calls : {&loop.condition, &loop.body}) {
      for (const KernelCall& c : *calls) {
        for (const BufferRef& r : c.buffers) {
          if (r.allocation < 0) return "";
        }
      }
    }
    if (loop.predicate.allocation < 0) return "";
  }
  const HostInfo& host = GetHostInfo();
  std::ostringstream key;
#ifdef UIR_VERSION
  key << "uir " << UIR_VERSION << "\n";
#endif
  key << "llvm " << host.llvm_version << "\n" << host.triple << " " << host.cpu_name << "\n";
  for (const std::string& f : host.features) key << f << ",";
  key << "\nopt " << options.opt_level << " vector " << options.vector_bits << " streaming "
      << options.streaming_bytes << " target_math " << options.target_math << " prefetch "
      << options.prefetch << "\n";
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
    key << "loop";
    for (const auto* calls : {&loop.condition, &loop.body}) {
      key << " |";
      for (const KernelCall& c : *calls) {
        key << " " << c.graph << "x" << c.num_parallel << "(";
        for (const BufferRef& r : c.buffers) key << r.allocation << "+" << r.offset << " ";
        for (const MovedBuffer& m : c.moved) {
          key << "moved " << m.buffer << " ";
          if (m.program) {
            AppendProgram(key, *m.program);
          } else {
            key << "hook " << m.hook << " ";
          }
        }
        if (c.copy) {
          key << "copy " << c.copy->whole.allocation << "+" << c.copy->whole.offset << " "
              << c.copy->block.allocation << "+" << c.copy->block.offset << " " << c.copy->bytes
              << (c.copy->into_whole ? " in " : " out ");
          AppendProgram(key, *c.copy->program);
        }
        if (c.host >= 0) key << "host " << c.host << " ";
        key << ")";
      }
    }
    key << " ? " << loop.predicate.allocation << "+" << loop.predicate.offset << "\n";
  }
  const std::string text = key.str();
  const std::string digest = Sha256(text);
  return Hex(digest);
}

std::optional<CachedKernels> LoadCachedKernels(const std::string& directory,
                                               const std::string& key) {
  std::ifstream in(EntryPath(directory, key), std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(kMagic) + 32 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic))) {
    return std::nullopt;
  }
  const std::string_view body(bytes.data(), bytes.size() - 32);
  if (Sha256(body) != std::string_view(bytes.data() + body.size(), 32)) return std::nullopt;
  Reader r(body.substr(sizeof(kMagic)));
  CachedKernels e;
  std::string stored_key;
  uint64_t graphs = 0;
  if (!r.Str(stored_key) || stored_key != key || !r.Strs(e.objects) || !r.Strs(e.names) ||
      !r.Strs(e.reasons) || !r.Strs(e.streaming_names) || !r.U64(graphs) ||
      graphs != e.names.size() || e.reasons.size() != graphs ||
      e.streaming_names.size() != graphs) {
    return std::nullopt;
  }
  e.streaming_buffers.resize(graphs);
  for (std::vector<int>& list : e.streaming_buffers) {
    uint64_t n;
    if (!r.U64(n) || n > body.size()) return std::nullopt;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v;
      if (!r.U64(v)) return std::nullopt;
      list.push_back(static_cast<int>(v));
    }
  }
  if (!r.Strs(e.loop_names) || !r.done()) return std::nullopt;
  return e;
}

void StoreCachedKernels(const std::string& directory, const std::string& key,
                        const CachedKernels& entry) {
  Writer w;
  w.bytes().append(kMagic, sizeof(kMagic));
  w.Str(key);
  w.Strs(entry.objects);
  w.Strs(entry.names);
  w.Strs(entry.reasons);
  w.Strs(entry.streaming_names);
  w.U64(entry.streaming_buffers.size());
  for (const std::vector<int>& list : entry.streaming_buffers) {
    w.U64(list.size());
    for (int v : list) w.U64(static_cast<uint64_t>(v));
  }
  w.Strs(entry.loop_names);
  w.bytes() += Sha256(w.bytes());
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return;
  const std::filesystem::path path = EntryPath(directory, key);
  std::filesystem::path temporary = path;
  static std::atomic<uint64_t> writes{0};
  temporary += ".tmp" + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(w.bytes().data(), static_cast<std::streamsize>(w.bytes().size()));
    if (!out) {
      out.close();
      std::filesystem::remove(temporary, error);
      return;
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) std::filesystem::remove(temporary, error);
}

}  // namespace uir::codegen
