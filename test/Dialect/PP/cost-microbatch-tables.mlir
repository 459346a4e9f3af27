// RUN: pp-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// #pp.cost's per-micro-batch tables: they print one row per stage, exactly,
// and parse back; malformed ones are located errors.

// CHECK: cost = #pp.cost<forward = [3.000000e+00, 2.000000e+00], backward_input = [1.000000e+00, 1.000000e+00], backward_weight = [1.000000e+00, 1.000000e+00], comm = 0.000000e+00 : f64, activation = [1.000000e+00, 1.000000e+00], stash = [0.000000e+00, 0.000000e+00], microbatch_forward = {{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 1.000000e-01]], microbatch_stash = {{\[}}[5.000000e-01, 0.000000e+00], [0.000000e+00, 0.000000e+00]]>
pp.schedule @s "gpipe" for @f microbatches 2 stage_rank [0, 1] attributes {cost = #pp.cost<forward = [3.0, 2.0], backward_input = [1.0, 1.0], backward_weight = [1.0, 1.0], comm = 0.0, activation = [1.0, 1.0], stash = [0.0, 0.0], microbatch_stash = [[0.5, 0.0], [0.0, 0.0]], microbatch_forward = [[1.0, 3.0], [2.0, 0.1]]>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// expected-error @below {{every row of a per-micro-batch table must have the same length}}
#c = #pp.cost<forward = [3.0, 2.0], backward_input = [1.0, 1.0], backward_weight = [1.0, 1.0], comm = 0.0, activation = [1.0, 1.0], stash = [0.0, 0.0], microbatch_forward = [[1.0, 3.0], [2.0]]>

// -----

// expected-error @below {{per-micro-batch cost tables must have one non-empty row per stage}}
#c = #pp.cost<forward = [3.0, 2.0], backward_input = [1.0, 1.0], backward_weight = [1.0, 1.0], comm = 0.0, activation = [1.0, 1.0], stash = [0.0, 0.0], microbatch_forward = [[1.0, 3.0, 2.0]]>

// -----

// expected-error @below {{per-micro-batch cost tables must all describe the same micro-batches}}
#c = #pp.cost<forward = [3.0], backward_input = [1.0], backward_weight = [1.0], comm = 0.0, activation = [1.0], stash = [0.0], microbatch_forward = [[1.0, 3.0]], microbatch_backward_input = [[1.0]]>

// -----

// expected-error @below {{stage 0 micro-batch 1 stashes 2 for W but holds only 1}}
#c = #pp.cost<forward = [3.0], backward_input = [1.0], backward_weight = [1.0], comm = 0.0, activation = [1.0], stash = [0.0], microbatch_stash = [[0.0, 2.0]]>

// -----

// expected-error @below {{'microbatch_forward' is given twice}}
#c = #pp.cost<forward = [3.0], backward_input = [1.0], backward_weight = [1.0], comm = 0.0, activation = [1.0], stash = [0.0], microbatch_forward = [[1.0]], microbatch_forward = [[1.0]]>

// -----

// expected-error @below {{expected optimizer, step_overhead or a per-micro-batch table}}
#c = #pp.cost<forward = [3.0], backward_input = [1.0], backward_weight = [1.0], comm = 0.0, activation = [1.0], stash = [0.0], microbatch_time = [[1.0]]>

// -----

// expected-error @below {{'pp.schedule' op has costs for 3 micro-batches but 2 micro-batches}}
pp.schedule @s "gpipe" for @f microbatches 2 stage_rank [0] attributes {cost = #pp.cost<forward = [3.0], backward_input = [1.0], backward_weight = [1.0], comm = 0.0, activation = [1.0], stash = [0.0], microbatch_forward = [[1.0, 3.0, 1.0]]>} {
  pp.rank 0 {
  }
}
