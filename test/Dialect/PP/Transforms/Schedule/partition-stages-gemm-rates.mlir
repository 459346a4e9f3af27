// A device file from pp-calibrate gives matrix-product rates by shape class
// (`gemm_flops`, by smallest dimension): the 64x64x64 product runs at the
// class-32 rate 1e9, the 64x4x64 one (smallest dimension 4) at the class-1
// rate 1e7, 100 times slower than peak_flops says.
// RUN: rm -rf %t && split-file %s %t
// RUN: pp-opt %t/model.mlir --pp-partition-stages="num-stages=2 device-file=%t/peak.json print-table" -o /dev/null | FileCheck %s --check-prefix=PEAK
// RUN: pp-opt %t/model.mlir --pp-partition-stages="num-stages=2 device-file=%t/classes.json print-table" -o /dev/null | FileCheck %s --check-prefix=CLASSES
// RUN: not pp-opt %t/model.mlir --pp-partition-stages="num-stages=2 device-file=%t/unordered.json" 2>&1 | FileCheck %s --check-prefix=UNORDERED
// RUN: not pp-opt %t/model.mlir --pp-partition-stages="num-stages=2 device-file=%t/malformed.json" 2>&1 | FileCheck %s --check-prefix=MALFORMED

// PEAK:      0     0    0-0       5.243e+05  0.0005243
// PEAK-NEXT: 1     1    1-1       3.277e+04  3.277e-05
// CLASSES:      0     0    0-0       5.243e+05  0.0005243
// CLASSES-NEXT: 1     1    1-1       3.277e+04  0.003277 
// UNORDERED: error: device file '{{.*}}unordered.json': the device: gemm_flops[1]: min_dim must grow from entry to entry
// MALFORMED: error: device file '{{.*}}malformed.json': the device: gemm_flops[0] must be {"min_dim": ..., "flops": ...}

//--- peak.json
{"base": "cpu", "peak_flops": 1e9, "memory_bandwidth": 1e15}
//--- classes.json
{"base": "cpu", "peak_flops": 1e9, "memory_bandwidth": 1e15,
 "gemm_flops": [{"min_dim": 1, "flops": 1e7}, {"min_dim": 32, "flops": 1e9}],
 "meta": {"tool": "pp-calibrate"}}
//--- unordered.json
{"base": "cpu", "gemm_flops": [{"min_dim": 32, "flops": 1e9}, {"min_dim": 1, "flops": 1e7}]}
//--- malformed.json
{"base": "cpu", "gemm_flops": [{"min_dim": 32}]}
//--- model.mlir
func.func @train_step(%x: tensor<64x64xf32>, %w0: tensor<64x64xf32> {pp.param},
                      %w1: tensor<64x4xf32> {pp.param}) -> tensor<64x4xf32> {
  %e0 = tensor.empty() : tensor<64x64xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<64x64xf32>, tensor<64x64xf32>)
                     outs(%e0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e1 = tensor.empty() : tensor<64x4xf32>
  %y = linalg.matmul ins(%h, %w1 : tensor<64x64xf32>, tensor<64x4xf32>)
                     outs(%e1 : tensor<64x4xf32>) -> tensor<64x4xf32>
  return %y : tensor<64x4xf32>
}
