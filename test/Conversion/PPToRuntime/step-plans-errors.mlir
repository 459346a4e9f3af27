// RUN: pp-opt %s -split-input-file -verify-diagnostics --convert-pp-to-runtime

// Several schedules must each be a step plan with its own index.
module attributes {pp.step_plans = array<i64: 1, 1, 0, 1, 1>} {
func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @a "gpipe" for @m microbatches 1 stage_rank [0] attributes {pp.step_plan = 0 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.optimizer_step stage 0
  }
}
// expected-error @+1 {{'pp.schedule' op is one of 2 schedules; each must be a step plan with its own index in [0, 2) ('pp.step_plan')}}
pp.schedule @b "gpipe" for @m microbatches 1 stage_rank [0] attributes {pp.step_plan = 0 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.optimizer_step stage 0
  }
}
}

// -----

// Step plans choose by the module's table.
// expected-error @+1 {{the module has step plans but no 'pp.step_plans' table to choose them by}}
module {
func.func @m_s0_forward(%x: memref<2x8xf32> {pp.slot = #pp.slot<data 0>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @a "gpipe" for @m microbatches 1 stage_rank [0] attributes {pp.step_plan = 0 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0 @m_s0_forward
    pp.optimizer_step stage 0
  }
}
}
