// The cost-profile and device-file readers bound JSON nesting before parsing
// (35,000 levels overflowed the stack in llvm::json::parse) and reject
// numbers beyond the range of a double (llvm::json reads 1e400 as infinity).
// REQUIRES: python3
// RUN: rm -rf %t && mkdir %t && cd %t
// RUN: python3 -c "print('{\"format\": ' + '[' * 35000 + ']' * 35000 + '}')" > deep.json
// RUN: not pp-opt %s --pp-schedule="num-stages=2 cost-file=deep.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-DEEP
// COST-DEEP: error: cost file 'deep.json' is not valid: line 1, column 75: JSON nested more than 64 levels deep
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=deep.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-DEEP
// DEVICE-DEEP: error: device file 'deep.json': line 1, column 75: JSON nested more than 64 levels deep
// RUN: not pp-compile %pp_src_root/examples/mlp/mlp.mlir --stages 2 --cost-file deep.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE-DEEP
// COMPILE-DEEP: cost file 'deep.json' is not valid: line 1, column 75: JSON nested more than 64 levels deep

// RUN: printf '{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 1e400, "stages": []}' > inf.json
// RUN: not pp-opt %s --pp-schedule="num-stages=2 cost-file=inf.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-INF
// COST-INF: error: cost file 'inf.json': transfer is out of the range of a double
// A finite amount too large for a simulation's sums is an error at its
// place in the file; 1e308 was rejected later, naming neither file nor field.
// RUN: printf '{"format": "pp-profile-v1", "time_unit": "ms", "memory_unit": "bytes", "transfer": 1, "stages": [{"stage": 0, "forward": 1, "backward_input": 1e308, "backward_weight": 1, "activation_memory": 1, "stash_memory": 0}]}' > huge.json
// RUN: not pp-opt %s --pp-schedule="num-stages=1 cost-file=huge.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-HUGE
// COST-HUGE: error: cost file 'huge.json': stages[0].backward_input must be at most 1e280, got 1e+308
// RUN: not pp-compile %pp_src_root/examples/mlp/mlp.mlir --stages 1 --cost-file huge.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-HUGE
// RUN: printf '{"base": "cpu", "peak_flops": 1e400}' > inf-device.json
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=inf-device.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-INF
// DEVICE-INF: error: device file 'inf-device.json': the device: 'peak_flops' must be between 1 and 1e280, got inf
// A speed so small that every time is infinite made the planner report
// that no partition keeps each weight's users in one stage.
// RUN: printf '{"base": "cpu", "link_bandwidth": 1e-300}' > tiny-device.json
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=tiny-device.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-TINY
// RUN: not pp-compile %pp_src_root/examples/mlp/mlp.mlir --stages 2 --device-file tiny-device.json -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-TINY
// DEVICE-TINY: device file 'tiny-device.json': the device: 'link_bandwidth' must be between 1 and 1e280, got 1e-300
// RUN: printf '{"base": "cpu", "memory_capacity": 1e300}' > huge-device.json
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=huge-device.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-HUGE
// DEVICE-HUGE: device file 'huge-device.json': the device: 'memory_capacity' must be positive and at most 1e280, got 1e+300

func.func @train_step(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %sf = linalg.fill ins(%z : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%y : tensor<4x4xf32>) outs(%sf : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
