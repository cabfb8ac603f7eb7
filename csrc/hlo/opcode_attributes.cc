// The opcode -> attributes table. Opcodes not listed take only the generic
// attributes (and, for unary elementwise ops, result_accuracy).
#include "hlo/opcode_attributes.h"

#include <algorithm>
#include <initializer_list>

namespace uir::hlo {
namespace {

using K = AttrKey;

bool In(AttrKey key, std::initializer_list<AttrKey> keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

constexpr std::initializer_list<AttrKey> kDotKeys = {
    K::kLhsBatchDims,     K::kLhsContractingDims, K::kRhsBatchDims,  K::kRhsContractingDims,
    K::kOperandPrecision, K::kAlgorithm,          K::kSparsityConfig};
constexpr std::initializer_list<AttrKey> kConvKeys = {
    K::kWindow,           K::kDimLabels,   K::kFeatureGroupCount, K::kBatchGroupCount,
    K::kOperandPrecision, K::kPaddingType, K::kConvolutionKind,   K::kSparsityConfig};
constexpr std::initializer_list<AttrKey> kCollectiveKeys = {
    K::kChannelId, K::kReplicaGroups, K::kUseGlobalDeviceIds, K::kConstrainLayout};

}  // namespace

bool AttributeAllowed(HloOpcode op, AttrKey key) {
  switch (key) {
    case K::kSharding:
    case K::kFrontendAttributes:
    case K::kMetadata:
    case K::kBackendConfig:
    case K::kStatistics:
    case K::kOrigin:
      return true;
    default:
      break;
  }
  using O = HloOpcode;
  switch (op) {
    case O::kFusion:
      return In(key, {K::kKind, K::kCalls, K::kOutputToOperandAliasing});
    case O::kCall:
      return In(key, {K::kToApply, K::kIsComposite});
    case O::kMap:
    case O::kReduce:
      return In(key, {K::kDimensions, K::kToApply});
    case O::kReduceWindow:
      return In(key, {K::kWindow, K::kToApply});
    case O::kSelectAndScatter:
      return In(key, {K::kWindow, K::kSelect, K::kScatter});
    case O::kScatter:
      return In(key, {K::kUpdateWindowDims, K::kInsertedWindowDims, K::kScatterDimsToOperandDims,
                      K::kInputBatchingDims, K::kScatterIndicesBatchingDims, K::kIndexVectorDim,
                      K::kIndicesAreSorted, K::kUniqueIndices, K::kToApply});
    case O::kGather:
      return In(key, {K::kOffsetDims, K::kCollapsedSliceDims, K::kStartIndexMap,
                      K::kOperandBatchingDims, K::kStartIndicesBatchingDims, K::kIndexVectorDim,
                      K::kSliceSizes, K::kIndicesAreSorted});
    case O::kSort:
      return In(key, {K::kDimensions, K::kIsStable, K::kToApply});
    case O::kTopK:
      return In(key, {K::kK, K::kLargest, K::kIsStable});
    case O::kWhile:
      return In(key, {K::kCondition, K::kBody});
    case O::kConditional:
      return In(key, {K::kBranchComputations, K::kTrueComputation, K::kFalseComputation});
    case O::kBroadcast:
    case O::kTranspose:
    case O::kReverse:
    case O::kConcatenate:
    case O::kGetDimensionSize:
    case O::kSetDimensionSize:
      return key == K::kDimensions;
    case O::kReshape:
      return key == K::kInferredDimension;
    case O::kSlice:
      return key == K::kSlice;
    case O::kDynamicSlice:
      return key == K::kDynamicSliceSizes;
    case O::kPad:
      return key == K::kPadding;
    case O::kCompare:
      return In(key, {K::kDirection, K::kCompareType});
    case O::kConvolution:
      return In(key, kConvKeys);
    case O::kDot:
    case O::kScaledDot:
      return In(key, kDotKeys);
    case O::kRaggedDot:
      return In(key, kDotKeys) || In(key, {K::kLhsRaggedDims, K::kRhsGroupDims});
    case O::kIota:
      return key == K::kIotaDimension;
    case O::kGetTupleElement:
      return key == K::kIndex;
    case O::kRng:
      return key == K::kDistribution;
    case O::kRngBitGenerator:
      return key == K::kAlgorithm;
    case O::kRngGetAndUpdateState:
      return key == K::kDelta;
    case O::kReducePrecision:
      return In(key, {K::kExponentBits, K::kMantissaBits});
    case O::kFft:
      return In(key, {K::kFftType, K::kFftLength});
    case O::kBatchNormGrad:
    case O::kBatchNormInference:
    case O::kBatchNormTraining:
      return In(key, {K::kEpsilon, K::kFeatureIndex});
    case O::kTriangularSolve:
      return In(key, {K::kLeftSide, K::kLower, K::kUnitDiagonal, K::kTransposeA});
    case O::kCholesky:
      return key == K::kLower;
    case O::kCustomCall:
      return In(key, {K::kCustomCallTarget, K::kApiVersion, K::kCalledComputations, K::kToApply,
                      K::kOperandLayoutConstraints, K::kCustomCallHasSideEffect, K::kLiteral,
                      K::kSchedule, K::kOutputToOperandAliasing}) ||
             In(key, kConvKeys);
    case O::kAllReduce:
    case O::kAllReduceStart:
    case O::kReduceScatter:
      return In(key, kCollectiveKeys) || In(key, {K::kToApply, K::kDimensions});
    case O::kAllGather:
    case O::kAllGatherStart:
    case O::kAllToAll:
      return In(key, kCollectiveKeys) || In(key, {K::kDimensions, K::kSplitDimension});
    case O::kCollectivePermute:
    case O::kCollectivePermuteStart:
      return In(key, {K::kSourceTargetPairs, K::kChannelId});
    case O::kCollectiveBroadcast:
    case O::kRaggedAllToAll:
      return In(key, kCollectiveKeys);
    case O::kSend:
    case O::kRecv:
    case O::kSendDone:
    case O::kRecvDone:
      return In(key, {K::kChannelId, K::kIsHostTransfer});
    case O::kCopyStart:
      return key == K::kCrossProgramPrefetchIndex;
    case O::kInfeed:
      return key == K::kInfeedConfig;
    case O::kOutfeed:
      return In(key, {K::kOutfeedConfig, K::kOutfeedShape});
    case O::kAsyncStart:
      return In(key, {K::kCalls, K::kAsyncExecutionThread, K::kOutputToOperandAliasing});
    case O::kAsyncUpdate:
    case O::kAsyncDone:
      return In(key, {K::kCalls, K::kAsyncExecutionThread});
    case O::kDomain:
      return key == K::kDomain;
    case O::kScan:
      return In(key,
                {K::kDimensions, K::kNumCarries, K::kIsReverse, K::kIsAssociative, K::kToApply});
    case O::kParameter:
      return key == K::kParameterReplication;
    default:
      return key == K::kResultAccuracy && OpcodeCategoryOf(op) == OpcodeCategory::kUnary;
  }
}

}  // namespace uir::hlo
