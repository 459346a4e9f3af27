// `exact` runs auto's exact search alone, from no incumbent: it must prove
// the same optimum auto does (schedule-auto.mlir), its schedule must pass the
// verifier with pp-simulate's timing agreeing, and it fails where the search
// cannot finish or no schedule fits the cap.
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=3 num-microbatches=4" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=4 num-microbatches=8 forward-cost=1,2,1,1 backward-input-cost=2 comm-cost=0.1" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=HET
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=8 num-ranks=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=8 num-ranks=2 num-microbatches=2 comm-cost=1" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=WAVES
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=8 num-ranks=2 num-microbatches=2 comm-cost=1" 2>/dev/null | FileCheck %s --check-prefix=WAVES-PLACEMENT
// RUN: not pp-opt %s --pp-schedule="schedule=exact num-stages=6 num-microbatches=12 forward-cost=1,2,1,3,1,2 backward-input-cost=2,1,3,1,2,1 backward-weight-cost=1,3,1,2,1,1 comm-cost=0.3 memory-cap=5" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not pp-opt %s --pp-schedule="schedule=exact num-stages=16 num-microbatches=63" 2>&1 | FileCheck %s --check-prefix=TOO-LARGE
// RUN: not pp-opt %s --pp-schedule="schedule=exact num-stages=4 num-microbatches=8 memory-cap=0.5" 2>&1 | FileCheck %s --check-prefix=NONE

// SMALL: remark: exact: makespan 14, peak activation memory 4; proven optimal by exhaustive search
// SMALL: remark: makespan 14,

// HET: remark: exact: makespan 41.1, {{.*}} proven optimal by exhaustive search
// HET: remark: makespan 41.1,

// V: remark: exact: makespan 51, {{.*}} proven optimal by exhaustive search
// V: remark: makespan 51,

// With four stages per rank it also searches Hanayo's two waves, where a
// micro-batch changes ranks 4 times per direction instead of 7; with slow
// transfers the optimum lies there.
// WAVES: remark: exact: makespan 30, {{.*}} proven optimal by exhaustive search
// WAVES: remark: makespan 30,
// WAVES-PLACEMENT: pp.schedule @train_step_schedule "exact" {{.*}} stage_rank [0, 1, 1, 0, 0, 1, 1, 0]

// BUDGET: error: exact search did not finish within 100000 states per placement
// TOO-LARGE: error: exact search is limited to 3000 actions; this problem has 3024
// NONE: error: no schedule within the memory cap of 0.5 (exhaustive search)

module {
}
