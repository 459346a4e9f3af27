//===- MicrobatchPlanner.h - variable-length micro-batches ------*- C++ -*-===//
//
// Cuts samples of different lengths into micro-batches, as DynaPipe does:
// the samples in the order given (sorted by length, so that a micro-batch
// pads little) are split into contiguous runs by dynamic programming so
// that the pipeline's time, (p - 1) x the slowest micro-batch + the sum of
// all, is smallest, each micro-batch within a memory cap. Also the
// per-(stage, micro-batch) costs of the micro-batches found, for the
// schedule generators and the timing model.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_MICROBATCHPLANNER_H
#define PP_SCHEDULING_MICROBATCHPLANNER_H

#include "pp/Scheduling/ScheduleTiming.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <limits>

namespace mlir::pp::sched {

/// What a micro-batch of `rows` samples, each padded to `length` tokens,
/// costs: perMicrobatch + rows x (perSample + perToken x length +
/// perTokenSquared x length^2), the squared term for attention, the fixed
/// one for what a micro-batch costs however small (launches, latency).
/// Every coefficient is finite and not negative.
struct TokenCost {
  double perSample = 0.0;
  double perToken = 0.0;
  double perTokenSquared = 0.0;
  double perMicrobatch = 0.0;

  double get(int64_t rows, int64_t length) const {
    double len = static_cast<double>(length);
    return perMicrobatch +
           rows * (perSample + perToken * len + perTokenSquared * len * len);
  }
};

/// How one stage's costs grow with a micro-batch's samples.
struct StageTokenCosts {
  TokenCost forward, backwardInput, backwardWeight, activation, stash;
};

/// A shape micro-batches can run at, such as a compiled shape variant: up
/// to `rows` samples of up to `length` tokens, taking `time` and holding
/// `memory` whatever it holds.
struct MicrobatchShape {
  int64_t rows = 0, length = 0;
  double time = 0.0, memory = 0.0;

  bool holds(int64_t numSamples, int64_t paddedLength) const {
    return numSamples <= rows && paddedLength <= length;
  }
};

/// What the planner minimises and within what.
struct MicrobatchPlanProblem {
  /// The pipeline's stages: the slowest micro-batch delays the end
  /// (numStages - 1) times.
  int64_t numStages = 1;
  /// The time of one micro-batch on the pipeline's slowest stage (F + B +
  /// W of that stage): costs are taken as the same on every stage.
  TokenCost time;
  /// The activation memory one micro-batch holds, and the most it may.
  TokenCost memory;
  double memoryCap = std::numeric_limits<double>::infinity();
  /// Whether to try every distinct micro-batch time as the slowest one
  /// (exact), or at most `maxCandidates` of them spread over their range.
  int64_t maxCandidates = 4096;
  /// The micro-batch count is a multiple of this (what the schedule
  /// generator needs: interleaved-1f1b's rank count).
  int64_t microbatchMultiple = 1;
  /// When not empty, the only shapes micro-batches run at: each at the
  /// quickest that holds it (the first of equals), with that shape's time
  /// and memory instead of `time` and `memory`; a run that no shape holds
  /// is no micro-batch.
  llvm::SmallVector<MicrobatchShape> shapes;
};

/// Micro-batches as runs of the samples: micro-batch k holds samples
/// [begin[k], begin[k + 1]), the last one up to the end.
struct MicrobatchPlan {
  llvm::SmallVector<int64_t> begin;
  /// Per micro-batch: its samples and the length they are padded to.
  llvm::SmallVector<int64_t> rows, paddedLength;
  /// Per micro-batch: the index of the shape it runs at (with shapes).
  llvm::SmallVector<int64_t> shape;
  /// The slowest micro-batch's time, the sum of all, and the objective
  /// (numStages - 1) x slowest + sum.
  double slowest = 0.0, total = 0.0, objective = 0.0;

  int64_t getNumMicrobatches() const { return begin.size(); }
};

/// Plans the micro-batches of `lengths` (every length positive), in the
/// order given. Fails if one sample alone is over the memory cap or held
/// by no shape, naming its index in `lengths`, or if no cut has a multiple
/// of `microbatchMultiple` micro-batches. Exact
/// (the least objective over all contiguous cuts) unless the distinct
/// micro-batch times outnumber `maxCandidates`.
llvm::Expected<MicrobatchPlan>
planMicrobatches(llvm::ArrayRef<int64_t> lengths,
                 const MicrobatchPlanProblem &problem);

/// The plan of micro-batches ending where `ends` says (each the index one
/// past a micro-batch's last sample, increasing, the last one the number of
/// samples), with its objective: what the planner would report for it.
MicrobatchPlan makeMicrobatchPlan(llvm::ArrayRef<int64_t> lengths,
                                  llvm::ArrayRef<int64_t> ends,
                                  const MicrobatchPlanProblem &problem);

/// The order the planner takes samples of `lengths` in: longest first,
/// equal lengths in their order, so that a micro-batch pads little.
llvm::SmallVector<int64_t> orderLongestFirst(llvm::ArrayRef<int64_t> lengths);

/// What padding every sample to the longest gives, the baseline a plan is
/// measured against: micro-batches of `rows` samples (the last one fewer),
/// as many as fit the memory cap when `rows` does not.
struct PaddedBaseline {
  int64_t rows = 1;
  double objective = 0.0;
};
PaddedBaseline getPaddedBaseline(llvm::ArrayRef<int64_t> lengths, int64_t rows,
                                 const MicrobatchPlanProblem &problem);

/// The costs of `plan`'s micro-batches on each stage, `stages[s]` saying
/// how stage s's costs grow: per-stage values the largest over the
/// micro-batches, per-micro-batch tables for every field.
StageCosts getMicrobatchCosts(const MicrobatchPlan &plan,
                              llvm::ArrayRef<StageTokenCosts> stages,
                              double transfer);

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_MICROBATCHPLANNER_H
