// The typed values of kEnum attributes (attribute.def): each enum lists its
// attribute's spellings in EnumNames order. Light enough for kernel headers.
#ifndef UIR_HLO_ATTRIBUTE_ENUMS_H_
#define UIR_HLO_ATTRIBUTE_ENUMS_H_

#include <cstdint>

namespace uir::hlo {

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType : uint8_t { kFloat, kTotalOrder, kSigned, kUnsigned };
enum class RandomDistribution : uint8_t { kUniform, kNormal };
enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
enum class TransposeKind : uint8_t { kNoTranspose, kTranspose, kAdjoint };
enum class CustomCallApiVersion : uint8_t {
  kOriginal,
  kStatusReturning,
  kStatusReturningUnified,
  kTypedFfi
};
enum class CustomCallSchedule : uint8_t { kNone, kLatest, kEarliest };
enum class PaddingType : uint8_t { kValid, kSame };
enum class ConvolutionKind : uint8_t { kFprop, kWgrad, kDgrad, kUnset };

}  // namespace uir::hlo

#endif  // UIR_HLO_ATTRIBUTE_ENUMS_H_
