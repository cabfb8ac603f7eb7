// Reads the iGraph text form back (see text_print.cc); every error names
// its line and column.
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "igraph/igraph.h"
#include "support/error.h"

namespace uir::igraph {
namespace {

class LineParser {
 public:
  LineParser(std::string_view line, int64_t number) : line_(line), number_(number) {}

  [[noreturn]] void Fail(const std::string& message) const { FailAt(pos_, message); }
  [[noreturn]] void FailAt(size_t pos, const std::string& message) const {
    throw ParseError(SourceLocation{"", number_, static_cast<int64_t>(pos) + 1}, message, line_);
  }

  void SkipSpace() {
    while (pos_ < line_.size() && std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= line_.size();
  }
  size_t pos() {
    SkipSpace();
    return pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < line_.size() && line_[pos_] == c;
  }
  char PeekChar() {
    SkipSpace();
    return pos_ < line_.size() ? line_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  void Expect(char c) {
    if (!Consume(c)) Fail(std::string("expected '") + c + "'");
  }
  // [A-Za-z_][A-Za-z0-9_.]*
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < line_.size() &&
        (std::isalpha(static_cast<unsigned char>(line_[pos_])) || line_[pos_] == '_')) {
      while (pos_ < line_.size() && (std::isalnum(static_cast<unsigned char>(line_[pos_])) ||
                                     line_[pos_] == '_' || line_[pos_] == '.')) {
        ++pos_;
      }
    }
    if (start == pos_) Fail("expected a name");
    return std::string(line_.substr(start, pos_ - start));
  }
  void ExpectWord(std::string_view word) {
    size_t at = pos();
    if (Word() != word) FailAt(at, "expected '" + std::string(word) + "'");
  }
  int64_t Int() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < line_.size() && (line_[pos_] == '-' || line_[pos_] == '+')) ++pos_;
    while (pos_ < line_.size() && std::isdigit(static_cast<unsigned char>(line_[pos_]))) ++pos_;
    std::string text(line_.substr(start, pos_ - start));
    if (text.empty() || text == "-" || text == "+") FailAt(start, "expected an integer");
    errno = 0;
    long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) FailAt(start, "integer out of range: " + text);
    return v;
  }
  // A raw value up to ',' or ']' (numbers, inf, nan, true).
  std::string Value() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < line_.size() && line_[pos_] != ',' && line_[pos_] != ']') ++pos_;
    std::string v(line_.substr(start, pos_ - start));
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
    if (v.empty()) FailAt(start, "expected a value");
    return v;
  }
  // A double-quoted string with `\"` and `\\` escapes.
  std::string Quoted() {
    Expect('"');
    std::string out;
    while (pos_ < line_.size() && line_[pos_] != '"') {
      if (line_[pos_] == '\\' && pos_ + 1 < line_.size()) ++pos_;
      out += line_[pos_++];
    }
    if (pos_ >= line_.size()) Fail("unterminated string");
    ++pos_;
    return out;
  }
  void ExpectEnd() {
    if (!AtEnd()) Fail("unexpected text at the end of the line");
  }

 private:
  std::string_view line_;
  int64_t number_;
  size_t pos_ = 0;
};

hlo::Literal ScalarFromText(LineParser& p, size_t at, const std::string& text, PrimitiveType type) {
  hlo::Literal lit(hlo::Shape(type, {}));
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (type == PrimitiveType::kPred) {
    if (text == "true" || text == "1") {
      lit.SetInt64(0, 1);
    } else if (text != "false" && text != "0") {
      p.FailAt(at, "expected true or false, got '" + text + "'");
    }
    return lit;
  }
  if (IsFloat(type)) {
    double v = 0;
    if (text == "inf") {
      v = INFINITY;
    } else if (text == "-inf") {
      v = -INFINITY;
    } else if (text == "nan") {
      v = NAN;
    } else if (text == "-nan") {
      v = -NAN;
    } else {
      v = std::strtod(s, &end);
      if (end == s || *end != '\0') p.FailAt(at, "expected a number, got '" + text + "'");
    }
    lit.SetDouble(0, v);
    return lit;
  }
  if (IsUnsigned(type)) {
    unsigned long long v = std::strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || text[0] == '-') {
      p.FailAt(at, "expected an unsigned integer, got '" + text + "'");
    }
    lit.SetUint64(0, v);
    return lit;
  }
  long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) {
    p.FailAt(at, "expected an integer, got '" + text + "'");
  }
  lit.SetInt64(0, v);
  return lit;
}

class Parser {
 public:
  explicit Parser(std::string_view text) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(start, nl - start);
      size_t comment = line.find("//");
      lines_.push_back(std::string(line));
      stripped_.push_back(
          std::string(comment == std::string_view::npos ? line : line.substr(0, comment)));
      start = nl + 1;
    }
  }

  IGraph Run() {
    size_t i = NextLine(0);
    if (i >= lines_.size()) Fail(lines_.size(), "expected 'igraph NAME {'");
    {
      LineParser p = At(i);
      p.ExpectWord("igraph");
      g_.set_name(p.Word());
      p.Expect('{');
      p.ExpectEnd();
    }
    i = NextLine(i + 1);
    ParseHardware(i);
    i = NextLine(i + 1);
    ParseParallel(i);
    if (size_t next = NextLine(i + 1); next < lines_.size()) {
      // `plan <form> (...)`, not a declaration of something named plan.
      LineParser p = At(next);
      if (std::isalpha(static_cast<unsigned char>(p.PeekChar())) && p.Word() == "plan" &&
          !p.Peek('=')) {
        ParsePlan(next);
        i = next;
      }
    }
    Section section = Section::kBody;
    for (i = NextLine(i + 1); i < lines_.size(); i = NextLine(i + 1)) {
      LineParser p = At(i);
      if (p.Peek('}')) {
        p.Expect('}');
        p.ExpectEnd();
        if (NextLine(i + 1) < lines_.size()) At(NextLine(i + 1)).Fail("text after the iGraph");
        return std::move(g_);
      }
      size_t at = p.pos();
      std::string word = p.Word();
      if (p.Consume(':')) {
        if (word == "prologue") {
          section = Section::kPrologue;
        } else if (word == "body") {
          section = Section::kBody;
        } else if (word == "epilogue") {
          section = Section::kEpilogue;
        } else {
          p.FailAt(at, "unknown section '" + word + "'");
        }
        p.ExpectEnd();
      } else if (p.Consume('=')) {
        ParseDeclaration(p, at, word);
      } else {
        ParseOp(p, at, word, section, static_cast<int64_t>(i) + 1);
      }
    }
    Fail(lines_.size(), "expected '}' at the end of the iGraph");
  }

 private:
  [[noreturn]] void Fail(size_t line, const std::string& message) {
    throw ParseError(SourceLocation{"", static_cast<int64_t>(line), 1}, message);
  }
  LineParser At(size_t i) { return LineParser(stripped_[i], static_cast<int64_t>(i) + 1); }
  size_t NextLine(size_t i) {
    while (i < lines_.size() && LineParser(stripped_[i], 0).AtEnd()) ++i;
    return i;
  }

  void ParseHardware(size_t i) {
    if (i >= lines_.size()) Fail(lines_.size(), "expected 'hardware'");
    LineParser p = At(i);
    HardwareModel hw;
    p.ExpectWord("hardware");
    size_t at = p.pos();
    hw.target = p.Word();
    if (hw.target != "cpu" && hw.target != "gpu") p.FailAt(at, "target must be cpu or gpu");
    p.Expect('(');
    Key(p, "numGroup");
    hw.num_group = Positive(p);
    p.Expect(',');
    Key(p, "numUnit");
    hw.num_unit = Positive(p);
    p.Expect(')');
    Key(p, "reg");
    hw.reg_bytes = Positive(p);
    Key(p, "sram");
    hw.sram_bytes = Positive(p);
    Key(p, "vector");
    hw.vector_bytes = Positive(p);
    p.ExpectEnd();
    g_.set_hardware(hw);
  }

  // `(a, b)`, both positive when `positive`.
  std::array<int64_t, 2> Pair(LineParser& p, bool positive) {
    p.Expect('(');
    const int64_t a = positive ? Positive(p) : p.Int();
    p.Expect(',');
    const int64_t b = positive ? Positive(p) : p.Int();
    p.Expect(')');
    return {a, b};
  }

  // `name=`.
  void Key(LineParser& p, std::string_view name) {
    p.ExpectWord(name);
    p.Expect('=');
  }

  // `[N, ...]` of positive integers.
  std::vector<int64_t> PositiveList(LineParser& p) {
    std::vector<int64_t> list;
    p.Expect('[');
    while (!p.Peek(']')) {
      list.push_back(Positive(p));
      if (!p.Consume(',')) break;
    }
    p.Expect(']');
    return list;
  }

  int64_t Positive(LineParser& p) {
    size_t at = p.pos();
    int64_t v = p.Int();
    if (v <= 0) p.FailAt(at, "expected a positive integer");
    return v;
  }

  void ParseParallel(size_t i) {
    if (i >= lines_.size()) Fail(lines_.size(), "expected 'parallel'");
    LineParser p = At(i);
    p.ExpectWord("parallel");
    p.Expect('(');
    Key(p, "numParallel");
    size_t np_at = p.pos();
    int64_t np = Positive(p);
    p.Expect(',');
    Key(p, "numLoop");
    size_t nl_at = p.pos();
    int64_t nl = Positive(p);
    p.Expect(')');
    for (bool parallel : {true, false}) {
      p.Expect('[');
      while (!p.Peek(']')) {
        size_t at = p.pos();
        std::string name = p.Word();
        if (g_.FreshName(name) != name) p.FailAt(at, "'" + name + "' is declared twice");
        p.Expect('=');
        g_.AddVar(name, Positive(p), parallel);
        if (!p.Consume(',')) break;
      }
      p.Expect(']');
    }
    p.ExpectEnd();
    if (g_.num_parallel() != np) {
      p.FailAt(np_at, "numParallel is " + std::to_string(np) + " but the parallel variables give " +
                          std::to_string(g_.num_parallel()));
    }
    if (g_.num_loop() != nl) {
      p.FailAt(nl_at, "numLoop is " + std::to_string(nl) + " but the loop variables give " +
                          std::to_string(g_.num_loop()));
    }
  }

  // `plan <form> (why="...")` or `plan <form> (rows=R, loops=[W, ...],
  // interleave=[N, ...], scratch=B)`, interleave optional.
  void ParsePlan(size_t i) {
    LineParser p = At(i);
    p.ExpectWord("plan");
    KernelPlan plan;
    const size_t at = p.pos();
    const std::string form = p.Word();
    if (form == "loops") {
      plan.form = BodyForm::kLoops;
    } else if (form == "rows") {
      plan.form = BodyForm::kRows;
    } else if (form == "coalesced") {
      plan.form = BodyForm::kCoalesced;
    } else {
      p.FailAt(at, "the plan's form must be loops, rows or coalesced, got '" + form + "'");
    }
    p.Expect('(');
    if (plan.form == BodyForm::kLoops) {
      Key(p, "why");
      plan.why = p.Quoted();
    } else {
      Key(p, "rows");
      plan.rows = Positive(p);
      p.Expect(',');
      Key(p, "loops");
      plan.loops = PositiveList(p);
      p.Expect(',');
      size_t key_at = p.pos();
      std::string key = p.Word();
      if (key == "interleave") {
        p.Expect('=');
        plan.interleave = PositiveList(p);
        p.Expect(',');
        key_at = p.pos();
        key = p.Word();
      }
      if (key != "scratch")
        p.FailAt(key_at, "expected 'interleave' or 'scratch', got '" + key + "'");
      p.Expect('=');
      const size_t scratch_at = p.pos();
      plan.row_scratch = p.Int();
      if (plan.row_scratch < 0) p.FailAt(scratch_at, "expected a byte count");
    }
    p.Expect(')');
    p.ExpectEnd();
    g_.mutable_plan() = std::move(plan);
  }

  // `{loop=0, buffer=64, reread, prefetch=[x+4096B, y+1row], order=cols,
  // block=8}` after an iOp.
  void ParseOpPlan(LineParser& p, IOp& op) {
    const size_t open = p.pos();
    p.Expect('{');
    if (!g_.planned()) p.FailAt(open, "an iOp's plan needs the iGraph's 'plan' line");
    std::set<std::string> seen;
    while (!p.Peek('}')) {
      const size_t at = p.pos();
      const std::string key = p.Word();
      if (!seen.insert(key).second) p.FailAt(at, "'" + key + "' given twice");
      if (key == "reread") {
        op.plan.reread = true;
      } else if (key == "loop") {
        p.Expect('=');
        const size_t v = p.pos();
        op.plan.loop = static_cast<int>(p.Int());
        if (op.plan.loop < 0) p.FailAt(v, "expected a loop number");
      } else if (key == "buffer") {
        p.Expect('=');
        const size_t v = p.pos();
        op.plan.row_buffer = p.Int();
        if (op.plan.row_buffer < 0) p.FailAt(v, "expected a byte offset");
      } else if (key == "order") {
        p.Expect('=');
        const size_t v = p.pos();
        if (p.Word() != "cols") p.FailAt(v, "order must be cols (rows is the default)");
        op.plan.by_columns = true;
      } else if (key == "block") {
        p.Expect('=');
        op.plan.block = Positive(p);
      } else if (key == "prefetch") {
        p.Expect('=');
        p.Expect('[');
        while (!p.Peek(']')) {
          Prefetch f;
          f.slice = SliceRef(p);
          bool rows = false, bytes = false;
          while (p.Consume('+')) {
            const size_t n_at = p.pos();
            const int64_t n = p.Int();
            if (n < 0) p.FailAt(n_at, "expected a distance");
            const size_t unit_at = p.pos();
            const std::string unit = p.Word();
            if (unit == "row" && !rows) {
              f.rows = n;
              rows = true;
            } else if (unit == "B" && !bytes) {
              f.bytes = n;
              bytes = true;
            } else {
              p.FailAt(unit_at, "expected 'row' or 'B', each once");
            }
          }
          if (!rows && !bytes) p.Fail("expected '+<rows>row' or '+<bytes>B'");
          op.plan.prefetch.push_back(f);
          if (!p.Consume(',')) break;
        }
        p.Expect(']');
      } else {
        p.FailAt(at,
                 "unknown plan entry '" + key + "' (loop, buffer, reread, prefetch, order, block)");
      }
      if (!p.Consume(',')) break;
    }
    p.Expect('}');
  }

  Affine ParseAffine(LineParser& p) {
    Affine a;
    bool first = true;
    while (true) {
      int64_t sign = 1;
      if (p.Consume('-')) {
        sign = -1;
      } else if (!first && !p.Consume('+')) {
        break;
      }
      first = false;
      size_t at = p.pos();
      if (p.Peek('(') || p.AtEnd()) p.FailAt(at, "expected an affine term");
      int64_t coefficient = 1;
      std::string var;
      if (std::isdigit(static_cast<unsigned char>(p.PeekChar()))) {
        coefficient = p.Int();
        if (p.Consume('*')) var = p.Word();
      } else {
        var = p.Word();
        if (p.Consume('*')) coefficient = p.Int();
      }
      if (var.empty()) {
        a.constant += sign * coefficient;
      } else {
        int index = -1;
        for (size_t v = 0; v < g_.vars().size(); ++v) {
          if (g_.vars()[v].name == var) index = static_cast<int>(v);
        }
        if (index < 0) p.FailAt(at, "unknown index variable '" + var + "'");
        a.Add(index, sign * coefficient);
      }
    }
    return a;
  }

  void ParseDeclaration(LineParser& p, size_t name_at, const std::string& name) {
    if (g_.FreshName(name) != name) p.FailAt(name_at, "'" + name + "' is declared twice");
    size_t at = p.pos();
    std::string kind = p.Word();
    p.Expect('(');
    if (kind == "iPointer") {
      IPointer ptr;
      ptr.name = name;
      ptr.id = p.Int();
      p.Expect(',');
      size_t level_at = p.pos();
      ptr.level = LevelOf(p, level_at, p.Word());
      p.Expect(',');
      ptr.dtype = Dtype(p);
      p.Expect(',');
      ptr.size = Positive(p);
      p.Expect(')');
      p.ExpectEnd();
      g_.AddPointer(std::move(ptr));
    } else if (kind == "iSlice") {
      ISlice s;
      s.name = name;
      size_t ptr_at = p.pos();
      std::string ptr = p.Word();
      s.pointer = g_.FindPointer(ptr);
      if (s.pointer < 0) p.FailAt(ptr_at, "unknown iPointer '" + ptr + "'");
      p.Expect(',');
      s.offset = ParseAffine(p);
      p.Expect(',');
      s.shape = Pair(p, true);
      p.Expect(',');
      s.stride = Pair(p, false);
      p.Expect(')');
      p.ExpectEnd();
      g_.AddSlice(std::move(s));
    } else {
      p.FailAt(at, "expected iPointer(...) or iSlice(...)");
    }
  }

  PrimitiveType Dtype(LineParser& p) {
    size_t at = p.pos();
    return DtypeOf(p, at, p.Word());
  }
  PrimitiveType DtypeOf(LineParser& p, size_t at, const std::string& name) {
    PrimitiveType t;
    if (!DtypeFromText(name, &t)) p.FailAt(at, "unknown dtype '" + name + "'");
    return t;
  }

  int SliceRef(LineParser& p) {
    size_t at = p.pos();
    std::string name = p.Word();
    int s = g_.FindSlice(name);
    if (s < 0) p.FailAt(at, "unknown iSlice '" + name + "'");
    return s;
  }
  std::vector<int> SliceList(LineParser& p) {
    std::vector<int> out;
    if (p.Consume('[')) {
      do {
        out.push_back(SliceRef(p));
      } while (p.Consume(','));
      p.Expect(']');
    } else {
      out.push_back(SliceRef(p));
    }
    return out;
  }

  std::vector<std::string> Split(const std::string& mnemonic) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      size_t dot = mnemonic.find('.', start);
      parts.push_back(mnemonic.substr(start, dot == std::string::npos ? dot : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return parts;
  }

  Level LevelOf(LineParser& p, size_t at, const std::string& name) {
    if (name == "reg") return Level::kReg;
    if (name == "sram") return Level::kSram;
    if (name == "dram") return Level::kDram;
    p.FailAt(at, "level must be reg, sram or dram, got '" + name + "'");
  }

  Fn FunctionAt(LineParser& p, size_t at, const std::string& name, FnClass cls,
                const std::string& error) {
    const std::optional<Fn> fn = FnNamed(name, cls);
    if (!fn) p.FailAt(at, error);
    return *fn;
  }

  // `[buffer=NAME, groupSize=N]` after a group-scope broadcast or reduce.
  void GroupParams(LineParser& p, IOp& op) {
    p.Expect(',');
    p.Expect('[');
    Key(p, "buffer");
    op.buffer = SliceRef(p);
    p.Expect(',');
    Key(p, "groupSize");
    op.group_size = Positive(p);
    p.Expect(']');
  }

  void ParseOp(LineParser& p, size_t at, const std::string& mnemonic, Section section,
               int64_t line) {
    std::vector<std::string> parts = Split(mnemonic);
    IOp op;
    op.line = line;
    if (!OpKindFromName(parts[0], &op.kind)) p.FailAt(at, "unknown iOp '" + parts[0] + "'");
    auto want = [&](size_t n, const char* form) {
      if (parts.size() != n) {
        p.FailAt(at, "'" + mnemonic + "' should read " + form);
      }
    };
    switch (op.kind) {
      case OpKind::kMove:
        want(4, "move.<from>.<to>.<dtype>");
        op.from = LevelOf(p, at, parts[1]);
        op.to = LevelOf(p, at, parts[2]);
        op.dtype = DtypeOf(p, at, parts[3]);
        break;
      case OpKind::kSync:
        want(2, "sync.<scope>");
        op.to = LevelOf(p, at, parts[1]);
        op.from = op.to;
        break;
      case OpKind::kUnary:
        want(3, "unary.<function>.<dtype>");
        op.fn = FunctionAt(p, at, parts[1], static_cast<FnClass>(kUnaryFn | kScalarFn),
                           "unknown unary function '" + parts[1] + "'");
        op.dtype = DtypeOf(p, at, parts[2]);
        break;
      case OpKind::kBinary:
      case OpKind::kTernary: {
        want(3, op.kind == OpKind::kBinary ? "binary.<function>.<dtype>"
                                           : "ternary.<function>.<dtype>");
        op.fn = FunctionAt(p, at, parts[1], op.kind == OpKind::kBinary ? kBinaryFn : kTernaryFn,
                           "unknown " + parts[0] + " function '" + parts[1] + "'");
        op.dtype = DtypeOf(p, at, parts[2]);
        break;
      }
      case OpKind::kCompare:
        want(3, "compare.<direction>.<dtype>");
        op.fn = FunctionAt(p, at, parts[1], kCompareFn,
                           "unknown comparison '" + parts[1] + "' (eq, ne, lt, le, gt, ge)");
        op.dtype = DtypeOf(p, at, parts[2]);
        break;
      case OpKind::kConvert: {
        // convert.<from>.<to>, or convert.bitcast.<from>.<to>
        const bool bitcast = parts.size() == 4 && parts[1] == "bitcast";
        if (!bitcast) want(3, "convert.<from dtype>.<to dtype> or convert.bitcast.<from>.<to>");
        if (bitcast) op.fn = Fn::kBitcast;
        op.dtype = DtypeOf(p, at, parts[bitcast ? 2 : 1]);
        op.to_dtype = DtypeOf(p, at, parts[bitcast ? 3 : 2]);
        break;
      }
      case OpKind::kFill:
      case OpKind::kIota:
        want(2, op.kind == OpKind::kFill ? "fill.<dtype>" : "iota.<dtype>");
        op.dtype = DtypeOf(p, at, parts[1]);
        break;
      case OpKind::kBroadcast:
      case OpKind::kReduce: {
        size_t first = 1;
        if (op.kind == OpKind::kReduce) {
          want(5, "reduce.<op>.<axis>.<scope>.<dtype>");
          op.fn =
              FunctionAt(p, at, parts[1], kReduceFn,
                         "unknown reduction '" + parts[1] + "' (add, mul, max, min, and, or, xor)");
          first = 2;
        } else {
          want(4, "broadcast.<axis>.<scope>.<dtype>");
        }
        if (parts[first] == "row") {
          op.axis = Axis::kRow;
        } else if (parts[first] == "col") {
          op.axis = Axis::kCol;
        } else {
          p.FailAt(at, "axis must be row or col, got '" + parts[first] + "'");
        }
        if (parts[first + 1] == "unit") {
          op.scope = Scope::kUnit;
        } else if (parts[first + 1] == "group") {
          op.scope = Scope::kGroup;
        } else {
          p.FailAt(at, "scope must be unit or group, got '" + parts[first + 1] + "'");
        }
        op.dtype = DtypeOf(p, at, parts[first + 2]);
        break;
      }
      case OpKind::kIdentity:
        want(1, "identity");
        break;
    }
    // Operands: outputs, then inputs.
    op.outputs = SliceList(p);
    if (op.kind == OpKind::kIdentity) {
      p.Expect(',');
      op.inputs = SliceList(p);
    } else {
      if (op.outputs.size() != 1) p.FailAt(at, "'" + parts[0] + "' has one output");
      for (int i = 0; i < OpInputs(op.kind); ++i) {
        p.Expect(',');
        op.inputs.push_back(SliceRef(p));
      }
    }
    // Parameters.
    const bool scalar_form = op.kind == OpKind::kUnary && FnIs(op.fn, kScalarFn);
    if (scalar_form || op.kind == OpKind::kFill) {
      p.Expect(',');
      p.Expect('[');
      size_t value_at = p.pos();
      op.params.push_back(ScalarFromText(p, value_at, p.Value(), op.dtype));
      p.Expect(']');
    } else if (op.kind == OpKind::kIota) {
      p.Expect(',');
      p.Expect('[');
      Key(p, "base");
      op.iota_base = ParseAffine(p);
      p.Expect(',');
      Key(p, "step");
      op.iota_step = Pair(p, false);
      p.Expect(']');
    } else if ((op.kind == OpKind::kBroadcast || op.kind == OpKind::kReduce) &&
               op.scope == Scope::kGroup) {
      GroupParams(p, op);
    }
    if (p.Peek('{')) ParseOpPlan(p, op);
    p.ExpectEnd();
    g_.AddOp(section, std::move(op));
  }

  std::vector<std::string> lines_, stripped_;
  IGraph g_;
};

}  // namespace

IGraph Parse(std::string_view text) { return Parser(text).Run(); }

}  // namespace uir::igraph
