// The attribute table and the text forms of structured attribute values.
#include "hlo/attributes.h"

#include <algorithm>
#include <array>
#include <sstream>

#include "support/error.h"

namespace uir::hlo {
namespace {

struct AttrInfo {
  std::string_view name;
  AttrKind kind;
};

constexpr AttrInfo kAttrs[] = {
#define UIR_ATTRIBUTE(e, name, kind) {name, AttrKind::kind},
#include "hlo/attribute.def"
#undef UIR_ATTRIBUTE
};
constexpr size_t kNumAttrs = sizeof(kAttrs) / sizeof(kAttrs[0]);

const AttrInfo& Info(AttrKey key) {
  auto i = static_cast<size_t>(key);
  UIR_CHECK(i < kNumAttrs) << "bad AttrKey " << i;
  return kAttrs[i];
}

void AppendInts(std::ostringstream& os, const std::vector<int64_t>& v, const char* sep) {
  for (size_t i = 0; i < v.size(); ++i) os << (i ? sep : "") << v[i];
}

}  // namespace

std::string_view AttrName(AttrKey key) { return Info(key).name; }
AttrKind AttrKindOf(AttrKey key) { return Info(key).kind; }

std::optional<AttrKey> AttrKeyFromName(std::string_view name) {
  for (size_t i = 0; i < kNumAttrs; ++i) {
    if (kAttrs[i].name == name) return static_cast<AttrKey>(i);
  }
  return std::nullopt;
}

const std::vector<std::string_view>& EnumNames(AttrKey key) {
  static const std::vector<std::string_view> kAny;
  static const std::vector<std::string_view> kFusionKinds = {"kLoop", "kInput", "kOutput",
                                                             "kCustom"};
  static const std::vector<std::string_view> kDirections = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static const std::vector<std::string_view> kCompareTypes = {"FLOAT", "TOTALORDER", "SIGNED",
                                                              "UNSIGNED"};
  static const std::vector<std::string_view> kDistributions = {"rng_uniform", "rng_normal"};
  static const std::vector<std::string_view> kFftTypes = {"FFT", "IFFT", "RFFT", "IRFFT"};
  static const std::vector<std::string_view> kTranspose = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  static const std::vector<std::string_view> kApiVersions = {
      "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  static const std::vector<std::string_view> kSchedules = {"SCHEDULE_NONE", "SCHEDULE_LATEST",
                                                           "SCHEDULE_EARLIEST"};
  static const std::vector<std::string_view> kPaddingTypes = {"PADDING_VALID", "PADDING_SAME"};
  static const std::vector<std::string_view> kConvKinds = {"fprop", "wgrad", "dgrad", "unset"};
  switch (key) {
    case AttrKey::kKind:
      return kFusionKinds;
    case AttrKey::kDirection:
      return kDirections;
    case AttrKey::kCompareType:
      return kCompareTypes;
    case AttrKey::kDistribution:
      return kDistributions;
    case AttrKey::kFftType:
      return kFftTypes;
    case AttrKey::kTransposeA:
      return kTranspose;
    case AttrKey::kApiVersion:
      return kApiVersions;
    case AttrKey::kSchedule:
      return kSchedules;
    case AttrKey::kPaddingType:
      return kPaddingTypes;
    case AttrKey::kConvolutionKind:
      return kConvKinds;
    default:
      return kAny;
  }
}

std::string_view EnumName(AttrKey key, EnumValue value) {
  const auto& names = EnumNames(key);
  UIR_CHECK(value.index < names.size())
      << "attribute " << AttrName(key) << " has no value " << int{value.index};
  return names[value.index];
}

std::optional<EnumValue> EnumFromName(AttrKey key, std::string_view name) {
  const auto& names = EnumNames(key);
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return EnumValue{static_cast<uint8_t>(i)};
  }
  return std::nullopt;
}

std::string_view FusionKindName(FusionKind kind) {
  return EnumName(AttrKey::kKind, EnumValue{static_cast<uint8_t>(kind)});
}

const AttrValue* AttributeMap::Find(AttrKey key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const auto& e, AttrKey k) { return e.first < k; });
  return it != entries_.end() && it->first == key ? &it->second : nullptr;
}

AttrValue* AttributeMap::FindMutable(AttrKey key) {
  return const_cast<AttrValue*>(static_cast<const AttributeMap*>(this)->Find(key));
}

void AttributeMap::Set(AttrKey key, AttrValue value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const auto& e, AttrKey k) { return e.first < k; });
  if (it != entries_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    entries_.emplace(it, key, std::move(value));
  }
}

bool AttributeMap::Erase(AttrKey key) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const auto& e, AttrKey k) { return e.first < k; });
  if (it == entries_.end() || it->first != key) return false;
  entries_.erase(it);
  return true;
}

void AttributeMap::CheckType(AttrKey key, bool ok) {
  UIR_CHECK(ok) << "attribute " << AttrName(key) << " is missing or has the wrong type";
}

std::string IntListToString(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "{";
  AppendInts(os, values, ",");
  os << "}";
  return os.str();
}

std::string SliceRangesToString(const std::vector<SliceRange>& ranges) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < ranges.size(); ++i) {
    const SliceRange& r = ranges[i];
    os << (i ? ", " : "") << "[" << r.start << ":" << r.limit;
    if (r.stride != 1) os << ":" << r.stride;
    os << "]";
  }
  os << "}";
  return os.str();
}

std::string PaddingToString(const PaddingConfig& padding) {
  std::ostringstream os;
  for (size_t i = 0; i < padding.size(); ++i) {
    const PaddingDim& p = padding[i];
    os << (i ? "x" : "") << p.low << "_" << p.high;
    if (p.interior != 0) os << "_" << p.interior;
  }
  return os.str();
}

std::string WindowToString(const Window& window) {
  std::ostringstream os;
  const auto& d = window.dimensions;
  auto field = [&](const char* name, auto get, auto is_default) {
    bool any = false;
    for (const WindowDim& w : d) any |= !is_default(w);
    if (!any) return;
    if (os.tellp() > 1) os << " ";
    os << name << "=";
    for (size_t i = 0; i < d.size(); ++i) os << (i ? "x" : "") << get(d[i]);
  };
  os << "{";
  if (!d.empty()) {
    os << "size=";
    for (size_t i = 0; i < d.size(); ++i) os << (i ? "x" : "") << d[i].size;
  }
  field(
      "stride", [](const WindowDim& w) { return w.stride; },
      [](const WindowDim& w) { return w.stride == 1; });
  {
    bool any = false;
    for (const WindowDim& w : d) any |= w.padding_low != 0 || w.padding_high != 0;
    if (any) {
      os << " pad=";
      for (size_t i = 0; i < d.size(); ++i) {
        os << (i ? "x" : "") << d[i].padding_low << "_" << d[i].padding_high;
      }
    }
  }
  field(
      "lhs_dilate", [](const WindowDim& w) { return w.base_dilation; },
      [](const WindowDim& w) { return w.base_dilation == 1; });
  field(
      "rhs_dilate", [](const WindowDim& w) { return w.window_dilation; },
      [](const WindowDim& w) { return w.window_dilation == 1; });
  field(
      "rhs_reversal", [](const WindowDim& w) { return w.window_reversal ? 1 : 0; },
      [](const WindowDim& w) { return !w.window_reversal; });
  os << "}";
  return os.str();
}

std::string DimLabelsToString(const ConvolutionDimensionNumbers& dn) {
  auto labels = [](int64_t rank, std::initializer_list<std::pair<int64_t, char>> fixed,
                   const std::vector<int64_t>& spatial) {
    std::string s(static_cast<size_t>(rank), '?');
    for (auto [dim, c] : fixed) {
      if (dim >= 0 && dim < rank) s[dim] = c;
    }
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] >= 0 && spatial[i] < rank) s[spatial[i]] = static_cast<char>('0' + i);
    }
    return s;
  };
  return labels(dn.input_rank, {{dn.input_batch_dimension, 'b'}, {dn.input_feature_dimension, 'f'}},
                dn.input_spatial_dimensions) +
         "_" +
         labels(
             dn.kernel_rank,
             {{dn.kernel_input_feature_dimension, 'i'}, {dn.kernel_output_feature_dimension, 'o'}},
             dn.kernel_spatial_dimensions) +
         "->" +
         labels(dn.output_rank,
                {{dn.output_batch_dimension, 'b'}, {dn.output_feature_dimension, 'f'}},
                dn.output_spatial_dimensions);
}

std::string ReplicaGroupsToString(const ReplicaGroups& g) {
  std::ostringstream os;
  switch (g.form) {
    case ReplicaGroups::Form::kExplicit:
      os << "{";
      for (size_t i = 0; i < g.groups.size(); ++i) {
        os << (i ? "," : "") << "{";
        AppendInts(os, g.groups[i], ",");
        os << "}";
      }
      os << "}";
      break;
    case ReplicaGroups::Form::kIota:
      os << "[" << g.num_groups << "," << g.group_size << "]<=[";
      AppendInts(os, g.reshape_dims, ",");
      os << "]";
      if (!g.transpose_perm.empty()) {
        os << "T(";
        AppendInts(os, g.transpose_perm, ",");
        os << ")";
      }
      break;
    case ReplicaGroups::Form::kMesh:
      os << g.mesh_text;
      break;
  }
  return os.str();
}

namespace {

std::string ShardingBody(const Sharding& s) {
  std::ostringstream os;
  switch (s.kind) {
    case Sharding::Kind::kReplicated:
      os << "replicated";
      break;
    case Sharding::Kind::kManual:
      os << "manual";
      break;
    case Sharding::Kind::kUnknown:
      os << "unknown";
      break;
    case Sharding::Kind::kUnreduced:
      os << "unreduced";
      break;
    case Sharding::Kind::kMaximal:
      os << "maximal device=" << s.device;
      break;
    case Sharding::Kind::kTiled:
      os << "devices=[";
      AppendInts(os, s.tile_dims, ",");
      os << "]";
      if (s.iota) {
        os << "<=[";
        AppendInts(os, s.iota_reshape_dims, ",");
        os << "]";
        if (!s.iota_transpose_perm.empty()) {
          os << "T(";
          AppendInts(os, s.iota_transpose_perm, ",");
          os << ")";
        }
      } else {
        AppendInts(os, s.devices, ",");
      }
      if (s.last_tile_dim_replicate) os << " last_tile_dim_replicate";
      if (!s.last_tile_dims.empty()) {
        os << " last_tile_dims={";
        for (size_t i = 0; i < s.last_tile_dims.size(); ++i)
          os << (i ? ", " : "") << s.last_tile_dims[i];
        os << "}";
      }
      break;
    default:
      break;
  }
  if (!s.metadata.empty()) os << " metadata=" << s.metadata;
  return os.str();
}

}  // namespace

std::string ShardingToString(const Sharding& s) {
  if (s.kind == Sharding::Kind::kRaw) return s.text;
  if (s.kind == Sharding::Kind::kTuple) {
    std::string out = "{";
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      out += (i ? ", " : "") + ShardingToString(s.tuple_elements[i]);
    }
    return out + "}";
  }
  return "{" + ShardingBody(s) + "}";
}

std::string CEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\%03o", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string MetadataToString(const Metadata& m) {
  std::vector<std::string> parts;
  auto str = [&](const char* name, const std::string& v) {
    if (!v.empty()) parts.push_back(std::string(name) + "=\"" + CEscape(v) + "\"");
  };
  auto num = [&](const char* name, int64_t v) {
    if (v != 0) parts.push_back(std::string(name) + "=" + std::to_string(v));
  };
  str("op_type", m.op_type);
  str("op_name", m.op_name);
  str("source_file", m.source_file);
  num("source_line", m.source_line);
  num("source_end_line", m.source_end_line);
  num("source_column", m.source_column);
  num("source_end_column", m.source_end_column);
  if (!m.profile_type.empty()) parts.push_back("profile_type=" + IntListToString(m.profile_type));
  str("deduplicated_name", m.deduplicated_name);
  if (m.preserve_layout) parts.push_back("preserve_layout=true");
  str("scheduling_name", m.scheduling_name);
  num("stack_frame_id", m.stack_frame_id);
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " " : "") + parts[i];
  return out + "}";
}

std::string FrontendAttributesToString(const FrontendAttributes& attrs) {
  std::string out = "{";
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (i) out += ",";
    out += attrs[i].key + "=";
    out += attrs[i].is_raw_block ? attrs[i].value : "\"" + CEscape(attrs[i].value) + "\"";
  }
  return out + "}";
}

std::string AliasingToString(const std::vector<OutputOperandAlias>& aliasing) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < aliasing.size(); ++i) {
    const OutputOperandAlias& a = aliasing[i];
    os << (i ? ", " : "") << IntListToString(a.output_index) << ": (" << a.operand << ", "
       << IntListToString(a.operand_index) << ")";
  }
  os << "}";
  return os.str();
}

}  // namespace uir::hlo
