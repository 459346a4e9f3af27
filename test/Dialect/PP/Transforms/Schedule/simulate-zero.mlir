// RUN: pp-opt %s --pp-simulate="all-reduce-cost=2" 2>&1 | FileCheck %s

// ZeRO-1's reduce-scatter and all-gather each take half the all-reduce's
// cost, in the background. Two stages on one rank, unit costs (F = 1,
// BW = 2): F0 [0,1], F1 [1,2], BW1 [2,4], BW0 [4,6]. Stage 1's
// reduce-scatter [4,5] hides behind BW0, stage 0's [6,7] is exposed; the
// optimizer steps take no time, so stage 0's all-gather runs [7,8] and
// ends the step (stage 1's, [7,8] too).
// CHECK: remark: makespan 8, bubble 25.0% (idle per rank: 2)
pp.schedule @s "gpipe" for @f microbatches 1 stage_rank [0, 0]
    attributes {num_replicas = 2 : i64, zero = 1 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.reduce_scatter stage 1
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.all_gather stage 0
    pp.optimizer_step stage 1
    pp.all_gather stage 1
  }
}

// ZeRO-3's all-gather (half the all-reduce's cost, in the background) comes
// before its stage's first compute, which waits for it: gather 0 [0,1],
// F0 [1,2], gather 1 [2,3], F1 [3,4], BW1 [4,6], BW0 [6,8], stage 0's
// reduce-scatter [8,9], and the optimizer steps at 9.
// CHECK: remark: makespan 9, bubble 33.3% (idle per rank: 3)
pp.schedule @z3 "gpipe" for @f microbatches 1 stage_rank [0, 0]
    attributes {num_replicas = 2 : i64, zero = 3 : i64} {
  pp.rank 0 {
    pp.all_gather stage 0
    pp.compute forward stage 0 mb 0
    pp.all_gather stage 1
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.reduce_scatter stage 1
    pp.compute backward stage 0 mb 0
    pp.reduce_scatter stage 0
    pp.optimizer_step stage 0
    pp.optimizer_step stage 1
  }
}
