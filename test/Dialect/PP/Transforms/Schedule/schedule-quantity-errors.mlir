// Every cost and memory option of pp-schedule is a finite number between 0
// and 1e280, checked whether or not a stage uses it: input-memory=-1 without
// a recomputing stage was accepted, and forward-cost=1e308 simulated to an
// infinite makespan. The error is at the module.
// RUN: not pp-opt %s --pp-schedule="num-stages=2 input-memory=-1" 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: not pp-opt %s --pp-schedule="num-stages=2 input-memory=nan recompute=1" 2>&1 | FileCheck %s --check-prefix=INPUTNAN
// RUN: not pp-opt %s --pp-schedule="num-stages=2 forward-cost=1,1e308" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not pp-opt %s --pp-schedule="num-stages=2 backward-weight-cost=inf" 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not pp-opt %s --pp-schedule="num-stages=2 activation-memory=1e281" 2>&1 | FileCheck %s --check-prefix=ACT
// RUN: not pp-opt %s --pp-schedule="num-stages=2 comm-cost=inf" 2>&1 | FileCheck %s --check-prefix=COMM
// RUN: not pp-opt %s --pp-schedule="num-stages=2 memory-cap=inf" 2>&1 | FileCheck %s --check-prefix=CAPINF
// RUN: not pp-opt %s --pp-schedule="num-stages=2 memory-cap=nan" 2>&1 | FileCheck %s --check-prefix=CAPNAN
// RUN: not pp-opt %s --pp-schedule="num-stages=2 memory-cap=1e300" 2>&1 | FileCheck %s --check-prefix=CAPHUGE
// The largest accepted amounts simulate to finite numbers.
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-microbatches=64 forward-cost=1e280 activation-memory=1e280" --pp-simulate 2>&1 | FileCheck %s --check-prefix=MAX

// INPUT: [[@LINE+10]]:1: error: input-memory must be a finite number between 0 and 1e280, got -1
// INPUTNAN: error: input-memory must be a finite number between 0 and 1e280, got nan
// HUGE: error: forward-cost must be a finite number between 0 and 1e280, got 1e+308
// INF: error: backward-weight-cost must be a finite number between 0 and 1e280, got inf
// ACT: error: activation-memory must be a finite number between 0 and 1e280, got 1e+281
// COMM: error: comm-cost must be a finite number between 0 and 1e280, got inf
// CAPINF: error: memory-cap must be positive and at most 1e280 (0 alone for no cap), got inf
// CAPNAN: error: memory-cap must be positive and at most 1e280 (0 alone for no cap), got nan
// CAPHUGE: error: memory-cap must be positive and at most 1e280 (0 alone for no cap), got 1e+300
// MAX: remark: makespan 6.4e+281, {{.*}} peak activation memory per rank: 6.4e+281, 6.4e+281, 6.4e+281, 6.4e+281
module {
}
