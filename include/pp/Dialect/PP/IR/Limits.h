//===- Limits.h - the largest pipelines pp accepts --------------*- C++ -*-===//
//
// Bounds on the counts a schedule, a pass option or an imported file may
// declare. They are far above any real pipeline, yet small enough that the
// work and memory that scale with a count (per-stage tables, per-micro-batch
// checks) stay within seconds and megabytes, and that products of counts
// do not overflow int64_t. docs/Reliability.md lists them.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_IR_LIMITS_H
#define PP_DIALECT_PP_IR_LIMITS_H

#include <cstdint>

namespace mlir::pp {

inline constexpr int64_t kMaxStages = int64_t(1) << 16;
/// The most stages pp-partition-stages (and so pp-compile) cuts a model
/// into. Its optimal search takes O(stages x (ops - stages)^2) time and its
/// cost model O(ops^2) memory: 512 stages of a 512-layer chain plan in
/// about 5 s of CPU, and each doubling costs about 8x. Schedules of
/// existing stage functions (pp-schedule, imports) may have kMaxStages.
inline constexpr int64_t kMaxPlannedStages = 512;
inline constexpr int64_t kMaxRanks = int64_t(1) << 16;
inline constexpr int64_t kMaxMicrobatches = int64_t(1) << 20;
/// The most processes a program runs on (ranks x data-parallel replicas x
/// tensor-parallel group size): each factor alone may reach kMaxRanks,
/// their product must still fit the runtime's 32-bit process counts.
inline constexpr int64_t kMaxProcesses = int64_t(1) << 20;
/// The most (stage, micro-batch) pairs a generated schedule may have, each
/// two or three compute actions and their transfers: 2^18 generate,
/// simulate and print in about 7 s of CPU; 2^20 (one stage of 2^20
/// micro-batches) took 17 s and 1.5 GB. Schedules read from files are
/// bounded by their size instead.
inline constexpr int64_t kMaxStageMicrobatches = int64_t(1) << 18;

/// The largest time (seconds) or memory (bytes) a cost, cap or option may
/// give. A simulation adds fewer than 2^40 of them per rank (every
/// micro-batch of every stage, each a few actions), so its sums stay
/// finite: 1e308 per F, allowed before, made an infinite makespan.
inline constexpr double kMaxQuantity = 1e280;
/// kMaxQuantity as errors spell it.
inline constexpr const char *kMaxQuantityText = "1e280";

/// Whether `value` is a time or memory amount pp computes with: finite, not
/// negative and at most kMaxQuantity (NaN is none of these).
inline bool isValidQuantity(double value) {
  return value >= 0 && value <= kMaxQuantity;
}

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_LIMITS_H
