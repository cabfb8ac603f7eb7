// Thunk basics: names, slice checks and the text form.
#include "runtime/thunk.h"

#include "runtime/thunk_executor.h"
#include "support/error.h"

namespace uir::runtime {

std::string BufferSlice::ToString() const {
  return "a" + std::to_string(allocation) + "[" + std::to_string(offset) + ":" +
         std::to_string(offset + size) + "]";
}

std::string_view Thunk::KindName(Kind kind) {
  switch (kind) {
    case Kind::kKernel:
      return "kernel";
    case Kind::kGemm:
      return "gemm";
    case Kind::kConv:
      return "conv";
    case Kind::kWindow:
      return "window";
    case Kind::kReduce:
      return "reduce";
    case Kind::kSort:
      return "sort";
    case Kind::kGather:
      return "gather";
    case Kind::kScatter:
      return "scatter";
    case Kind::kFft:
      return "fft";
    case Kind::kRng:
      return "rng";
    case Kind::kCopy:
      return "copy";
    case Kind::kWhile:
      return "while";
    case Kind::kConditional:
      return "conditional";
    case Kind::kCall:
      return "call";
    case Kind::kCustomCall:
      return "custom-call";
    case Kind::kHost:
      return "host";
    case Kind::kFallback:
      return "fallback";
    case Kind::kAsyncStart:
      return "async-start";
    case Kind::kAsyncDone:
      return "async-done";
    case Kind::kCollective:
      return "collective";
  }
  return "?";
}

bool Thunk::MeetsOthers() const {
  for (const ThunkExecutor* s : nested()) {
    if (s->meets_others()) return true;
  }
  return false;
}

int64_t Thunk::BytesTouched() const {
  int64_t bytes = 0;
  for (const BufferUse& u : uses_) bytes += u.slice.size;
  return bytes;
}

void Thunk::AppendText(std::string& out, int indent) const {
  out.append(static_cast<size_t>(indent), ' ');
  out += KindName(kind_);
  out += ' ';
  out += name_;
  const std::string details = Details();
  if (!details.empty()) out += " " + details;
  std::string reads, writes;
  for (const BufferUse& u : uses_) {
    std::string& list = u.access == BufferUse::Access::kRead ? reads : writes;
    list += (list.empty() ? "" : ", ") + u.slice.ToString();
  }
  if (!reads.empty()) out += " reads " + reads;
  if (!writes.empty()) out += " writes " + writes;
  out += '\n';
  for (const ThunkExecutor* sub : nested()) sub->AppendText(out, indent + 2);
}

void CheckSlices(std::string_view thunk, const std::vector<BufferSlice>& slices) {
  for (const BufferSlice& s : slices) {
    UIR_CHECK(s.allocation >= 0 && s.offset >= 0 && s.size >= 0)
        << "thunk " << thunk << ": malformed slice " << s.ToString();
  }
}

}  // namespace uir::runtime
