// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=4 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=W1
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=8 num-ranks=2 num-microbatches=4" | FileCheck %s --check-prefix=W2
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=4 num-ranks=2 num-microbatches=4 split-backward=true" | FileCheck %s --check-prefix=SPLIT
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=4 num-ranks=2 num-microbatches=4 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=TIME
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=8 num-ranks=4 num-microbatches=8 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-W1-M8
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=8 num-ranks=4 num-microbatches=16 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-W1-M16
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=16 num-ranks=4 num-microbatches=8 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-W2-M8
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=16 num-ranks=8 num-microbatches=16 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P8-W1-M16
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=12 num-ranks=2 num-microbatches=5 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P2-W3-M5
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=8 num-ranks=4 num-microbatches=1 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=P4-W1-M1
// RUN: pp-opt %s --pp-schedule="schedule=hanayo num-stages=8 num-ranks=4 num-microbatches=8 memory-cap=8 semantics=rendezvous" --pp-insert-transfers --pp-verify-schedule --pp-verify-schedule=semantics=rendezvous --pp-simulate=semantics=async -o /dev/null 2>&1 | FileCheck %s --check-prefix=CAP

// Wave placement, p = 2: W = 1 puts stages 0 and 3 on rank 0, 1 and 2 on
// rank 1 (the V); W = 2 adds stages 4 to 7 as a second V. The ranks run in
// lock step with F = 1 and BW = 2: an idle rank runs a ready forward, oldest
// micro-batch first, while it holds fewer than (2W + 1)p - 1 activations
// (5 for W = 1, 9 for W = 2) and, for a micro-batch's first chunk, has room
// for all 2W of its chunks; else its oldest ready backward. So rank 0 holds
// back F0.2 at t = 2 (2 held and 2 owed stage-3 forwards leave room for 1
// of its 2 chunks), runs BW3.0 at t = 4, and rank 1, full at t = 10 (5
// held), turns to BW1.0.

// W1-LABEL:  pp.schedule @train_step_schedule "hanayo" for @train_step microbatches 4 stage_rank [0, 1, 1, 0] {
// W1-NEXT:    pp.rank 0 {
// W1-NEXT:      pp.compute forward stage 0 mb 0
// W1-NEXT:      pp.compute forward stage 0 mb 1
// W1-NEXT:      pp.compute forward stage 3 mb 0
// W1-NEXT:      pp.compute backward stage 3 mb 0
// W1-NEXT:      pp.compute forward stage 3 mb 1
// W1-NEXT:      pp.compute forward stage 0 mb 2
// W1-NEXT:      pp.compute backward stage 3 mb 1
// W1-NEXT:      pp.compute forward stage 3 mb 2
// W1-NEXT:      pp.compute backward stage 3 mb 2
// W1-NEXT:      pp.compute forward stage 0 mb 3
// W1-NEXT:      pp.compute backward stage 0 mb 0
// W1-NEXT:      pp.compute forward stage 3 mb 3
// W1-NEXT:      pp.compute backward stage 3 mb 3
// W1-NEXT:      pp.compute backward stage 0 mb 1
// W1-NEXT:      pp.compute backward stage 0 mb 2
// W1-NEXT:      pp.compute backward stage 0 mb 3
// W1-NEXT:    }
// W1-NEXT:    pp.rank 1 {
// W1-NEXT:      pp.compute forward stage 1 mb 0
// W1-NEXT:      pp.compute forward stage 2 mb 0
// W1-NEXT:      pp.compute forward stage 1 mb 1
// W1-NEXT:      pp.compute forward stage 2 mb 1
// W1-NEXT:      pp.compute backward stage 2 mb 0
// W1-NEXT:      pp.compute forward stage 1 mb 2
// W1-NEXT:      pp.compute forward stage 2 mb 2
// W1-NEXT:      pp.compute backward stage 1 mb 0
// W1-NEXT:      pp.compute backward stage 2 mb 1
// W1-NEXT:      pp.compute forward stage 1 mb 3
// W1-NEXT:      pp.compute forward stage 2 mb 3
// W1-NEXT:      pp.compute backward stage 1 mb 1
// W1-NEXT:      pp.compute backward stage 2 mb 2
// W1-NEXT:      pp.compute backward stage 1 mb 2
// W1-NEXT:      pp.compute backward stage 2 mb 3
// W1-NEXT:      pp.compute backward stage 1 mb 3
// W1-NEXT:    }
// W1-NEXT:  }

// W2-LABEL:  pp.schedule @train_step_schedule "hanayo" for @train_step microbatches 4 stage_rank [0, 1, 1, 0, 0, 1, 1, 0] {
// W2-NEXT:    pp.rank 0 {
// W2-NEXT:      pp.compute forward stage 0 mb 0
// W2-NEXT:      pp.compute forward stage 0 mb 1
// W2-NEXT:      pp.compute forward stage 3 mb 0
// W2-NEXT:      pp.compute forward stage 4 mb 0
// W2-NEXT:      pp.compute forward stage 3 mb 1
// W2-NEXT:      pp.compute forward stage 4 mb 1
// W2-NEXT:      pp.compute forward stage 7 mb 0
// W2-NEXT:      pp.compute backward stage 7 mb 0
// W2-NEXT:      pp.compute forward stage 7 mb 1
// W2-NEXT:      pp.compute backward stage 7 mb 1
// W2-NEXT:      pp.compute backward stage 4 mb 0
// W2-NEXT:      pp.compute forward stage 0 mb 2
// W2-NEXT:      pp.compute backward stage 3 mb 0
// W2-NEXT:      pp.compute backward stage 4 mb 1
// W2-NEXT:      pp.compute forward stage 3 mb 2
// W2-NEXT:      pp.compute forward stage 4 mb 2
// W2-NEXT:      pp.compute backward stage 3 mb 1
// W2-NEXT:      pp.compute backward stage 0 mb 0
// W2-NEXT:      pp.compute forward stage 7 mb 2
// W2-NEXT:      pp.compute forward stage 0 mb 3
// W2-NEXT:      pp.compute backward stage 7 mb 2
// W2-NEXT:      pp.compute backward stage 0 mb 1
// W2-NEXT:      pp.compute forward stage 3 mb 3
// W2-NEXT:      pp.compute forward stage 4 mb 3
// W2-NEXT:      pp.compute backward stage 4 mb 2
// W2-NEXT:      pp.compute forward stage 7 mb 3
// W2-NEXT:      pp.compute backward stage 3 mb 2
// W2-NEXT:      pp.compute backward stage 7 mb 3
// W2-NEXT:      pp.compute backward stage 0 mb 2
// W2-NEXT:      pp.compute backward stage 4 mb 3
// W2-NEXT:      pp.compute backward stage 3 mb 3
// W2-NEXT:      pp.compute backward stage 0 mb 3
// W2-NEXT:    }
// W2-NEXT:    pp.rank 1 {
// W2-NEXT:      pp.compute forward stage 1 mb 0
// W2-NEXT:      pp.compute forward stage 2 mb 0
// W2-NEXT:      pp.compute forward stage 1 mb 1
// W2-NEXT:      pp.compute forward stage 2 mb 1
// W2-NEXT:      pp.compute forward stage 5 mb 0
// W2-NEXT:      pp.compute forward stage 6 mb 0
// W2-NEXT:      pp.compute forward stage 5 mb 1
// W2-NEXT:      pp.compute forward stage 6 mb 1
// W2-NEXT:      pp.compute backward stage 6 mb 0
// W2-NEXT:      pp.compute backward stage 5 mb 0
// W2-NEXT:      pp.compute backward stage 6 mb 1
// W2-NEXT:      pp.compute backward stage 5 mb 1
// W2-NEXT:      pp.compute forward stage 1 mb 2
// W2-NEXT:      pp.compute forward stage 2 mb 2
// W2-NEXT:      pp.compute backward stage 2 mb 0
// W2-NEXT:      pp.compute backward stage 1 mb 0
// W2-NEXT:      pp.compute forward stage 5 mb 2
// W2-NEXT:      pp.compute forward stage 6 mb 2
// W2-NEXT:      pp.compute backward stage 2 mb 1
// W2-NEXT:      pp.compute backward stage 1 mb 1
// W2-NEXT:      pp.compute forward stage 1 mb 3
// W2-NEXT:      pp.compute forward stage 2 mb 3
// W2-NEXT:      pp.compute backward stage 6 mb 2
// W2-NEXT:      pp.compute backward stage 5 mb 2
// W2-NEXT:      pp.compute forward stage 5 mb 3
// W2-NEXT:      pp.compute forward stage 6 mb 3
// W2-NEXT:      pp.compute backward stage 2 mb 2
// W2-NEXT:      pp.compute backward stage 1 mb 2
// W2-NEXT:      pp.compute backward stage 6 mb 3
// W2-NEXT:      pp.compute backward stage 5 mb 3
// W2-NEXT:      pp.compute backward stage 2 mb 3
// W2-NEXT:      pp.compute backward stage 1 mb 3
// W2-NEXT:    }
// W2-NEXT:  }

// With split-backward each backward is B immediately followed by its W; the
// order is otherwise the same (B + W = BW = 2).
// SPLIT-LABEL: pp.schedule @train_step_schedule "hanayo"
// SPLIT-NEXT:    pp.rank 0 {
// SPLIT-NEXT:      pp.compute forward stage 0 mb 0
// SPLIT-NEXT:      pp.compute forward stage 0 mb 1
// SPLIT-NEXT:      pp.compute forward stage 3 mb 0
// SPLIT-NEXT:      pp.compute backward_input stage 3 mb 0
// SPLIT-NEXT:      pp.compute backward_weight stage 3 mb 0
// SPLIT-NEXT:      pp.compute forward stage 3 mb 1
// SPLIT-NEXT:      pp.compute forward stage 0 mb 2
// SPLIT-NEXT:      pp.compute backward_input stage 3 mb 1
// SPLIT-NEXT:      pp.compute backward_weight stage 3 mb 1

// Unit costs, verified with async and with rendezvous transfers: 48 units
// of work per rank, 28 with the start-up and drain.
// TIME: time   |0                        5                        10                       15                       20                       25
// TIME-NEXT: rank 0 |F0.0 F0.1 .    F3.0 BW3.0     F3.1 F0.2 BW3.1     F3.2 BW3.2     F0.3 BW0.0     F3.3 BW3.3     BW0.1     .    BW0.2     .    .    BW0.3     |
// TIME-NEXT: rank 1 |.    F1.0 F2.0 F1.1 F2.1 .    BW2.0     F1.2 F2.2 BW1.0     BW2.1     F1.3 F2.3 BW1.1     BW2.2     BW1.2     BW2.3     BW1.3     .    .    |
// TIME-NEXT: makespan 28, bubble: rank 0 14.3%, rank 1 14.3%

// Makespan and peak activation memory per rank in chunk units (F = 1,
// BW = 2 per chunk; one activation unit per micro-batch and chunk). The
// peak stays within (2W + 1)p - 1: 11 for p = 4, W = 1; 17 for p = 4,
// W = 2; 23 for p = 8, W = 1; 13 for p = 2, W = 3. m = 1 runs each rank's
// 2W forwards and backwards.
// P4-W1-M8: remark: makespan 60, bubble 20.0% (idle per rank: 12, 12, 12, 12), peak activation memory per rank: 9, 10, 10, 11
// P4-W1-M16: remark: makespan 108, bubble 11.1% (idle per rank: 12, 12, 12, 12), peak activation memory per rank: 9, 10, 10, 11
// P4-W2-M8: remark: makespan 125, bubble 23.2% (idle per rank: 29, 29, 29, 29), peak activation memory per rank: 15, 16, 16, 17
// P8-W1-M16: remark: makespan 123, bubble 22.0% (idle per rank: 27, 27, 27, 27, 27, 27, 27, 27), peak activation memory per rank: 20, 20, 21, 21, 22, 22, 22, 23
// P2-W3-M5: remark: makespan 107, bubble 15.9% (idle per rank: 17, 17), peak activation memory per rank: 11, 12
// P4-W1-M1: remark: makespan 24, bubble 75.0% (idle per rank: 18, 18, 18, 18), peak activation memory per rank: 2, 2, 2, 2

// A memory cap lowers the limit (here 8 activations) and pp-verify-schedule
// checks the peak against the schedule's memory_cap.
// CAP: remark: makespan 61, bubble 21.3% (idle per rank: 13, 13, 13, 13), peak activation memory per rank: 7, 7, 8, 8
module {
}
