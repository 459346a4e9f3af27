// RUN: not pp-opt %s --pp-verify-schedule -o /dev/null 2>&1 | FileCheck %s
// RUN: pp-opt %s --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIM

// A schedule that claims the most micro-batches pp accepts (2^20) but holds
// four actions: the verifier and the simulator index actions in a flat
// table only when the schedule is about as large as its key space, so this
// takes no memory to speak of. The send and receive of micro-batch
// 2^20 - 1 still match.

// CHECK: error: missing forward of stage 0 micro-batch 0
// CHECK: error: missing backward of stage 0 micro-batch 0
// CHECK: note: further missing actions are not reported
// CHECK-NOT: pp.recv
// SIM: remark: makespan 2, bubble 50.0% (idle per rank: 1, 1), peak activation memory per rank: 1, 1
pp.schedule @s "gpipe" for @f microbatches 1048576 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 1048575
    pp.send activation stage 0 mb 1048575 to 1
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 1048575 from 0
    pp.compute forward stage 1 mb 1048575
  }
}
