// The example schedule plugin (examples/schedule-plugin): pp-opt loads it,
// pp-schedule then knows 1f1b-eager, and the schedule verifies, simulates
// and hides transfer time 1F1B exposes.
// RUN: pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --pp-schedule="schedule=1f1b-eager num-stages=3 num-microbatches=4" | FileCheck %s --check-prefix=LIST
// RUN: pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --pp-schedule="schedule=1f1b-eager num-stages=2 num-microbatches=4 comm-cost=0.5" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=EAGER-P2
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=2 num-microbatches=4 comm-cost=0.5" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=1F1B-P2
// RUN: pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --pp-schedule="schedule=1f1b-eager num-stages=4 num-microbatches=8 comm-cost=0.5" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=EAGER-P4
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8 comm-cost=0.5" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=1F1B-P4
// RUN: pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --pp-schedule="schedule=1f1b-eager num-stages=4 num-microbatches=8 split-backward=true" --pp-insert-transfers --pp-verify-schedule -o /dev/null
// RUN: not pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --pp-schedule="schedule=1f1b-eager num-stages=4 num-ranks=2" 2>&1 | FileCheck %s --check-prefix=REJECT
// RUN: not pp-opt %s --pp-schedule="schedule=1f1b-eager num-stages=2" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --pp-schedule="schedule=1f1b-lazy num-stages=2" 2>&1 | FileCheck %s --check-prefix=LISTED
// RUN: pp-opt %s --load-pass-plugin=%pp_libs/PPSchedulePlugin.so --load-pass-plugin=%pp_libs/PPSchedulePlugin.so -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not pp-opt %s --load-pass-plugin=%t.absent.so --pp-schedule="schedule=1f1b-eager num-stages=2" 2>&1 | FileCheck %s --check-prefix=BAD-PATH

// One more warm-up forward than 1F1B on every rank but the last.
// LIST-LABEL: pp.schedule @train_step_schedule "1f1b-eager" for @train_step microbatches 4 stage_rank [0, 1, 2] {
// LIST-NEXT:    pp.rank 0 {
// LIST-NEXT:      pp.compute forward stage 0 mb 0
// LIST-NEXT:      pp.compute forward stage 0 mb 1
// LIST-NEXT:      pp.compute forward stage 0 mb 2
// LIST-NEXT:      pp.compute forward stage 0 mb 3
// LIST-NEXT:      pp.compute backward stage 0 mb 0
// LIST-NEXT:      pp.compute backward stage 0 mb 1
// LIST-NEXT:      pp.compute backward stage 0 mb 2
// LIST-NEXT:      pp.compute backward stage 0 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 1 {
// LIST-NEXT:      pp.compute forward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 1
// LIST-NEXT:      pp.compute forward stage 1 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 0
// LIST-NEXT:      pp.compute forward stage 1 mb 3
// LIST-NEXT:      pp.compute backward stage 1 mb 1
// LIST-NEXT:      pp.compute backward stage 1 mb 2
// LIST-NEXT:      pp.compute backward stage 1 mb 3
// LIST-NEXT:    }
// LIST-NEXT:    pp.rank 2 {
// LIST-NEXT:      pp.compute forward stage 2 mb 0
// LIST-NEXT:      pp.compute backward stage 2 mb 0
// LIST-NEXT:      pp.compute forward stage 2 mb 1
// LIST-NEXT:      pp.compute backward stage 2 mb 1
// LIST-NEXT:      pp.compute forward stage 2 mb 2
// LIST-NEXT:      pp.compute backward stage 2 mb 2
// LIST-NEXT:      pp.compute forward stage 2 mb 3
// LIST-NEXT:      pp.compute backward stage 2 mb 3
// LIST-NEXT:    }

// Unit costs (F 1, fused backward 2), transfers 0.5, p = 2, m = 4. Under
// 1F1B rank 0 sends F2's activation only after B0 (at 7, arriving at 7.5
// + 1 = 8.5), so rank 1 idles after B1 and rank 0 ends at 17. 1f1b-eager
// runs F2 before B0, rank 1 has it at 3.5, and every later step moves up:
// 16. With p = 4, m = 8: 37 against 41, at one more micro-batch of
// activations on every rank but the last.
// 1F1B-P2: remark: makespan 17,
// EAGER-P2: remark: makespan 16,
// 1F1B-P4: remark: makespan 41, bubble 41.5% (idle per rank: 17, 17, 17, 17), peak activation memory per rank: 4, 3, 2, 1
// EAGER-P4: remark: makespan 37, bubble 35.1% (idle per rank: 13, 13, 13, 13), peak activation memory per rank: 5, 4, 3, 1

// REJECT: error: schedule '1f1b-eager' runs one stage per rank, but there are 4 stages on 2 ranks
// UNKNOWN: for the --schedule option: unknown schedule '1f1b-eager'
// LISTED: for the --schedule option: unknown schedule '1f1b-lazy'; expected one of: {{.*}}, auto, 1f1b-eager
// TWICE: PPSchedulePlugin: a schedule named '1f1b-eager' is already registered
// BAD-PATH: Failed to load passes from '{{.*}}absent.so'. Request ignored.
// BAD-PATH-NOT: Stack dump

module {
}
