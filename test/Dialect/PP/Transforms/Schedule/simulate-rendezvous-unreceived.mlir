// With rendezvous transfers a send whose receiver finishes without reaching
// a receive waits forever: pp-simulate reports the deadlock at the send
// (the wait chain ends at the finished rank).
// RUN: not pp-opt %s --pp-simulate="semantics=rendezvous" 2>&1 | FileCheck %s

// CHECK: error: deadlock: rank 0 waits at this 'pp.send' for rank 1
// CHECK-NEXT: pp.send activation stage 0 mb 0 to 1
// CHECK-NOT: note: rank
// CHECK: note: while simulating this schedule with rendezvous transfers
pp.schedule @unreceived "manual" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.compute backward stage 0 mb 0
  }
  pp.rank 1 {
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
  }
}
