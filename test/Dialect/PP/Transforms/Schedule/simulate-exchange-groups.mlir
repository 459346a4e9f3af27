// An exchange group's transfers all start when its rank reaches it (NCCL
// group calls). 1F1B on two ranks with each receive right before its
// consumer deadlocks under rendezvous (simulate-rendezvous.mlir); posting
// rank 0's second activation send with its first gradient receive, and
// rank 1's first gradient send with its second activation receive, lets
// both pairs complete at t = 4 when rank 1 reaches its group: the same
// makespan as with sends that never block.
// RUN: pp-opt %s --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=rendezvous -o /dev/null 2>&1 | FileCheck %s
// RUN: pp-opt %s --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s

// CHECK: remark: makespan 9, bubble 33.3% (idle per rank: 3, 3), peak activation memory per rank: 2, 1
pp.schedule @s "1f1b" for @f microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    pp.recv gradient stage 0 mb 0 from 1 grouped
    pp.compute backward stage 0 mb 0
    pp.recv gradient stage 0 mb 1 from 1
    pp.compute backward stage 0 mb 1
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.recv activation stage 1 mb 1 from 0 grouped
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 1
    pp.send gradient stage 1 mb 1 to 0
  }
}
