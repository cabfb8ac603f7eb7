// Parsing modules, computations and instructions. Values (shapes, literals,
// attributes) are in parser_values.cc.
#include "hlo/parser.h"

#include <cctype>

#include "hlo/opcode_attributes.h"
#include "hlo/parser_impl.h"
#include "hlo/shape_inference.h"

namespace uir::hlo {

std::string AsyncWrappedComputationName(std::string_view start_name) {
  return std::string(start_name) + ".async_wrapped";
}

std::unique_ptr<HloModule> ParseModule(std::string_view text, const ParseOptions& options) {
  Parser parser(text, options);
  return parser.ParseModule();
}

Shape ParseShape(std::string_view text) {
  Parser parser(text, ParseOptions{});
  return parser.ParseShapeOnly();
}

AttrValue ParseAttributeValue(AttrKey key, std::string_view text) {
  Parser parser(text, ParseOptions{});
  return parser.ParseAttributeValueOnly(key);
}

AttrValue Parser::ParseAttributeValueOnly(AttrKey key) {
  const AttrKind kind = AttrKindOf(key);
  if (kind == AttrKind::kComputation || kind == AttrKind::kComputationList) {
    Fail(std::string(AttrName(key)) + " names computations and cannot be given as text");
  }
  AttrValue value = ParseAttrValue(key, "");
  if (!At(Tok::kEof))
    Fail("unexpected '" + tok().text + "' after the value of " + std::string(AttrName(key)));
  return value;
}

std::unique_ptr<HloModule> Parser::ParseModule() {
  module_ = std::make_unique<HloModule>("");
  bool has_header = false;
  if (AtIdent("HloModule")) {
    ParseHeader();
    has_header = true;
  }
  if (AtIdent("FileNames") || AtIdent("FunctionNames") || AtIdent("FileLocations") ||
      AtIdent("StackFrames")) {
    ParseStackFrames();
  }
  if (At(Tok::kEof)) Fail("expected a computation");
  while (!At(Tok::kEof)) ParseComputation();
  HloComputation* entry = entry_ ? entry_ : module_->computations().back().get();
  module_->set_entry(entry);
  if (!has_header) module_->set_name("module_" + entry->name());
  ModuleConfig& config = module_->mutable_config();
  if (config.is_scheduled) {
    // The text order of a scheduled module is its schedule.
    HloSchedule schedule;
    for (const auto& c : module_->computations()) {
      std::vector<HloInstruction*> sequence(c->instructions().begin(), c->instructions().end());
      schedule.set_sequence(*c, std::move(sequence));
    }
    module_->set_schedule(std::move(schedule));
  }
  if (!config.entry_parameter_layouts) {
    // XLA copies the entry layout from the entry computation's parameters and root.
    std::vector<Shape> params;
    for (HloInstruction* p : entry->parameters()) {
      if (p != nullptr) params.push_back(p->shape());
    }
    config.entry_parameter_layouts = std::move(params);
    config.entry_result_layout = entry->root()->shape();
  } else if (options_.fill_missing_layouts) {
    for (Shape& s : *config.entry_parameter_layouts) s.FillMissingLayouts();
    config.entry_result_layout->FillMissingLayouts();
  }
  return std::move(module_);
}

void Parser::ParseHeader() {
  lexer_.Next();  // HloModule
  if (At(Tok::kIdent) || At(Tok::kName)) {
    module_->set_name(tok().text);
    lexer_.Next();
  } else {
    Fail("expected the module name after HloModule");
  }
  ModuleConfig& config = module_->mutable_config();
  std::vector<std::string> seen;
  auto bool_or_list = [&](bool* is_list) {
    if (At(Tok::kLbrace)) {
      *is_list = true;
      return ParseBoolList();
    }
    return std::vector<bool>{ParseBool()};
  };
  while (Accept(Tok::kComma)) {
    if (!At(Tok::kAttrName)) Fail("expected a module attribute, got '" + tok().text + "'");
    const std::string attr = tok().text;
    const size_t offset = tok().offset;
    for (const std::string& s : seen) {
      if (s == attr) FailAt(offset, "duplicate module attribute '" + attr + "'");
    }
    seen.push_back(attr);
    lexer_.Next();
    if (attr == "is_scheduled") {
      config.is_scheduled = ParseBool();
    } else if (attr == "replica_count") {
      config.replica_count = ParseInt();
    } else if (attr == "num_partitions") {
      config.num_partitions = ParseInt();
    } else if (attr == "alias_passthrough_params") {
      config.alias_passthrough_params = ParseBool();
    } else if (attr == "entry_computation_layout") {
      Expect(Tok::kLbrace, "'{'");
      Expect(Tok::kLparen, "'('");
      std::vector<Shape> params;
      while (!At(Tok::kRparen)) {
        params.push_back(ParseShape());
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRparen, "')'");
      Expect(Tok::kArrow, "'->'");
      config.entry_result_layout = ParseShape();
      config.entry_parameter_layouts = std::move(params);
      Expect(Tok::kRbrace, "'}'");
    } else if (attr == "input_output_alias") {
      Expect(Tok::kLbrace, "'{'");
      while (!At(Tok::kRbrace)) {
        InputOutputAlias a;
        a.output_index = ParseIntList();
        Expect(Tok::kColon, "':'");
        Expect(Tok::kLparen, "'('");
        a.parameter = ParseInt();
        Expect(Tok::kComma, "','");
        a.parameter_index = ParseIntList();
        if (Accept(Tok::kComma)) {
          if (AtIdent("must-alias")) {
            a.must_alias = true;
          } else if (!AtIdent("may-alias")) {
            Fail("expected may-alias or must-alias, got '" + tok().text + "'");
          }
          lexer_.Next();
        }
        Expect(Tok::kRparen, "')'");
        config.input_output_alias.push_back(std::move(a));
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}'");
    } else if (attr == "buffer_donor") {
      Expect(Tok::kLbrace, "'{'");
      while (!At(Tok::kRbrace)) {
        BufferDonor d;
        Expect(Tok::kLparen, "'('");
        d.parameter = ParseInt();
        Expect(Tok::kComma, "','");
        d.parameter_index = ParseIntList();
        Expect(Tok::kRparen, "')'");
        config.buffer_donors.push_back(std::move(d));
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}'");
    } else if (attr == "frontend_attributes") {
      config.frontend_attributes = ParseFrontendAttributes();
    } else if (attr == "allow_spmd_sharding_propagation_to_parameters") {
      config.spmd_to_parameters = bool_or_list(&config.spmd_to_parameters_is_list);
    } else if (attr == "allow_spmd_sharding_propagation_to_output") {
      config.spmd_to_output = bool_or_list(&config.spmd_to_output_is_list);
    } else {
      FailAt(offset, "unknown module attribute '" + attr + "'");
    }
  }
}

void Parser::ParseStackFrames() {
  StackFrameIndex& index = module_->mutable_config().stack_frames;
  auto strings = [&](std::vector<std::string>& out) {
    lexer_.Next();
    while (At(Tok::kInt)) {
      const size_t offset = tok().offset;
      int64_t id = ParseInt();
      if (id != static_cast<int64_t>(out.size()) + 1) {
        FailAt(offset, "stack-frame table ids must count up from 1");
      }
      out.push_back(ParseStringValue());
    }
  };
  auto fields = [&](std::initializer_list<std::pair<const char*, int64_t*>> slots) {
    Expect(Tok::kLbrace, "'{'");
    while (!At(Tok::kRbrace)) {
      if (!At(Tok::kAttrName)) Fail("expected a field, got '" + tok().text + "'");
      const std::string field = tok().text;
      const size_t offset = tok().offset;
      lexer_.Next();
      bool found = false;
      for (auto [name, slot] : slots) {
        if (field == name) {
          *slot = ParseInt();
          found = true;
        }
      }
      if (!found) FailAt(offset, "unknown field '" + field + "'");
      Accept(Tok::kComma);
    }
    lexer_.Next();
  };
  if (AtIdent("FileNames")) strings(index.file_names);
  if (AtIdent("FunctionNames")) strings(index.function_names);
  if (AtIdent("FileLocations")) {
    lexer_.Next();
    while (At(Tok::kInt)) {
      ParseInt();
      StackFrameIndex::FileLocation l;
      fields({{"file_name_id", &l.file_name_id},
              {"function_name_id", &l.function_name_id},
              {"line", &l.line},
              {"end_line", &l.end_line},
              {"column", &l.column},
              {"end_column", &l.end_column}});
      index.file_locations.push_back(l);
    }
  }
  if (AtIdent("StackFrames")) {
    lexer_.Next();
    while (At(Tok::kInt)) {
      ParseInt();
      StackFrameIndex::Frame f;
      fields({{"file_location_id", &f.file_location_id}, {"parent_frame_id", &f.parent_frame_id}});
      index.stack_frames.push_back(f);
    }
  }
}

HloComputation* Parser::LookupComputation(const std::string& name, size_t offset) {
  auto it = computations_.find(name);
  if (it == computations_.end()) {
    FailAt(offset,
           "computation '" + name + "' is not defined (computations must be defined before use)");
  }
  if (in_progress_.count(it->second)) {
    FailAt(offset, "computation '" + name + "' cannot call itself (HLO has no recursion)");
  }
  return it->second;
}

std::string Parser::FreshComputationName(std::string_view base) {
  std::string name(base);
  for (int n = 1; computations_.count(name); ++n)
    name = std::string(base) + "." + std::to_string(n);
  return name;
}

HloComputation* Parser::ParseComputationRef(std::string_view owner) {
  if (At(Tok::kName) || At(Tok::kIdent)) {
    std::string name = tok().text;
    const size_t offset = tok().offset;
    lexer_.Next();
    return LookupComputation(name, offset);
  }
  if (At(Tok::kLbrace)) {
    // An inline computation; it gets a name of its own and precedes its caller.
    const size_t open = tok().offset;
    lexer_.Next();
    auto comp =
        std::make_unique<HloComputation>(FreshComputationName(std::string(owner) + ".inline"));
    return ParseInstructionList(std::move(comp), open);
  }
  Fail("expected a computation name, got '" + tok().text + "'");
}

void Parser::ParseComputation() {
  bool is_entry = false;
  const size_t entry_offset = tok().offset;
  if (AtIdent("ENTRY")) {
    is_entry = true;
    lexer_.Next();
  }
  if (!At(Tok::kName) && !At(Tok::kIdent))
    Fail("expected a computation name, got '" + tok().text + "'");
  const std::string name = tok().text;
  const size_t name_offset = tok().offset;
  if (computations_.count(name)) FailAt(name_offset, "computation '" + name + "' is defined twice");
  lexer_.Next();
  std::optional<Shape> result_shape;
  if (At(Tok::kLparen)) {
    // The parameter list is redundant with the parameter instructions (XLA
    // ignores it too), and its names need not lex as names ("%1a" prints as
    // "1a:"), so it is skipped as a balanced block.
    lexer_.TakeBalanced('(', ')');
    Expect(Tok::kArrow, "'->' in the signature");
    result_shape = ParseShape();
  }
  const size_t open = tok().offset;
  Expect(Tok::kLbrace, "'{' opening the computation body");
  HloComputation* comp = ParseInstructionList(std::make_unique<HloComputation>(name), open);
  if (result_shape && !result_shape->Compatible(comp->root()->shape())) {
    FailAt(name_offset, "computation '" + name + "' is declared to return " +
                            result_shape->Describe() + " but its root has shape " +
                            comp->root()->shape().Describe());
  }
  if (Accept(Tok::kComma)) {
    if (!At(Tok::kAttrName) || tok().text != "execution_thread") Fail("expected execution_thread=");
    lexer_.Next();
    comp->set_execution_thread(ParseStringValue());
  }
  if (is_entry) {
    if (entry_ != nullptr) FailAt(entry_offset, "a module has at most one ENTRY computation");
    entry_ = comp;
  }
}

HloComputation* Parser::ParseInstructionList(std::unique_ptr<HloComputation> computation,
                                             size_t open_offset) {
  Scope scope;
  scope.computation = computation.get();
  // Registered now so inline callees get other names; calling it is refused
  // until it is complete (no recursion in HLO).
  computations_[computation->name()] = computation.get();
  in_progress_.insert(computation.get());
  while (!At(Tok::kRbrace)) {
    if (At(Tok::kEof)) FailAt(open_offset, "'{' is never closed");
    ParseInstruction(scope);
  }
  lexer_.Next();
  HloComputation* comp = computation.get();
  in_progress_.erase(comp);
  if (comp->instruction_count() == 0)
    FailAt(open_offset, "computation '" + comp->name() + "' has no instructions");
  HloInstruction* last = nullptr;
  for (HloInstruction* i : comp->instructions()) last = i;
  comp->set_root(scope.root ? scope.root : last);
  for (int64_t i = 0; i < comp->num_parameters(); ++i) {
    if (comp->parameter(i) == nullptr) {
      FailAt(open_offset, "computation '" + comp->name() + "' has no parameter(" +
                              std::to_string(i) + ") but has a higher-numbered one");
    }
  }
  return module_->AddComputation(std::move(computation));
}

std::string Parser::UniqueName(Scope& scope, std::string_view base) {
  std::string name;
  do {
    name = std::string(base) + "." + std::to_string(++scope.generated);
  } while (scope.names.count(name));
  return name;
}

HloInstruction* Parser::Define(Scope& scope, std::unique_ptr<HloInstruction> inst, size_t offset) {
  const std::string name = inst->name();
  if (scope.names.count(name)) {
    FailAt(offset, "instruction '" + name + "' is defined twice in computation '" +
                       scope.computation->name() + "'");
  }
  if (inst->opcode() == HloOpcode::kParameter) {
    int64_t n = inst->parameter_number();
    // Parameters 0..n must all be defined, each by an instruction of its
    // own: a number as large as the text cannot be (and would make the
    // parameter list that long before the verifier saw the gap).
    if (n >= static_cast<int64_t>(lexer_.text().size())) {
      FailAt(offset, "parameter(" + std::to_string(n) + ") in computation '" +
                         scope.computation->name() + "': the module is too short to define " +
                         std::to_string(n) + " parameters before it");
    }
    if (n < scope.computation->num_parameters() && scope.computation->parameter(n) != nullptr) {
      FailAt(offset, "parameter(" + std::to_string(n) + ") is defined twice in computation '" +
                         scope.computation->name() + "'");
    }
  }
  if (options_.fill_missing_layouts) inst->mutable_shape().FillMissingLayouts();
  // A broadcast of a scalar may leave out `dimensions=` (XLA's parser
  // takes it as {} and its printer writes it): every later stage reads it.
  if (inst->opcode() == HloOpcode::kBroadcast && !inst->attributes().Has(AttrKey::kDimensions) &&
      inst->operand_count() == 1 && inst->operand(0)->shape().IsArray() &&
      inst->operand(0)->shape().rank() == 0) {
    inst->mutable_attributes().Set(AttrKey::kDimensions, std::vector<int64_t>{});
  }
  HloInstruction* raw = scope.computation->AddInstruction(std::move(inst));
  scope.names[name] = raw;
  return raw;
}

void Parser::ParseInstruction(Scope& scope) {
  bool is_root = false;
  const size_t start = tok().offset;
  if (AtIdent("ROOT")) {
    is_root = true;
    lexer_.Next();
  }
  const size_t name_offset = tok().offset;
  std::string name;
  if (At(Tok::kName) || At(Tok::kIdent)) {
    name = tok().text;
    lexer_.Next();
    Expect(Tok::kEqual, "'=' after the instruction name");
  } else if (At(Tok::kAttrName)) {
    name = tok().text;
    lexer_.Next();
  } else {
    Fail("expected an instruction, got '" + tok().text + "'");
  }
  std::optional<Shape> shape;
  if (AtShapeStart()) shape = ParseShape();
  HloInstruction* inst =
      ParseInstructionRest(scope, std::move(name), name_offset, std::move(shape), false);
  if (is_root) {
    if (scope.root != nullptr)
      FailAt(start, "computation '" + scope.computation->name() + "' has two ROOT instructions");
    scope.root = inst;
  }
}

HloInstruction* Parser::ParseOperand(Scope& scope) {
  Nesting nesting(*this);
  const size_t offset = tok().offset;
  std::optional<Shape> declared;
  if (AtShapeStart()) declared = ParseShape();
  HloInstruction* operand = nullptr;
  if (At(Tok::kIdent) || At(Tok::kName)) {
    const std::string text = tok().text;
    const bool bare = At(Tok::kIdent);
    Lexer::State s = lexer_.Save();
    lexer_.Next();
    const bool call_like = At(Tok::kLparen);
    if (bare && call_like && OpcodeFromName(text)) {
      // A nested instruction: opcode(operands), with no attributes.
      lexer_.Restore(s);
      operand = ParseInstructionRest(scope, UniqueName(scope, text), offset, declared, true);
      declared.reset();
    } else {
      auto it = scope.names.find(text);
      if (it == scope.names.end()) {
        FailAt(s.token.offset, "unknown instruction '" + text + "' in computation '" +
                                   scope.computation->name() +
                                   "' (operands must be defined before use)");
      }
      operand = it->second;
    }
  } else {
    Fail("expected an operand, got '" + tok().text + "'");
  }
  while (Accept(Tok::kHash)) {
    const size_t index_offset = tok().offset;
    int64_t index = ParseInt();
    if (!operand->shape().IsTuple() || index < 0 || index >= operand->shape().tuple_shapes_size()) {
      FailAt(index_offset, "'#" + std::to_string(index) + "' needs a tuple with element " +
                               std::to_string(index) + ", but %" + operand->name() + " has shape " +
                               operand->shape().Describe());
    }
    auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement,
                                                operand->shape().tuple_shapes(index),
                                                UniqueName(scope, "get-tuple-element"));
    gte->AppendOperand(operand);
    gte->mutable_attributes().Set(AttrKey::kIndex, index);
    operand = Define(scope, std::move(gte), index_offset);
  }
  if (declared && !declared->Compatible(operand->shape())) {
    FailAt(offset, "operand is declared as " + declared->Describe() + " but %" + operand->name() +
                       " has shape " + operand->shape().Describe());
  }
  return operand;
}

HloInstruction* Parser::ParseInstructionRest(Scope& scope, std::string name, size_t name_offset,
                                             std::optional<Shape> shape, bool nested) {
  if (!At(Tok::kIdent)) Fail("expected an opcode, got '" + tok().text + "'");
  const std::string op_text = tok().text;
  const size_t op_offset = tok().offset;
  std::optional<HloOpcode> opcode = OpcodeFromName(op_text);
  int async_phase = -1;  // sugar: 0 start, 1 update, 2 done
  if (!opcode) {
    for (auto [suffix, phase] :
         {std::pair<std::string_view, int>{"-start", 0}, {"-update", 1}, {"-done", 2}}) {
      if (op_text.size() > suffix.size() && op_text.ends_with(suffix)) {
        auto base =
            OpcodeFromName(std::string_view(op_text).substr(0, op_text.size() - suffix.size()));
        if (base) {
          if (IsOwnAsyncFamily(*base) || IsAsyncOpcode(*base) || *base == HloOpcode::kParameter ||
              *base == HloOpcode::kConstant) {
            FailAt(op_offset, "'" + op_text +
                                  "' is not an opcode: " + std::string(OpcodeName(*base)) +
                                  " cannot be wrapped in an async operation");
          }
          opcode = base;
          async_phase = phase;
        }
      }
    }
    if (!opcode) {
      // A word shaped like an element type ("f23", "s33", "bf61") with
      // dimensions after it is a mistyped type, not an opcode.
      const bool typeish = op_text.find_first_of("0123456789") != std::string::npos &&
                           std::isalpha(static_cast<unsigned char>(op_text[0])) != 0;
      const Lexer::State here = lexer_.Save();
      lexer_.Next();
      const bool dims_follow = At(Tok::kLsquare);
      lexer_.Restore(here);
      if (typeish && dims_follow) {
        FailAt(op_offset, "unknown element type '" + op_text +
                              "' (element types: pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, "
                              "bf16, f32, f64, c64, c128, the 2- and 4-bit and f8 types, token)");
      }
      FailAt(op_offset, "unknown opcode '" + op_text + "'");
    }
  }
  lexer_.Next();
  Expect(Tok::kLparen, "'(' after the opcode");
  std::vector<HloInstruction*> operands;
  int64_t parameter_number = -1;
  std::optional<Literal> literal;
  if (async_phase < 0 && *opcode == HloOpcode::kParameter) {
    const size_t offset = tok().offset;
    parameter_number = ParseInt();
    if (parameter_number < 0) FailAt(offset, "parameter number must be non-negative");
    if (!shape) FailAt(name_offset, "parameter '" + name + "' needs a shape");
  } else if (async_phase < 0 && *opcode == HloOpcode::kConstant) {
    if (!shape) FailAt(name_offset, "constant '" + name + "' needs a shape");
    literal = ParseLiteral(*shape);
  } else {
    while (!At(Tok::kRparen)) {
      operands.push_back(ParseOperand(scope));
      if (!Accept(Tok::kComma)) break;
    }
  }
  Expect(Tok::kRparen, "')' closing the operands");

  AttributeMap attrs;
  std::vector<std::pair<std::string, size_t>> control_preds;
  if (!nested) {
    while (Accept(Tok::kComma)) {
      if (!At(Tok::kAttrName)) Fail("expected an attribute name=value, got '" + tok().text + "'");
      const std::string attr = tok().text;
      const size_t attr_offset = tok().offset;
      lexer_.Next();
      if (attr == "control-predecessors") {
        Expect(Tok::kLbrace, "'{'");
        while (!At(Tok::kRbrace)) {
          if (!At(Tok::kName) && !At(Tok::kIdent)) Fail("expected an instruction name");
          control_preds.emplace_back(tok().text, tok().offset);
          lexer_.Next();
          if (!Accept(Tok::kComma)) break;
        }
        Expect(Tok::kRbrace, "'}'");
        continue;
      }
      auto key = AttrKeyFromName(attr);
      if (!key) FailAt(attr_offset, "unknown attribute '" + attr + "' on " + op_text);
      if (attrs.Has(*key)) FailAt(attr_offset, "attribute '" + attr + "' appears twice");
      if (!AttributeAllowed(*opcode, *key)) {
        FailAt(attr_offset,
               "attribute '" + attr + "' is not valid on " + std::string(OpcodeName(*opcode)));
      }
      attrs.Set(*key, ParseAttrValue(*key, name));
    }
  }

  HloInstruction* inst;
  if (async_phase >= 0) {
    inst = BuildAsyncSugar(scope, *opcode, async_phase, std::move(name), name_offset,
                           std::move(shape), std::move(operands), std::move(attrs));
  } else {
    if (!shape) {
      std::vector<const Shape*> operand_shapes;
      for (HloInstruction* o : operands) operand_shapes.push_back(&o->shape());
      try {
        shape = InferShape(*opcode, operand_shapes, attrs);
      } catch (const ShapeError& e) {
        FailAt(op_offset, std::string("cannot infer the shape of ") + op_text + ": " + e.what());
      }
      if (!shape)
        FailAt(name_offset,
               "instruction '" + name + "' needs a shape: " + op_text + "'s cannot be inferred");
    }
    auto owned = std::make_unique<HloInstruction>(*opcode, std::move(*shape), std::move(name));
    owned->set_parameter_number(parameter_number);
    if (literal) {
      literal->set_shape_layouts_from(owned->shape());
      owned->set_literal(std::move(*literal));
    }
    for (HloInstruction* o : operands) owned->AppendOperand(o);
    owned->mutable_attributes() = std::move(attrs);
    inst = Define(scope, std::move(owned), name_offset);
  }
  for (const auto& [pred_name, offset] : control_preds) {
    auto it = scope.names.find(pred_name);
    if (it == scope.names.end()) FailAt(offset, "unknown control predecessor '" + pred_name + "'");
    it->second->AddControlDependencyTo(inst);
  }
  return inst;
}

HloInstruction* Parser::BuildAsyncSugar(Scope& scope, HloOpcode base, int phase, std::string name,
                                        size_t name_offset, std::optional<Shape> shape,
                                        std::vector<HloInstruction*> operands, AttributeMap attrs) {
  const std::string base_name(OpcodeName(base));
  if (phase == 0) {
    if (!shape || !shape->IsTuple() || shape->tuple_shapes_size() < 2 ||
        !shape->tuple_shapes(0).IsTuple()) {
      FailAt(name_offset,
             base_name + "-start needs a shape ((operand shapes...), result, state...)");
    }
    const Shape& operand_shapes = shape->tuple_shapes(0);
    if (operand_shapes.tuple_shapes_size() != static_cast<int64_t>(operands.size())) {
      FailAt(name_offset, base_name + "-start has " + std::to_string(operands.size()) +
                              " operands but its shape lists " +
                              std::to_string(operand_shapes.tuple_shapes_size()));
    }
    // The wrapped computation: parameters for the operands, the op as root.
    auto comp =
        std::make_unique<HloComputation>(FreshComputationName(AsyncWrappedComputationName(name)));
    std::vector<HloInstruction*> params;
    for (size_t i = 0; i < operands.size(); ++i) {
      auto p = std::make_unique<HloInstruction>(
          HloOpcode::kParameter, operand_shapes.tuple_shapes(static_cast<int64_t>(i)),
          "param_" + std::to_string(i));
      p->set_parameter_number(static_cast<int64_t>(i));
      if (options_.fill_missing_layouts) p->mutable_shape().FillMissingLayouts();
      params.push_back(comp->AddInstruction(std::move(p)));
    }
    auto root = std::make_unique<HloInstruction>(base, shape->tuple_shapes(1), base_name);
    for (HloInstruction* p : params) root->AppendOperand(p);
    root->mutable_attributes() = std::move(attrs);
    if (options_.fill_missing_layouts) root->mutable_shape().FillMissingLayouts();
    comp->set_root(comp->AddInstruction(std::move(root)));
    computations_[comp->name()] = comp.get();
    HloComputation* wrapped = module_->AddComputation(std::move(comp));
    auto start = std::make_unique<HloInstruction>(HloOpcode::kAsyncStart, std::move(*shape),
                                                  std::move(name));
    for (HloInstruction* o : operands) start->AppendOperand(o);
    start->mutable_attributes().Set(AttrKey::kCalls, wrapped);
    return Define(scope, std::move(start), name_offset);
  }
  if (operands.size() != 1) {
    FailAt(name_offset,
           base_name + (phase == 1 ? "-update" : "-done") + " takes exactly one operand");
  }
  const HloInstruction* chain_start = operands[0]->async_chain_start();
  if (chain_start == nullptr || chain_start->async_wrapped_instruction() == nullptr ||
      chain_start->async_wrapped_instruction()->opcode() != base) {
    FailAt(name_offset, base_name + (phase == 1 ? "-update" : "-done") + "'s operand %" +
                            operands[0]->name() + " is not an async " + base_name + " operation");
  }
  // Attributes repeated on the update or done must match the wrapped op's.
  const AttributeMap& wrapped_attrs = chain_start->async_wrapped_instruction()->attributes();
  for (const auto& [key, value] : attrs.entries()) {
    const AttrValue* w = wrapped_attrs.Find(key);
    if (w == nullptr || !(*w == value)) {
      FailAt(name_offset, "attribute '" + std::string(AttrName(key)) + "' on " + name +
                              " differs from the one on its async start");
    }
  }
  const HloOpcode opcode = phase == 1 ? HloOpcode::kAsyncUpdate : HloOpcode::kAsyncDone;
  Shape result = shape ? std::move(*shape)
                       : (phase == 1 ? operands[0]->shape()
                                     : chain_start->async_wrapped_instruction()->shape());
  auto inst = std::make_unique<HloInstruction>(opcode, std::move(result), std::move(name));
  inst->AppendOperand(operands[0]);
  return Define(scope, std::move(inst), name_offset);
}

}  // namespace uir::hlo
