// The planner's table, devices, schedules and placements on four matmuls:
// x (4x64) through weights 64x64, 64x64, 64x8, 8x8. On the default cpu device
// (20 GB/s) every matmul is memory bound: the first moves 1024 (x) + 16384
// (w0) + 1024 (outs) + 1024 (result) = 19456 bytes, F = 9.728e-07 s, and the
// rank time is 3F + 2 x (1 us + 1024 B / 10 GB/s) = 5.1232e-06 s.
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 print-table" -o /dev/null | FileCheck %s --check-prefix=TABLE
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/half-speed-rank-1.json print-table" | FileCheck %s --check-prefix=SLOW
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 num-microbatches=4 memory-cap=40000 print-table" -o /dev/null | FileCheck %s --check-prefix=MEMORY
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 num-microbatches=4 memory-cap=0,40000 print-table" -o /dev/null | FileCheck %s --check-prefix=RANK-MEMORY
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 num-microbatches=4 schedule=pipedream-2bw print-table" -o /dev/null | FileCheck %s --check-prefix=TWO-VERSIONS
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 num-microbatches=4 schedule=pipedream-2bw memory-cap=40000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWO-VERSIONS-CAP
// RUN: pp-opt %s --pp-partition-stages="num-stages=4 num-ranks=2 schedule=interleaved-1f1b num-microbatches=2 device=h200,cpu print-table" -o /dev/null | FileCheck %s --check-prefix=LOOPED
// RUN: pp-opt %s --pp-partition-stages="num-stages=4 num-ranks=2 schedule=zbv num-microbatches=4 device=h200 print-table" -o /dev/null | FileCheck %s --check-prefix=VSHAPE
// RUN: pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/h200-custom.json print-costs" -o /dev/null | FileCheck %s --check-prefix=COSTS

// The FLOPs-balanced cut: 32768 FLOPs | 32768 + 4096 + 512. Stage 0's
// input x takes no gradient: its B is 0, and W carries its backward, 2F.
// TABLE:      stage rank ops       flops      F(s)       B(s)       W(s)       params(B)  acts(B)    in-flight send(B)
// TABLE-NEXT: 0     0    0-0       3.277e+04  9.728e-07  0          1.946e-06  1.638e+04  1024       1         1024
// TABLE-NEXT: 1     1    1-3       3.738e+04  1.171e-06  1.171e-06  1.171e-06  1.869e+04  2176       1         0
// TABLE-NEXT: rank  device   time(s)      memory(B)    cap(B)
// TABLE-NEXT: 0     cpu      5.1232e-06   33792        8.58993e+09
// TABLE-NEXT: 1     cpu      5.7184e-06   39552        8.58993e+09  bottleneck
// TABLE-NEXT: bottleneck: rank 1, 5.7184e-06 s per micro-batch

// Rank 1 at half speed gets only the two small matmuls.
// SLOW: 0     0    0-1
// SLOW: 1     1    2-3
// SLOW: 1     slow
// SLOW: pp.stage 0
// SLOW-COUNT-2: linalg.matmul
// SLOW: pp.stage 1
// SLOW-COUNT-2: linalg.matmul

// 1f1b with 4 micro-batches: rank 0 holds 2 of them, rank 1 one, and
// 2 x 16384 + 2 x 1024 = 34816 and 2 x 18688 + 2176 = 39552 bytes fit 40000
// (gpipe, holding 4, does not: partition-stages-memory-errors.mlir).
// MEMORY: 0     0    0-0 {{.*}} 2         1024
// MEMORY: 1     1    1-3 {{.*}} 1         0
// MEMORY: 0     cpu      5.1232e-06   34816        40000
// MEMORY: 1     cpu      5.7184e-06   39552        40000        bottleneck
// A cap for rank 1 alone: 0 keeps rank 0's device capacity.
// RANK-MEMORY: 0     0    0-0 {{.*}} 2         1024
// RANK-MEMORY: 1     1    1-3 {{.*}} 1         0
// RANK-MEMORY: 0     cpu      5.1232e-06   34816        8.58993e+09
// RANK-MEMORY: 1     cpu      5.7184e-06   39552        40000        bottleneck

// pipedream-2bw keeps a second version of every weight: 3 copies instead
// of 2, so rank 0 holds 3 x 16384 + 2 x 1024 = 51200 and rank 1
// 3 x 18688 + 2176 = 58240 bytes, and the cap of 40000 that 1f1b's plan
// fits holds no plan.
// TWO-VERSIONS: 0     cpu      5.1232e-06   51200        8.58993e+09
// TWO-VERSIONS: 1     cpu      5.7184e-06   58240        8.58993e+09  bottleneck
// TWO-VERSIONS: bottleneck: rank 1, 5.7184e-06 s per micro-batch (F + B + W and transfers; weights x3)
// TWO-VERSIONS-CAP: error: no partition into 2 stages fits the memory caps; the smallest feasible cap is 58240 bytes per rank

// Interleaved: stage s on rank s mod 2; a rank's time sums its stages.
// LOOPED: 0     0    0-0
// LOOPED: 1     1    1-1
// LOOPED: 2     0    2-2
// LOOPED: 3     1    3-3
// LOOPED: 0     h200
// LOOPED: 1     cpu {{.*}} bottleneck

// V shape: stages 0 and 3 on rank 0, 1 and 2 on rank 1; the boundary
// between stages 1 and 2 stays on rank 1 and costs nothing.
// VSHAPE: 0     0    0-0
// VSHAPE: 1     1    1-1
// VSHAPE: 2     1    2-2
// VSHAPE: 3     0    3-3

// COSTS: {"ops":[{"name":"linalg.matmul","flops":32768,"bytes":19456,"weights":[1],"reads":[0],"writes":[1]},
// COSTS-SAME: "values":[{"bytes":1024,"definer":-1,"last_use":0},{"bytes":1024,"definer":0,"last_use":1},
// COSTS-SAME: "weight_bytes":[0,16384,16384,2048,256],"markers":[]}

func.func @train_step(%x: tensor<4x64xf32>, %w0: tensor<64x64xf32> {pp.param},
                      %w1: tensor<64x64xf32> {pp.param},
                      %w2: tensor<64x8xf32> {pp.param},
                      %w3: tensor<8x8xf32> {pp.param}) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e64 = tensor.empty() : tensor<4x64xf32>
  %z64 = linalg.fill ins(%zero : f32) outs(%e64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %e8 = tensor.empty() : tensor<4x8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %b = linalg.matmul ins(%a, %w1 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z64 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %c = linalg.matmul ins(%b, %w2 : tensor<4x64xf32>, tensor<64x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = linalg.matmul ins(%c, %w3 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}
