// A schedule's costs and memory cap travel in the JSON `cost` block (and an
// added `memory_cap` field) and satisfy the validator.
// REQUIRES: python3
// RUN: pp-translate --pp-schedule-to-json %s | FileCheck %s
// RUN: pp-translate --pp-schedule-to-json %s | %python %S/validate_schedule_json.py - | FileCheck %s --check-prefix=VALID

// CHECK:      "stage_rank": [0,1],
// CHECK-NEXT: "cost": {
// CHECK-NEXT:   "F": [1,3],
// CHECK-NEXT:   "B": [0.5,2],
// CHECK-NEXT:   "W": [1,1],
// CHECK-NEXT:   "comm": 0.5,
// CHECK-NEXT:   "activation": [2,4],
// CHECK-NEXT:   "weight_grad_stash": [1,1]
// CHECK-NEXT: },
// CHECK-NEXT: "memory_cap": 6,
// VALID: valid pp-schedule-v1 schedule "custom": 2 ranks, 2 stages, 1 micro-batches, 10 actions

#cost = #pp.cost<forward = [1.0, 3.0], backward_input = [0.5, 2.0],
                 backward_weight = [1.0, 1.0], comm = 5.000000e-01 : f64,
                 activation = [2.0, 4.0], stash = [1.0, 1.0]>
pp.schedule @costs "custom" for @f microbatches 1 stage_rank [0, 1] attributes {cost = #cost, memory_cap = 6.0 : f64} {
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
