// A schedule the registry lacks is an error of the option, reported when
// the options are parsed, before any pass runs; it lists the registered
// schedules. pp-schedule, pp-partition-stages and pp-schedule-pipeline
// take the same typed option.
// RUN: not pp-opt %s --pp-schedule="schedule=zigzag num-stages=2" 2>&1 | FileCheck %s --implicit-check-not=module
// RUN: not pp-opt %s --pp-schedule-pipeline="schedule=zigzag" 2>&1 | FileCheck %s --implicit-check-not=module
// RUN: not pp-opt %s --pp-schedule-pipeline="plan-schedule=zigzag" 2>&1 | FileCheck %s --implicit-check-not=module
// RUN: not pp-opt %s --pass-pipeline="builtin.module(pp-schedule{schedule=zigzag})" 2>&1 | FileCheck %s --implicit-check-not=module

// CHECK: for the --{{(plan-)?}}schedule option: unknown schedule 'zigzag'; expected one of: gpipe, 1f1b, interleaved-1f1b, looped-bfs, zb-h1, zb-h2, zbv, v-half, v-min, dualpipev, greedy, hanayo, interleaved-zb, pipedream-2bw, seq1f1b, exact, auto{{$}}
module {
}
