// RUN: pp-opt %s -split-input-file --pp-verify-schedule -verify-diagnostics

// A reduction must see the weight gradients of every micro-batch.
pp.schedule @early "gpipe" for @f microbatches 2 stage_rank [0]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{all_reduce of stage 0 runs before the backward of stage 0 micro-batch 1 whose gradient it reduces}}
    pp.all_reduce stage 0
    // expected-note @+1 {{backward of stage 0 micro-batch 1 here}}
    pp.compute backward stage 0 mb 1
    pp.optimizer_step stage 0
  }
}

// -----

// With a split backward, the W is what counts.
pp.schedule @before_weight "1f1b" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward_input stage 0 mb 0
    // expected-error @+1 {{all_reduce of stage 0 runs before the backward_weight of stage 0 micro-batch 0 whose gradient it reduces}}
    pp.all_reduce stage 0
    // expected-note @+1 {{backward_weight of stage 0 micro-batch 0 here}}
    pp.compute backward_weight stage 0 mb 0
    pp.optimizer_step stage 0
  }
}

// -----

// Reducing twice would multiply the gradients.
pp.schedule @twice "gpipe" for @f microbatches 1 stage_rank [0]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    // expected-note @+1 {{first occurrence here}}
    pp.all_reduce stage 0
    // expected-error @+1 {{duplicate all_reduce of stage 0}}
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
}

// -----

// Without its reduction a stage's replicas drift apart.
pp.schedule @missing "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.all_reduce stage 0
    pp.optimizer_step stage 0
  }
  // expected-error @+1 {{missing all_reduce of stage 1: the schedule runs as 2 data-parallel replicas}}
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.optimizer_step stage 1
  }
}

// -----

// The rank of the stage reduces its gradients.
pp.schedule @misplaced "gpipe" for @f microbatches 1 stage_rank [0, 1]
    attributes {num_replicas = 2 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.all_reduce stage 0
    // expected-error @+1 {{all_reduce of stage 1 is on rank 0, but stage 1 is placed on rank 1}}
    pp.all_reduce stage 1
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

// -----

// A schedule runs as at least one replica.
pp.schedule @zero "gpipe" for @f microbatches 1 stage_rank [0]
    // expected-error @+1 {{attribute 'num_replicas' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
    attributes {num_replicas = 0 : i64} {
  pp.rank 0 {
  }
}
