// Expansion of the iota and mesh forms of replica groups into explicit ids.
#include "hlo/replica_groups.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>
#include <string>

#include "support/error.h"

namespace uir::hlo {
namespace {

constexpr int64_t kMaxDevices = int64_t{1} << 20;

[[noreturn]] void Bad(const std::string& why) { throw ShapeError("replica_groups: " + why); }

// arange(prod(dims)) reshaped to `dims`, transposed by `perm` (new dim i is
// old dim perm[i]) and flattened, applied to `values` (row-major over dims).
std::vector<int64_t> Transposed(const std::vector<int64_t>& values,
                                const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  std::vector<int64_t> t_dims;
  for (int64_t p : perm) t_dims.push_back(dims[p]);
  std::vector<int64_t> out;
  out.reserve(values.size());
  std::vector<int64_t> idx(rank, 0);
  for (size_t n = 0; n < values.size(); ++n) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += idx[i] * strides[perm[i]];
    out.push_back(values[src]);
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < t_dims[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

void CheckPermutation(const std::vector<int64_t>& perm, size_t rank) {
  if (perm.size() != rank) Bad("the transpose needs one entry per reshape dimension");
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) Bad("T(...) is not a permutation");
    seen[p] = true;
  }
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxDevices)
      Bad("the device count is negative or too large");
  }
  return n;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<std::vector<int64_t>> Chunks(const std::vector<int64_t>& flat, int64_t size) {
  std::vector<std::vector<int64_t>> groups;
  if (size <= 0) return groups;
  for (size_t i = 0; i < flat.size(); i += static_cast<size_t>(size))
    groups.emplace_back(flat.begin() + static_cast<int64_t>(i),
                        flat.begin() + static_cast<int64_t>(i) + size);
  return groups;
}

// A tiny scanner over the mesh text kept by the parser.
class MeshText {
 public:
  explicit MeshText(const std::string& text) : t_(text) {}
  void Skip() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
  }
  bool Accept(std::string_view s) {
    Skip();
    if (t_.compare(i_, s.size(), s) != 0) return false;
    i_ += s.size();
    return true;
  }
  void Expect(std::string_view s) {
    if (!Accept(s)) Bad("expected '" + std::string(s) + "' in mesh form '" + t_ + "'");
  }
  bool AtQuote() {
    Skip();
    return i_ < t_.size() && (t_[i_] == '\'' || t_[i_] == '"');
  }
  std::string Str() {
    Skip();
    if (!AtQuote()) Bad("expected a quoted axis name in '" + t_ + "'");
    const char q = t_[i_++];
    const size_t end = t_.find(q, i_);
    if (end == std::string::npos) Bad("unterminated axis name in '" + t_ + "'");
    std::string s = t_.substr(i_, end - i_);
    i_ = end + 1;
    return s;
  }
  int64_t Int() {
    Skip();
    size_t j = i_;
    if (j < t_.size() && t_[j] == '-') ++j;
    while (j < t_.size() && std::isdigit(static_cast<unsigned char>(t_[j]))) ++j;
    if (j == i_ || j - i_ > 18) Bad("expected an integer in '" + t_ + "'");
    const int64_t v = std::stoll(t_.substr(i_, j - i_));
    i_ = j;
    return v;
  }
  std::vector<int64_t> Ints(char close) {
    std::vector<int64_t> v;
    Skip();
    if (i_ < t_.size() && t_[i_] == close) return v;
    do {
      v.push_back(Int());
    } while (Accept(","));
    return v;
  }
  bool AtEnd() {
    Skip();
    return i_ == t_.size();
  }

 private:
  const std::string& t_;
  size_t i_ = 0;
};

struct AxisRef {
  int64_t dim = 0;
  int64_t pre = 1, size = 0;  // size 0: the whole axis
};

std::vector<std::vector<int64_t>> ExpandMesh(const std::string& text) {
  MeshText m(text);
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  std::vector<int64_t> devices;
  if (m.Accept("maximal_mesh")) {
    m.Expect("[");
    m.Expect("device_id");
    m.Expect("=");
    devices = {m.Int()};
    m.Expect("]");
  } else {
    m.Expect("mesh");
    m.Expect("[");
    while (m.AtQuote()) {
      names.push_back(m.Str());
      m.Expect("=");
      sizes.push_back(m.Int());
      if (sizes.back() <= 0) Bad("mesh axis sizes must be positive");
      if (!m.Accept(",")) break;
    }
    m.Expect("]");
    const int64_t total = Product(sizes);
    devices = Iota(total);
    if (m.Accept(",")) {
      m.Expect("device_ids");
      m.Expect("=");
      m.Expect("(");
      if (m.Accept("[")) {
        std::vector<int64_t> dims = m.Ints(']');
        m.Expect("]");
        std::vector<int64_t> perm;
        if (m.Accept("T")) {
          m.Expect("(");
          perm = m.Ints(')');
          m.Expect(")");
        } else {
          perm = Iota(static_cast<int64_t>(dims.size()));
        }
        CheckPermutation(perm, dims.size());
        if (Product(dims) != total) Bad("mesh device_ids do not match the mesh size");
        devices = Transposed(Iota(total), dims, perm);
      } else {
        devices = m.Ints(')');
        if (static_cast<int64_t>(devices.size()) != total)
          Bad("mesh device_ids do not match the mesh size");
      }
      m.Expect(")");
    }
  }
  // The grouped axes.
  std::vector<AxisRef> refs;
  m.Expect("{");
  while (m.AtQuote()) {
    const std::string name = m.Str();
    AxisRef r;
    auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end()) {
      r.dim = it - names.begin();
    } else {
      bool digits = !name.empty() && name.size() < 10 &&
                    std::all_of(name.begin(), name.end(), [](char c) { return std::isdigit(c); });
      if (!digits || std::stoll(name) >= static_cast<int64_t>(names.size()))
        Bad("'" + name + "' is not an axis of the mesh");
      r.dim = std::stoll(name);
    }
    if (m.Accept(":")) {
      m.Expect("(");
      r.pre = m.Int();
      m.Expect(")");
      r.size = m.Int();
      const int64_t n = sizes[r.dim];
      if (r.pre <= 0 || r.size <= 1 || r.size >= n || n % (r.pre * r.size) != 0)
        Bad("sub-axis of '" + name + "' does not divide the axis");
    }
    refs.push_back(r);
    if (!m.Accept(",")) break;
  }
  m.Expect("}");
  if (!m.AtEnd()) Bad("unexpected text after the mesh axes in '" + text + "'");
  if (names.empty()) return {devices};  // maximal mesh: one group of one device

  // Reshape every mesh dim into the factors its references need, then move
  // the referenced factors (in the order written) to the minor end.
  std::vector<int64_t> new_sizes;
  std::vector<int64_t> grouped(refs.size(), -1);
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<size_t> mine;
    for (size_t k = 0; k < refs.size(); ++k) {
      if (refs[k].dim == static_cast<int64_t>(d)) mine.push_back(k);
    }
    const int64_t n = sizes[d];
    if (mine.empty()) {
      new_sizes.push_back(n);
      continue;
    }
    if (mine.size() == 1 && refs[mine[0]].size == 0) {
      grouped[mine[0]] = static_cast<int64_t>(new_sizes.size());
      new_sizes.push_back(n);
      continue;
    }
    std::sort(mine.begin(), mine.end(),
              [&](size_t a, size_t b) { return refs[a].pre < refs[b].pre; });
    int64_t prod = 1;
    for (size_t k : mine) {
      const AxisRef& r = refs[k];
      if (r.size == 0) Bad("an axis is used both whole and split");
      if (r.pre < prod || r.pre % prod != 0) Bad("sub-axes of one axis overlap");
      if (r.pre != prod) new_sizes.push_back(r.pre / prod);
      prod = r.pre;
      grouped[k] = static_cast<int64_t>(new_sizes.size());
      new_sizes.push_back(r.size);
      prod *= r.size;
    }
    if (prod > n || n % prod != 0) Bad("sub-axes do not divide their axis");
    if (prod != n) new_sizes.push_back(n / prod);
  }
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < static_cast<int64_t>(new_sizes.size()); ++i) {
    if (std::find(grouped.begin(), grouped.end(), i) == grouped.end()) perm.push_back(i);
  }
  int64_t group_size = 1;
  for (size_t k = 0; k < refs.size(); ++k) {
    if (std::find(perm.begin(), perm.end(), grouped[k]) == perm.end() &&
        std::count(grouped.begin(), grouped.end(), grouped[k]) == 1) {
      perm.push_back(grouped[k]);
      group_size *= new_sizes[grouped[k]];
    } else {
      Bad("an axis is listed twice");
    }
  }
  return Chunks(Transposed(devices, new_sizes, perm), group_size);
}

}  // namespace

std::vector<std::vector<int64_t>> ExpandReplicaGroups(const ReplicaGroups& g) {
  switch (g.form) {
    case ReplicaGroups::Form::kExplicit:
      return g.groups;
    case ReplicaGroups::Form::kIota: {
      std::vector<int64_t> perm = g.transpose_perm;
      if (perm.empty()) perm = Iota(static_cast<int64_t>(g.reshape_dims.size()));
      CheckPermutation(perm, g.reshape_dims.size());
      if (g.num_groups <= 0 || g.group_size <= 0) Bad("[G,S] must be positive");
      const int64_t total = Product(g.reshape_dims);
      if (total != Product({g.num_groups, g.group_size}))
        Bad("[" + std::to_string(g.num_groups) + "," + std::to_string(g.group_size) +
            "] does not match the reshape dimensions");
      return Chunks(Transposed(Iota(total), g.reshape_dims, perm), g.group_size);
    }
    case ReplicaGroups::Form::kMesh:
      return ExpandMesh(g.mesh_text);
  }
  Bad("unknown form");
}

std::vector<std::vector<int64_t>> CheckReplicaGroups(const ReplicaGroups& g, bool uniform) {
  auto groups = ExpandReplicaGroups(g);
  std::set<int64_t> seen;
  for (const auto& group : groups) {
    if (uniform && group.size() != groups[0].size()) Bad("groups must all have the same size here");
    for (int64_t id : group) {
      if (id < 0 || id >= kMaxDevices) Bad("device id " + std::to_string(id) + " is out of range");
      if (!seen.insert(id).second) Bad("device id " + std::to_string(id) + " appears twice");
    }
  }
  return groups;
}

}  // namespace uir::hlo
