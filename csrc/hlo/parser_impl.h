// The recursive-descent parser shared by parser.cc (module structure),
// parser_values.cc (shapes, layouts, literals, scalar and list values) and
// parser_attrs.cc (structured attribute values).
#ifndef UIR_HLO_PARSER_IMPL_H_
#define UIR_HLO_PARSER_IMPL_H_

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/lexer.h"
#include "hlo/module.h"
#include "hlo/parser.h"
#include "hlo/verifier_ops.h"

namespace uir::hlo {

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options)
      : lexer_(text, options.file), options_(options) {}

  std::unique_ptr<HloModule> ParseModule();
  Shape ParseShapeOnly();
  AttrValue ParseAttributeValueOnly(AttrKey key);

 private:
  // The instructions of the computation being parsed, by name.
  struct Scope {
    HloComputation* computation = nullptr;
    std::unordered_map<std::string, HloInstruction*> names;
    HloInstruction* root = nullptr;
    int64_t generated = 0;  // counter for names of nested instructions
  };

  // parser.cc
  void ParseHeader();
  void ParseStackFrames();
  void ParseComputation();
  HloComputation* ParseInstructionList(std::unique_ptr<HloComputation> computation,
                                       size_t open_offset);
  void ParseInstruction(Scope& scope);
  HloInstruction* ParseInstructionRest(Scope& scope, std::string name, size_t name_offset,
                                       std::optional<Shape> shape, bool nested);
  HloInstruction* ParseOperand(Scope& scope);
  void ParseAttributes(HloInstruction& inst, Scope& scope, size_t* control_offset);
  void ParseControlPredecessors(HloInstruction& inst, Scope& scope);
  HloInstruction* BuildAsyncSugar(Scope& scope, HloOpcode base, int phase, std::string name,
                                  size_t name_offset, std::optional<Shape> shape,
                                  std::vector<HloInstruction*> operands, AttributeMap attrs);
  std::string UniqueName(Scope& scope, std::string_view base);
  HloInstruction* Define(Scope& scope, std::unique_ptr<HloInstruction> inst, size_t offset);
  HloComputation* LookupComputation(const std::string& name, size_t offset);
  HloComputation* ParseComputationRef(std::string_view owner);
  std::string FreshComputationName(std::string_view base);

  // parser_values.cc and parser_attrs.cc
  Shape ParseShape();
  bool AtShapeStart();
  Layout ParseLayout(int64_t rank, size_t offset);
  void ParseLiteralInto(Literal& literal, const Shape& shape);
  Literal ParseLiteral(const Shape& shape);
  void ParseScalarInto(Literal& literal, int64_t index);
  void FillElided(Literal& literal);
  AttrValue ParseAttrValue(AttrKey key, std::string_view owner);
  std::vector<int64_t> ParseIntList();
  std::vector<int64_t> ParseIntsUntil(Tok close);
  int64_t ParseInt();
  bool ParseBool();
  double ParseDouble();
  std::string ParseStringValue();
  Window ParseWindow();
  ConvolutionDimensionNumbers ParseDimLabels();
  PaddingConfig ParsePadding();
  ReplicaGroups ParseReplicaGroups();
  Sharding ParseSharding();
  Sharding ParseShardingBody();
  Metadata ParseMetadata();
  FrontendAttributes ParseFrontendAttributes();
  std::vector<OutputOperandAlias> ParseAliasing();
  std::vector<bool> ParseBoolList();
  std::string CaptureUntilAttributeEnd();

  // Counts one level of nesting (a tuple shape, a literal brace, an inline
  // operand instruction) for its lifetime; past kMaxParseNesting levels the
  // parse fails there, so no input can exhaust the stack.
  class Nesting {
   public:
    explicit Nesting(Parser& p) : p_(p) {
      if (++p_.nesting_ > kMaxParseNesting)
        p_.Fail("nesting deeper than " + std::to_string(kMaxParseNesting) + " levels");
    }
    ~Nesting() { --p_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    Parser& p_;
  };
  static constexpr int kMaxParseNesting = 256;

  // Token helpers.
  const Token& tok() const { return lexer_.peek(); }
  bool At(Tok kind) const { return tok().kind == kind; }
  bool AtIdent(std::string_view text) const { return At(Tok::kIdent) && tok().text == text; }
  bool Accept(Tok kind);
  void Expect(Tok kind, std::string_view what);
  [[noreturn]] void Fail(const std::string& message) const { lexer_.Fail(message); }
  [[noreturn]] void FailAt(size_t offset, const std::string& message) const {
    lexer_.FailAt(offset, message);
  }

  Lexer lexer_;
  ParseOptions options_;
  std::unique_ptr<HloModule> module_;
  std::unordered_map<std::string, HloComputation*> computations_;
  std::unordered_set<const HloComputation*> in_progress_;  // being parsed; not callable yet
  HloComputation* entry_ = nullptr;
  uint64_t elided_seed_ = 42;
  int nesting_ = 0;
  int shape_nesting_ = 0;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_PARSER_IMPL_H_
