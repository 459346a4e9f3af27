//===- DiscardableAttributes.cpp - the pp.* attributes passes attach ------===//
//
// Verifies the discardable `pp.*` attributes that pp's passes and front ends
// set on functions, their arguments and results, schedules and linalg ops:
// each known name must sit where it belongs and hold a value of its kind,
// and any other `pp.*` name is rejected.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/IR/MicrobatchPlan.h"
#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Dialect/PP/IR/TensorParallel.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::pp;

namespace {
/// Where a discardable pp attribute may appear.
enum class Site {
  Function,         // the attributes of a function op
  Schedule,         // the attributes of a pp.schedule
  Module,           // the attributes of a builtin.module
  LinalgOp,         // the attributes of an op of the linalg dialect
  AnyOp,            // the attributes of any op
  Argument,         // a function argument
  ArgumentOrResult, // a function argument or result
};

/// One known attribute: its name, where it belongs, and its value.
struct AttributeRule {
  StringLiteral name;
  Site site;
  /// What the value must be, for diagnostics ("a #pp.slot").
  StringLiteral expected;
  bool (*isValid)(Attribute value);
};
} // namespace

static bool isUnit(Attribute value) { return isa<UnitAttr>(value); }

static bool isString(Attribute value) { return isa<StringAttr>(value); }

static bool isFloat(Attribute value) { return isa<FloatAttr>(value); }

static bool isF64Array(Attribute value) {
  return isa<DenseF64ArrayAttr>(value);
}

/// Whether `value` is an integer in [min, max).
static bool isIntegerIn(Attribute value, int64_t min, int64_t max) {
  auto integer = dyn_cast<IntegerAttr>(value);
  if (!integer || !integer.getType().isSignlessInteger(64))
    return false;
  return integer.getInt() >= min && integer.getInt() < max;
}

static bool isTableSize(Attribute value) {
  return isIntegerIn(value, 1, std::numeric_limits<int64_t>::max());
}

static bool isI64(Attribute value) {
  auto integer = dyn_cast<IntegerAttr>(value);
  return integer && integer.getType().isInteger(64);
}

static bool isPackedInput(Attribute value) {
  auto name = dyn_cast<StringAttr>(value);
  return name && (name == kDocumentIds || name == kPositionIds);
}

static bool isStageNumber(Attribute value) {
  return isIntegerIn(value, 0, kMaxStages);
}

static bool isMicrobatchCount(Attribute value) {
  return isIntegerIn(value, 1, kMaxMicrobatches + 1);
}

/// `pp.state`: a unit attribute on the state's argument, the number of that
/// argument on the result holding its new value.
static bool isStateMark(Attribute value) {
  return isUnit(value) ||
         isIntegerIn(value, 0, std::numeric_limits<int64_t>::max());
}
static bool isVariant(Attribute value) { return isIntegerIn(value, 1, 65536); }

static bool isPhase(Attribute value) { return isa<PhaseAttr>(value); }

static bool isCost(Attribute value) { return isa<CostAttr>(value); }

static bool isI64Array(Attribute value) {
  return isa<DenseI64ArrayAttr>(value);
}

static bool isSlot(Attribute value) { return isa<SlotAttr>(value); }

static bool isGemmMark(Attribute value) {
  auto mark = dyn_cast<StringAttr>(value);
  return mark && mark.getValue() == kGemmLibrary;
}

/// Whether `value` is shard `split_axes` over a one-axis grid: a list, per
/// tensor dimension, of the grid axes it is split on, axis 0 at most once.
static bool isSplitAxes(Attribute value) {
  auto dims = dyn_cast<ArrayAttr>(value);
  if (!dims)
    return false;
  int64_t uses = 0;
  for (Attribute dim : dims) {
    auto axes = dyn_cast<ArrayAttr>(dim);
    if (!axes || axes.size() > 1)
      return false;
    for (Attribute axis : axes)
      if (!isIntegerIn(axis, 0, 1) || ++uses > 1)
        return false;
  }
  return true;
}

static bool isTensorParallelism(Attribute value) {
  return isIntegerIn(value, 1, kMaxRanks);
}

/// pp-plan-parallelism's layout: {tensor_parallel, stages, replicas,
/// zero (one level per stage), zero_gather_param}.
static bool isParallelism(Attribute value) {
  auto dict = dyn_cast<DictionaryAttr>(value);
  if (!dict || dict.size() != 5)
    return false;
  auto zero = dyn_cast_or_null<DenseI64ArrayAttr>(dict.get("zero"));
  auto stages = dyn_cast_or_null<IntegerAttr>(dict.get("stages"));
  return zero && stages && zero.size() == stages.getInt() &&
         llvm::all_of(zero.asArrayRef(),
                      [](int64_t level) {
                        return level == 0 || level == 1 || level == 3;
                      }) &&
         isIntegerIn(dict.get("zero_gather_param"), 0, 2) &&
         llvm::all_of(
             llvm::ArrayRef<StringRef>{"tensor_parallel", "stages", "replicas"},
             [&](StringRef name) {
               return isIntegerIn(dict.get(name), 1, kMaxRanks);
             });
}

static const AttributeRule kAttributeRules[] = {
    {kStageAttr, Site::Function, "a stage number (an i64 in [0, 65536))",
     isStageNumber},
    {kPhaseAttr, Site::Function, "a #pp.phase", isPhase},
    {kRecomputeAttr, Site::Function, "a unit attribute", isUnit},
    {kMicrobatchesAttr, Site::Function,
     "a micro-batch count (an i64 in [1, 1048576])", isMicrobatchCount},
    {kMakespanAttr, Site::Schedule, "a float", isFloat},
    {kSteadyStepAttr, Site::Schedule, "a float", isFloat},
    {kIdleAttr, Site::Schedule, "an array<f64>", isF64Array},
    {kPeakMemoryAttr, Site::Schedule, "an array<f64>", isF64Array},
    // pp-simulate's bytes of weights, gradients and optimizer state per rank.
    {"pp.static_memory", Site::Schedule, "an array<f64>", isF64Array},
    // pp-simulate's bytes each device sends in tensor-parallel all-reduces,
    // per rank and step.
    {"pp.tp_all_reduce_bytes", Site::Schedule, "an array<f64>", isF64Array},
    {kTensorParallelAttr, Site::Schedule,
     "a tensor-parallel group size (an i64 in [1, 65536))",
     isTensorParallelism},
    {kGemmAttrName, Site::LinalgOp, "\"library\"", isGemmMark},
    {kParamAttr, Site::Argument, "a unit attribute", isUnit},
    {kTargetAttr, Site::Argument, "a unit attribute", isUnit},
    {kNameAttr, Site::Argument, "a string", isString},
    {kIdBoundAttr, Site::Argument, "a table size (a positive i64)",
     isTableSize},
    {kIdIgnoredAttr, Site::Argument, "an id (an i64)", isI64},
    {kPackedInputAttr, Site::Argument, "\"document_ids\" or \"position_ids\"",
     isPackedInput},
    {kSlotAttr, Site::ArgumentOrResult, "a #pp.slot", isSlot},
    {kSplitAttr, Site::ArgumentOrResult,
     "shard split_axes on the one tensor-parallel grid axis (such as "
     "[[], [0]])",
     isSplitAxes},
    {kMicrobatchCostAttr, Site::Module, "a #pp.cost", isCost},
    {kPlannedCostAttr, Site::Module, "a #pp.cost", isCost},
    {kPlannedActivationCapAttr, Site::Module, "an array<f64>", isF64Array},
    {kModelFingerprintAttr, Site::Module, "a string", isString},
    {kMicrobatchSamplesAttr, Site::Module, "an array<i64>", isI64Array},
    {kMicrobatchBeginAttr, Site::Module, "an array<i64>", isI64Array},
    {kMicrobatchLengthAttr, Site::Module, "an array<i64>", isI64Array},
    {kStepPlansAttr, Site::Module, "an array<i64>", isI64Array},
    {kPackedRowsAttr, Site::Module, "a row length (a positive i64)",
     isTableSize},
    {kStepPlanAttr, Site::Schedule, "a plan number (an i64 in [0, 65536))",
     isStageNumber},
    {kStateAttr, Site::ArgumentOrResult,
     "a unit attribute (argument) or an argument number (result)", isStateMark},
    {kVariantAttr, Site::Function, "a variant (an i64 in [1, 65536))",
     isVariant},
    {"pp.parallelism", Site::Function,
     "{tensor_parallel, stages, replicas} (i64s in [1, 65536)), zero "
     "(an array<i64> of 0, 1 or 3, one per stage) and zero_gather_param (an "
     "i64: 0 or 1)",
     isParallelism},
    {kSliceAttr, Site::AnyOp, "a slice number (an i64 in [0, 65536))",
     isStageNumber},
};

static StringRef describeSite(Site site) {
  switch (site) {
  case Site::Function:
    return "a function";
  case Site::Schedule:
    return "a pp.schedule";
  case Site::Module:
    return "a module";
  case Site::LinalgOp:
    return "a linalg op";
  case Site::AnyOp:
    return "an op";
  case Site::Argument:
    return "a function argument";
  case Site::ArgumentOrResult:
    return "a function argument or result";
  }
  llvm_unreachable("unknown site");
}

/// The rule of `name`, or an error listing the known names.
static FailureOr<const AttributeRule *>
lookupRule(StringAttr name, function_ref<InFlightDiagnostic()> emitError) {
  const auto *rule = llvm::find_if(kAttributeRules, [&](const auto &rule) {
    return rule.name == name.getValue();
  });
  if (rule != std::end(kAttributeRules))
    return rule;
  InFlightDiagnostic diag = emitError();
  diag << "unknown pp attribute '" << name.getValue()
       << "'; the known ones are ";
  llvm::interleaveComma(kAttributeRules, diag,
                        [&](const AttributeRule &rule) { diag << rule.name; });
  return diag;
}

/// Checks the value of `attr` against its rule; `emitError` starts the
/// message with where it sits ("argument #0 has ").
static LogicalResult checkValue(const AttributeRule &rule, NamedAttribute attr,
                                function_ref<InFlightDiagnostic()> emitError) {
  if (rule.isValid(attr.getValue()))
    return success();
  return emitError() << "'" << rule.name << "' = " << attr.getValue()
                     << ", which is not " << rule.expected;
}

static bool isAtSite(Operation *op, Site site) {
  switch (site) {
  case Site::Function:
    return isa<FunctionOpInterface>(op);
  case Site::Schedule:
    return isa<ScheduleOp>(op);
  case Site::Module:
    return isa<ModuleOp>(op);
  case Site::LinalgOp:
    return op->getName().getDialectNamespace() == "linalg";
  case Site::AnyOp:
    return true;
  case Site::Argument:
  case Site::ArgumentOrResult:
    return false;
  }
  llvm_unreachable("unknown site");
}

LogicalResult PPDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  auto emitError = [&] { return op->emitOpError(); };
  FailureOr<const AttributeRule *> rule = lookupRule(attr.getName(), emitError);
  if (failed(rule))
    return failure();
  if (!isAtSite(op, (*rule)->site))
    return op->emitOpError("has '") << (*rule)->name << "', which belongs on "
                                    << describeSite((*rule)->site);
  return checkValue(**rule, attr, [&] { return op->emitOpError("has "); });
}

/// Checks an attribute of function argument or result `index` (`what`).
static LogicalResult verifyValueAttribute(Operation *op, StringRef what,
                                          unsigned index, NamedAttribute attr) {
  auto emitError = [&] {
    return op->emitError() << what << " #" << index << " has ";
  };
  FailureOr<const AttributeRule *> rule = lookupRule(attr.getName(), [&] {
    return op->emitError() << what << " #" << index << ": ";
  });
  if (failed(rule))
    return failure();
  Site site = (*rule)->site;
  bool isResult = what == "result";
  if (site == Site::ArgumentOrResult || (site == Site::Argument && !isResult))
    return checkValue(**rule, attr, emitError);
  return emitError() << "'" << (*rule)->name << "', which belongs on "
                     << describeSite(site);
}

LogicalResult PPDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  if (failed(verifyValueAttribute(op, "argument", argIndex, attr)))
    return failure();
  // A weight is not data: it has no targets.
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (attr.getName() == kStateAttr && !isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "argument #" << argIndex << " has '" << kStateAttr
                           << "' = " << attr.getValue()
                           << "; an argument takes it as a unit attribute";
  if (attr.getName() == kTargetAttr && function &&
      function.getArgAttr(argIndex, kParamAttr))
    return op->emitError() << "argument #" << argIndex << " has both '"
                           << kParamAttr << "' and '" << kTargetAttr
                           << "': a weight holds no training targets";
  return success();
}

LogicalResult PPDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  if (failed(verifyValueAttribute(op, "result", resultIndex, attr)))
    return failure();
  // A new state value names the state argument it replaces.
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (attr.getName() != kStateAttr || !function)
    return success();
  auto arg = dyn_cast<IntegerAttr>(attr.getValue());
  if (!arg)
    return op->emitError() << "result #" << resultIndex << " has '"
                           << kStateAttr
                           << "' = unit; a result names the state argument "
                              "it updates by its number";
  if (arg.getInt() >= function.getNumArguments() ||
      !function.getArgAttr(arg.getInt(), kStateAttr))
    return op->emitError() << "result #" << resultIndex << " updates argument #"
                           << arg.getInt() << ", which is not marked '"
                           << kStateAttr << "'";
  return success();
}
