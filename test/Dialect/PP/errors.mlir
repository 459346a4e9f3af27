// RUN: pp-opt %s -split-input-file -verify-diagnostics

func.func @arg_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{region has 0 arguments but the stage has 1 inputs}}
  %r = pp.stage 0 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<0.0> : tensor<4xf32>
    pp.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @arg_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{region argument #0 has type 'tensor<2xf32>' but input #0 has type 'tensor<4xf32>'}}
  %r = pp.stage 0 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<2xf32>):
    %c = arith.constant dense<0.0> : tensor<4xf32>
    pp.yield %c : tensor<4xf32>
  }
  return
}

// -----

func.func @yield_type(%x: tensor<4xf32>) {
  %r = pp.stage 0 (%x) : (tensor<4xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<4xf32>):
    // expected-error @+1 {{yields types that differ from the results of its stage}}
    pp.yield %a : tensor<4xf32>
  }
  return
}

// -----

func.func @negative_stage(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'stage' failed to satisfy constraint}}
  %r = pp.stage -1 (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pp.yield %a : tensor<4xf32>
  }
  return
}

// -----

// expected-error @+1 {{stage 1 is placed on rank 3, but the schedule has 2 ranks}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0, 3] {
  pp.rank 0 {}
  pp.rank 1 {}
}

// -----

pp.schedule @s "x" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {}
  // expected-error @+1 {{expected rank 1, ranks must be numbered 0, 1, ... in order}}
  pp.rank 2 {}
}

// -----

pp.schedule @s "x" for @f microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    // expected-error @+1 {{stage 2 out of range: the schedule has 2 stages}}
    pp.compute forward stage 2 mb 0
  }
  pp.rank 1 {}
}

// -----

pp.schedule @s "x" for @f microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    // expected-error @+1 {{micro-batch 2 out of range: the schedule has 2 micro-batches}}
    pp.compute forward stage 0 mb 2
  }
  pp.rank 1 {}
}

// -----

pp.schedule @s "x" for @f microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    // expected-error @+1 {{peer 5 out of range: the schedule has 2 ranks}}
    pp.send activation stage 0 mb 0 to 5
  }
  pp.rank 1 {}
}

// -----

// expected-error @+1 {{needs at least one stage in 'stage_rank'}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [] {
}

// -----

func.func @action_outside_rank() {
  // expected-error @+1 {{expects parent op 'pp.rank'}}
  pp.compute forward stage 0 mb 0
  return
}

// -----

// A hexadecimal literal is the only way to write infinity.
// expected-error @+1 {{costs must be finite}}
#inf = #pp.cost<forward = [0x7FF0000000000000], backward_input = [1.0], backward_weight = [1.0], comm = 0.0 : f64, activation = [1.0], stash = [0.0]>
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {cost = #inf} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{costs must be finite}}
#nan = #pp.cost<forward = [1.0], backward_input = [1.0], backward_weight = [1.0], comm = 0x7FF8000000000000 : f64, activation = [1.0], stash = [0.0]>
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {cost = #nan} {
  pp.rank 0 {
  }
}

// -----

// Finite costs so large that a simulation's sums overflow (1e308 per F made
// an infinite makespan) are rejected.
// expected-error @+1 {{costs must be at most 1e280}}
#huge = #pp.cost<forward = [1.0e+308], backward_input = [1.0], backward_weight = [1.0], comm = 0.0 : f64, activation = [1.0], stash = [0.0]>
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {cost = #huge} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{costs must be at most 1e280}}
#hugecomm = #pp.cost<forward = [1.0], backward_input = [1.0], backward_weight = [1.0], comm = 1.0e+300 : f64, activation = [1.0], stash = [0.0]>
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {cost = #hugecomm} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{memory_cap must be positive and at most 1e280, got 1e+300}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {memory_cap = 1.0e+300 : f64} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{memory_cap must be positive and at most 1e280, got inf}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {memory_cap = 0x7FF0000000000000 : f64} {
  pp.rank 0 {
  }
}

// -----

// A list of caps has one per rank.
// expected-error @+1 {{memory_cap has 3 values, expected one per rank (2)}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0, 1] attributes {memory_cap = array<f64: 4.0, 2.0, 2.0>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// expected-error @+1 {{memory_cap of rank 1 must be positive and at most 1e280, got 0}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0, 1] attributes {memory_cap = array<f64: 4.0, 0.0>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// expected-error @+1 {{memory_cap of rank 0 must be positive and at most 1e280, got inf}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0, 1] attributes {memory_cap = array<f64: 0x7FF0000000000000, 1.0>} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
}

// -----

// expected-error @+1 {{attribute 'memory_cap' failed to satisfy constraint: memory cap of every rank (an f64) or of each rank (an f64 array)}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {memory_cap = 2 : i64} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{has 1048577 micro-batches; at most 1048576 are supported}}
pp.schedule @s "x" for @f microbatches 1048577 stage_rank [0] {
  pp.rank 0 {
  }
}

// -----

// A replica count reached the runtime truncated to 32 bits.
// expected-error @+1 {{has num_replicas = 9223372036854775807; at most 65536 are supported}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {num_replicas = 9223372036854775807 : i64} {
  pp.rank 0 {
  }
}

// -----

// expected-error @+1 {{runs on 1073741824 processes (ranks x replicas x tensor-parallel group); at most 1048576 are supported}}
pp.schedule @s "x" for @f microbatches 1 stage_rank [0] attributes {num_replicas = 65536 : i64, pp.tensor_parallel = 16384 : i64} {
  pp.rank 0 {
  }
}

// -----

pp.schedule @grouped_first "x" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{with 'grouped' must directly follow the 'pp.send' or 'pp.recv' whose group it joins}}
    pp.send activation stage 0 mb 0 to 1 grouped
  }
  pp.rank 1 {
  }
}

// -----

pp.schedule @grouped_after_compute "x" for @f microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
  }
  pp.rank 1 {
    // expected-error @+1 {{with 'grouped' must directly follow the 'pp.send' or 'pp.recv' whose group it joins}}
    pp.recv activation stage 1 mb 0 from 0 grouped
    pp.compute forward stage 1 mb 0
  }
}

// -----

pp.schedule @overlap_forward "x" for @f microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{'overlap' marks the backward of an overlapped pair; the forward comes first, without it}}
    pp.compute forward stage 0 mb 1 overlap
  }
}

// -----

pp.schedule @overlap_first "x" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    // expected-error @+1 {{with 'overlap' must directly follow the 'pp.compute forward' it overlaps with}}
    pp.compute backward stage 0 mb 0 overlap
  }
}

// -----

pp.schedule @overlap_after_backward "x" for @f microbatches 2 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute forward stage 0 mb 1
    pp.compute backward stage 0 mb 0
    // expected-error @+1 {{with 'overlap' must directly follow the 'pp.compute forward' it overlaps with}}
    pp.compute backward stage 0 mb 1 overlap
  }
}

// -----

pp.schedule @overlap_after_send "x" for @f microbatches 2 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 1
    pp.send activation stage 0 mb 1 to 1
    // expected-error @+1 {{with 'overlap' must directly follow the 'pp.compute forward' it overlaps with}}
    pp.compute backward stage 0 mb 0 overlap
  }
  pp.rank 1 {
  }
}

// -----

pp.schedule @overlap_self "x" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    // expected-error @+1 {{cannot overlap with the forward of its own stage and micro-batch, whose result it needs}}
    pp.compute backward stage 0 mb 0 overlap
  }
}

// -----

// The backward of a recomputed stage runs its forward again.
func.func @recompute_writes(%x: tensor<4xf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'pp.stage' op is recomputed, but 'memref.store' writes memory, which its backward would do a second time}}
  %r = pp.stage 0 recompute (%x, %m) : (tensor<4xf32>, memref<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: memref<4xf32>):
    %c0 = arith.constant 0 : index
    %v = arith.constant 1.0 : f32
    memref.store %v, %b[%c0] : memref<4xf32>
    pp.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Two weight versions cover one step of staleness and no more.
// expected-error @+2 {{'pp.schedule' op attribute 'weight_versions' failed to satisfy constraint}}
pp.schedule @three_versions "pipedream-2bw" for @f microbatches 2 stage_rank [0]
    attributes {weight_versions = 3 : i64} {
  pp.rank 0 {
  }
}

// -----

pp.schedule @missing_function "x" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op runs @f_s0_forward, which is not a func.func}}
    pp.compute forward stage 0 mb 0 @f_s0_forward
  }
}

// -----

// Without a flush, step t + 1's first forwards would need a third version.
// expected-error @+1 {{'pp.schedule' op keeps 2 weight versions but has 2 micro-batches for 3 stages; PipeDream-2BW needs at least one micro-batch per stage}}
pp.schedule @few_microbatches "pipedream-2bw" for @f microbatches 2
    stage_rank [0, 1, 2] attributes {weight_versions = 2 : i64} {
  pp.rank 0 {
  }
  pp.rank 1 {
  }
  pp.rank 2 {
  }
}

// -----

func.func @not_a_stage() {
  return
}
pp.schedule @untagged_function "x" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op runs @not_a_stage, which is not a stage function (it has no 'pp.stage' and 'pp.phase')}}
    pp.compute forward stage 0 mb 0 @not_a_stage
  }
}

// -----

func.func @f_s1_forward() attributes {pp.phase = #pp<phase forward>, pp.stage = 1 : i64} {
  return
}
pp.schedule @wrong_stage "x" for @f microbatches 1 stage_rank [0, 0] {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op runs @f_s1_forward, the forward of stage 1, as the forward of stage 0}}
    pp.compute forward stage 0 mb 0 @f_s1_forward
  }
}

// -----

func.func @f_s0_forward() attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  return
}
pp.schedule @wrong_phase "x" for @f microbatches 1 stage_rank [0] {
  pp.rank 0 {
    // expected-error @+1 {{'pp.compute' op runs @f_s0_forward, the forward of stage 0, as the backward of stage 0}}
    pp.compute backward stage 0 mb 0 @f_s0_forward
  }
}

// -----

// expected-error @+1 {{argument #0 has 'pp.slot' = "act:0:0", which is not a #pp.slot}}
func.func @string_slot(%x: tensor<4xf32> {pp.slot = "act:0:0"}) {
  return
}

// -----

// expected-error @+1 {{result #0 has 'pp.slot' = 1 : i64, which is not a #pp.slot}}
func.func @integer_slot() -> (tensor<4xf32> {pp.slot = 1}) {
  %c = arith.constant dense<0.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{unknown slot kind 'activation'; expected param, data, target, act, grad, saved, stash, param_grad, loss, loss_grad, state, state_update, carry or carry_grad}}
func.func @unknown_kind(%x: tensor<4xf32> {pp.slot = #pp.slot<activation stage 0 output 0>}) {
  return
}

// -----

// expected-error @+1 {{expected 'output'}}
func.func @wrong_index_keyword(%x: tensor<4xf32> {pp.slot = #pp.slot<act stage 0 value 0>}) {
  return
}

// -----

// expected-error @+1 {{slot numbers must not be negative}}
func.func @negative_slot(%x: tensor<4xf32> {pp.slot = #pp.slot<param -1>}) {
  return
}

// -----

// expected-error @+1 {{expected '>'}}
func.func @loss_with_number(%x: tensor<f32> {pp.slot = #pp.slot<loss 0>}) {
  return
}
