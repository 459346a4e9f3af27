// RUN: pp-opt %s -split-input-file --pp-simulate 2>&1 | FileCheck %s
// RUN: pp-opt %s -split-input-file --pp-simulate -o - 2>/dev/null | FileCheck %s --check-prefix=ATTR

// 1F1B, 2 stages x 3 micro-batches, unit costs (F = B = W = 1, BW = 2):
// (m + p - 1)(F + B + W) = 12, each rank idles (p - 1)(F + B + W) = 3, rank r
// holds at most p - r micro-batches of activations.
// CHECK: remark: makespan 12, bubble 25.0% (idle per rank: 3, 3), peak activation memory per rank: 2, 1
// ATTR: pp.schedule @unit {{.*}}attributes {pp.idle = array<f64: 3.000000e+00, 3.000000e+00>, pp.makespan = 1.200000e+01 : f64, pp.peak_memory = array<f64: 2.000000e+00, 1.000000e+00>}
pp.schedule @unit "1f1b" for @f microbatches 3 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.compute forward stage 0 mb 2
    pp.send activation stage 0 mb 2 to 1
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
    pp.recv gradient stage 0 mb 2 from 1
    pp.compute backward stage 0 mb 2
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.recv activation stage 1 mb 1 from 0
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
    pp.recv activation stage 1 mb 2 from 0
    pp.compute forward stage 1 mb 2
    pp.compute backward stage 1 mb 2
    pp.send gradient stage 1 mb 2 to 0
  }
}

// -----

// Heterogeneous costs and a transfer time, one micro-batch, split backward:
// F0 [0,1], arrives at 1.5, F1 [1.5,4.5], B1 [4.5,6.5], W1 [6.5,7.5];
// the gradient leaves at 6.5, arrives at 7, B0 [7,7.5], W0 [7.5,8.5].
// Rank 0 holds 2 after F0, keeps 1 for W after B0; rank 1 holds 4.
// CHECK: remark: makespan 8.5, bubble 50.0% (idle per rank: 6, 2.5), peak activation memory per rank: 2, 4
#cost = #pp.cost<forward = [1.0, 3.0], backward_input = [0.5, 2.0],
                 backward_weight = [1.0, 1.0], comm = 5.000000e-01 : f64,
                 activation = [2.0, 4.0], stash = [1.0, 1.0]>
pp.schedule @costs "custom" for @f microbatches 1 stage_rank [0, 1] attributes {cost = #cost} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward_input stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward_weight stage 1 mb 0
  }
}

// -----

// The same step with measured optimizer steps (0.5 and 2) and a per-step
// set-up of 0.25 on every rank: F0 [0.25,1.25], F1 [1.75,4.75], B1
// [4.75,6.75], W1 [6.75,7.75], rank 1's optimizer step [7.75,9.75]; B0
// [7.25,7.75], W0 [7.75,8.75], rank 0's [8.75,9.25]. Busy 3.25 and 8.25.
// CHECK: remark: makespan 9.75, bubble 41.0% (idle per rank: 6.5, 1.5), peak activation memory per rank: 2, 4
// ATTR: optimizer = [5.000000e-01, 2.000000e+00], step_overhead = 2.500000e-01 : f64
#cost = #pp.cost<forward = [1.0, 3.0], backward_input = [0.5, 2.0],
                 backward_weight = [1.0, 1.0], comm = 5.000000e-01 : f64,
                 activation = [2.0, 4.0], stash = [1.0, 1.0],
                 optimizer = [0.5, 2.0], step_overhead = 0.25>
pp.schedule @optimizer "custom" for @f microbatches 1 stage_rank [0, 1] attributes {cost = #cost} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward_input stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward_weight stage 1 mb 0
    pp.optimizer_step stage 1
  }
}
