// pp-plan-microbatches cuts a step's samples, longest first, into the
// micro-batches whose pipeline time (p - 1) x slowest + sum is least within
// the memory cap, and pp-schedule schedules them with their costs.
// RUN: pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt num-stages=4 per-microbatch=200,400,0 per-token=1,2,0 memory-cap=2000" --pp-schedule="schedule=gpipe" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s
// RUN: pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt num-stages=4 per-microbatch=200,400,0 per-token=1,2,0 memory-cap=2000" --pp-schedule="schedule=auto" --pp-insert-transfers --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt step=1 num-stages=2 per-token=1,1,1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALONE
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt step=2 num-stages=2 per-token=1,1,1" 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt num-stages=2 per-token=1,1,1 memory-cap=800" 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt num-stages=2 per-token=1,1" 2>&1 | FileCheck %s --check-prefix=TRIPLE
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%s num-stages=2" 2>&1 | FileCheck %s --check-prefix=TOKEN
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%S/absent.txt num-stages=2" 2>&1 | FileCheck %s --check-prefix=ABSENT
// RUN: pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt num-stages=4 per-microbatch=200,400,0 per-token=1,2,0 memory-cap=2000 microbatch-multiple=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MULTIPLE
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt step=1 num-stages=2 per-token=1,1,1 microbatch-multiple=4" 2>&1 | FileCheck %s --check-prefix=NOCUT
// RUN: not pp-opt %s --pp-plan-microbatches="lengths-file=%S/../Inputs/sample-lengths.txt num-stages=2 per-token=1,1,1 microbatch-multiple=0" 2>&1 | FileCheck %s --check-prefix=MULTIPLE0

// Sorted: 900, 880, 310, 300, 50, 45, 40, 35 (samples 0, 4, 2, 5, 6, 7, 1,
// 3). A micro-batch of r samples of length L takes 600 + 3 r L (F 200 +
// r L, B 400 + 2 r L) and holds r L, at most 2000: the two longest alone,
// then two and four, 3 x 3300 + (3300 + 3240 + 2460 + 1200) = 20100.
// Padding all to 900 in micro-batches of two (all the cap holds): four of
// 6000, 3 x 6000 + 24000 = 42000.
// CHECK: remark: step 0: 8 samples in 4 micro-batches of 1, 1, 2, 4 samples, padded to 900, 880, 310, 50 tokens; pipeline time (p - 1) x 3300 + 10200 = 20100, against 42000 padding every sample to the longest in micro-batches of 2
// GPipe's makespan is the planner's objective, sum F + sum B + (p - 1)(max F
// + max B), each rank holding 900 + 880 + 620 + 200.
// CHECK: remark: makespan 20100, {{.*}} peak activation memory per rank: 2600, 2600, 2600, 2600
// CHECK: module attributes {pp.microbatch_begin = array<i64: 0, 1, 2, 4>, pp.microbatch_cost = #pp.cost<forward = [1.100000e+03, {{.*}}, microbatch_forward = {{\[}}[1.100000e+03, 1.080000e+03, 8.200000e+02, 4.000000e+02], {{.*}}, pp.microbatch_length = array<i64: 900, 880, 310, 50>, pp.microbatch_samples = array<i64: 0, 4, 2, 5, 6, 7, 1, 3>}
// CHECK: pp.schedule @train_step_schedule "gpipe" for @train_step microbatches 4

// auto's reported makespan is what pp-simulate finds, at most GPipe's.
// AUTO: remark: auto: makespan [[M:[0-9.e+]+]] (
// AUTO: remark: makespan [[M]],

// Without a per-micro-batch cost every sample is best alone.
// ALONE: remark: step 1: 3 samples in 3 micro-batches of 1, 1, 1 samples, padded to 130, 120, 110 tokens

// A multiple of 3 micro-batches (interleaved-1f1b on 3 ranks): the best
// cut of 4 (above) is not one; the best of 3 takes 3 x 6000 + 11160 =
// 29160 ({900, 880}, {310, 300, 50, 45}, {40, 35}), so 6 micro-batches.
// MULTIPLE: remark: step 0: 8 samples in 6 micro-batches of 1, 1, 1, 1, 2, 2 samples, padded to 900, 880, 310, 300, 50, 40 tokens; pipeline time (p - 1) x 3300 + 11310 = 21210
// NOCUT: error: step 1: no cut of 3 samples into a multiple of 4 micro-batches{{$}}
// MULTIPLE0: error: microbatch-multiple must be in [1, 65536], got 0

// STEP: error: lengths file '{{.*}}sample-lengths.txt' has 2 steps; step 2 is not among them
// CAP: error: step 0: sample 0 of length 900 needs 900 of activation memory alone, over the cap of 800
// TRIPLE: error: per-token needs 3 values (F,B,W), got 2
// TOKEN: error: lengths file '{{.*}}plan-microbatches.mlir' line 1: '//' is not a positive integer
// ABSENT: error: cannot read lengths file '{{.*}}absent.txt'

module {
}
