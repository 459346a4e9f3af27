// Scheduling, transfers, simulation and printing are near-linear in stages:
// a count of ranks that took a walk of the schedule per transfer and a scan
// of the placement per rank made 16,384 stages take 46 s and 65,536 never
// finish. 32,768 stages now take about a second of CPU; the quadratic
// passes took over 300 s, far past the timeout even on a loaded machine.
// RUN: timeout 120 pp-opt %s --pp-schedule="num-stages=32768 schedule=1f1b" --pp-insert-transfers --pp-simulate 2>/dev/null | FileCheck %s

// CHECK: pp.rank 32767 {
// CHECK-NEXT: pp.recv activation stage 32767 mb 0 from 32766
// CHECK-NEXT: pp.compute forward stage 32767 mb 0
// CHECK-NEXT: pp.compute backward stage 32767 mb 0
// CHECK-NEXT: pp.send gradient stage 32767 mb 0 to 32766
// CHECK-NEXT: pp.optimizer_step stage 32767
module {
}
