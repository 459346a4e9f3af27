// RUN: pp-translate --pp-schedule-to-chrome-trace %s | FileCheck %s
// RUN: pp-translate --pp-schedule-to-chrome-trace %S/Inputs/1f1b-4x8.mlir | FileCheck %s --check-prefix=1F1B
// RUN: pp-translate --pp-schedule-to-chrome-trace %S/Inputs/1f1b-4x8.mlir | FileCheck %s --check-prefix=COUNT
// RUN: pp-translate --pp-schedule-to-chrome-trace %S/Inputs/gpipe-4x8.mlir | FileCheck %s --check-prefix=GPIPE
// RUN: pp-translate --pp-schedule-to-chrome-trace %S/Inputs/gpipe-4x8.mlir | FileCheck %s --check-prefix=COUNT

// Unit costs: F, B and W take 1 (1000 us), BW 2, everything else 0; a
// receive starts when its send was posted.

// CHECK:      {
// CHECK-NEXT:   "displayTimeUnit": "ms",
// CHECK-NEXT:   "otherData": {
// CHECK-NEXT:     "schedule": "split",
// CHECK-NEXT:     "name": "zb-h1",
// CHECK-NEXT:     "makespan": 6
// CHECK-NEXT:   },
// CHECK-NEXT:   "traceEvents": [
// CHECK-NEXT:     {"name":"process_name","ph":"M","pid":0,"args":{"name":"pp.schedule @split (zb-h1)"}},
// CHECK-NEXT:     {"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"rank 0"}},
// CHECK-NEXT:     {"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"rank 1"}},
// CHECK-NEXT:     {"name":"F0.0","cat":"compute","ph":"X","pid":0,"tid":0,"ts":0,"dur":1000,"args":{"stage":0,"mb":0}},
// CHECK-NEXT:     {"name":"SEND_F0.0","cat":"send","ph":"X","pid":0,"tid":0,"ts":1000,"dur":0,"args":{"stage":0,"mb":0,"peer":1}},
// CHECK-NEXT:     {"name":"RECV_B0.0","cat":"recv","ph":"X","pid":0,"tid":0,"ts":4000,"dur":0,"args":{"stage":0,"mb":0,"peer":1}},
// CHECK-NEXT:     {"name":"B0.0","cat":"compute","ph":"X","pid":0,"tid":0,"ts":4000,"dur":1000,"args":{"stage":0,"mb":0}},
// CHECK-NEXT:     {"name":"W0.0","cat":"compute","ph":"X","pid":0,"tid":0,"ts":5000,"dur":1000,"args":{"stage":0,"mb":0}},
// CHECK-NEXT:     {"name":"ALLREDUCE0","cat":"collective","ph":"X","pid":0,"tid":0,"ts":6000,"dur":0,"args":{"stage":0}},
// CHECK-NEXT:     {"name":"OPT0","cat":"compute","ph":"X","pid":0,"tid":0,"ts":6000,"dur":0,"args":{"stage":0}},
// CHECK-NEXT:     {"name":"RECV_F1.0","cat":"recv","ph":"X","pid":0,"tid":1,"ts":1000,"dur":0,"args":{"stage":1,"mb":0,"peer":0}},
// CHECK-NEXT:     {"name":"F1.0","cat":"compute","ph":"X","pid":0,"tid":1,"ts":1000,"dur":1000,"args":{"stage":1,"mb":0}},
// CHECK-NEXT:     {"name":"BW1.0","cat":"compute","ph":"X","pid":0,"tid":1,"ts":2000,"dur":2000,"args":{"stage":1,"mb":0}},
// CHECK-NEXT:     {"name":"SEND_B1.0","cat":"send","ph":"X","pid":0,"tid":1,"ts":4000,"dur":0,"args":{"stage":1,"mb":0,"peer":0}},
// CHECK-NEXT:     {"name":"OPT1","cat":"compute","ph":"X","pid":0,"tid":1,"ts":4000,"dur":0,"args":{"stage":1}}
// CHECK-NEXT:   ]
// CHECK-NEXT: }
pp.schedule @split "zb-h1" for @train_step microbatches 1 stage_rank [0, 1] {
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

// One track per rank, then one complete event per action (164).
// COUNT:           "traceEvents": [
// COUNT-NEXT:      {"name":"process_name"
// COUNT-NEXT:      {"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"rank 0"}},
// COUNT-NEXT:      {"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"rank 1"}},
// COUNT-NEXT:      {"name":"thread_name","ph":"M","pid":0,"tid":2,"args":{"name":"rank 2"}},
// COUNT-NEXT:      {"name":"thread_name","ph":"M","pid":0,"tid":3,"args":{"name":"rank 3"}},
// COUNT-COUNT-164: "ph":"X"
// COUNT-NOT:       "ph":

// 1F1B: "makespan": 33
// Stage 3 starts once the activation of micro-batch 0 went through stages 0-2.
// 1F1B: {"name":"RECV_B0.0","cat":"recv","ph":"X","pid":0,"tid":0,"ts":10000,"dur":0,
// 1F1B: {"name":"BW0.0","cat":"compute","ph":"X","pid":0,"tid":0,"ts":10000,"dur":2000,
// 1F1B: {"name":"F0.4","cat":"compute","ph":"X","pid":0,"tid":0,"ts":12000,"dur":1000,
// 1F1B: {"name":"BW0.7","cat":"compute","ph":"X","pid":0,"tid":0,"ts":31000,"dur":2000,
// 1F1B: {"name":"RECV_F3.0","cat":"recv","ph":"X","pid":0,"tid":3,"ts":3000,"dur":0,
// 1F1B: {"name":"F3.0","cat":"compute","ph":"X","pid":0,"tid":3,"ts":3000,"dur":1000,
// 1F1B: {"name":"BW3.0","cat":"compute","ph":"X","pid":0,"tid":3,"ts":4000,"dur":2000,

// GPIPE: "makespan": 33
// GPIPE: {"name":"F0.7","cat":"compute","ph":"X","pid":0,"tid":0,"ts":7000,"dur":1000,
// GPIPE: {"name":"RECV_B0.0","cat":"recv","ph":"X","pid":0,"tid":0,"ts":17000,"dur":0,
// GPIPE: {"name":"F3.7","cat":"compute","ph":"X","pid":0,"tid":3,"ts":10000,"dur":1000,
// GPIPE: {"name":"BW3.0","cat":"compute","ph":"X","pid":0,"tid":3,"ts":11000,"dur":2000,
