// The HLO printer. Header attributes, instruction attributes and literals
// follow XLA's order and spelling so that XLA can read the text back.
#include "hlo/printer.h"

#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "hlo/parser.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

std::string ShapeText(const Shape& s, const PrintOptions& o) {
  return s.ToString(o.print_layout, /*index_comments=*/true);
}

std::string Bools(const std::vector<bool>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i)
    out += std::string(i ? "," : "") + (v[i] ? "true" : "false");
  return out + "}";
}

std::string AttrValueText(AttrKey key, const AttrValue& value, const PrintOptions& o) {
  switch (AttrKindOf(key)) {
    case AttrKind::kInt:
      return std::to_string(std::get<int64_t>(value));
    case AttrKind::kBool:
      return std::get<bool>(value) ? "true" : "false";
    case AttrKind::kFloat:
      return FormatDouble(std::get<double>(value));
    case AttrKind::kString:
      return "\"" + CEscape(std::get<std::string>(value)) + "\"";
    case AttrKind::kEnum:
      return std::string(EnumName(key, std::get<EnumValue>(value)));
    case AttrKind::kIdentifier:
    case AttrKind::kRaw:
      return std::get<std::string>(value);
    case AttrKind::kIntList:
      return IntListToString(std::get<std::vector<int64_t>>(value));
    case AttrKind::kIntListList: {
      std::string out = "{";
      const auto& lists = std::get<std::vector<std::vector<int64_t>>>(value);
      for (size_t i = 0; i < lists.size(); ++i) out += (i ? "," : "") + IntListToString(lists[i]);
      return out + "}";
    }
    case AttrKind::kBoolList:
      return Bools(std::get<std::vector<bool>>(value));
    case AttrKind::kComputation:
      return "%" + std::get<HloComputation*>(value)->name();
    case AttrKind::kComputationList: {
      std::string out = "{";
      const auto& list = std::get<std::vector<HloComputation*>>(value);
      for (size_t i = 0; i < list.size(); ++i) out += (i ? ", %" : "%") + list[i]->name();
      return out + "}";
    }
    case AttrKind::kSliceRanges:
      return SliceRangesToString(std::get<std::vector<SliceRange>>(value));
    case AttrKind::kPadding:
      return PaddingToString(std::get<PaddingConfig>(value));
    case AttrKind::kWindow:
      return WindowToString(std::get<Window>(value));
    case AttrKind::kDimLabels:
      return DimLabelsToString(AttrAs<ConvolutionDimensionNumbers>(value));
    case AttrKind::kPrecisionList: {
      std::string out = "{";
      const auto& list = std::get<std::vector<std::string>>(value);
      for (size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + list[i];
      return out + "}";
    }
    case AttrKind::kShape:
      return ShapeText(AttrAs<Shape>(value), o);
    case AttrKind::kShapeList: {
      std::string out = "{";
      const auto& list = std::get<std::vector<Shape>>(value);
      for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + ShapeText(list[i], o);
      return out + "}";
    }
    case AttrKind::kAliasing:
      return AliasingToString(std::get<std::vector<OutputOperandAlias>>(value));
    case AttrKind::kLiteral: {
      const Literal& l = AttrAs<Literal>(value);
      return ShapeText(l.shape(), o) + " " + l.ToString();
    }
    case AttrKind::kReplicaGroups:
      return ReplicaGroupsToString(AttrAs<ReplicaGroups>(value));
    case AttrKind::kSharding:
      return ShardingToString(AttrAs<Sharding>(value));
    case AttrKind::kFrontendAttributes:
      return FrontendAttributesToString(std::get<FrontendAttributes>(value));
    case AttrKind::kMetadata:
      return MetadataToString(AttrAs<Metadata>(value));
    case AttrKind::kBackendConfig: {
      const BackendConfig& b = AttrAs<BackendConfig>(value);
      return b.is_raw_block ? b.text : "\"" + CEscape(b.text) + "\"";
    }
  }
  return "";
}

class ModulePrinter {
 public:
  ModulePrinter(const HloModule* module, const PrintOptions& options)
      : module_(module), o_(options) {
    if (module_ == nullptr) return;
    for (const auto& c : module_->computations()) {
      for (const auto& inst : c->instructions()) {
        for (HloComputation* callee : inst->called_computations()) ++callers_[callee];
      }
    }
    if (o_.async_sugar) {
      for (const auto& c : module_->computations()) {
        for (const auto& inst : c->instructions()) {
          if (inst->opcode() == HloOpcode::kAsyncStart && Sugarable(*inst)) {
            sugared_.insert(inst->async_wrapped_computation());
          }
        }
      }
    }
  }

  // True when `start`'s computation is exactly what the parser builds for
  // X-start, so the sugar loses nothing.
  bool Sugarable(const HloInstruction& start) const {
    const HloComputation* c = start.async_wrapped_computation();
    if (c == nullptr || c->name() != AsyncWrappedComputationName(start.name())) return false;
    auto it = callers_.find(c);
    if (it == callers_.end() || it->second != 1) return false;
    const HloInstruction* root = c->root();
    if (root == nullptr || IsOwnAsyncFamily(root->opcode()) || IsAsyncOpcode(root->opcode()) ||
        root->opcode() == HloOpcode::kParameter || root->opcode() == HloOpcode::kConstant) {
      return false;
    }
    if (root->name() != OpcodeName(root->opcode())) return false;
    if (!root->control_predecessors().empty() || !root->control_successors().empty()) return false;
    if (c->instruction_count() != c->num_parameters() + 1) return false;
    const Shape& shape = start.shape();
    if (!shape.IsTuple() || shape.tuple_shapes_size() < 2 || !shape.tuple_shapes(0).IsTuple())
      return false;
    if (!(shape.tuple_shapes(1) == root->shape())) return false;
    if (root->operand_count() != c->num_parameters() ||
        start.operand_count() != c->num_parameters())
      return false;
    for (int64_t i = 0; i < c->num_parameters(); ++i) {
      const HloInstruction* p = c->parameter(i);
      if (p == nullptr || root->operand(i) != p || p->name() != "param_" + std::to_string(i))
        return false;
      if (i >= shape.tuple_shapes(0).tuple_shapes_size() ||
          !(p->shape() == shape.tuple_shapes(0).tuple_shapes(i)) ||
          !p->attributes().entries().empty()) {
        return false;
      }
    }
    return true;
  }

  bool IsSugared(const HloInstruction& inst) const {
    if (!o_.async_sugar || !IsAsyncOpcode(inst.opcode())) return false;
    const HloComputation* c = inst.async_wrapped_computation();
    return c != nullptr && sugared_.count(c) > 0;
  }
  bool HiddenComputation(const HloComputation* c) const { return sugared_.count(c) > 0; }

  std::string Instruction(const HloInstruction& inst) const {
    std::ostringstream os;
    os << "%" << inst.name() << " = " << ShapeText(inst.shape(), o_) << " ";
    const bool sugar = IsSugared(inst);
    const HloInstruction* wrapped = sugar ? inst.async_wrapped_instruction() : nullptr;
    if (sugar) {
      static constexpr const char* kSuffix[] = {"-start", "-update", "-done"};
      int phase = inst.opcode() == HloOpcode::kAsyncStart    ? 0
                  : inst.opcode() == HloOpcode::kAsyncUpdate ? 1
                                                             : 2;
      os << OpcodeName(wrapped->opcode()) << kSuffix[phase];
    } else {
      os << OpcodeName(inst.opcode());
    }
    os << "(";
    if (inst.opcode() == HloOpcode::kParameter) {
      os << inst.parameter_number();
    } else if (inst.opcode() == HloOpcode::kConstant && inst.has_literal()) {
      const Literal& l = inst.literal();
      if (!o_.print_large_constants && l.shape().IsArray() && l.element_count() > 10) {
        os << "{...}";
      } else {
        os << l.ToString();
      }
    } else {
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (i) os << ", ";
        if (i > 0 && i % 5 == 0) os << "/*index=" << i << "*/";
        if (o_.print_operand_shapes) os << ShapeText(inst.operand(i)->shape(), o_) << " ";
        os << "%" << inst.operand(i)->name();
      }
    }
    os << ")";
    // Sugar prints the wrapped op's attributes on the start, and drops calls=.
    const AttributeMap& attrs = sugar && inst.opcode() == HloOpcode::kAsyncStart
                                    ? wrapped->attributes()
                                    : inst.attributes();
    const bool skip_calls = sugar;
    bool control_done = false;
    auto control = [&]() {
      control_done = true;
      if (inst.control_predecessors().empty()) return;
      os << ", control-predecessors={";
      for (size_t i = 0; i < inst.control_predecessors().size(); ++i) {
        os << (i ? ", %" : "%") << inst.control_predecessors()[i]->name();
      }
      os << "}";
    };
    if (!(sugar && inst.opcode() != HloOpcode::kAsyncStart)) {
      for (const auto& [key, value] : attrs.entries()) {
        if (key > AttrKey::kFrontendAttributes && !control_done) control();
        if (skip_calls && key == AttrKey::kCalls) continue;
        if (key == AttrKey::kMetadata && !o_.print_metadata) continue;
        if (key == AttrKey::kBackendConfig && !o_.print_backend_config) continue;
        os << ", " << AttrName(key) << "=" << AttrValueText(key, value, o_);
      }
    }
    if (!control_done) control();
    return os.str();
  }

  // The schedule's order in a scheduled module, else post order.
  static std::vector<HloInstruction*> PrintOrder(const HloComputation& c) {
    const HloModule* m = c.parent();
    if (m != nullptr && m->has_schedule()) {
      if (const auto* seq = m->schedule().sequence(c)) {
        std::vector<HloInstruction*> out;
        for (HloInstruction* i : *seq) {
          if (!i->is_removed()) out.push_back(i);
        }
        if (static_cast<int64_t>(out.size()) == c.instruction_count()) return out;
      }
    }
    return c.MakeInstructionPostOrder();
  }

  std::string Computation(const HloComputation& c, bool is_entry) const {
    std::ostringstream os;
    if (is_entry) os << "ENTRY ";
    os << "%" << c.name() << " " << c.SignatureString(o_.print_layout) << " {\n";
    for (const HloInstruction* inst : PrintOrder(c)) {
      os << "  " << (inst == c.root() ? "ROOT " : "") << Instruction(*inst) << "\n";
    }
    os << "}";
    if (!c.execution_thread().empty())
      os << ", execution_thread=\"" << CEscape(c.execution_thread()) << "\"";
    return os.str();
  }

  std::string Header() const {
    const ModuleConfig& cfg = module_->config();
    std::ostringstream os;
    os << "HloModule " << module_->name();
    if (cfg.is_scheduled) os << ", is_scheduled=true";
    if (!cfg.input_output_alias.empty()) {
      os << ", input_output_alias={ ";
      for (size_t i = 0; i < cfg.input_output_alias.size(); ++i) {
        const InputOutputAlias& a = cfg.input_output_alias[i];
        os << (i ? ", " : "") << IntListToString(a.output_index) << ": (" << a.parameter << ", "
           << IntListToString(a.parameter_index) << ", "
           << (a.must_alias ? "must-alias" : "may-alias") << ")";
      }
      os << " }";
    }
    if (!cfg.buffer_donors.empty()) {
      os << ", buffer_donor={ ";
      for (size_t i = 0; i < cfg.buffer_donors.size(); ++i) {
        os << (i ? ", " : "") << "(" << cfg.buffer_donors[i].parameter << ", "
           << IntListToString(cfg.buffer_donors[i].parameter_index) << ")";
      }
      os << " }";
    }
    if (cfg.alias_passthrough_params) {
      os << ", alias_passthrough_params=" << (*cfg.alias_passthrough_params ? "true" : "false");
    }
    if (cfg.entry_parameter_layouts && cfg.entry_result_layout) {
      os << ", entry_computation_layout={(";
      for (size_t i = 0; i < cfg.entry_parameter_layouts->size(); ++i) {
        os << (i ? ", " : "") << ShapeText((*cfg.entry_parameter_layouts)[i], o_);
      }
      os << ")->" << ShapeText(*cfg.entry_result_layout, o_) << "}";
    }
    auto spmd = [&](const char* name, const std::optional<std::vector<bool>>& v, bool is_list) {
      if (!v) return;
      os << ", " << name << "=";
      if (is_list) {
        os << Bools(*v);
      } else {
        os << ((*v)[0] ? "true" : "false");
      }
    };
    spmd("allow_spmd_sharding_propagation_to_parameters", cfg.spmd_to_parameters,
         cfg.spmd_to_parameters_is_list);
    spmd("allow_spmd_sharding_propagation_to_output", cfg.spmd_to_output,
         cfg.spmd_to_output_is_list);
    if (cfg.replica_count != 1) os << ", replica_count=" << cfg.replica_count;
    if (cfg.num_partitions != 1) os << ", num_partitions=" << cfg.num_partitions;
    if (!cfg.frontend_attributes.empty()) {
      os << ", frontend_attributes=" << FrontendAttributesToString(cfg.frontend_attributes);
    }
    return os.str();
  }

  std::string StackFrames() const {
    const StackFrameIndex& s = module_->config().stack_frames;
    if (s.empty()) return "";
    std::ostringstream os;
    auto strings = [&](const char* title, const std::vector<std::string>& v) {
      os << title << "\n";
      for (size_t i = 0; i < v.size(); ++i) os << i + 1 << " \"" << CEscape(v[i]) << "\"\n";
      os << "\n";
    };
    strings("FileNames", s.file_names);
    strings("FunctionNames", s.function_names);
    os << "FileLocations\n";
    for (size_t i = 0; i < s.file_locations.size(); ++i) {
      const auto& l = s.file_locations[i];
      os << i + 1 << " {file_name_id=" << l.file_name_id
         << " function_name_id=" << l.function_name_id << " line=" << l.line
         << " end_line=" << l.end_line << " column=" << l.column << " end_column=" << l.end_column
         << "}\n";
    }
    os << "\nStackFrames\n";
    for (size_t i = 0; i < s.stack_frames.size(); ++i) {
      os << i + 1 << " {file_location_id=" << s.stack_frames[i].file_location_id
         << " parent_frame_id=" << s.stack_frames[i].parent_frame_id << "}\n";
    }
    os << "\n";
    return os.str();
  }

  std::string Module() const {
    std::ostringstream os;
    os << Header() << "\n\n" << StackFrames();
    bool first = true;
    for (const HloComputation* c : module_->MakeComputationPostOrder()) {
      if (HiddenComputation(c)) continue;
      if (!first) os << "\n\n";
      first = false;
      os << Computation(*c, c == module_->entry());
    }
    os << "\n\n";
    return os.str();
  }

 private:
  const HloModule* module_;
  PrintOptions o_;
  std::unordered_map<const HloComputation*, int> callers_;
  std::unordered_set<const HloComputation*> sugared_;
};

const HloModule* ModuleOf(const HloComputation& c) { return c.parent(); }

}  // namespace

std::string AttributeValueText(AttrKey key, const AttrValue& value) {
  return AttrValueText(key, value, PrintOptions{});
}

std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  return ModulePrinter(&module, options).Module();
}

std::string PrintComputation(const HloComputation& computation, const PrintOptions& options) {
  const HloModule* m = ModuleOf(computation);
  return ModulePrinter(m, options).Computation(computation, m && m->entry() == &computation);
}

std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options) {
  const HloModule* m = instruction.parent() ? instruction.parent()->parent() : nullptr;
  return ModulePrinter(m, options).Instruction(instruction);
}

}  // namespace uir::hlo
