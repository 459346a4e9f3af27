//===- VShape.h - shared construction of V-shaped schedules -----*- C++ -*-===//
//
// What the V-shaped schedules (zbv, v-half, v-min) share: the shape check and
// the two constructions behind the controllable-memory schedules of Qi et
// al., "Pipeline Parallelism with Controllable Memory" (NeurIPS 2024).
//
// Rank r of p runs chunk 0 (stage r) and chunk 1 (stage 2p - 1 - r). Times,
// memory limits and peaks are in the units pp-simulate uses by default:
// F = B = W = 1 per chunk, one activation unit per micro-batch per chunk,
// held from its forward until its input gradient (B).
//
//===----------------------------------------------------------------------===//

#ifndef PP_LIB_SCHEDULING_SCHEDULES_VSHAPE_H
#define PP_LIB_SCHEDULING_SCHEDULES_VSHAPE_H

#include "pp/Scheduling/ScheduleGenerators.h"

namespace mlir::pp::sched::vshape {

/// Fails unless there are exactly two stages per rank.
llvm::Error requireTwoStagesPerRank(const ScheduleProblem &problem,
                                    llvm::StringRef schedule);

/// One rank's slots, within a building block, of micro-batch 0's chunk-0
/// forward, chunk-1 forward, chunk-1 B and chunk-0 B; micro-batch k's are 6k
/// slots later (6 = the F, B and W of two chunks).
struct BlockOffsets {
  int64_t forward0, forward1, backward1, backward0;
};

/// A controllable-memory V schedule: of (1) `block` repeated every 6 slots
/// for each micro-batch, with each W in the first free slot after its B, and
/// (2) a greedy list schedule under `memoryLimit` activation units per rank,
/// the one with the shorter unit-cost makespan, then the lower peak, then
/// (1). (1) competes only if its peak is within `memoryLimit`.
///
/// The greedy runs all ranks in lock step, one unit-cost action per rank per
/// time unit, and gives each idle rank the first of these that is ready: the
/// chunk-0 B, the chunk-1 B, the chunk-1 forward if it keeps the rank within
/// the limit, the chunk-0 forward if it leaves room under the limit for that
/// micro-batch's chunk-1 forward, the oldest pending W. The room kept for
/// chunk 1 is what makes it deadlock-free; its peak never exceeds the limit.
llvm::Expected<GeneratedSchedule>
scheduleWithMemoryLimit(const ScheduleProblem &problem,
                        llvm::StringRef schedule, int64_t memoryLimit,
                        llvm::ArrayRef<BlockOffsets> block);

} // namespace mlir::pp::sched::vshape

#endif // PP_LIB_SCHEDULING_SCHEDULES_VSHAPE_H
