//===- CostProfile.h - per-stage costs read from a profile file -*- C++ -*-===//
//
// The `pp-profile-v1` JSON format (docs/CostProfile.md): what each stage of a
// pipeline costs in time and activation memory, as a profiler measures it
// and as pp-schedule and the partition planner read it.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_COSTPROFILE_H
#define PP_DIALECT_PP_ANALYSIS_COSTPROFILE_H

#include "pp/Dialect/PP/IR/PPDialect.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::pp {

/// What one stage costs; the defaults are unit costs.
struct StageProfile {
  double forward = 1.0;
  double backwardInput = 1.0;
  double backwardWeight = 1.0;
  /// Held from a micro-batch's forward until its backward.
  double activationMemory = 1.0;
  /// The part of it still held after B until W.
  double stashMemory = 0.0;
  /// What each micro-batch costs where they differ (samples of different
  /// lengths): one entry per micro-batch, or none.
  std::vector<StageProfile> microbatches;
  /// What one micro-batch costs at each shape variant of a program of
  /// several (docs/VariableLength.md), as the step planner reads them: one
  /// entry per variant, or none.
  std::vector<StageProfile> variants;
  /// The stage's optimizer step, where measured.
  std::optional<double> optimizer;
};

/// A `pp-profile-v1` document.
struct CostProfile {
  /// Labels of the units every time and every memory amount is in ("ms",
  /// "bytes"); the numbers are used as they are.
  std::string timeUnit = "unit";
  std::string memoryUnit = "unit";
  /// Time of one activation or gradient transfer between ranks.
  double transfer = 0.0;
  /// Activation memory each rank may hold: one value for every rank or one
  /// per rank; no cap when empty.
  llvm::SmallVector<double> memoryCap;
  llvm::SmallVector<StageProfile> stages;
  /// The work each rank does once per step before its first action.
  double stepOverhead = 0.0;
  /// The micro-batches a profiler measured with (`meta.microbatches`, as
  /// pprt --profile writes it); none when the file does not say.
  std::optional<int64_t> measuredMicrobatches;
  /// The model it was measured on (`meta.model`, getModelFingerprint's, as
  /// pp-compile --emit=profile records it); empty when the file does not
  /// say.
  std::string modelFingerprint;

  /// Unit costs for `numStages` stages, no transfer time and no cap.
  static CostProfile getUnit(int64_t numStages);

  /// One field of every stage, in stage order:
  /// `profile.getColumn(&StageProfile::forward)`.
  llvm::SmallVector<double> getColumn(double StageProfile::*field) const;

  /// How many micro-batches the per-micro-batch costs describe; 0 without.
  int64_t getNumMicrobatches() const {
    return stages.empty() ? 0 : stages.front().microbatches.size();
  }
  /// How many shape variants the per-variant costs describe; 0 without.
  int64_t getNumVariants() const {
    return stages.empty() ? 0 : stages.front().variants.size();
  }
  /// One field of every (stage, micro-batch), stage-major.
  llvm::SmallVector<double>
  getMicrobatchColumn(double StageProfile::*field) const;
  /// The costs as the scheduling library reads them.
  sched::StageCosts getStageCosts() const;
  /// Why the profile cannot describe a pipeline of `numStages` stages with
  /// `numMicrobatches` micro-batches (it was measured on another), or "" if
  /// it can; a profile of shape variants fits any number of micro-batches.
  std::string checkShape(int64_t numStages, int64_t numMicrobatches) const;
  /// Why the profile cannot describe `module`'s model (it was measured on
  /// another: pp.model_fingerprint differs), or "" if it can or either does
  /// not say.
  std::string checkModel(ModuleOp module) const;
};

/// The identity of a model: a hash of `module` as printed without
/// locations and with large constants elided, in hex.
std::string getModelFingerprint(ModuleOp module);

/// Reports an error; the reader streams the file name, the offending entry
/// (`stages[1].forward`) and the problem into it.
using CostProfileErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// Parses the text of a pp-profile-v1 document read from `fileName`.
FailureOr<CostProfile> parseCostProfile(llvm::StringRef text,
                                        llvm::StringRef fileName,
                                        CostProfileErrorFn emitError);

/// Reads and parses the pp-profile-v1 file at `path`.
FailureOr<CostProfile> readCostProfile(llvm::StringRef path,
                                       CostProfileErrorFn emitError);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_COSTPROFILE_H
