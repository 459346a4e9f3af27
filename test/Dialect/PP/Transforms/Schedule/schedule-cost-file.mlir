// pp-schedule reads its costs and memory cap from a pp-profile-v1 file, the
// cost options override the file field by field, and pp-simulate and
// pp-verify-schedule use what the schedule carries.
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-microbatches=8 cost-file=%S/../Inputs/uniform-4-stages.json" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-microbatches=8 cost-file=%S/../Inputs/uniform-4-stages.json forward-cost=2 comm-cost=0 memory-cap=0" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=OVERRIDE
// RUN: pp-opt %pp_src_root/examples/mlp/mlp.mlir --pp-split-microbatches=num-microbatches=8 --pp-partition-stages=num-stages=4 --pp-derive-backward --pp-schedule="schedule=zb-h1 cost-file=%pp_src_root/examples/profiles/mlp-4-stages.json" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXAMPLE
// RUN: not pp-opt %s --pp-schedule="schedule=gpipe num-microbatches=12 cost-file=%S/../Inputs/uniform-4-stages.json" --pp-insert-transfers --pp-verify-schedule 2>&1 | FileCheck %s --check-prefix=CAP
// Measured optimizer steps and a per-step set-up: auto times the programs
// with them (1f1b's simulates to 37.6, zb-h1's to 32.5), and what it
// reports is what pp-simulate finds in the program it emits.
// RUN: pp-opt %s --pp-schedule="schedule=auto num-microbatches=8 cost-file=%S/../Inputs/measured-optimizer-4-stages.json" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// OPTIMIZER: remark: auto: makespan 30.05 ms ({{.*}}), peak activation memory {{.*}}; proven optimal
// OPTIMIZER: remark: makespan 30.05,
// A profile measured with other micro-batches (pprt --profile's meta) is
// refused, in pp-schedule and in the stage planner pp-compile calibrates.
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=4 cost-file=%S/../Inputs/measured-8-microbatches.json" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=8 cost-file=%S/../Inputs/measured-8-microbatches.json" -o /dev/null
// RUN: not pp-compile %pp_src_root/examples/mlp/mlp.mlir --stages 2 --microbatches 4 --cost-file %S/../Inputs/measured-8-microbatches.json --emit=schedule -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLANNER
// SHAPE: error: cost file '{{.*}}measured-8-microbatches.json' was measured on 2 stages and 8 micro-batches; this pipeline has 2 stages and 4 micro-batches: profile the program this compiles
// PLANNER: mlp.mlir:{{[0-9]+}}:1: error: cost file '{{.*}}' was measured on 2 stages and 8 micro-batches; this pipeline has 2 stages and 4 micro-batches

// GPipe with uniform costs: (m + p - 1)(F + B + W) plus one transfer per
// hop on the way down and up, 11 * 3 + 2 * 3 * 0.5 = 36; every rank busy
// 8 * 3 = 24, holding all 8 micro-batches' activations of 2 at its peak.
// The four stages come from the file.
// CHECK: remark: makespan 36, bubble 33.3% (idle per rank: 12, 12, 12, 12), peak activation memory per rank: 16, 16, 16, 16
// CHECK: pp.schedule @train_step_schedule "gpipe" for @train_step microbatches 8 stage_rank [0, 1, 2, 3] attributes {cost = #pp.cost<forward = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], backward_input = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], comm = 5.000000e-01 : f64, activation = [2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00], stash = [5.000000e-01, 5.000000e-01, 5.000000e-01, 5.000000e-01]>, memory_cap = 2.000000e+01 : f64

// F = 2 for every stage and free transfers: 11 * (2 + 2) = 44; no cap.
// OVERRIDE: remark: makespan 44,
// OVERRIDE: pp.schedule @train_step_schedule "gpipe" {{.*}}attributes {cost = #pp.cost<forward = [2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00], {{.*}} comm = 0.000000e+00 : f64, activation = [2.000000e+00, {{.*}}]>, pp.idle
// OVERRIDE-NOT: memory_cap

// The example profile of docs/CostProfile.md, in ms and bytes, within its
// cap of 2e6 bytes.
// EXAMPLE: remark: makespan 33.35, bubble 26.2% (idle per rank: 14.95, 8.55, 8.55, 2.95), peak activation memory per rank: 1.6e+06, 1.35e+06, 1.1e+06, 1.12e+06

// 12 micro-batches of 2 exceed the file's cap of 20: pp-schedule rejects
// the GPipe order, which cannot adapt to a cap.
// CAP: error: schedule 'gpipe' holds 24 units of activation memory on rank 0, over its memory cap of 20

module {
}
