// dot for the evaluator: operands laid out as [batch, free, contracting],
// accumulated in a wide type (large float products through BLAS).
#include "eval/dot.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "eval/blas.h"
#include "eval/elementwise.h"
#include "eval/kernels.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "support/float_format.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;

struct DotImpl {
  // dot: batch dims, then lhs free dims, then rhs free dims. Both operands
  // are first laid out as [batch, free, contracting] in the working type, so
  // the inner loop is a contiguous dot product. Floats accumulate in double
  // and round once to the result type (large products through BLAS, in
  // double too, in its own summation order); integers accumulate in int64
  // and wrap to the result width; complex in c128.
  Literal Dot(const HloInstruction& inst, const Literal& lhs_in, const Literal& rhs_in) {
    const auto& a = inst.attributes();
    auto dims_of = [&](AttrKey k) {
      return a.GetOr<std::vector<int64_t>>(k).value_or(std::vector<int64_t>{});
    };
    const auto lb = dims_of(AttrKey::kLhsBatchDims), rb = dims_of(AttrKey::kRhsBatchDims);
    const auto lc = dims_of(AttrKey::kLhsContractingDims),
               rc = dims_of(AttrKey::kRhsContractingDims);
    const PrimitiveType out_type = inst.shape().element_type();
    const bool integral = IsInteger(out_type) || out_type == PrimitiveType::kPred;
    const PrimitiveType work = IsComplex(out_type) ? PrimitiveType::kC128
                               : integral          ? PrimitiveType::kS64
                                                   : PrimitiveType::kF64;
    int64_t batch = 1, m = 1, n = 1, k = 1;
    const Literal lhs = Arrange(Convert(lhs_in, work), lb, lc, &batch, &m, &k);
    const Literal rhs = Arrange(Convert(rhs_in, work), rb, rc, &batch, &n, &k);
    Literal out = MakeLiteral(work, inst.shape().dimensions());
    UIR_CHECK(out.element_count() == batch * m * n)
        << "dot %" << inst.name() << " has the wrong output shape";
    DispatchNative(work, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, bool>) {
        const T* x = Data<T>(lhs);
        const T* y = Data<T>(rhs);
        T* o = MutableData<T>(out);
        if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) {
          // Large float products go to BLAS (still in double).
          if (m * n * k >= kMinBlasWork) {
            for (int64_t b = 0; b < batch; ++b)
              GemmABt(m, n, k, x + b * m * k, y + b * n * k, o + b * m * n);
            return;
          }
        }
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t i = 0; i < m; ++i) {
            const T* xr = x + (b * m + i) * k;
            for (int64_t j = 0; j < n; ++j) {
              const T* yr = y + (b * n + j) * k;
              T sum = T(0);
              if constexpr (std::is_same_v<T, int64_t>) {
                uint64_t s = 0;
                for (int64_t c = 0; c < k; ++c)
                  s += static_cast<uint64_t>(xr[c]) * static_cast<uint64_t>(yr[c]);
                sum = static_cast<int64_t>(s);
              } else {
                for (int64_t c = 0; c < k; ++c) sum += xr[c] * yr[c];
              }
              o[(b * m + i) * n + j] = sum;
            }
          }
        }
      }
    });
    return Convert(out, out_type);
  }

  // Transposes `x` to [batch dims..., free dims..., contracting dims...] and
  // reports the three sizes (batch is the same for both operands).
  static Literal Arrange(const Literal& x, const std::vector<int64_t>& batch_dims,
                         const std::vector<int64_t>& contracting, int64_t* batch, int64_t* free,
                         int64_t* contract) {
    const auto& d = x.shape().dimensions();
    std::vector<int64_t> perm(batch_dims);
    *batch = 1;
    for (int64_t b : batch_dims) *batch *= d[b];
    *free = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(d.size()); ++i) {
      if (std::find(batch_dims.begin(), batch_dims.end(), i) == batch_dims.end() &&
          std::find(contracting.begin(), contracting.end(), i) == contracting.end()) {
        perm.push_back(i);
        *free *= d[i];
      }
    }
    *contract = 1;
    for (int64_t c : contracting) {
      perm.push_back(c);
      *contract *= d[c];
    }
    std::vector<int64_t> out_dims;
    for (int64_t p : perm) out_dims.push_back(d[p]);
    Literal out = MakeLiteral(x.shape().element_type(), out_dims);
    const auto in_strides = Strides(d);
    const size_t size = static_cast<size_t>(StorageBytes(x.shape().element_type()));
    ForEachIndex(out_dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
      int64_t src = 0;
      for (size_t i = 0; i < idx.size(); ++i) src += idx[i] * in_strides[perm[i]];
      std::memcpy(out.mutable_bytes().data() + linear * size, x.bytes().data() + src * size, size);
    });
    return out;
  }
};

}  // namespace

Literal Dot(const HloInstruction& inst, const Literal& lhs, const Literal& rhs) {
  return DotImpl{}.Dot(inst, lhs, rhs);
}

}  // namespace uir::eval
