// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-ranks=2 num-microbatches=4 semantics=rendezvous" --pp-insert-transfers="num-replicas=2" --pp-verify-schedule | FileCheck %s
// RUN: pp-opt %s --pp-schedule="schedule=zb-h1 num-stages=2 num-microbatches=3 semantics=rendezvous" --pp-insert-transfers="num-replicas=4" --pp-verify-schedule | FileCheck %s --check-prefix=SPLIT
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=ONE
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers="num-replicas=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers="num-replicas=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2 semantics=rendezvous" --pp-insert-transfers="semantics=eventually" 2>&1 | FileCheck %s --check-prefix=SEMANTICS

// Interleaved 1F1B, stages 0 and 2 on rank 0: stage 2's gradients are
// complete first, so its all-reduce goes right after its last backward (and
// the exchange group after it, with that backward's gradient send) and
// overlaps with stage 0's remaining backwards; stage 0's follows its own
// last backward.
// CHECK: pp.schedule @train_step_schedule "interleaved-1f1b" {{.*}} attributes {num_replicas = 2 : i64, semantics = #pp<semantics rendezvous>}
// CHECK-LABEL: pp.rank 0
// CHECK: pp.compute backward stage 2 mb 3
// CHECK-NEXT: pp.send gradient stage 2 mb 3 to 1
// CHECK-NEXT: pp.recv gradient stage 0 mb 2 from 1 grouped
// CHECK-NEXT: pp.all_reduce stage 2
// CHECK-NEXT: pp.compute backward stage 0 mb 2
// CHECK-NEXT: pp.recv gradient stage 0 mb 3 from 1
// CHECK-NEXT: pp.compute backward stage 0 mb 3
// CHECK-NEXT: pp.all_reduce stage 0
// CHECK-NEXT: pp.optimizer_step stage 0
// CHECK-NEXT: pp.optimizer_step stage 2
// CHECK-NEXT: }
// CHECK-LABEL: pp.rank 1
// CHECK: pp.compute backward stage 3 mb 3
// CHECK-NEXT: pp.send gradient stage 3 mb 3 to 0
// CHECK-NEXT: pp.recv gradient stage 1 mb 2 from 0 grouped
// CHECK-NEXT: pp.all_reduce stage 3
// CHECK: pp.compute backward stage 1 mb 3
// CHECK-NEXT: pp.send gradient stage 1 mb 3 to 0
// CHECK-NEXT: pp.all_reduce stage 1
// CHECK-NEXT: pp.optimizer_step stage 1
// CHECK-NEXT: pp.optimizer_step stage 3
// CHECK-NEXT: }
// CHECK-NOT: pp.all_reduce

// Split backward: the last weight gradient is a W, which sends nothing.
// SPLIT: attributes {num_replicas = 4 : i64, semantics = #pp<semantics rendezvous>}
// SPLIT-LABEL: pp.rank 0
// SPLIT-NOT: pp.all_reduce
// SPLIT: pp.compute backward_weight stage 0 mb 2
// SPLIT-NEXT: pp.all_reduce stage 0
// SPLIT-NEXT: pp.optimizer_step stage 0
// SPLIT-LABEL: pp.rank 1
// SPLIT-NOT: pp.all_reduce
// SPLIT: pp.compute backward_weight stage 1 mb 2
// SPLIT-NEXT: pp.all_reduce stage 1
// SPLIT-NOT: pp.all_reduce

// One replica: nothing to reduce.
// ONE-NOT: num_replicas
// ONE-NOT: pp.all_reduce

// ZERO: error: num-replicas must be between 1 and 65536, got 0
// HUGE: error: num-replicas must be between 1 and 65536, got 9223372036854775807
// SEMANTICS: for the --semantics option: Cannot find option named 'eventually'!
