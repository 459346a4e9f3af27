// A memory cap bounds the activation memory a rank holds after any action.
// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-verify-schedule

// GPipe holds all m = 3 micro-batches at once on rank 0: over a cap of 2.
pp.schedule @gpipe "gpipe" for @f microbatches 3 stage_rank [0] attributes {memory_cap = 2.0 : f64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    // expected-error @+1 {{'pp.compute' op leaves rank 0 holding 3 units of activation memory, above the schedule's memory_cap of 2}}
    pp.compute forward stage 0 mb 2
    pp.compute backward stage 0 mb 0
    pp.compute backward stage 0 mb 1
    pp.compute backward stage 0 mb 2
    pp.optimizer_step stage 0
  }
}

// -----

// Interleaving backwards keeps it within the cap.
pp.schedule @within "1f1b" for @f microbatches 3 stage_rank [0] attributes {memory_cap = 2.0 : f64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    pp.compute forward stage 0 mb 2
    pp.compute backward stage 0 mb 1
    pp.compute backward stage 0 mb 2
    pp.optimizer_step stage 0
  }
}

// -----

// With split backward, B keeps the stash W needs: 2 + (1 + 2) > 2.5.
#cost = #pp.cost<forward = [1.0], backward_input = [1.0], backward_weight = [1.0],
                 comm = 0.0 : f64, activation = [2.0], stash = [1.0]>
pp.schedule @stash "zb" for @f microbatches 2 stage_rank [0] attributes {cost = #cost, memory_cap = 2.5 : f64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward_input stage 0 mb 0
    // expected-error @+1 {{'pp.compute' op leaves rank 0 holding 3 units of activation memory, above the schedule's memory_cap of 2.5}}
    pp.compute forward stage 0 mb 1
    pp.compute backward_weight stage 0 mb 0
    pp.compute backward_input stage 0 mb 1
    pp.compute backward_weight stage 0 mb 1
    pp.optimizer_step stage 0
  }
}

// -----

// expected-error @+1 {{'pp.schedule' op memory_cap must be positive and at most 1e280, got 0}}
pp.schedule @zero "x" for @f microbatches 1 stage_rank [0] attributes {memory_cap = 0.0 : f64} {
  pp.rank 0 {
  }
}

// -----

#cost = #pp.cost<forward = [1.0], backward_input = [1.0], backward_weight = [1.0],
                 comm = 0.0 : f64, activation = [2.0], stash = [1.0]>
// expected-error @+1 {{'pp.schedule' op has costs for 1 stages but 2 stages}}
pp.schedule @mismatch "x" for @f microbatches 1 stage_rank [0, 0] attributes {cost = #cost} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{cost arrays must all have one entry per stage}}
#bad = #pp.cost<forward = [1.0, 2.0], backward_input = [1.0], backward_weight = [1.0],
                comm = 0.0 : f64, activation = [2.0], stash = [1.0]>
