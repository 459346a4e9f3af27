// RUN: pp-opt %s --pp-verify-schedule --pp-simulate -o /dev/null 2>&1 | FileCheck %s
// RUN: pp-translate --pp-schedule-to-chrome-trace %s | FileCheck %s --check-prefix=TRACE
// RUN: pp-translate --pp-schedule-to-ascii %s | FileCheck %s --check-prefix=ASCII
// RUN: pp-translate --pp-schedule-to-svg %s | FileCheck %s --check-prefix=SVG

// An overlapped pair runs on two streams: both start when the rank reaches
// the pair and the rank is busy until the later one ends. Unit costs
// (F = 1, fused backward = 2), stages 0 and 1 on one rank:
//   F0(0) [0,1], F1(0) [1,2], F0(1) [2,3] beside BW1(0) [2,4], F1(1) [4,5],
//   BW1(1) [5,7], BW0(0) [7,9], BW0(1) [9,11].
// Without the overlap BW1(0) would run [3,5] and the makespan be 12. The
// rank is never idle: the pair's 3 units of work take 2.
// CHECK: remark: makespan 11, bubble 0.0% (idle per rank: 0)
// TRACE: "makespan": 11
// TRACE: {"name":"F0.1","cat":"compute","ph":"X","pid":0,"tid":0,"ts":2000,"dur":1000,
// TRACE-NEXT: {"name":"BW1.0","cat":"compute","ph":"X","pid":0,"tid":0,"ts":2000,"dur":2000,
// TRACE-NEXT: {"name":"F1.1","cat":"compute","ph":"X","pid":0,"tid":0,"ts":4000,
// The ASCII timeline draws the pair as one span, the SVG one the forward
// above the backward in the rank's row.
// ASCII: rank 0 |F0.0  F1.0  F0.1+BW1.0  F1.1  BW1.1       BW0.0       BW0.1       |
// ASCII: makespan 11, bubble: rank 0 0.0%
// SVG: <rect class="forward" x="120" y="48" width="28" height="12"><title>F stage 0 mb 1, 2 to 3</title></rect>
// SVG: <rect class="backward" x="120" y="60" width="56" height="12"><title>BW stage 1 mb 0, 2 to 4</title></rect>
// SVG: <rect class="forward" x="176" y="48" width="28" height="24"><title>F stage 1 mb 1, 4 to 5</title></rect>
pp.schedule @s "dualpipev" for @f microbatches 2 stage_rank [0, 0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 1 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 1 mb 0 overlap
    pp.compute forward stage 1 mb 1
    pp.compute backward stage 1 mb 1
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1
  }
}
