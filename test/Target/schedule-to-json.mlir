// RUN: pp-translate --pp-schedule-to-json %s | FileCheck %s
// RUN: pp-translate --pp-schedule-to-json %S/Inputs/gpipe-4x8.mlir | FileCheck %s --check-prefix=GPIPE
// RUN: pp-translate --pp-schedule-to-json %S/Inputs/1f1b-4x8.mlir | FileCheck %s --check-prefix=1F1B
// RUN: pp-translate --pp-schedule-to-json %S/Inputs/gpipe-4x8.mlir | FileCheck %s --check-prefix=COUNT
// RUN: pp-translate --pp-schedule-to-json %S/Inputs/1f1b-4x8.mlir | FileCheck %s --check-prefix=COUNT

// Every op of the spec's table, with exactly its fields, in IR order. The
// schedule may sit next to other IR (here a function).

// CHECK:      {
// CHECK-NEXT:   "format": "pp-schedule-v1",
// CHECK-NEXT:   "name": "zb-h1",
// CHECK-NEXT:   "num_ranks": 2,
// CHECK-NEXT:   "num_stages": 2,
// CHECK-NEXT:   "num_microbatches": 1,
// CHECK-NEXT:   "stage_rank": [0,1],
// CHECK-NEXT:   "ranks": [
// CHECK-NEXT:     [
// CHECK-NEXT:       {"op":"F","stage":0,"mb":0},
// CHECK-NEXT:       {"op":"SEND_F","stage":0,"mb":0,"peer":1},
// CHECK-NEXT:       {"op":"RECV_B","stage":0,"mb":0,"peer":1},
// CHECK-NEXT:       {"op":"B","stage":0,"mb":0},
// CHECK-NEXT:       {"op":"W","stage":0,"mb":0},
// CHECK-NEXT:       {"op":"ALLREDUCE","stage":0},
// CHECK-NEXT:       {"op":"OPT","stage":0}
// CHECK-NEXT:     ],
// CHECK-NEXT:     [
// CHECK-NEXT:       {"op":"RECV_F","stage":1,"mb":0,"peer":0},
// CHECK-NEXT:       {"op":"F","stage":1,"mb":0},
// CHECK-NEXT:       {"op":"BW","stage":1,"mb":0},
// CHECK-NEXT:       {"op":"SEND_B","stage":1,"mb":0,"peer":0},
// CHECK-NEXT:       {"op":"OPT","stage":1}
// CHECK-NEXT:     ]
// CHECK-NEXT:   ]
// CHECK-NEXT: }
// CHECK-NOT:  {{.}}
func.func private @train_step()
pp.schedule @train_step_schedule "zb-h1" for @train_step microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward_input stage 0 mb 0
    pp.compute backward_weight stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.optimizer_step stage 1
  }
}

// One line per action: 4 ranks x (16 computes + 1 optimizer step) plus
// 8 + 16 + 16 + 8 sends and as many receives.
// COUNT-COUNT-164: {"op":
// COUNT-NOT:       "op"

// GPIPE:      {
// GPIPE-NEXT:   "format": "pp-schedule-v1",
// GPIPE-NEXT:   "name": "gpipe",
// GPIPE-NEXT:   "num_ranks": 4,
// GPIPE-NEXT:   "num_stages": 4,
// GPIPE-NEXT:   "num_microbatches": 8,
// GPIPE-NEXT:   "stage_rank": [0,1,2,3],
// GPIPE-NEXT:   "ranks": [
// GPIPE-NEXT:     [
// GPIPE-NEXT:       {"op":"F","stage":0,"mb":0},
// GPIPE-NEXT:       {"op":"SEND_F","stage":0,"mb":0,"peer":1},
// GPIPE-NEXT:       {"op":"F","stage":0,"mb":1},
// GPIPE-NEXT:       {"op":"SEND_F","stage":0,"mb":1,"peer":1},
// GPIPE:            {"op":"SEND_F","stage":0,"mb":7,"peer":1},
// GPIPE-NEXT:       {"op":"RECV_B","stage":0,"mb":0,"peer":1},
// GPIPE-NEXT:       {"op":"BW","stage":0,"mb":0},
// GPIPE:            {"op":"BW","stage":0,"mb":7},
// GPIPE-NEXT:       {"op":"OPT","stage":0}
// GPIPE-NEXT:     ],
// GPIPE-NEXT:     [
// GPIPE-NEXT:       {"op":"RECV_F","stage":1,"mb":0,"peer":0},
// GPIPE-NEXT:       {"op":"F","stage":1,"mb":0},
// GPIPE-NEXT:       {"op":"SEND_F","stage":1,"mb":0,"peer":2},
// GPIPE:            {"op":"RECV_B","stage":1,"mb":0,"peer":2},
// GPIPE-NEXT:       {"op":"BW","stage":1,"mb":0},
// GPIPE-NEXT:       {"op":"SEND_B","stage":1,"mb":0,"peer":0},
// GPIPE:            {"op":"OPT","stage":1}
// GPIPE:            {"op":"OPT","stage":2}
// GPIPE-NEXT:     ],
// GPIPE-NEXT:     [
// GPIPE-NEXT:       {"op":"RECV_F","stage":3,"mb":0,"peer":2},
// GPIPE-NEXT:       {"op":"F","stage":3,"mb":0},
// GPIPE-NEXT:       {"op":"RECV_F","stage":3,"mb":1,"peer":2},
// GPIPE:            {"op":"F","stage":3,"mb":7},
// GPIPE-NEXT:       {"op":"BW","stage":3,"mb":0},
// GPIPE-NEXT:       {"op":"SEND_B","stage":3,"mb":0,"peer":2},
// GPIPE:            {"op":"SEND_B","stage":3,"mb":7,"peer":2},
// GPIPE-NEXT:       {"op":"OPT","stage":3}
// GPIPE-NEXT:     ]
// GPIPE-NEXT:   ]
// GPIPE-NEXT: }
// GPIPE-NOT:  "cost"

// 1F1B:        "name": "1f1b",
// Rank 0: three warm-up forwards, then one forward, one backward.
// 1F1B:        {"op":"SEND_F","stage":0,"mb":3,"peer":1},
// 1F1B-NEXT:   {"op":"RECV_B","stage":0,"mb":0,"peer":1},
// 1F1B-NEXT:   {"op":"BW","stage":0,"mb":0},
// 1F1B-NEXT:   {"op":"F","stage":0,"mb":4},
// 1F1B-NEXT:   {"op":"SEND_F","stage":0,"mb":4,"peer":1},
// 1F1B-NEXT:   {"op":"RECV_B","stage":0,"mb":1,"peer":1},
// 1F1B-NEXT:   {"op":"BW","stage":0,"mb":1},
// Rank 3 (the last stage) alternates from the start.
// 1F1B:        {"op":"OPT","stage":2}
// 1F1B-NEXT: ],
// 1F1B-NEXT: [
// 1F1B-NEXT:   {"op":"RECV_F","stage":3,"mb":0,"peer":2},
// 1F1B-NEXT:   {"op":"F","stage":3,"mb":0},
// 1F1B-NEXT:   {"op":"BW","stage":3,"mb":0},
// 1F1B-NEXT:   {"op":"SEND_B","stage":3,"mb":0,"peer":2},
// 1F1B-NEXT:   {"op":"RECV_F","stage":3,"mb":1,"peer":2},
// 1F1B-NEXT:   {"op":"F","stage":3,"mb":1},
