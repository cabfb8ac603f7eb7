// A thunk: one step of a compiled program on the run's memory (a kernel, a
// library call, a copy, control flow, a custom call), with the bytes it
// reads and writes declared so an executor can order and overlap them.
#ifndef UIR_RUNTIME_THUNK_H_
#define UIR_RUNTIME_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace uir::runtime {

// Bytes [offset, offset + size) of allocation `allocation` of a run's
// memory (buffer assignment numbers the allocations).
struct BufferSlice {
  int64_t allocation = 0;
  int64_t offset = 0;
  int64_t size = 0;

  bool Overlaps(const BufferSlice& o) const {
    return allocation == o.allocation && offset < o.offset + o.size && o.offset < offset + size;
  }
  std::string ToString() const;  // "a3[64:128]"
};

// A buffer a thunk passes to code: a slice's start, or memory the
// executable keeps at a fixed address (constants).
struct BufferRef {
  int64_t allocation = -1;  // -1: `address`
  int64_t offset = 0;
  const void* address = nullptr;
};

struct BufferUse {
  enum class Access : uint8_t { kRead, kWrite };
  BufferSlice slice;
  Access access = Access::kRead;

  static BufferUse Read(const BufferSlice& s) { return {s, Access::kRead}; }
  static BufferUse Write(const BufferSlice& s) { return {s, Access::kWrite}; }
};

class Profiler;
class AsyncRuns;
class Communicator;

// One run's memory: the base of every allocation; and, when the run is
// profiled, where thunks record their times.
struct ExecuteParams {
  uint8_t* const* allocations = nullptr;
  Profiler* profiler = nullptr;
  int32_t depth = 0;  // nesting of the sequence being run (profiles)
  // Work async-start thunks launched in this run (async_thunk.h); null:
  // they run their work in place.
  AsyncRuns* async = nullptr;
  // How this participant meets the others at collectives (collectives.h);
  // null in a run without collectives.
  Communicator* communicator = nullptr;

  uint8_t* At(const BufferSlice& s) const { return allocations[s.allocation] + s.offset; }
  void* At(const BufferRef& r) const {
    return r.allocation < 0 ? const_cast<void*>(r.address) : allocations[r.allocation] + r.offset;
  }
};

class Thunk {
 public:
  enum class Kind : uint8_t {
    kKernel,
    kGemm,
    kConv,
    kWindow,
    kReduce,
    kSort,
    kGather,
    kScatter,
    kFft,
    kRng,
    kCopy,
    kWhile,
    kConditional,
    kCall,
    kCustomCall,
    kHost,
    kFallback,
    kAsyncStart,
    kAsyncDone,
    kCollective,
  };
  static std::string_view KindName(Kind kind);

  virtual ~Thunk() = default;
  Thunk(const Thunk&) = delete;
  Thunk& operator=(const Thunk&) = delete;

  Kind kind() const { return kind_; }
  // The operation it runs (an HLO instruction's name, for reports).
  const std::string& name() const { return name_; }
  // Every byte it may read or write, sub-thunks included. An executor may
  // run two thunks at once only when neither writes what the other uses.
  const std::vector<BufferUse>& buffer_uses() const { return uses_; }
  // Thunks that may have effects outside the run's memory (custom calls,
  // ops on the evaluator) keep their order among themselves.
  bool ordered() const { return ordered_; }
  // Bytes it reads and writes once, to judge whether running it beside
  // another pays for waking a worker.
  int64_t BytesTouched() const;
  // Arithmetic operations one execution performs, as its emitter counted
  // them (a dot's 2mnk; an elementwise op per element), for profiles; 0
  // when not counted.
  int64_t flops() const { return flops_; }
  void set_flops(int64_t flops) { flops_ = flops; }
  // Bytes one execution moves to and from memory, for profiles: as the
  // emitter counted them where it did (a kernel's dram traffic), else
  // BytesTouched().
  int64_t BytesMoved() const { return bytes_moved_ >= 0 ? bytes_moved_ : BytesTouched(); }
  void set_bytes_moved(int64_t bytes) { bytes_moved_ = bytes; }

  // The sequences it runs (while: condition and body; conditional: its
  // branches; call: the callee).
  virtual std::vector<const class ThunkExecutor*> nested() const { return {}; }
  // Whether it waits for other participants of the run (a collective, or a
  // thunk that runs one): such a thunk runs on its sequence's own thread,
  // never as a worker's task (which another participant's wait could
  // hold).
  virtual bool MeetsOthers() const;

  // Runs on `params`' memory. Throws on failure (a failing custom call);
  // the memory it writes then holds unspecified bytes.
  virtual void Execute(const ExecuteParams& params) const = 0;

  // One line: kind, name, what it does and the slices it uses; sub-thunks
  // below, indented (AppendText).
  virtual void AppendText(std::string& out, int indent) const;

 protected:
  Thunk(Kind kind, std::string name, std::vector<BufferUse> uses, bool ordered = false)
      : kind_(kind), name_(std::move(name)), uses_(std::move(uses)), ordered_(ordered) {}
  // The kind-specific part of the line (after kind and name).
  virtual std::string Details() const { return ""; }

 private:
  Kind kind_;
  std::string name_;
  std::vector<BufferUse> uses_;
  bool ordered_ = false;
  int64_t flops_ = 0;
  int64_t bytes_moved_ = -1;
};

using ThunkSequence = std::vector<std::unique_ptr<Thunk>>;

// Throws InternalError naming `thunk` when a slice is malformed (negative
// allocation, offset or size).
void CheckSlices(std::string_view thunk, const std::vector<BufferSlice>& slices);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_THUNK_H_
