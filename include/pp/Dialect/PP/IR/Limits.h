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
inline constexpr int64_t kMaxRanks = int64_t(1) << 16;
inline constexpr int64_t kMaxMicrobatches = int64_t(1) << 20;

} // namespace mlir::pp

#endif // PP_DIALECT_PP_IR_LIMITS_H
