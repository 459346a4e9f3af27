// A cost file the planner cannot calibrate with is an error naming the file.
// RUN: rm -rf %t && split-file %s %t && cd %t
// RUN: pp-opt step.mlir -verify-diagnostics --pp-partition-stages="num-stages=3 cost-file=two-stages.json"
// RUN: pp-opt absent.mlir -verify-diagnostics --pp-partition-stages="num-stages=2 cost-file=absent.json"
// RUN: pp-opt syntax.mlir -verify-diagnostics --pp-partition-stages="num-stages=2 cost-file=syntax.json"
// RUN: pp-opt unit.mlir -verify-diagnostics --pp-partition-stages="num-stages=2 cost-file=model-units.json"

//--- two-stages.json
{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0},
   {"stage": 1, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- model-units.json
{"format": "pp-profile-v1", "time_unit": "unit", "memory_unit": "unit", "transfer": 0,
 "stages": [
   {"stage": 0, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0},
   {"stage": 1, "forward": 1, "backward_input": 1, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}
 ]}
//--- syntax.json
{"format": "pp-profile-v1", "stages": [ {"stage": 0 "forward": 1} ]}
//--- step.mlir
// expected-error @below {{cost file 'two-stages.json' was measured on 2 stages; this pipeline has 3 stages and 1 micro-batches: profile the program this compiles}}
func.func @train_step(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32> {pp.param},
                      %w1: tensor<8x8xf32> {pp.param},
                      %w2: tensor<8x8xf32> {pp.param}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = linalg.matmul ins(%b, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
//--- absent.mlir
// expected-error @below {{cannot read cost file 'absent.json': No such file or directory}}
func.func @train_step(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32> {pp.param},
                      %w1: tensor<8x8xf32> {pp.param}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
//--- syntax.mlir
// expected-error @below {{cost file 'syntax.json' is not valid JSON: line 1, column 53: Expected , or } after object property}}
func.func @train_step(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32> {pp.param},
                      %w1: tensor<8x8xf32> {pp.param}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
//--- unit.mlir
// expected-error @below {{cost file 'model-units.json': time_unit 'unit' is not a time; expected s, ms, us or ns}}
func.func @train_step(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32> {pp.param},
                      %w1: tensor<8x8xf32> {pp.param}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
