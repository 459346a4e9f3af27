// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=GPIPE-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=GPIPE-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=GPIPE-P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=GPIPE-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=GPIPE-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=gpipe num-stages=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=GPIPE-P8-M32
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=1F1B-P4-M8
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=1F1B-P4-M16
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=4 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=1F1B-P4-M32
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=8 num-microbatches=8" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=1F1B-P8-M8
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=8 num-microbatches=16" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=1F1B-P8-M16
// RUN: pp-opt %s --pp-schedule="schedule=1f1b num-stages=8 num-microbatches=32" --pp-insert-transfers --pp-verify-schedule | pp-translate --pp-schedule-to-ascii | FileCheck %s --check-prefix=1F1B-P8-M32

// Unit-cost makespans of gpipe and 1f1b against the closed form
// (m + p - 1)(F + B + W) = 3(m + p - 1): every rank idles (p - 1)(F + B + W).

// GPIPE-P4-M8: makespan 33,
// GPIPE-P4-M16: makespan 57,
// GPIPE-P4-M32: makespan 105,
// GPIPE-P8-M8: makespan 45,
// GPIPE-P8-M16: makespan 69,
// GPIPE-P8-M32: makespan 117,
// 1F1B-P4-M8: makespan 33,
// 1F1B-P4-M16: makespan 57,
// 1F1B-P4-M32: makespan 105,
// 1F1B-P8-M8: makespan 45,
// 1F1B-P8-M16: makespan 69,
// 1F1B-P8-M32: makespan 117,

module {
}
