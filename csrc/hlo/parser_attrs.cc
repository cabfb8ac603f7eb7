// Parsing the structured attribute values (padding, window, dim labels,
// replica groups, sharding, metadata, frontend attributes, aliasing) and the
// dispatch from an attribute's kind to its parser.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "hlo/parser_impl.h"

namespace uir::hlo {

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
    // `mesh[...], device_ids=(...) {axes}`: the comma belongs to the form.
    if (At(Tok::kComma)) {
      Lexer::State s = lexer_.Save();
      lexer_.Next();
      if (At(Tok::kAttrName) && tok().text == "device_ids") {
        g.mesh_text += ", " + CaptureUntilAttributeEnd();
      } else {
        lexer_.Restore(s);
      }
    }
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
      return value;
    }
    case AttrKind::kEnum: {
      if (!At(Tok::kIdent))
        Fail("expected an identifier for " + std::string(AttrName(key)) + ", got '" + tok().text +
             "'");
      const std::string value = tok().text;
      lexer_.Next();
      if (auto e = EnumFromName(key, value)) return *e;
      const auto& names = EnumNames(key);
      // api_version and the enum-like proto fields are case-insensitive in XLA.
      if (key != AttrKey::kDirection && key != AttrKey::kCompareType && key != AttrKey::kKind) {
        for (size_t i = 0; i < names.size(); ++i) {
          const std::string_view a = names[i];
          if (a.size() == value.size() &&
              std::equal(a.begin(), a.end(), value.begin(), [](char x, char y) {
                return std::toupper(static_cast<unsigned char>(x)) ==
                       std::toupper(static_cast<unsigned char>(y));
              })) {
            return EnumValue{static_cast<uint8_t>(i)};
          }
        }
      }
      std::string list;
      for (std::string_view a : names) list += (list.empty() ? "" : ", ") + std::string(a);
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
