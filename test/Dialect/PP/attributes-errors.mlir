// RUN: pp-opt %s -split-input-file -verify-diagnostics

// The discardable pp.* attributes: each where it belongs, with a value of
// its kind; any other pp.* name is rejected.

// expected-error @+1 {{'func.func' op has 'pp.stage' = -1 : i64, which is not a stage number (an i64 in [0, 65536))}}
func.func @negative_stage() attributes {pp.stage = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has 'pp.stage' = 0 : i32, which is not a stage number (an i64 in [0, 65536))}}
func.func @i32_stage() attributes {pp.stage = 0 : i32} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has 'pp.phase' = "forward", which is not a #pp.phase}}
func.func @string_phase() attributes {pp.phase = "forward"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has 'pp.recompute' = true, which is not a unit attribute}}
func.func @bool_recompute() attributes {pp.recompute = true} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has 'pp.microbatches' = 0 : i64, which is not a micro-batch count (an i64 in [1, 1048576])}}
func.func @no_microbatches() attributes {pp.microbatches = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{'arith.constant' op has 'pp.stage', which belongs on a function}}
%c = arith.constant {pp.stage = 0 : i64} 0 : i32

// -----

func.func @gemm_on_a_constant() {
  // expected-error @+1 {{'arith.constant' op has 'pp.gemm', which belongs on a linalg op}}
  %c = arith.constant {pp.gemm = "library"} 0.0 : f32
  return
}

// -----

func.func @gemm_generated(%a: memref<4x4xf32>, %c: memref<4x4xf32>) {
  // expected-error @+1 {{'linalg.matmul' op has 'pp.gemm' = "generated", which is not "library"}}
  linalg.matmul {pp.gemm = "generated"}
      ins(%a, %a : memref<4x4xf32>, memref<4x4xf32>)
      outs(%c : memref<4x4xf32>)
  return
}

// -----

// expected-error @+1 {{'func.func' op has 'pp.makespan', which belongs on a pp.schedule}}
func.func @makespan_on_a_function() attributes {pp.makespan = 1.0 : f64} {
  return
}

// -----

// expected-error @+1 {{'pp.schedule' op has 'pp.makespan' = 12 : i64, which is not a float}}
pp.schedule @integer_makespan "gpipe" for @f microbatches 1 stage_rank [0] attributes {pp.makespan = 12 : i64} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}

// -----

// expected-error @+1 {{'pp.schedule' op has 'pp.idle' = [1.000000e+00], which is not an array<f64>}}
pp.schedule @idle_as_list "gpipe" for @f microbatches 1 stage_rank [0] attributes {pp.idle = [1.0]} {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
  }
}

// -----

// expected-error @+1 {{'func.func' op has 'pp.param', which belongs on a function argument}}
func.func @param_on_a_function() attributes {pp.param} {
  return
}

// -----

// expected-error @+1 {{'func.func' op unknown pp attribute 'pp.note'; the known ones are pp.stage, pp.phase, pp.recompute, pp.microbatches, pp.makespan, pp.steady_step, pp.idle, pp.peak_memory, pp.static_memory, pp.tp_all_reduce_bytes, pp.tensor_parallel, pp.gemm, pp.param, pp.target, pp.name, pp.id_bound, pp.id_ignored, pp.packed_input, pp.slot, pp.split}}
func.func @unknown() attributes {pp.note = 1 : i64} {
  return
}

// -----

// A true pp.param would still read as a weight where only its presence is
// looked at; a false one would too.
// expected-error @+1 {{argument #0 has 'pp.param' = false, which is not a unit attribute}}
func.func @false_param(%w: tensor<4xf32> {pp.param = false}) {
  return
}

// -----

// expected-error @+1 {{argument #1 has 'pp.target' = 1 : i64, which is not a unit attribute}}
func.func @integer_target(%x: tensor<4xf32>, %y: tensor<4xf32> {pp.target = 1}) {
  return
}

// -----

// expected-error @+1 {{argument #0 has 'pp.name' = 3 : i64, which is not a string}}
func.func @integer_name(%w: tensor<4xf32> {pp.param, pp.name = 3}) {
  return
}

// -----

// expected-error @+1 {{argument #1 has 'pp.packed_input' = "segment_ids", which is not "document_ids" or "position_ids"}}
func.func @unknown_packed_input(%x: tensor<2x8xi64>, %s: tensor<2x8xi64> {pp.packed_input = "segment_ids"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 has both 'pp.param' and 'pp.target': a weight holds no training targets}}
func.func @param_and_target(%w: tensor<4xf32> {pp.param, pp.target}) {
  return
}

// -----

// expected-error @+1 {{argument #0 has 'pp.stage', which belongs on a function}}
func.func @stage_on_an_argument(%x: tensor<4xf32> {pp.stage = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{result #0 has 'pp.param', which belongs on a function argument}}
func.func @param_on_a_result() -> (tensor<4xf32> {pp.param}) {
  %c = arith.constant dense<0.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0: unknown pp attribute 'pp.weight'}}
func.func @unknown_argument_attribute(%w: tensor<4xf32> {pp.weight}) {
  return
}

// -----

func.func @slot_on_an_op() {
  // expected-error @+1 {{'arith.constant' op has 'pp.slot', which belongs on a function argument or result}}
  %c = arith.constant {pp.slot = #pp.slot<loss>} 0.0 : f32
  return
}

// -----

// expected-error @+1 {{argument #0 has 'pp.split' = [[0], [0]], which is not shard split_axes on the one tensor-parallel grid axis (such as [[], [0]])}}
func.func @split_twice(%w: tensor<4x4xf32> {pp.param, pp.split = [[0], [0]]}) {
  return
}

// -----

// expected-error @+1 {{argument #0 has 'pp.split' = [[1]], which is not shard split_axes on the one tensor-parallel grid axis (such as [[], [0]])}}
func.func @split_other_axis(%w: tensor<4x4xf32> {pp.param, pp.split = [[1]]}) {
  return
}
