// memory-cap gives one cap for every rank or one per rank, for ranks of
// different memory; the schedule carries it as given, and pp-verify-schedule,
// `auto` and `exact` hold each rank to its own cap.
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 num-microbatches=2 memory-cap=2" | FileCheck %s --check-prefix=SCALAR
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 num-microbatches=2 memory-cap=2,2" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=LIST
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 num-microbatches=2 memory-cap=2,1" --pp-insert-transfers --pp-verify-schedule 2>&1 | FileCheck %s --check-prefix=HALF
// RUN: pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=4 num-microbatches=8 memory-cap=4,2,4,4" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=16 num-ranks=8 num-microbatches=128 memory-cap=12,6,12,12,12,12,12,12 forward-cost=1,2,1,1,1,1,1,1,1,1,1,1,1,1,1,1.5 comm-cost=0.1" --pp-insert-transfers=semantics=async --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO-LARGE
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=2 num-microbatches=3 memory-cap=1,3" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXACT-SMALL-FIRST
// RUN: pp-opt %s --pp-schedule="schedule=exact num-stages=2 num-microbatches=3 memory-cap=3,1" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXACT-SMALL-LAST
// RUN: not pp-opt %s --pp-schedule="schedule=auto semantics=async num-stages=2 num-microbatches=3 memory-cap=0.5,2" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 num-microbatches=2 cost-file=%S/../Inputs/half-memory-rank.json" --pp-insert-transfers --pp-verify-schedule 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 num-microbatches=2 cost-file=%S/../Inputs/half-memory-rank.json memory-cap=3" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=FILE-OVERRIDE
// 1f1b runs as many warm-up forwards as each cap holds, no more than the
// rank before it (so that the ranks cannot wait for each other in a cycle);
// the other fixed generators are held to the caps by pp-schedule itself.
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 memory-cap=2,1,4,4 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 memory-cap=3,2,2,1" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF-FULL
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 memory-cap=4,0.5,4,4" 2>&1 | FileCheck %s --check-prefix=ONEF-NONE
// RUN: not pp-opt %s --pp-schedule="schedule=zbv num-stages=8 num-ranks=4 num-microbatches=8 memory-cap=3" 2>&1 | FileCheck %s --check-prefix=ZBV
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 memory-cap=1,2,3" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 memory-cap=2,0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-stages=2 memory-cap=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// One value stands for every rank at any rank count, and a list of one per
// rank is kept whole (each rank of a one-micro-batch GPipe holds 1).
// RUN: for n in 1 2 257 4096; do \
// RUN:   pp-opt %s --pp-schedule="schedule=gpipe num-stages=$n memory-cap=1" --pp-insert-transfers --pp-verify-schedule -o /dev/null || exit 1; \
// RUN: done
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=64 memory-cap=$(seq -s, 64)" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=MANY

// Rank 1 holds one micro-batch, so ranks 2 and 3 run no warm-up either.
// ONEF: remark: makespan 75, {{.*}}peak activation memory per rank: 2, 1, 1, 1
// Caps of 1F1B's own peaks change nothing (the 51 of schedule-costs' 1f1b).
// ONEF-FULL: remark: makespan 51, {{.*}}peak activation memory per rank: 3, 2, 2, 1
// ONEF-NONE: error: 1f1b: rank 1's memory cap of 0.5 does not hold one micro-batch of stage 1
// ZBV: error: schedule 'zbv' holds {{[0-9]+}} units of activation memory on rank {{[0-9]}}, over its memory cap of 3; 1f1b, greedy and auto schedule within per-rank caps

// One value stays one f64 for every rank.
// SCALAR: pp.schedule @train_step_schedule "gpipe" {{.*}}attributes {memory_cap = 2.000000e+00 : f64}

// A list stays a list, even of equal caps; both ranks hold 2.
// LIST: pp.schedule @train_step_schedule "gpipe" {{.*}}attributes {memory_cap = array<f64: 2.000000e+00, 2.000000e+00>}

// GPipe holds both micro-batches on rank 1 too: over its half cap.
// HALF-NOT: on rank 0
// HALF: error: schedule 'gpipe' holds 2 units of activation memory on rank 1, over its memory cap of 1
// HALF-NOT: on rank 0

// Rank 1 has half the memory of the others: auto (here the greedy list
// schedule under the caps themselves) keeps it at 2 and lets rank 0 hold 4,
// between the 35 of a cap of 2 everywhere and the 27 of 4
// (schedule-auto.mlir).
// AUTO: remark: auto: makespan 29 (greedy), peak activation memory 4;
// AUTO: remark: makespan 29, {{.*}}peak activation memory per rank: 4, 2, 2, 1

// Two stages per rank and 6144 actions, past the exact search: the greedy
// family, the local search and the built-ins (ZBV holds 16, over every cap)
// are all held to each rank's cap; rank 1 stays within its 6. Async
// transfers, as auto is told: it times the program
// pp-insert-transfers{semantics=async} makes.
// AUTO-LARGE: remark: auto: makespan 1415.9 (greedy, {{.*}}forwards first), peak activation memory 7; lower bound 897.1
// AUTO-LARGE: remark: makespan 1415.9, {{.*}}peak activation memory per rank: 7, 5, 6, 6, 6, 6, 6, 6

// A small first rank forces one micro-batch in flight (13, as with a cap of
// 1 everywhere); the last stage holds one at most anyway, so a small last
// rank costs nothing (10, as without a cap).
// EXACT-SMALL-FIRST: remark: exact: makespan 13, {{.*}}proven optimal
// EXACT-SMALL-FIRST: peak activation memory per rank: 1, 1
// EXACT-SMALL-LAST: remark: exact: makespan 10, {{.*}}proven optimal
// EXACT-SMALL-LAST: peak activation memory per rank: 3, 1

// NONE: error: auto found no schedule within the memory cap of [0.5, 2] (none exists: exhaustive search)

// The cost file's caps: rank 1 may hold 1.5; memory-cap replaces them.
// FILE: error: schedule 'gpipe' holds 2 units of activation memory on rank 1, over its memory cap of 1.5
// FILE-OVERRIDE: memory_cap = 3.000000e+00 : f64

// MANY: memory_cap = array<f64: 1.000000e+00, 2.000000e+00, {{.*}}, 6.300000e+01, 6.400000e+01>

// COUNT: error: memory-cap has 3 values, expected 1 or one per rank (2)
// ZERO: error: memory-cap must be positive and at most 1e280 (0 alone for no cap), got 0
// NEGATIVE: error: memory-cap must be positive and at most 1e280 (0 alone for no cap), got -1

module {
}
