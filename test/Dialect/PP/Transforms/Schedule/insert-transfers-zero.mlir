// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-ranks=2 num-microbatches=4 semantics=rendezvous" --pp-insert-transfers="num-replicas=2 zero=1" --pp-verify-schedule | FileCheck %s
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers="num-replicas=2 zero=3" 2>&1 | FileCheck %s --check-prefix=ZERO3

// ZeRO-1: each stage's reduce-scatter goes where its all-reduce would
// (after its last weight gradient, and that action's exchange group), and
// its all-gather right after its optimizer step.
// CHECK: pp.schedule @train_step_schedule "interleaved-1f1b" {{.*}} attributes {num_replicas = 2 : i64, semantics = #pp<semantics rendezvous>, zero = 1 : i64}
// CHECK-LABEL: pp.rank 0
// CHECK: pp.compute backward stage 2 mb 3
// CHECK-NEXT: pp.send gradient stage 2 mb 3 to 1
// CHECK-NEXT: pp.recv gradient stage 0 mb 2 from 1 grouped
// CHECK-NEXT: pp.reduce_scatter stage 2
// CHECK: pp.compute backward stage 0 mb 3
// CHECK-NEXT: pp.reduce_scatter stage 0
// CHECK-NEXT: pp.optimizer_step stage 0
// CHECK-NEXT: pp.all_gather stage 0
// CHECK-NEXT: pp.optimizer_step stage 2
// CHECK-NEXT: pp.all_gather stage 2
// CHECK-NEXT: }
// CHECK-LABEL: pp.rank 1
// CHECK: pp.reduce_scatter stage 3
// CHECK: pp.reduce_scatter stage 1
// CHECK-NEXT: pp.optimizer_step stage 1
// CHECK-NEXT: pp.all_gather stage 1
// CHECK-NEXT: pp.optimizer_step stage 3
// CHECK-NEXT: pp.all_gather stage 3
// CHECK-NOT: pp.all_reduce

// ZERO3: error: zero must be 0 or 1, got 3 (ZeRO-3 is not supported)
