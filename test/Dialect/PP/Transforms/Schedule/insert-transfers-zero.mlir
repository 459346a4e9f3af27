// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-ranks=2 num-microbatches=4 semantics=rendezvous" --pp-insert-transfers="num-replicas=2 zero=1" --pp-verify-schedule | FileCheck %s
// RUN: pp-opt %s --pp-schedule="schedule=interleaved-1f1b num-stages=4 num-ranks=2 num-microbatches=4 semantics=rendezvous" --pp-insert-transfers="num-replicas=2 zero=3" --pp-verify-schedule | FileCheck %s --check-prefix=ZERO3
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=2" 2>&1 | FileCheck %s --check-prefix=ZERO2
// RUN: not pp-opt %s --pp-schedule="schedule=pipedream-2bw num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=3" 2>&1 | FileCheck %s --check-prefix=TWO-VERSIONS
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=3 zero-gather=param" --pp-verify-schedule | FileCheck %s --check-prefix=PARAM
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=1 zero-gather=param" 2>&1 | FileCheck %s --check-prefix=PARAM1
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=0,3 zero-gather=param" --pp-verify-schedule | FileCheck %s --check-prefix=MIXED
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=1,3" --pp-verify-schedule | pp-opt | FileCheck %s --check-prefix=MIXED13
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=2" --pp-insert-transfers="num-replicas=2 zero=0,3,1" 2>&1 | FileCheck %s --check-prefix=COUNT

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

// ZeRO-3: the reduce-scatters stay; each stage's all-gather comes before
// its first compute on its rank, before the receive that feeds it and the
// exchange group that receive joins, and none follows the optimizer steps.
// ZERO3: pp.schedule @train_step_schedule "interleaved-1f1b" {{.*}} attributes {num_replicas = 2 : i64, semantics = #pp<semantics rendezvous>, zero = 3 : i64}
// ZERO3-LABEL: pp.rank 0
// ZERO3-NEXT: pp.all_gather stage 0
// ZERO3-NEXT: pp.compute forward stage 0 mb 0
// ZERO3: pp.compute forward stage 0 mb 1
// ZERO3-NEXT: pp.all_gather stage 2
// ZERO3-NEXT: pp.send activation stage 0 mb 1 to 1
// ZERO3-NEXT: pp.recv activation stage 2 mb 0 from 1 grouped
// ZERO3-NEXT: pp.compute forward stage 2 mb 0
// ZERO3: pp.compute backward stage 0 mb 3
// ZERO3-NEXT: pp.reduce_scatter stage 0
// ZERO3-NEXT: pp.optimizer_step stage 0
// ZERO3-NEXT: pp.optimizer_step stage 2
// ZERO3-NEXT: }
// ZERO3-LABEL: pp.rank 1
// ZERO3-NEXT: pp.all_gather stage 1
// ZERO3-NEXT: pp.recv activation stage 1 mb 0 from 0
// ZERO3-NEXT: pp.compute forward stage 1 mb 0
// ZERO3: pp.all_gather stage 3
// ZERO3-NOT: pp.all_gather
// ZERO3: pp.optimizer_step stage 1
// ZERO3-NEXT: pp.optimizer_step stage 3
// ZERO3-NEXT: }
// ZERO3-NOT: pp.all_reduce

// ZERO2: error: zero must be 0, 1 or 3, got 2
// TWO-VERSIONS: error: zero = 3 needs one weight version per step; this schedule keeps 2 (pipedream-2bw)

// ZeRO-3 gathered per param records its unit; the actions are ZeRO-3's.
// PARAM: attributes {num_replicas = 2 : i64{{.*}}, zero = 3 : i64, zero_gather = #pp<zero_gather param>}
// PARAM: pp.all_gather stage 0
// PARAM-NEXT: pp.compute forward stage 0 mb 0
// PARAM1: error: 'pp.schedule' op has no stage with zero = 3; zero-gather=param gathers the weights ZeRO-3 shards, so it needs zero = 3

// A level per stage: stage 0 (ZeRO-0) all-reduces and gathers nothing,
// stage 1 (ZeRO-3, per param) reduce-scatters and gathers before its first
// compute; only the ZeRO-3 stage gathers per param.
// MIXED: attributes {num_replicas = 2 : i64{{.*}}, zero = array<i64: 0, 3>, zero_gather = [#pp<zero_gather stage>, #pp<zero_gather param>]}
// MIXED-LABEL: pp.rank 0
// MIXED-NOT: pp.all_gather
// MIXED: pp.all_reduce stage 0
// MIXED-NEXT: pp.optimizer_step stage 0
// MIXED-NEXT: }
// MIXED-LABEL: pp.rank 1
// MIXED-NEXT: pp.all_gather stage 1
// MIXED-NEXT: pp.recv activation stage 1 mb 0 from 0
// MIXED: pp.reduce_scatter stage 1
// MIXED-NEXT: pp.optimizer_step stage 1
// MIXED-NEXT: }

// ZeRO-1 on stage 0 gathers after its update, ZeRO-3 on stage 1 before
// its computes; the levels survive a round trip.
// MIXED13: attributes {num_replicas = 2 : i64{{.*}}, zero = array<i64: 1, 3>}
// MIXED13-LABEL: pp.rank 0
// MIXED13-NOT: pp.all_gather
// MIXED13: pp.reduce_scatter stage 0
// MIXED13-NEXT: pp.optimizer_step stage 0
// MIXED13-NEXT: pp.all_gather stage 0
// MIXED13-NEXT: }
// MIXED13-LABEL: pp.rank 1
// MIXED13-NEXT: pp.all_gather stage 1
// MIXED13: pp.reduce_scatter stage 1
// MIXED13-NEXT: pp.optimizer_step stage 1
// MIXED13-NEXT: }

// COUNT: error: 'pp.schedule' op has 2 stages, but zero gives 3 levels; give one for every stage or one per stage
