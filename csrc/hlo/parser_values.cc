// Parsing shapes, layouts, literals and the scalar and list values that
// attributes are made of (parser_attrs.cc has the structured attributes).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "hlo/parser_impl.h"
#include "support/float_format.h"

namespace uir::hlo {

bool Parser::Accept(Tok kind) {
  if (!At(kind)) return false;
  lexer_.Next();
  return true;
}

void Parser::Expect(Tok kind, std::string_view what) {
  if (!At(kind)) {
    std::string got = At(Tok::kEof) ? "end of input" : "'" + tok().text + "'";
    // What is missing belongs after the token before, when that ended on
    // an earlier line: point at the line of the slip, not at the next one.
    const size_t before = lexer_.previous_end();
    const int64_t line = lexer_.LocationOf(tok().offset).line;
    if (before > 0 && lexer_.LocationOf(before).line < line) {
      FailAt(before, "expected " + std::string(what) + " at the end of this line, got " + got +
                         " on line " + std::to_string(line));
    }
    Fail("expected " + std::string(what) + ", got " + got);
  }
  lexer_.Next();
}

int64_t Parser::ParseInt() {
  if (!At(Tok::kInt)) Fail("expected an integer, got '" + tok().text + "'");
  errno = 0;
  const std::string& text = tok().text;
  int64_t value;
  if (text[0] == '-') {
    value = std::strtoll(text.c_str(), nullptr, 10);
  } else {
    // Unsigned values up to 2^64-1 are accepted and wrap, as in XLA.
    value = static_cast<int64_t>(std::strtoull(text.c_str(), nullptr, 10));
  }
  if (errno == ERANGE) Fail("integer '" + text + "' is out of range");
  lexer_.Next();
  return value;
}

bool Parser::ParseBool() {
  if (AtIdent("true")) {
    lexer_.Next();
    return true;
  }
  if (AtIdent("false")) {
    lexer_.Next();
    return false;
  }
  Fail("expected true or false, got '" + tok().text + "'");
}

double Parser::ParseDouble() {
  if (At(Tok::kInt) || At(Tok::kDecimal)) {
    std::string text = tok().text;
    lexer_.Next();
    if (text == "inf") return INFINITY;
    if (text == "-inf") return -INFINITY;
    if (text.find("nan") != std::string::npos) return text[0] == '-' ? -NAN : NAN;
    return std::strtod(text.c_str(), nullptr);
  }
  Fail("expected a number, got '" + tok().text + "'");
}

std::string Parser::ParseStringValue() {
  if (!At(Tok::kString)) Fail("expected a string, got '" + tok().text + "'");
  std::string s = tok().text;
  lexer_.Next();
  return s;
}

std::vector<int64_t> Parser::ParseIntsUntil(Tok close) {
  std::vector<int64_t> out;
  if (At(close)) return out;
  do {
    out.push_back(ParseInt());
  } while (Accept(Tok::kComma));
  return out;
}

std::vector<int64_t> Parser::ParseIntList() {
  Expect(Tok::kLbrace, "'{'");
  std::vector<int64_t> out = ParseIntsUntil(Tok::kRbrace);
  Expect(Tok::kRbrace, "'}'");
  return out;
}

std::vector<bool> Parser::ParseBoolList() {
  Expect(Tok::kLbrace, "'{'");
  std::vector<bool> out;
  if (!At(Tok::kRbrace)) {
    do {
      out.push_back(ParseBool());
    } while (Accept(Tok::kComma));
  }
  Expect(Tok::kRbrace, "'}'");
  return out;
}

// ---------------------------------------------------------------------------
// Shapes and layouts

bool Parser::AtShapeStart() {
  if (At(Tok::kLparen)) return true;
  if (!At(Tok::kIdent)) return false;
  if (PrimitiveTypeFromName(tok().text)) return true;
  if (tok().text == "b") {
    Lexer::State s = lexer_.Save();
    lexer_.Next();
    bool paren = At(Tok::kLparen);
    lexer_.Restore(s);
    return paren;
  }
  return false;
}

Shape Parser::ParseShape() {
  const size_t start = tok().offset;
  Nesting nesting(*this);
  if (At(Tok::kLparen)) {
    // Tuple nesting is bounded by the verifier's limit (kMaxShapeDepth).
    if (++shape_nesting_ > kMaxShapeDepth) {
      Fail("tuple shapes nest deeper than " + std::to_string(kMaxShapeDepth) + " levels");
    }
    struct Leave {
      int& n;
      ~Leave() { --n; }
    } leave{shape_nesting_};
    lexer_.Next();
    std::vector<Shape> elements;
    if (!At(Tok::kRparen)) {
      do {
        elements.push_back(ParseShape());
      } while (Accept(Tok::kComma));
    }
    Expect(Tok::kRparen, "')' closing a tuple shape");
    return Shape::Tuple(std::move(elements));
  }
  if (!At(Tok::kIdent)) Fail("expected a shape, got '" + tok().text + "'");
  if (tok().text == "b") {
    lexer_.Next();
    Expect(Tok::kLparen, "'(' after b");
    Shape element = ParseShape();
    Expect(Tok::kRparen, "')' closing a buffer shape");
    return Shape::Buffer(std::move(element));
  }
  auto type = PrimitiveTypeFromName(tok().text);
  if (!type) Fail("unknown element type '" + tok().text + "'");
  lexer_.Next();
  Expect(Tok::kLsquare, "'[' after the element type");
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  if (!At(Tok::kRsquare)) {
    do {
      if (Accept(Tok::kQuestion)) {
        dims.push_back(Shape::kUnboundedSize);
        dynamic.push_back(true);
        continue;
      }
      bool bounded = Accept(Tok::kLeq);
      const size_t dim_offset = tok().offset;
      int64_t d = ParseInt();
      if (d < 0)
        FailAt(dim_offset, "dimension size must be non-negative, got " + std::to_string(d));
      dims.push_back(d);
      dynamic.push_back(bounded);
    } while (Accept(Tok::kComma));
  }
  Expect(Tok::kRsquare, "']' closing the dimensions");
  Shape shape(*type, std::move(dims));
  for (size_t i = 0; i < dynamic.size(); ++i)
    shape.set_dynamic_dimension(static_cast<int64_t>(i), dynamic[i]);
  if (!IsArrayType(*type) && shape.rank() != 0) {
    FailAt(start, std::string(PrimitiveTypeName(*type)) + " shapes have no dimensions");
  }
  // '{' starts a layout only if followed by an integer, ':' or '}'; otherwise
  // it opens a computation body.
  if (At(Tok::kLbrace)) {
    Lexer::State s = lexer_.Save();
    lexer_.Next();
    bool is_layout = At(Tok::kInt) || At(Tok::kColon) || At(Tok::kRbrace);
    lexer_.Restore(s);
    if (is_layout) shape.set_layout(ParseLayout(shape.rank(), tok().offset));
  }
  return shape;
}

Layout Parser::ParseLayout(int64_t rank, size_t offset) {
  Expect(Tok::kLbrace, "'{'");
  Layout layout;
  while (At(Tok::kInt)) {
    layout.minor_to_major.push_back(ParseInt());
    if (!Accept(Tok::kComma)) break;
  }
  if (Accept(Tok::kColon)) {
    auto extra = [&](std::string_view letter) {
      if (At(Tok::kIdent) && tok().text == letter) {
        lexer_.Next();
        return true;
      }
      return false;
    };
    auto paren_int = [&]() {
      Expect(Tok::kLparen, "'('");
      int64_t v = ParseInt();
      Expect(Tok::kRparen, "')'");
      return v;
    };
    auto paren_type = [&]() {
      Expect(Tok::kLparen, "'('");
      if (!At(Tok::kIdent)) Fail("expected an element type");
      auto t = PrimitiveTypeFromName(tok().text);
      if (!t) Fail("unknown element type '" + tok().text + "'");
      lexer_.Next();
      Expect(Tok::kRparen, "')'");
      return *t;
    };
    if (extra("D")) {
      Expect(Tok::kLparen, "'('");
      while (!At(Tok::kRparen)) {
        if (!At(Tok::kIdent)) Fail("expected a dim level type");
        std::string level = tok().text;
        lexer_.Next();
        if (Accept(Tok::kPlus)) level += "+";
        if (Accept(Tok::kTilde)) level += "~";
        layout.dim_level_types.push_back(level);
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRparen, "')'");
    }
    if (extra("T")) {
      while (Accept(Tok::kLparen)) {
        Tile tile;
        while (!At(Tok::kRparen)) {
          if (Accept(Tok::kStar)) {
            tile.dims.push_back(Tile::kCombineDim);
          } else {
            tile.dims.push_back(ParseInt());
          }
          if (!Accept(Tok::kComma)) break;
        }
        Expect(Tok::kRparen, "')' closing a tile");
        layout.tiles.push_back(std::move(tile));
      }
    }
    if (extra("L")) layout.tail_padding_alignment_in_elements = paren_int();
    if (Accept(Tok::kHash)) layout.index_primitive_type = paren_type();
    if (Accept(Tok::kStar)) layout.pointer_primitive_type = paren_type();
    if (extra("E")) layout.element_size_in_bits = paren_int();
    if (extra("S")) layout.memory_space = paren_int();
    if (extra("SC")) {
      while (Accept(Tok::kLparen)) {
        SplitConfig sc;
        sc.dimension = ParseInt();
        Expect(Tok::kColon, "':' in a split config");
        sc.split_indices = ParseIntsUntil(Tok::kRparen);
        Expect(Tok::kRparen, "')'");
        layout.split_configs.push_back(std::move(sc));
      }
    }
    if (At(Tok::kIdent) && tok().text == "P") {
      Fail("a physical shape P(...) is not allowed in a shape's layout");
    }
    if (extra("M")) layout.dynamic_shape_metadata_prefix_bytes = paren_int();
  }
  if (!At(Tok::kRbrace)) Fail("unexpected '" + tok().text + "' in a layout");
  lexer_.Next();
  if (static_cast<int64_t>(layout.minor_to_major.size()) != rank &&
      !(layout.minor_to_major.empty() && rank == 0)) {
    FailAt(offset, "layout has " + std::to_string(layout.minor_to_major.size()) +
                       " dimensions but the shape has rank " + std::to_string(rank));
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || d >= rank || seen[d]) {
      FailAt(offset,
             "layout minor_to_major is not a permutation of 0.." + std::to_string(rank - 1));
    }
    seen[d] = true;
  }
  return layout;
}

Shape Parser::ParseShapeOnly() {
  Shape s = ParseShape();
  if (!At(Tok::kEof)) Fail("unexpected '" + tok().text + "' after the shape");
  if (options_.fill_missing_layouts) s.FillMissingLayouts();
  return s;
}

// ---------------------------------------------------------------------------
// Literals

void Parser::ParseScalarInto(Literal& literal, int64_t index) {
  const PrimitiveType type = literal.shape().element_type();
  const size_t offset = tok().offset;
  const std::string text = tok().text;
  auto out_of_range = [&]() {
    FailAt(offset,
           "value " + text + " is out of range for " + std::string(PrimitiveTypeName(type)));
  };
  switch (KindOf(type)) {
    case TypeKind::kPred:
      if (AtIdent("true") || AtIdent("false")) {
        literal.SetBits(index, ParseBool() ? 1 : 0);
        return;
      }
      if (At(Tok::kInt) && (text == "0" || text == "1")) {
        literal.SetBits(index, text == "1");
        lexer_.Next();
        return;
      }
      Fail("expected true, false, 0 or 1 for pred, got '" + text + "'");
    case TypeKind::kSigned:
    case TypeKind::kUnsigned: {
      if (!At(Tok::kInt))
        Fail("expected an integer for " + std::string(PrimitiveTypeName(type)) + ", got '" + text +
             "'");
      const int bits = BitWidth(type);
      errno = 0;
      if (IsSigned(type)) {
        int64_t v = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE) out_of_range();
        if (bits < 64 && (v < -(int64_t{1} << (bits - 1)) || v >= (int64_t{1} << (bits - 1))))
          out_of_range();
        literal.SetInt64(index, v);
      } else {
        if (text[0] == '-') out_of_range();
        uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) out_of_range();
        if (bits < 64 && v >= (uint64_t{1} << bits)) out_of_range();
        literal.SetUint64(index, v);
      }
      lexer_.Next();
      return;
    }
    case TypeKind::kFloat: {
      if (!At(Tok::kInt) && !At(Tok::kDecimal)) {
        Fail("expected a number for " + std::string(PrimitiveTypeName(type)) + ", got '" + text +
             "'");
      }
      lexer_.Next();
      const bool negative = text[0] == '-';
      const size_t nan_at = text.find("nan");
      if (nan_at != std::string::npos) {
        uint64_t payload = 0;
        size_t paren = text.find("(0x");
        if (paren != std::string::npos)
          payload = std::strtoull(text.c_str() + paren + 3, nullptr, 16);
        if (type == PrimitiveType::kF32 || type == PrimitiveType::kF64) {
          const int mantissa_bits = type == PrimitiveType::kF32 ? 23 : 52;
          const uint64_t quiet = uint64_t{1} << (mantissa_bits - 1);
          const uint64_t mask = (uint64_t{1} << mantissa_bits) - 1;
          uint64_t mantissa = paren == std::string::npos ? quiet : payload & mask;
          if (mantissa == 0) FailAt(offset, "a NaN payload must be non-zero");
          uint64_t exp_all = type == PrimitiveType::kF32 ? 0xffull << 23 : 0x7ffull << 52;
          uint64_t sign = negative ? (type == PrimitiveType::kF32 ? 1ull << 31 : 1ull << 63) : 0;
          literal.SetBits(index, sign | exp_all | mantissa);
        } else if (FormatOf(type).nan == NanEncoding::kIeee) {
          // f16, bf16, f8e5m2: the payload as for f32.
          const FloatFormat& f = FormatOf(type);
          const uint64_t mask = (uint64_t{1} << f.mantissa_bits) - 1;
          const uint64_t quiet = uint64_t{1} << (f.mantissa_bits - 1);
          const uint64_t mantissa = paren == std::string::npos ? quiet : payload & mask;
          if (mantissa == 0) FailAt(offset, "a NaN payload must be non-zero");
          const uint64_t exp_all = ((uint64_t{1} << f.exponent_bits) - 1) << f.mantissa_bits;
          const uint64_t sign = negative ? uint64_t{1} << (f.exponent_bits + f.mantissa_bits) : 0;
          literal.SetBits(index, sign | exp_all | mantissa);
        } else {
          literal.SetDouble(index, negative ? -NAN : NAN);
        }
        return;
      }
      double v = text == "inf"    ? INFINITY
                 : text == "-inf" ? -INFINITY
                                  : std::strtod(text.c_str(), nullptr);
      if (type == PrimitiveType::kF64) {
        literal.SetDouble(index, v);
        return;
      }
      float f = static_cast<float>(v);
      if (std::isinf(f) && !std::isinf(v)) out_of_range();
      if (IsNarrowFloat(type)) {
        uint32_t bits = EncodeNarrowFloat(type, f);
        float back = DecodeNarrowFloat(type, bits);
        if (!std::isinf(f) && (std::isinf(back) || std::isnan(back))) out_of_range();
        literal.SetBits(index, bits);
        return;
      }
      literal.SetDouble(index, f);
      return;
    }
    case TypeKind::kComplex: {
      if (!At(Tok::kLparen))
        Fail("expected (real, imag) for " + std::string(PrimitiveTypeName(type)));
      lexer_.Next();
      double re = ParseDouble();
      Expect(Tok::kComma, "',' in a complex value");
      double im = ParseDouble();
      Expect(Tok::kRparen, "')' closing a complex value");
      literal.SetComplex(index, {re, im});
      return;
    }
    default:
      Fail("constants of type " + std::string(PrimitiveTypeName(type)) + " have no value");
  }
}

void Parser::FillElided(Literal& literal) {
  // Elided constants ({...}) get deterministic pseudo-random values, as XLA's
  // parser fills them; such programs are not numerically meaningful.
  const PrimitiveType type = literal.shape().element_type();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    elided_seed_ = elided_seed_ * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t r = elided_seed_ >> 33;
    switch (KindOf(type)) {
      case TypeKind::kPred:
        literal.SetBits(i, r & 1);
        break;
      case TypeKind::kSigned:
      case TypeKind::kUnsigned:
        literal.SetInt64(i, static_cast<int64_t>(r % 8));
        break;
      default:
        literal.SetDouble(i, static_cast<double>(r % 1000) / 1000.0);
        break;
    }
  }
}

void Parser::ParseLiteralInto(Literal& literal, const Shape& shape) {
  Nesting nesting(*this);
  if (shape.IsTuple()) {
    Expect(Tok::kLparen, "'(' opening a tuple literal");
    auto& elements = literal.mutable_tuple_elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i) Expect(Tok::kComma, "',' between tuple literal elements");
      ParseLiteralInto(elements[i], shape.tuple_shapes(static_cast<int64_t>(i)));
    }
    Expect(Tok::kRparen, "')' closing a tuple literal");
    return;
  }
  if (!shape.IsArray()) Fail("constants of shape " + shape.Describe() + " have no value");
  const int64_t rank = shape.rank();
  if (rank == 0) {
    ParseScalarInto(literal, 0);
    return;
  }
  if (!At(Tok::kLbrace)) {
    Fail("expected '{' for a constant of shape " + shape.Describe() +
         " (a scalar value for an array shape is not accepted)");
  }
  {
    Lexer::State s = lexer_.Save();
    lexer_.Next();
    if (At(Tok::kDots)) {
      lexer_.Next();
      Expect(Tok::kRbrace, "'}' after '...'");
      FillElided(literal);
      return;
    }
    lexer_.Restore(s);
  }
  const std::vector<int64_t>& dims = shape.dimensions();
  int64_t index = 0;
  auto parse_level = [&](auto&& self, int64_t dim) -> void {
    Nesting level(*this);
    const size_t open = tok().offset;
    Expect(Tok::kLbrace, "'{' for dimension " + std::to_string(dim) + " of the literal");
    int64_t count = 0;
    while (!At(Tok::kRbrace)) {
      if (count) Expect(Tok::kComma, "',' between literal elements");
      if (count >= dims[dim]) {
        FailAt(open, "literal has more than " + std::to_string(dims[dim]) +
                         " elements in dimension " + std::to_string(dim) + " of " +
                         shape.Describe());
      }
      if (dim + 1 == rank) {
        ParseScalarInto(literal, index++);
      } else {
        self(self, dim + 1);
      }
      ++count;
    }
    if (count != dims[dim]) {
      FailAt(open, "literal has " + std::to_string(count) + " elements in dimension " +
                       std::to_string(dim) + " but " + shape.Describe() + " needs " +
                       std::to_string(dims[dim]));
    }
    lexer_.Next();
  };
  parse_level(parse_level, 0);
}

Literal Parser::ParseLiteral(const Shape& shape) {
  Literal literal(shape);
  ParseLiteralInto(literal, shape);
  return literal;
}

}  // namespace uir::hlo
