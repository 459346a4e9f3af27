// RUN: pp-opt %s --pp-simulate 2>&1 | FileCheck %s --check-prefix=FREE
// RUN: pp-opt %s --pp-simulate="all-reduce-cost=1" 2>&1 | FileCheck %s --check-prefix=HIDDEN
// RUN: pp-opt %s --pp-simulate="all-reduce-cost=3,1" 2>&1 | FileCheck %s --check-prefix=PERSTAGE
// RUN: not pp-opt %s --pp-simulate="all-reduce-cost=1,1,1" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not pp-opt %s --pp-simulate="all-reduce-cost=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not pp-opt %s --pp-simulate="all-reduce-cost=1,nan" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not pp-opt %s --pp-simulate="all-reduce-cost=1e300" 2>&1 | FileCheck %s --check-prefix=HUGE

// Two stages on one rank, one micro-batch, unit costs (F = 1, BW = 2):
// F0 [0,1], F1 [1,2], BW1 [2,4], BW0 [4,6]. Stage 1's all-reduce starts at 4
// and runs behind BW0; stage 0's starts at 6 with nothing left to hide it,
// and the optimizer steps wait for both.
// FREE: remark: makespan 6, bubble 0.0% (idle per rank: 0)
// Cost 1: stage 1's reduction [4,5] is hidden, stage 0's [6,7] is exposed.
// HIDDEN: remark: makespan 7, bubble 14.3% (idle per rank: 1)
// Stage 0 costs 3, stage 1 costs 1: [6,9] exposed.
// PERSTAGE: remark: makespan 9, bubble 33.3% (idle per rank: 3)
// COUNT: error: all-reduce-cost has 3 values but the schedule has 2 stages
// NEGATIVE: error: all-reduce-cost must be a finite number between 0 and 1e280, got -1
// NAN: error: all-reduce-cost must be a finite number between 0 and 1e280, got nan
// HUGE: error: all-reduce-cost must be a finite number between 0 and 1e280, got 1e+300
pp.schedule @s "gpipe" for @f microbatches 1 stage_rank [0, 0]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.all_reduce stage 1
    pp.compute backward stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
    pp.optimizer_step stage 1
  }
}
