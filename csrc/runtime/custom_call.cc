// The custom-call registry, the built-in targets, and calling a target on a
// call frame.
#include "runtime/custom_call.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>

#include "runtime/lapack_targets.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::runtime {

int64_t CallBuffer::ElementCount() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t CallBuffer::Bytes() const { return IsArray() ? ElementCount() * StorageBytes(type) : 0; }

std::string CallBuffer::ToString() const {
  if (kind == Kind::kToken) return "token[]";
  std::string s;
  if (IsTuple()) {
    s = "(";
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) s += ", ";
      s += elements[i].ToString();
    }
    return s + ")";
  }
  s = std::string(PrimitiveTypeName(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

bool CallBuffer::SameShape(const CallBuffer& other) const {
  if (kind != other.kind) return false;
  if (IsArray()) return type == other.type && dims == other.dims;
  if (elements.size() != other.elements.size()) return false;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (!elements[i].SameShape(other.elements[i])) return false;
  }
  return true;
}

namespace {

// The status a C target reports through. The first member is the C ABI
// (UirCustomCallStatus); the rest is ours, and plain data so the layout is
// standard.
struct Status {
  void (*set_failure)(Status*, const char*, size_t);
  bool failed;
  char message[1024];
};

void SetFailure(Status* status, const char* message, size_t length) {
  status->failed = true;
  const size_t n = std::min(length, sizeof(status->message) - 1);
  if (message != nullptr && n > 0) std::memcpy(status->message, message, n);
  status->message[n] = '\0';
}

// --- Built-in targets ----------------------------------------------------------
// What a single host makes of the custom calls XLA's own pipelines emit.

// Copies every array of `from` into `to` (they may overlap: a value passed
// through in place).
void CopyTree(const CallBuffer& from, const CallBuffer& to) {
  if (from.IsArray()) {
    if (from.data != to.data && from.Bytes() > 0) {
      std::memmove(to.data, from.data, static_cast<size_t>(from.Bytes()));
    }
    return;
  }
  for (size_t i = 0; i < from.elements.size(); ++i) CopyTree(from.elements[i], to.elements[i]);
}

void ZeroTree(const CallBuffer& b) {
  if (b.IsArray() && b.Bytes() > 0) std::memset(b.data, 0, static_cast<size_t>(b.Bytes()));
  for (const CallBuffer& e : b.elements) ZeroTree(e);
}

// Sharding annotations, host offloading marks and bounds: on one host the
// value passes through unchanged.
void PassThrough(const CallFrame& f) {
  if (f.operands.empty() || !f.operands[0].SameShape(f.result)) {
    throw CustomCallError(f.target,
                          "expects one operand of the result's shape " + f.result.ToString());
  }
  CopyTree(f.operands[0], f.result);
}

// A buffer the program fills before reading; zeros are as good as any.
void AllocateBuffer(const CallFrame& f) { ZeroTree(f.result); }

// SliceToDynamic(array, sizes...) marks dimensions dynamic: evaluated at
// their bound, the data passes through.
void SliceToDynamic(const CallFrame& f) {
  if (f.operands.empty() || !f.result.IsArray() || !f.operands[0].SameShape(f.result))
    throw CustomCallError(f.target, "expects an operand of the result's shape");
  CopyTree(f.operands[0], f.result);
}

void StoreInteger(const CallBuffer& b, int64_t v) {
  switch (StorageBytes(b.type)) {
    case 1: {
      const auto x = static_cast<int8_t>(v);
      std::memcpy(b.data, &x, 1);
      break;
    }
    case 2: {
      const auto x = static_cast<int16_t>(v);
      std::memcpy(b.data, &x, 2);
      break;
    }
    case 4: {
      const auto x = static_cast<int32_t>(v);
      std::memcpy(b.data, &x, 4);
      break;
    }
    default:
      std::memcpy(b.data, &v, 8);
  }
}

// PadToStatic(array) -> (array, s32 size of each dimension).
void PadToStatic(const CallFrame& f) {
  if (f.operands.size() != 1 || !f.operands[0].IsArray() || !f.result.IsTuple() ||
      f.result.elements.size() != f.operands[0].dims.size() + 1) {
    throw CustomCallError(f.target, "expects one array operand and a (array, sizes...) result");
  }
  const auto& parts = f.result.elements;
  for (size_t d = 1; d < parts.size(); ++d) {
    if (!parts[d].IsArray() || !parts[d].dims.empty() || !IsInteger(parts[d].type))
      throw CustomCallError(f.target, "the sizes in the result must be integer scalars");
  }
  if (!f.operands[0].SameShape(parts[0]))
    throw CustomCallError(f.target, "the array in the result must be the operand's shape");
  CopyTree(f.operands[0], parts[0]);
  for (size_t d = 0; d < f.operands[0].dims.size(); ++d)
    StoreInteger(parts[d + 1], f.operands[0].dims[d]);
}

// Element i of an array as a double, for comparing.
double ReadDouble(const CallBuffer& b, int64_t i) {
  const int size = StorageBytes(b.type);
  const auto* at = static_cast<const uint8_t*>(b.data) + i * size;
  auto load = [&](auto v) {
    std::memcpy(&v, at, sizeof(v));
    return v;
  };
  switch (KindOf(b.type)) {
    case TypeKind::kPred:
      return *at != 0 ? 1.0 : 0.0;
    case TypeKind::kSigned:
      if (size == 1) return load(int8_t{});
      if (size == 2) return load(int16_t{});
      if (size == 4) return load(int32_t{});
      return static_cast<double>(load(int64_t{}));
    case TypeKind::kUnsigned:
      if (size == 1) return load(uint8_t{});
      if (size == 2) return load(uint16_t{});
      if (size == 4) return load(uint32_t{});
      return static_cast<double>(load(uint64_t{}));
    case TypeKind::kFloat:
      if (b.type == PrimitiveType::kF32) return load(float{});
      if (b.type == PrimitiveType::kF64) return load(double{});
      if (size == 1) return DecodeNarrowFloat(b.type, load(uint8_t{}));
      return DecodeNarrowFloat(b.type, load(uint16_t{}));
    default:
      throw CustomCallError("TopK",
                            "cannot order elements of " + std::string(PrimitiveTypeName(b.type)));
  }
}

// TopK(x[..., n]) -> (values[..., k], s32 indices[..., k]): the k largest
// along the last dimension, largest first (NaN above +inf), ties in index
// order.
void TopK(const CallFrame& f) {
  if (f.operands.size() != 1 || !f.operands[0].IsArray() || !f.result.IsTuple() ||
      f.result.elements.size() != 2 || f.operands[0].dims.empty()) {
    throw CustomCallError(f.target, "expects x[..., n] and a (values, indices) result");
  }
  const CallBuffer& x = f.operands[0];
  const CallBuffer& values = f.result.elements[0];
  const CallBuffer& indices = f.result.elements[1];
  const int64_t n = x.dims.back();
  const int64_t k = values.dims.empty() ? 1 : values.dims.back();
  // values and indices are x's shape with k in the last dimension.
  std::vector<int64_t> want = x.dims;
  want.back() = k;
  if (!values.IsArray() || !indices.IsArray() || values.dims != want || indices.dims != want ||
      !IsInteger(indices.type)) {
    throw CustomCallError(f.target,
                          "the result must be (values, integer indices), each of x's shape with "
                          "k in the last dimension");
  }
  if (k > n || values.type != x.type) {
    throw CustomCallError(f.target, "k = " + std::to_string(k) + " of " + std::to_string(n) +
                                        " elements, or wrong types");
  }
  const int64_t rows = n == 0 ? 0 : x.ElementCount() / n;
  const auto size = static_cast<size_t>(StorageBytes(x.type));
  const int index_size = StorageBytes(indices.type);
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<double> keys(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    for (int64_t i = 0; i < n; ++i) keys[static_cast<size_t>(i)] = ReadDouble(x, r * n + i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double va = keys[static_cast<size_t>(a)], vb = keys[static_cast<size_t>(b)];
      if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb);
      return va > vb;
    });
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(static_cast<uint8_t*>(values.data) + (r * k + j) * size,
                  static_cast<const uint8_t*>(x.data) + (r * n + order[j]) * size, size);
      CallBuffer at = indices;
      at.data = static_cast<uint8_t*>(indices.data) + (r * k + j) * index_size;
      StoreInteger(at, order[j]);
    }
  }
}

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const CustomCallTarget>, std::less<>> targets;

  Registry() {
    auto builtin = [&](const std::string& name, FrameTarget fn) {
      auto t = std::make_shared<CustomCallTarget>();
      t->name = name;
      t->frame_function = std::move(fn);
      t->builtin = true;
      targets[name] = std::move(t);
    };
    for (const char* name :
         {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost", "MoveToDevice",
          "Pin", "Unpin", "annotate_device_placement", "SetBound", "LayoutConstraint"}) {
      builtin(name, PassThrough);
    }
    builtin("AllocateBuffer", AllocateBuffer);
    builtin("SliceToDynamic", SliceToDynamic);
    builtin("PadToStatic", PadToStatic);
    builtin("TopK", TopK);
    for (auto& [name, fn] : LapackTargets()) builtin(name, std::move(fn));
  }
};

Registry& Global() {
  static Registry* registry = new Registry();  // never destroyed: targets may outlive statics
  return *registry;
}

void Store(std::shared_ptr<CustomCallTarget> target) {
  if (target->name.empty()) throw ShapeError("a custom-call target needs a non-empty name");
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  r.targets[target->name] = std::move(target);
}

// A buffer in the C calling convention: an array's data, or for a tuple an
// array of its elements' pointers (kept in `keep`).
void* PointerOf(const CallBuffer& b, std::vector<std::unique_ptr<std::vector<void*>>>& keep) {
  if (!b.IsTuple()) return b.data;
  auto table = std::make_unique<std::vector<void*>>();
  for (const CallBuffer& e : b.elements) table->push_back(PointerOf(e, keep));
  void* out = table->data();
  keep.push_back(std::move(table));
  return out;
}

// The convention `t` is called in for `f`: a target registered with one
// must agree with the instruction's api_version where it gives one.
CustomCallApi ApiFor(const CustomCallTarget& t, const CallFrame& f) {
  CustomCallApi api = t.api;
  if (f.api == CustomCallApi::kTypedFfi) {
    api = CustomCallApi::kTypedFfi;
  } else if (api == CustomCallApi::kFromInstruction) {
    api = f.api.value_or(CustomCallApi::kOriginal);
  } else if (f.api.has_value() && *f.api != api) {
    throw CustomCallError(
        t.name, "%" + f.call + " asks for api_version=" + std::string(CustomCallApiName(*f.api)) +
                    " but the target was registered as a C function of " +
                    std::string(CustomCallApiName(api)) +
                    "; register it with the api the instruction names");
  }
  if (api == CustomCallApi::kTypedFfi) {
    throw CustomCallError(
        t.name, "%" + f.call +
                    " asks for XLA's typed FFI (api_version=API_VERSION_TYPED_FFI), and C "
                    "functions are run only in the legacy conventions (API_VERSION_ORIGINAL, "
                    "_STATUS_RETURNING, _STATUS_RETURNING_UNIFIED); register a Python "
                    "callable under this name, or emit the call with a legacy api_version");
  }
  return api;
}

void CallC(const CustomCallTarget& t, const CallFrame& f) {
  const CustomCallApi api = ApiFor(t, f);
  std::vector<std::unique_ptr<std::vector<void*>>> keep;
  std::vector<const void*> in;
  in.reserve(f.operands.size());
  for (const CallBuffer& o : f.operands) in.push_back(PointerOf(o, keep));
  void* out = PointerOf(f.result, keep);
  Status status{SetFailure, false, {0}};
  switch (api) {
    case CustomCallApi::kOriginal:
      reinterpret_cast<void (*)(void*, const void**)>(t.c_function)(out, in.data());
      break;
    case CustomCallApi::kStatusReturning:
      reinterpret_cast<void (*)(void*, const void**, Status*)>(t.c_function)(out, in.data(),
                                                                             &status);
      break;
    case CustomCallApi::kStatusReturningUnified:
      reinterpret_cast<void (*)(void*, const void**, const char*, size_t, Status*)>(t.c_function)(
          out, in.data(), f.opaque.data(), f.opaque.size(), &status);
      break;
    case CustomCallApi::kTypedFfi:
    case CustomCallApi::kFromInstruction:
      UIR_CHECK(false) << "ApiFor settles the convention";
  }
  if (status.failed) throw CustomCallError(t.name, status.message);
}

}  // namespace

std::string_view CustomCallApiName(CustomCallApi api) {
  switch (api) {
    case CustomCallApi::kOriginal:
      return "API_VERSION_ORIGINAL";
    case CustomCallApi::kStatusReturning:
      return "API_VERSION_STATUS_RETURNING";
    case CustomCallApi::kStatusReturningUnified:
      return "API_VERSION_STATUS_RETURNING_UNIFIED";
    case CustomCallApi::kTypedFfi:
      return "API_VERSION_TYPED_FFI";
    case CustomCallApi::kFromInstruction:
      break;
  }
  return "the instruction's api_version";
}

void RegisterCustomCallTarget(const std::string& name, void* c_function, CustomCallApi api) {
  if (c_function == nullptr)
    throw ShapeError("custom-call target '" + name + "' is a null pointer");
  if (api == CustomCallApi::kTypedFfi)
    throw ShapeError("custom-call target '" + name +
                     "': C functions of XLA's typed FFI are not supported");
  auto t = std::make_shared<CustomCallTarget>();
  t->name = name;
  t->c_function = c_function;
  t->api = api;
  Store(std::move(t));
}

void RegisterCustomCallTarget(const std::string& name, FrameTarget fn) {
  auto t = std::make_shared<CustomCallTarget>();
  t->name = name;
  t->frame_function = std::move(fn);
  Store(std::move(t));
}

bool UnregisterCustomCallTarget(const std::string& name) {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.targets.erase(name) > 0;
}

std::shared_ptr<const CustomCallTarget> FindCustomCallTarget(std::string_view name) {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.targets.find(name);
  return it == r.targets.end() ? nullptr : it->second;
}

std::vector<std::string> CustomCallTargetNames() {
  Registry& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [name, target] : r.targets) names.push_back(name);
  return names;
}

void RunCustomCall(const CallFrame& frame) {
  const auto target = FindCustomCallTarget(frame.target);
  if (target == nullptr) {
    throw CustomCallError(frame.target, "no target of this name is registered (%" + frame.call +
                                            "; see uir.custom_call.register)");
  }
  if (target->frame_function) {
    target->frame_function(frame);
  } else {
    CallC(*target, frame);
  }
}

}  // namespace uir::runtime
