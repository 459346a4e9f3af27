// Costs per (stage, micro-batch) from a pp-profile-v1 file whose stages
// list their micro-batches: pp-schedule carries them in #pp.cost's
// microbatch_* tables, and the timing model (pp-simulate), the verifier's
// memory bound, 1f1b's cap and auto use them.
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-microbatches=4 cost-file=%S/../Inputs/microbatch-times-3-stages.json" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=GPIPE
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-microbatches=3 cost-file=%S/../Inputs/microbatch-times-2-stages.json" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-microbatches=3 cost-file=%S/../Inputs/microbatch-times-2-stages.json memory-cap=2" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAPPED
// RUN: pp-opt %s --pp-schedule="schedule=auto num-microbatches=3 cost-file=%S/../Inputs/microbatch-times-2-stages.json" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-microbatches=3 cost-file=%S/../Inputs/microbatch-times-2-stages.json forward-cost=1" --pp-insert-transfers --pp-simulate 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b num-microbatches=4 cost-file=%S/../Inputs/microbatch-times-2-stages.json" 2>&1 | FileCheck %s --check-prefix=COUNT

// GPipe, micro-batch times the same on every stage, no transfer time:
// sum F + sum B + (p - 1)(max F + max B) = 7 + 12 + 2 * (3 + 5) = 35; each
// rank busy 19 and holding all four micro-batches, 1 + 3 + 2 + 1 = 7.
// GPIPE: remark: makespan 35, bubble 45.7% (idle per rank: 16, 16, 16), peak activation memory per rank: 7, 7, 7
// GPIPE: cost = #pp.cost<forward = [3.000000e+00, 3.000000e+00, 3.000000e+00], {{.*}}, microbatch_forward = {{\[}}[1.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00], [1.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00], [1.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00]], microbatch_backward_input = {{\[}}[2.000000e+00, 5.000000e+00, 3.000000e+00, 2.000000e+00],

// 1F1B on stages whose micro-batch times differ (F, B per micro-batch:
// stage 0 [1, 2, 1], [2, 4, 2]; stage 1 [2, 1, 1], [3, 2, 2]). Rank 0 runs
// F0 [0,1] F1 [1,3] B0 [6,8] F2 [8,9] B1 [9,13] B2 [13,15]; rank 1 F0 [1,3]
// B0 [3,6] F1 [6,7] B1 [7,9] F2 [9,10] B2 [10,12], busy 12 and 11. Rank 0
// holds F0 and F1, 1 + 2 = 3.
// ONEF: remark: makespan 15, bubble 23.3% (idle per rank: 3, 4), peak activation memory per rank: 3, 1

// Within a cap of 2, rank 0 cannot hold F1 (2) beside F0 (1): no warm-up.
// CAPPED: remark: makespan 23, {{.*}} peak activation memory per rank: 2, 1

// auto times the candidates with the same costs (GPipe takes 16 here) and
// reports the makespan pp-simulate finds.
// AUTO: remark: auto: makespan 15 (
// AUTO: remark: makespan 15,

// A cost option replaces its field for every micro-batch: the forward
// table is gone, the backward one stays.
// OPTION: remark: makespan
// OPTION-NOT: microbatch_forward
// OPTION: microbatch_backward_input

// COUNT: error: cost file '{{.*}}microbatch-times-2-stages.json' has costs for 3 micro-batches, but there are 4 to schedule

module {
}
