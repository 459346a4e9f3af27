// The planner's choice of recomputing stages on the MLP example, 4 stages,
// 1f1b with 4 micro-batches (stage s holds 4 - s of them in flight).
// RUN: pp-opt %pp_src_root/examples/mlp/mlp.mlir --pp-split-microbatches=num-microbatches=4 --pp-partition-stages="num-stages=4 print-table memory-cap=16000" -o /dev/null | FileCheck %s --check-prefix=NONE
// RUN: pp-opt %pp_src_root/examples/mlp/mlp.mlir --pp-split-microbatches=num-microbatches=4 --pp-partition-stages="num-stages=4 print-table memory-cap=16000 recompute=auto" | FileCheck %s --check-prefix=AUTO
// RUN: pp-opt %pp_src_root/examples/mlp/mlp.mlir --pp-split-microbatches=num-microbatches=4 --pp-partition-stages="num-stages=4 print-table recompute=all" | FileCheck %s --check-prefix=ALL
// RUN: not pp-opt %pp_src_root/examples/mlp/mlp.mlir --pp-split-microbatches=num-microbatches=4 --pp-partition-stages="num-stages=4 memory-cap=9000" 2>&1 | FileCheck %s --check-prefix=SMALL-NONE
// RUN: not pp-opt %pp_src_root/examples/mlp/mlp.mlir --pp-split-microbatches=num-microbatches=4 --pp-partition-stages="num-stages=4 memory-cap=9000 recompute=auto" 2>&1 | FileCheck %s --check-prefix=SMALL-AUTO

// Without recomputation, ops 0-3 on rank 0 hold 2 x 6272 + 4 x 1792 =
// 19712 bytes, over the cap: the plan moves ops 2 and 3 to later ranks,
// at a bottleneck of 5.05 us.
// NONE: 0     0    0-1
// NONE: bottleneck: rank 2, 5.0496e-06 s per micro-batch
// NONE-NOT: recompute

// With auto, stage 0 recomputes instead: it keeps its 256 input bytes for
// 3 of its micro-batches and all 1792 for the one in its backward, 12544 +
// 768 + 1792 = 15104 bytes, and its backward grows by its F (0.6528 us),
// a bottleneck of 4.61 us. The other stages keep their activations. (Its
// input takes no gradient: its backward is all W.)
// AUTO: 0     0    0-3       1.254e+04  6.528e-07  0          1.203e-06  6272       1792       4         512
// AUTO: 0     cpu      4.6112e-06   15104        16000        bottleneck
// AUTO: bottleneck: rank 0, 4.6112e-06 s per micro-batch
// AUTO-NEXT: recompute: stage 0 keeps 256 of 1792 activation bytes per micro-batch, B + F
// AUTO-NOT: recompute:
// AUTO: pp.stage 0 recompute (
// AUTO: pp.stage 1 (
// AUTO: pp.stage 2 (
// AUTO: pp.stage 3 (

// ALL: 0     cpu      4.6112e-06   15104
// ALL: recompute: stage 0 keeps 256 of 1792 activation bytes per micro-batch, B + F
// ALL-NEXT: recompute: stage 1 keeps 512 of 512 activation bytes per micro-batch, B + F
// ALL-NEXT: recompute: stage 2 keeps 512 of 512 activation bytes per micro-batch, B + F
// ALL-NEXT: recompute: stage 3 keeps 576 of 2372 activation bytes per micro-batch, B + F
// ALL: pp.stage 0 recompute (
// ALL: pp.stage 1 recompute (
// ALL: pp.stage 2 recompute (
// ALL: pp.stage 3 recompute (

// The smallest cap that fits is smaller when stages may recompute.
// SMALL-NONE: error: no partition into 4 stages fits the memory caps; the smallest feasible cap is 11520 bytes per rank
// SMALL-AUTO: error: no partition into 4 stages fits the memory caps; the smallest feasible cap is 10496 bytes per rank
