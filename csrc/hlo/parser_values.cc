// Parsing shapes, layouts, literals and attribute values.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "hlo/float_format.h"
#include "hlo/parser_impl.h"

namespace uir::hlo {

bool Parser::Accept(Tok kind) {
  if (!At(kind)) return false;
  lexer_.Next();
  return true;
}

void Parser::Expect(Tok kind, std::string_view what) {
  if (!At(kind)) {
    std::string got = At(Tok::kEof) ? "end of input" : "'" + tok().text + "'";
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
  if (Accept(Tok::kLparen)) {
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

// ---------------------------------------------------------------------------
// Structured attribute values

PaddingConfig Parser::ParsePadding() {
  if (!At(Tok::kPad)) Fail("expected padding like 0_0x1_1_0, got '" + tok().text + "'");
  PaddingConfig padding;
  const std::string text = tok().text;
  lexer_.Next();
  size_t i = 0;
  while (i <= text.size()) {
    size_t x = text.find('x', i);
    std::string dim = text.substr(i, x == std::string::npos ? std::string::npos : x - i);
    PaddingDim p;
    char* end = nullptr;
    p.low = std::strtoll(dim.c_str(), &end, 10);
    p.high = std::strtoll(end + 1, &end, 10);
    if (*end == '_') p.interior = std::strtoll(end + 1, &end, 10);
    padding.push_back(p);
    if (x == std::string::npos) break;
    i = x + 1;
  }
  return padding;
}

Window Parser::ParseWindow() {
  Expect(Tok::kLbrace, "'{' opening a window");
  Window window;
  auto ensure = [&](size_t n, size_t offset) {
    if (window.dimensions.empty()) {
      window.dimensions.resize(n);
    } else if (window.dimensions.size() != n) {
      FailAt(offset, "window fields have different numbers of dimensions");
    }
  };
  auto dims_of = [&]() {
    std::vector<int64_t> values;
    if (At(Tok::kInt)) {
      values.push_back(ParseInt());
    } else if (At(Tok::kDxD)) {
      const std::string text = tok().text;
      lexer_.Next();
      size_t i = 0;
      while (i < text.size()) {
        size_t x = text.find('x', i);
        values.push_back(std::strtoll(text.substr(i, x - i).c_str(), nullptr, 10));
        if (x == std::string::npos) break;
        i = x + 1;
      }
    } else {
      Fail("expected window sizes like 3x3, got '" + tok().text + "'");
    }
    return values;
  };
  while (!At(Tok::kRbrace)) {
    if (!At(Tok::kAttrName))
      Fail("expected a window field (size=, stride=, pad=, ...), got '" + tok().text + "'");
    const std::string field = tok().text;
    const size_t offset = tok().offset;
    lexer_.Next();
    if (field == "pad") {
      PaddingConfig pad = ParsePadding();
      ensure(pad.size(), offset);
      for (size_t i = 0; i < pad.size(); ++i) {
        if (pad[i].interior != 0) FailAt(offset, "window padding has no interior part");
        window.dimensions[i].padding_low = pad[i].low;
        window.dimensions[i].padding_high = pad[i].high;
      }
      continue;
    }
    std::vector<int64_t> values = dims_of();
    ensure(values.size(), offset);
    for (size_t i = 0; i < values.size(); ++i) {
      WindowDim& d = window.dimensions[i];
      if (field == "size") {
        d.size = values[i];
      } else if (field == "stride") {
        d.stride = values[i];
      } else if (field == "lhs_dilate") {
        d.base_dilation = values[i];
      } else if (field == "rhs_dilate") {
        d.window_dilation = values[i];
      } else if (field == "rhs_reversal") {
        d.window_reversal = values[i] != 0;
      } else {
        FailAt(offset, "unknown window field '" + field + "'");
      }
    }
  }
  lexer_.Next();
  return window;
}

ConvolutionDimensionNumbers Parser::ParseDimLabels() {
  if (!At(Tok::kDimLabels))
    Fail("expected dim labels like b01f_01io->b01f, got '" + tok().text + "'");
  const std::string text = tok().text;
  const size_t offset = tok().offset;
  lexer_.Next();
  size_t u = text.find('_');
  size_t arrow = text.find("->");
  std::string lhs = text.substr(0, u), rhs = text.substr(u + 1, arrow - u - 1),
              out = text.substr(arrow + 2);
  ConvolutionDimensionNumbers dn;
  dn.input_rank = static_cast<int64_t>(lhs.size());
  dn.kernel_rank = static_cast<int64_t>(rhs.size());
  dn.output_rank = static_cast<int64_t>(out.size());
  auto fill = [&](const std::string& labels, char a, char b, int64_t& da, int64_t& db,
                  std::vector<int64_t>& spatial, const char* which) {
    int64_t na = 0, nb = 0;
    std::vector<int64_t> by_index(labels.size(), -1);
    int64_t num_spatial = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      char c = labels[i];
      if (c == a) {
        da = static_cast<int64_t>(i);
        ++na;
      } else if (c == b) {
        db = static_cast<int64_t>(i);
        ++nb;
      } else if (c >= '0' && c <= '9') {
        size_t s = static_cast<size_t>(c - '0');
        if (s >= by_index.size() || by_index[s] != -1) {
          FailAt(offset,
                 std::string("bad spatial dimension labels in the ") + which + " of " + text);
        }
        by_index[s] = static_cast<int64_t>(i);
        ++num_spatial;
      }
    }
    if (na != 1 || nb != 1) {
      FailAt(offset, std::string("the ") + which + " of dim_labels " + text +
                         " needs exactly one '" + a + "' and one '" + b + "'");
    }
    for (int64_t s = 0; s < num_spatial; ++s) {
      if (by_index[s] == -1) FailAt(offset, "spatial dimension labels must be 0..n-1 in " + text);
      spatial.push_back(by_index[s]);
    }
  };
  fill(lhs, 'b', 'f', dn.input_batch_dimension, dn.input_feature_dimension,
       dn.input_spatial_dimensions, "input");
  fill(rhs, 'i', 'o', dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
       dn.kernel_spatial_dimensions, "kernel");
  fill(out, 'b', 'f', dn.output_batch_dimension, dn.output_feature_dimension,
       dn.output_spatial_dimensions, "output");
  if (dn.input_spatial_dimensions.size() != dn.kernel_spatial_dimensions.size() ||
      dn.input_spatial_dimensions.size() != dn.output_spatial_dimensions.size()) {
    FailAt(offset, "dim_labels " + text + " have different numbers of spatial dimensions");
  }
  return dn;
}

std::string Parser::CaptureUntilAttributeEnd() {
  // Raw text up to the next ',' or ')' at bracket depth 0 (for forms kept as
  // written, such as mesh replica groups).
  const std::string_view text = lexer_.text();
  size_t begin = tok().offset;
  size_t i = begin;
  int depth = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\'' || c == '"') {
      size_t j = i + 1;
      while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      i = j;
      continue;
    }
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ',' && depth == 0) break;
  }
  std::string raw(text.substr(begin, i - begin));
  while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
  // Re-synchronize the lexer at i.
  while (tok().offset < i && !At(Tok::kEof)) lexer_.Next();
  return raw;
}

ReplicaGroups Parser::ParseReplicaGroups() {
  ReplicaGroups g;
  if (At(Tok::kLbrace)) {
    lexer_.Next();
    while (!At(Tok::kRbrace)) {
      g.groups.push_back(ParseIntList());
      if (!Accept(Tok::kComma)) break;
    }
    Expect(Tok::kRbrace, "'}' closing replica groups");
    return g;
  }
  if (Accept(Tok::kLsquare)) {
    g.form = ReplicaGroups::Form::kIota;
    g.num_groups = ParseInt();
    Expect(Tok::kComma, "','");
    g.group_size = ParseInt();
    Expect(Tok::kRsquare, "']'");
    Expect(Tok::kLeq, "'<='");
    Expect(Tok::kLsquare, "'['");
    g.reshape_dims = ParseIntsUntil(Tok::kRsquare);
    Expect(Tok::kRsquare, "']'");
    if (At(Tok::kIdent) && tok().text == "T") {
      lexer_.Next();
      Expect(Tok::kLparen, "'('");
      g.transpose_perm = ParseIntsUntil(Tok::kRparen);
      Expect(Tok::kRparen, "')'");
    }
    return g;
  }
  if (AtIdent("mesh") || AtIdent("maximal_mesh")) {
    g.form = ReplicaGroups::Form::kMesh;
    g.mesh_text = CaptureUntilAttributeEnd();
    return g;
  }
  Fail("expected replica groups ({{0,1},...}, [n,m]<=[...] or mesh[...]), got '" + tok().text +
       "'");
}

Sharding Parser::ParseShardingBody() {
  // One sharding without its braces: replicated, maximal device=N,
  // devices=[dims]ids or devices=[dims]<=[reshape]T(perm), with options.
  Sharding s;
  bool have_kind = false;
  while (!At(Tok::kRbrace)) {
    if (AtIdent("replicated") || AtIdent("manual") || AtIdent("unknown") || AtIdent("unreduced") ||
        AtIdent("maximal")) {
      if (have_kind) Fail("a sharding has one kind");
      const std::string k = tok().text;
      s.kind = k == "replicated"  ? Sharding::Kind::kReplicated
               : k == "manual"    ? Sharding::Kind::kManual
               : k == "unknown"   ? Sharding::Kind::kUnknown
               : k == "unreduced" ? Sharding::Kind::kUnreduced
                                  : Sharding::Kind::kMaximal;
      have_kind = true;
      lexer_.Next();
    } else if (At(Tok::kAttrName) && tok().text == "device") {
      lexer_.Next();
      s.device = ParseInt();
    } else if (At(Tok::kAttrName) && tok().text == "devices") {
      if (have_kind) Fail("a sharding has one kind");
      have_kind = true;
      s.kind = Sharding::Kind::kTiled;
      lexer_.Next();
      Expect(Tok::kLsquare, "'[' after devices=");
      s.tile_dims = ParseIntsUntil(Tok::kRsquare);
      Expect(Tok::kRsquare, "']'");
      if (Accept(Tok::kLeq)) {
        s.iota = true;
        Expect(Tok::kLsquare, "'['");
        s.iota_reshape_dims = ParseIntsUntil(Tok::kRsquare);
        Expect(Tok::kRsquare, "']'");
        if (AtIdent("T")) {
          lexer_.Next();
          Expect(Tok::kLparen, "'('");
          s.iota_transpose_perm = ParseIntsUntil(Tok::kRparen);
          Expect(Tok::kRparen, "')'");
        }
      } else {
        do {
          s.devices.push_back(ParseInt());
        } while (Accept(Tok::kComma));
      }
    } else if (AtIdent("last_tile_dim_replicate")) {
      s.last_tile_dim_replicate = true;
      lexer_.Next();
    } else if (At(Tok::kAttrName) && tok().text == "last_tile_dims") {
      lexer_.Next();
      Expect(Tok::kLbrace, "'{'");
      while (At(Tok::kIdent)) {
        s.last_tile_dims.push_back(tok().text);
        lexer_.Next();
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}'");
    } else if (At(Tok::kAttrName) && tok().text == "metadata") {
      lexer_.Next();
      if (!At(Tok::kLbrace)) Fail("expected '{' after metadata=");
      s.metadata = lexer_.TakeBraceBlock();
    } else {
      Fail("unexpected '" + tok().text + "' in a sharding");
    }
  }
  if (!have_kind) Fail("a sharding needs replicated, maximal, devices=... or another kind");
  lexer_.Next();
  return s;
}

Sharding Parser::ParseSharding() {
  if (!At(Tok::kLbrace)) Fail("expected '{' opening a sharding");
  // Typed where the form is known; any other well-bracketed form (mesh-based
  // named shardings, shard_as/shard_like) is kept as written.
  Lexer::State start = lexer_.Save();
  try {
    lexer_.Next();
    if (At(Tok::kLbrace)) {
      Sharding tuple;
      tuple.kind = Sharding::Kind::kTuple;
      while (Accept(Tok::kLbrace)) {
        tuple.tuple_elements.push_back(ParseShardingBody());
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}' closing a tuple sharding");
      return tuple;
    }
    if (Accept(Tok::kRbrace)) {
      Sharding empty;
      empty.kind = Sharding::Kind::kTuple;  // {} is the sharding of an empty tuple
      return empty;
    }
    return ParseShardingBody();
  } catch (const ParseError&) {
    lexer_.Restore(start);
    Sharding raw;
    raw.kind = Sharding::Kind::kRaw;
    raw.text = lexer_.TakeBraceBlock();
    return raw;
  }
}

Metadata Parser::ParseMetadata() {
  Expect(Tok::kLbrace, "'{' opening metadata");
  Metadata m;
  while (!At(Tok::kRbrace)) {
    if (Accept(Tok::kComma)) continue;
    if (!At(Tok::kAttrName)) Fail("expected a metadata field, got '" + tok().text + "'");
    const std::string field = tok().text;
    const size_t offset = tok().offset;
    lexer_.Next();
    if (field == "op_type")
      m.op_type = ParseStringValue();
    else if (field == "op_name")
      m.op_name = ParseStringValue();
    else if (field == "source_file")
      m.source_file = ParseStringValue();
    else if (field == "deduplicated_name")
      m.deduplicated_name = ParseStringValue();
    else if (field == "scheduling_name")
      m.scheduling_name = ParseStringValue();
    else if (field == "source_line")
      m.source_line = ParseInt();
    else if (field == "source_end_line")
      m.source_end_line = ParseInt();
    else if (field == "source_column")
      m.source_column = ParseInt();
    else if (field == "source_end_column")
      m.source_end_column = ParseInt();
    else if (field == "stack_frame_id")
      m.stack_frame_id = ParseInt();
    else if (field == "profile_type")
      m.profile_type = ParseIntList();
    else if (field == "preserve_layout")
      m.preserve_layout = ParseBool();
    else
      FailAt(offset, "unknown metadata field '" + field + "'");
  }
  lexer_.Next();
  return m;
}

FrontendAttributes Parser::ParseFrontendAttributes() {
  Expect(Tok::kLbrace, "'{' opening frontend_attributes");
  FrontendAttributes attrs;
  while (!At(Tok::kRbrace)) {
    FrontendAttribute a;
    if (At(Tok::kAttrName)) {
      a.key = tok().text;
      lexer_.Next();
    } else if (At(Tok::kString)) {
      a.key = tok().text;
      lexer_.Next();
      Expect(Tok::kEqual, "'='");
    } else {
      Fail("expected key=value in frontend_attributes, got '" + tok().text + "'");
    }
    if (At(Tok::kLbrace)) {
      a.value = lexer_.TakeBraceBlock();
      a.is_raw_block = true;
    } else {
      a.value = ParseStringValue();
    }
    attrs.push_back(std::move(a));
    if (!Accept(Tok::kComma)) break;
  }
  Expect(Tok::kRbrace, "'}' closing frontend_attributes");
  return attrs;
}

std::vector<OutputOperandAlias> Parser::ParseAliasing() {
  Expect(Tok::kLbrace, "'{' opening output_to_operand_aliasing");
  std::vector<OutputOperandAlias> out;
  while (!At(Tok::kRbrace)) {
    OutputOperandAlias a;
    a.output_index = ParseIntList();
    Expect(Tok::kColon, "':'");
    Expect(Tok::kLparen, "'('");
    a.operand = ParseInt();
    Expect(Tok::kComma, "','");
    a.operand_index = ParseIntList();
    Expect(Tok::kRparen, "')'");
    out.push_back(std::move(a));
    if (!Accept(Tok::kComma)) break;
  }
  Expect(Tok::kRbrace, "'}'");
  return out;
}

AttrValue Parser::ParseAttrValue(AttrKey key, std::string_view owner) {
  const size_t offset = tok().offset;
  switch (AttrKindOf(key)) {
    case AttrKind::kInt:
      return ParseInt();
    case AttrKind::kBool:
      return ParseBool();
    case AttrKind::kFloat:
      return ParseDouble();
    case AttrKind::kString:
      return ParseStringValue();
    case AttrKind::kIdentifier: {
      if (!At(Tok::kIdent))
        Fail("expected an identifier for " + std::string(AttrName(key)) + ", got '" + tok().text +
             "'");
      std::string value = tok().text;
      lexer_.Next();
      const auto& allowed = AllowedIdentifiers(key);
      if (allowed.empty()) return value;
      for (std::string_view a : allowed) {
        if (a == value) return value;
      }
      // api_version and the enum-like proto fields are case-insensitive in XLA.
      for (std::string_view a : allowed) {
        if (a.size() == value.size() &&
            std::equal(a.begin(), a.end(), value.begin(),
                       [](char x, char y) {
                         return std::toupper(static_cast<unsigned char>(x)) ==
                                std::toupper(static_cast<unsigned char>(y));
                       }) &&
            key != AttrKey::kDirection && key != AttrKey::kCompareType && key != AttrKey::kKind) {
          return std::string(a);
        }
      }
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      FailAt(offset,
             "invalid " + std::string(AttrName(key)) + " '" + value + "'; expected one of " + list);
    }
    case AttrKind::kRaw:
      if (At(Tok::kLbrace)) return lexer_.TakeBraceBlock();
      if (At(Tok::kString)) return "\"" + CEscape(ParseStringValue()) + "\"";
      Fail("expected '{' for " + std::string(AttrName(key)));
    case AttrKind::kIntList:
      return ParseIntList();
    case AttrKind::kIntListList: {
      Expect(Tok::kLbrace, "'{'");
      std::vector<std::vector<int64_t>> lists;
      while (!At(Tok::kRbrace)) {
        lists.push_back(ParseIntList());
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}'");
      return lists;
    }
    case AttrKind::kBoolList:
      return ParseBoolList();
    case AttrKind::kComputation:
      return ParseComputationRef(owner);
    case AttrKind::kComputationList: {
      Expect(Tok::kLbrace, "'{' opening a computation list");
      std::vector<HloComputation*> list;
      while (!At(Tok::kRbrace)) {
        list.push_back(ParseComputationRef(owner));
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}' closing a computation list");
      return list;
    }
    case AttrKind::kSliceRanges: {
      Expect(Tok::kLbrace, "'{' opening slice ranges");
      std::vector<SliceRange> ranges;
      while (!At(Tok::kRbrace)) {
        Expect(Tok::kLsquare, "'[' opening a slice range");
        SliceRange r;
        r.start = ParseInt();
        Expect(Tok::kColon, "':' in a slice range");
        r.limit = ParseInt();
        if (Accept(Tok::kColon)) r.stride = ParseInt();
        Expect(Tok::kRsquare, "']' closing a slice range");
        ranges.push_back(r);
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}' closing slice ranges");
      return ranges;
    }
    case AttrKind::kPadding:
      return ParsePadding();
    case AttrKind::kWindow:
      return ParseWindow();
    case AttrKind::kDimLabels:
      return ParseDimLabels();
    case AttrKind::kPrecisionList: {
      Expect(Tok::kLbrace, "'{'");
      std::vector<std::string> list;
      while (!At(Tok::kRbrace)) {
        if (!At(Tok::kIdent))
          Fail("expected a precision (default, high, highest), got '" + tok().text + "'");
        std::string p = tok().text;
        std::transform(p.begin(), p.end(), p.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        if (p != "default" && p != "high" && p != "highest" && p != "packed_nibble") {
          Fail("unknown precision '" + tok().text + "'");
        }
        list.push_back(p);
        lexer_.Next();
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}'");
      return list;
    }
    case AttrKind::kShape: {
      Shape s = ParseShape();
      if (options_.fill_missing_layouts) s.FillMissingLayouts();
      return s;
    }
    case AttrKind::kShapeList: {
      Expect(Tok::kLbrace, "'{'");
      std::vector<Shape> shapes;
      while (!At(Tok::kRbrace)) {
        shapes.push_back(ParseShape());
        if (!Accept(Tok::kComma)) break;
      }
      Expect(Tok::kRbrace, "'}'");
      return shapes;
    }
    case AttrKind::kAliasing:
      return ParseAliasing();
    case AttrKind::kLiteral: {
      Shape s = ParseShape();
      if (options_.fill_missing_layouts) s.FillMissingLayouts();
      return ParseLiteral(s);
    }
    case AttrKind::kReplicaGroups:
      return ParseReplicaGroups();
    case AttrKind::kSharding:
      return ParseSharding();
    case AttrKind::kFrontendAttributes:
      return ParseFrontendAttributes();
    case AttrKind::kMetadata:
      return ParseMetadata();
    case AttrKind::kBackendConfig:
      if (At(Tok::kLbrace)) return BackendConfig{lexer_.TakeBraceBlock(), true};
      return BackendConfig{ParseStringValue(), false};
  }
  FailAt(offset, "unsupported attribute kind");
}

}  // namespace uir::hlo
