// The custom-call registry and calling a target on a call frame.
#include "support/custom_call.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>

#include "support/error.h"
#include "support/float_format.h"

namespace uir {

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

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const CustomCallTarget>, std::less<>> targets;
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
  CallStatus status;
  switch (api) {
    case CustomCallApi::kOriginal:
      reinterpret_cast<void (*)(void*, const void**)>(t.c_function)(out, in.data());
      break;
    case CustomCallApi::kStatusReturning:
      reinterpret_cast<void (*)(void*, const void**, CallStatus*)>(t.c_function)(out, in.data(),
                                                                                 &status);
      break;
    case CustomCallApi::kStatusReturningUnified:
      reinterpret_cast<void (*)(void*, const void**, const char*, size_t, CallStatus*)>(
          t.c_function)(out, in.data(), f.opaque.data(), f.opaque.size(), &status);
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

}  // namespace uir
