// The iGraph's data structures: names from the tables, affine offsets,
// hardware models, sizes and traffic.
#include "igraph/igraph.h"

#include <algorithm>
#include <cstdlib>

#include "support/error.h"

namespace uir::igraph {

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kReg:
      return "reg";
    case Level::kSram:
      return "sram";
    case Level::kDram:
      return "dram";
  }
  return "?";
}

std::string_view SectionName(Section section) {
  switch (section) {
    case Section::kPrologue:
      return "prologue";
    case Section::kBody:
      return "body";
    case Section::kEpilogue:
      return "epilogue";
  }
  return "?";
}

std::string_view BodyFormName(BodyForm form) {
  switch (form) {
    case BodyForm::kNone:
      return "none";
    case BodyForm::kLoops:
      return "loops";
    case BodyForm::kRows:
      return "rows";
    case BodyForm::kCoalesced:
      return "coalesced";
  }
  return "?";
}

std::string DtypeText(PrimitiveType type) {
  std::string name(PrimitiveTypeName(type));
  if (IsFloat(type) && name[0] == 'f') return "fp" + name.substr(1);
  return name;
}

bool DtypeFromText(std::string_view name, PrimitiveType* type) {
  std::string hlo_name(name);
  if (name.starts_with("fp")) hlo_name = "f" + std::string(name.substr(2));
  auto t = PrimitiveTypeFromName(hlo_name);
  if (!t || !IsArrayType(*t) || IsComplex(*t)) return false;
  if (IsFloat(*t) && *t != PrimitiveType::kBF16 && !name.starts_with("fp")) return false;
  *type = *t;
  return true;
}

// --- iOp tables -------------------------------------------------------------

namespace {

struct KindRow {
  std::string_view name;
  int outputs, inputs;
};
constexpr KindRow kKinds[] = {
#define UIR_IOP(e, name, outputs, inputs, doc) {name, outputs, inputs},
#include "igraph/iop.def"
#undef UIR_IOP
};

struct FnRow {
  std::string_view name;
  hlo::HloOpcode opcode;
  uint8_t classes;
};
constexpr FnRow kFns[] = {
    {"", hlo::HloOpcode::kParameter, 0},  // Fn::kNone
#define UIR_IFN(e, name, op, classes) {name, hlo::HloOpcode::op, classes},
#include "igraph/functions.def"
#undef UIR_IFN
};

const FnRow& RowOf(Fn fn) { return kFns[static_cast<size_t>(fn)]; }

}  // namespace

std::string_view OpKindName(OpKind kind) { return kKinds[static_cast<int>(kind)].name; }
int OpOutputs(OpKind kind) { return kKinds[static_cast<int>(kind)].outputs; }
int OpInputs(OpKind kind) { return kKinds[static_cast<int>(kind)].inputs; }

bool OpKindFromName(std::string_view name, OpKind* kind) {
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    if (kKinds[i].name == name) {
      *kind = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

std::string_view AxisName(Axis axis) { return axis == Axis::kRow ? "row" : "col"; }
std::string_view ScopeName(Scope scope) { return scope == Scope::kUnit ? "unit" : "group"; }

std::string_view FnName(Fn fn) { return RowOf(fn).name; }

std::optional<Fn> FnNamed(std::string_view name, FnClass cls) {
  for (size_t i = 1; i < std::size(kFns); ++i) {
    if (kFns[i].name == name && (kFns[i].classes & cls) != 0) return static_cast<Fn>(i);
  }
  return std::nullopt;
}

bool FnIs(Fn fn, FnClass cls) { return (RowOf(fn).classes & cls) != 0; }

hlo::HloOpcode FnOpcode(Fn fn) {
  UIR_CHECK(fn != Fn::kNone);
  return RowOf(fn).opcode;
}

Fn FnFor(FnClass cls, hlo::HloOpcode opcode) {
  for (size_t i = 1; i < std::size(kFns); ++i) {
    if (kFns[i].opcode == opcode && (kFns[i].classes & cls) != 0) return static_cast<Fn>(i);
  }
  return Fn::kNone;
}

std::string_view FnDirection(Fn fn) {
  UIR_CHECK(FnIs(fn, kCompareFn));
  std::string_view name = RowOf(fn).name;
  return name.substr(0, 2);
}

bool FnIsTotalOrder(Fn fn) { return FnIs(fn, kCompareFn) && RowOf(fn).name.ends_with("_total"); }

bool IOp::operator==(const IOp& o) const {
  return kind == o.kind && fn == o.fn && dtype == o.dtype && to_dtype == o.to_dtype &&
         from == o.from && to == o.to && axis == o.axis && scope == o.scope &&
         outputs == o.outputs && inputs == o.inputs && params == o.params && buffer == o.buffer &&
         group_size == o.group_size && iota_base == o.iota_base && iota_step == o.iota_step &&
         plan == o.plan;
}

// --- Affine -------------------------------------------------------------------

void Affine::Add(int var, int64_t coefficient) {
  if (coefficient == 0) return;
  auto it = std::lower_bound(terms.begin(), terms.end(), var,
                             [](const auto& t, int v) { return t.first < v; });
  if (it != terms.end() && it->first == var) {
    it->second += coefficient;
    if (it->second == 0) terms.erase(it);
  } else {
    terms.insert(it, {var, coefficient});
  }
}

Affine& Affine::operator+=(const Affine& other) {
  constant += other.constant;
  for (const auto& [v, c] : other.terms) Add(v, c);
  return *this;
}

Affine Affine::Scaled(int64_t factor) const {
  Affine out;
  if (factor == 0) return out;
  out.constant = constant * factor;
  for (const auto& [v, c] : terms) out.terms.push_back({v, c * factor});
  return out;
}

int64_t Affine::CoefficientOf(int var) const {
  for (const auto& [v, c] : terms) {
    if (v == var) return c;
  }
  return 0;
}

// --- Hardware -------------------------------------------------------------------

HardwareModel HardwareModel::Cpu(const MachineModel& machine) {
  HardwareModel hw;
  hw.target = "cpu";
  hw.num_group = std::max<int64_t>(1, machine.cores);
  hw.num_unit = 1;
  hw.vector_bytes = machine.vector_bytes;
  hw.reg_bytes = 32 * machine.vector_bytes;
  hw.sram_bytes = machine.fast_memory_bytes();
  return hw;
}

HardwareModel HardwareModel::Gpu() {
  HardwareModel hw;
  hw.target = "gpu";
  hw.num_group = 132;
  hw.num_unit = 4;
  hw.vector_bytes = 128;
  hw.reg_bytes = 64 << 10;
  hw.sram_bytes = 227 << 10;
  return hw;
}

// --- IGraph ---------------------------------------------------------------------

int IGraph::AddVar(std::string name, int64_t extent, bool parallel) {
  var_names_.insert(name);
  IndexVar v{std::move(name), extent, parallel};
  // Parallel variables come before loop variables.
  auto it = vars_.end();
  if (parallel) {
    it = std::find_if(vars_.begin(), vars_.end(), [](const IndexVar& x) { return !x.parallel; });
    UIR_CHECK(it == vars_.end()) << "parallel variables must be added before loop variables";
  }
  vars_.insert(it, std::move(v));
  return static_cast<int>(vars_.size()) - 1;
}

int64_t IGraph::num_parallel() const {
  int64_t n = 1;
  for (const IndexVar& v : vars_) {
    if (v.parallel) n *= v.extent;
  }
  return n;
}

int64_t IGraph::num_loop() const {
  int64_t n = 1;
  for (const IndexVar& v : vars_) {
    if (!v.parallel) n *= v.extent;
  }
  return n;
}

int IGraph::AddPointer(IPointer pointer) {
  const int index = static_cast<int>(pointers_.size());
  pointer_index_.try_emplace(pointer.name, index);
  pointers_.push_back(std::move(pointer));
  return index;
}

int IGraph::AddSlice(ISlice slice) {
  const int index = static_cast<int>(slices_.size());
  slice_index_.try_emplace(slice.name, index);
  slices_.push_back(std::move(slice));
  return index;
}

int IGraph::FindPointer(std::string_view name) const {
  auto it = pointer_index_.find(std::string(name));
  return it == pointer_index_.end() ? -1 : it->second;
}

int IGraph::FindSlice(std::string_view name) const {
  auto it = slice_index_.find(std::string(name));
  return it == slice_index_.end() ? -1 : it->second;
}

std::string IGraph::FreshName(std::string_view base) const {
  auto used = [&](const std::string& n) {
    return pointer_index_.count(n) || slice_index_.count(n) || var_names_.count(n);
  };
  std::string name(base);
  if (!used(name)) return name;
  // Count on from the last suffix given for this base: names taken since
  // are skipped by the check.
  int& next = next_suffix_[name];
  for (++next; used(name + "." + std::to_string(next));) ++next;
  return name + "." + std::to_string(next);
}

int64_t IGraph::BytesAt(Level level) const {
  int64_t bytes = 0;
  for (const IPointer& p : pointers_) {
    if (p.level == level) bytes += p.size * StorageBytes(p.dtype);
  }
  return bytes;
}

namespace {

// How many times a section runs over the whole launch.
int64_t Trips(const IGraph& g, Section s) {
  return s == Section::kBody ? g.num_parallel() * g.num_loop() : g.num_parallel();
}

int64_t DramBytes(const IGraph& g, bool read) {
  int64_t bytes = 0;
  for (Section s : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
    for (const IOp& op : g.ops(s)) {
      if (op.kind != OpKind::kMove) continue;
      const int slice = read ? op.inputs[0] : op.outputs[0];
      const IPointer& p = g.PointerOf(slice);
      if (p.level != Level::kDram) continue;
      // Distinct elements: a zero stride repeats one element along its axis.
      const ISlice& sl = g.slices()[slice];
      const int64_t distinct =
          (sl.stride[0] == 0 ? 1 : sl.shape[0]) * (sl.stride[1] == 0 ? 1 : sl.shape[1]);
      bytes += distinct * StorageBytes(p.dtype) * Trips(g, s);
    }
  }
  return bytes;
}

}  // namespace

int64_t IGraph::DramBytesRead() const { return DramBytes(*this, true); }
int64_t IGraph::DramBytesWritten() const { return DramBytes(*this, false); }

IGraph IGraph::Unplanned() const {
  IGraph out = *this;
  out.plan_ = KernelPlan{};
  for (auto& ops : out.sections_) {
    for (IOp& op : ops) op.plan = OpPlan{};
  }
  return out;
}

bool IGraph::operator==(const IGraph& o) const {
  return name_ == o.name_ && hardware_ == o.hardware_ && vars_ == o.vars_ &&
         pointers_ == o.pointers_ && slices_ == o.slices_ && sections_ == o.sections_ &&
         plan_ == o.plan_;
}

}  // namespace uir::igraph
