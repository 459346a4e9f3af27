// `greedy`: the list schedule behind auto's greedy candidates. Backwards
// split; each rank takes the action that can start first (B, then F of
// later stages, then W on ties); a rank starts a micro-batch only while its
// memory limit leaves room for it (the cap, else one micro-batch per stage);
// W's run in time the rank would otherwise idle. (Transfers come between
// the compute actions, so the checks below are in order but not on adjacent lines.)
// RUN: pp-opt %s --pp-schedule="schedule=greedy num-stages=2 num-microbatches=2" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=FREE
// RUN: pp-opt %s --pp-schedule="schedule=greedy num-stages=2 num-microbatches=2 memory-cap=1" --pp-insert-transfers --pp-verify-schedule --pp-simulate 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: pp-opt %s --pp-schedule="schedule=greedy num-stages=4 num-ranks=2 num-microbatches=4 memory-cap=2" --pp-insert-transfers --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s --check-prefix=V
// RUN: not pp-opt %s --pp-schedule="schedule=greedy num-stages=2 num-microbatches=2 memory-cap=0.5" 2>&1 | FileCheck %s --check-prefix=NONE

// Unit costs, a limit of 2 per rank. By hand: rank 0 runs F0 0-1, F1 1-2;
// rank 1 F0 1-2, B0 2-3 (before F1: B first on ties), F1 3-4, B1 4-5.
// Rank 0's B0 runs 3-4; its B1 waits for rank 1's B1 (until 5), so its W0
// fills 4-5; B1 5-6, W1 6-7. Rank 1's W's close at 5-7: makespan 7, the
// bound (6 units of work after rank 1's first forward arrives at 1).
// FREE: remark: makespan 7, bubble 14.3% (idle per rank: 1, 1), peak activation memory per rank: 2, 1
// FREE: pp.rank 0 {
// FREE: pp.compute forward stage 0 mb 0
// FREE: pp.compute forward stage 0 mb 1
// FREE: pp.compute backward_input stage 0 mb 0
// FREE: pp.compute backward_weight stage 0 mb 0
// FREE: pp.compute backward_input stage 0 mb 1
// FREE: pp.compute backward_weight stage 0 mb 1
// FREE: pp.rank 1 {
// FREE: pp.compute forward stage 1 mb 0
// FREE: pp.compute backward_input stage 1 mb 0
// FREE: pp.compute forward stage 1 mb 1
// FREE: pp.compute backward_input stage 1 mb 1
// FREE: pp.compute backward_weight stage 1 mb 0
// FREE: pp.compute backward_weight stage 1 mb 1

// A cap of one micro-batch: rank 0 waits for its B0 (3-4) before F1 (4-5,
// ahead of W0 on the tie); rank 1 runs W0 3-4 while F1 is on its way, F1
// 5-6, B1 6-7; rank 0's W0 fills 5-6, then B1 7-8, W1 8-9.
// CAP: remark: makespan 9, bubble 33.3% (idle per rank: 3, 3), peak activation memory per rank: 1, 1
// CAP: pp.rank 0 {
// CAP: pp.compute forward stage 0 mb 0
// CAP: pp.compute backward_input stage 0 mb 0
// CAP: pp.compute forward stage 0 mb 1
// CAP: pp.compute backward_weight stage 0 mb 0
// CAP: pp.rank 1 {
// CAP: pp.compute forward stage 1 mb 0
// CAP: pp.compute backward_input stage 1 mb 0
// CAP: pp.compute backward_weight stage 1 mb 0
// CAP: pp.compute forward stage 1 mb 1

// Two stages per rank under a cap of 2: rank 0 holds stages 0 and 3 (the V
// placement) or 0 and 2 (looped); it starts a micro-batch only with room
// for both of its stages, so its first stage cannot fill its memory and
// starve the second. The verifier checks the cap.
// V: remark: makespan 33, {{.*}}peak activation memory per rank: 2, 2

// NONE: error: greedy: the memory cap leaves a rank unable to run a forward
module {
}
