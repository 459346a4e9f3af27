// RUN: pp-opt %s --pp-insert-transfers=semantics=rendezvous --pp-verify-schedule=semantics=rendezvous | FileCheck %s
// RUN: pp-opt %s --pp-insert-transfers="num-replicas=2 semantics=rendezvous" --pp-verify-schedule=semantics=rendezvous | FileCheck %s --check-prefix=DP

// An overlapped pair stays together: the receives of both halves come
// before the forward, the sends of both after the backward. A V on two
// ranks (stages 0 and 3 on rank 0); rank 0 pairs F0(1) with B3(0) (both
// send), rank 1 F1(1) with B2(0) (both receive).
// CHECK-LABEL: pp.rank 0
// CHECK:      pp.compute forward stage 3 mb 0
// CHECK-NEXT: pp.compute forward stage 0 mb 1
// CHECK-NEXT: pp.compute backward stage 3 mb 0 overlap
// CHECK-NEXT: pp.send gradient stage 3 mb 0 to 1
// CHECK-NEXT: pp.send activation stage 0 mb 1 to 1 grouped
// CHECK-NEXT: pp.recv activation stage 3 mb 1 from 1 grouped
// CHECK-LABEL: pp.rank 1
// CHECK:      pp.compute forward stage 2 mb 0
// CHECK-NEXT: pp.send activation stage 2 mb 0 to 0
// CHECK-NEXT: pp.recv activation stage 1 mb 1 from 0 grouped
// CHECK-NEXT: pp.recv gradient stage 2 mb 0 from 0 grouped
// CHECK-NEXT: pp.compute forward stage 1 mb 1
// CHECK-NEXT: pp.compute backward stage 2 mb 0 overlap
// CHECK-NEXT: pp.compute forward stage 2 mb 1

// An all-reduce imported from PyTorch's REDUCE_GRAD stays where it is;
// stages without one get theirs.
// DP-LABEL: pp.rank 0
// DP:      pp.compute backward stage 3 mb 1
// DP-NEXT: pp.send gradient stage 3 mb 1 to 1
// DP-NEXT: pp.all_reduce stage 3
// DP:      pp.compute backward stage 0 mb 1
// DP-NEXT: pp.all_reduce stage 0
// DP-NOT:  pp.all_reduce
// DP-LABEL: pp.rank 1
// DP-COUNT-2: pp.all_reduce
// DP-NOT:  pp.all_reduce
pp.schedule @s "v" for @f microbatches 2 stage_rank [0, 1, 1, 0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 3 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 3 mb 0 overlap
    pp.compute forward stage 3 mb 1
    pp.compute backward stage 3 mb 1
    pp.all_reduce stage 3
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1
  }
  pp.rank 1 {
    pp.compute forward stage 1 mb 0
    pp.compute forward stage 2 mb 0
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 2 mb 0 overlap
    pp.compute forward stage 2 mb 1
    pp.compute backward stage 1 mb 0
    pp.compute backward stage 2 mb 1
    pp.compute backward stage 1 mb 1
  }
}
