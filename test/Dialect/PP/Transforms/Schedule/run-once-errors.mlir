// Passes that add to a schedule refuse to run twice.
// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-insert-transfers
// RUN: not pp-opt %s --pp-schedule="num-stages=1" 2>&1 | FileCheck %s --check-prefix=SCHED

// SCHED: error: 'pp.schedule' op already defines @train_step_schedule; pp-schedule adds one schedule per training step

pp.schedule @train_step_schedule "gpipe" for @train_step microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{'pp.send' op is already in the schedule: pp-insert-transfers expects compute actions and all-reduces only}}
    pp.send activation stage 0 mb 0 to 1
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
  }
}
