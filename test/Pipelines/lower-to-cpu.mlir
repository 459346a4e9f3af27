// pp-lower-to-cpu takes a verified schedule with stage functions to the LLVM
// dialect, and pp-compile runs exactly the registered pipelines.
// RUN: pp-opt %s --pp-elementwise-to-linalg --pp-schedule-pipeline="num-stages=2 num-microbatches=2 schedule=gpipe" -o %t.sched.mlir
// RUN: pp-opt %t.sched.mlir --pp-lower-to-cpu | FileCheck %s
// RUN: pp-opt %t.sched.mlir --pp-lower-to-cpu="approximate-math=false static-scratch=false" | FileCheck %s --check-prefix=PLAIN
// RUN: pp-compile %s --stages 2 --microbatches 2 --schedule gpipe --semantics rendezvous --emit=mlir -o %t.compile.mlir
// RUN: pp-opt %t.sched.mlir --pp-lower-to-cpu -o %t.opt.mlir
// RUN: diff -B %t.compile.mlir %t.opt.mlir

// Only the LLVM dialect is left, and no pp attribute.
// CHECK-NOT: func.func
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
// CHECK-NOT: pp.
// A 8x256 temporary of stage 0's backward is a static buffer; the schedule's
// runtime calls are there, the stage functions the schedule never calls
// (split B and W) are not, and tanh is arithmetic, not a libm call.
// CHECK-DAG: llvm.mlir.global private @__pp_scratch_train_step_s0_backward() {{.*}}alignment = 64 : i64{{.*}} : !llvm.array<8 x array<256 x f32>>
// CHECK-DAG: llvm.func @train_step_s0_forward(
// CHECK-DAG: llvm.func @train_step_s1_backward(
// CHECK-DAG: llvm.func @pp_define_program(
// CHECK-DAG: llvm.func @pp_run_step(
// CHECK-NOT: @train_step_s0_backward_weight
// CHECK-NOT: @train_step_s1_backward_input
// CHECK-NOT: llvm.intr.tanh
// CHECK-NOT: @malloc

// Without the stage-code options: LLVM's tanh (a libm call) and heap
// temporaries.
// PLAIN-DAG: llvm.intr.tanh
// PLAIN-DAG: llvm.call @malloc(
// PLAIN-NOT: @__pp_scratch

func.func @train_step(%x: tensor<16x32xf32>, %y: tensor<16x4xf32> {pp.target},
                      %w0: tensor<32x256xf32> {pp.param},
                      %w1: tensor<256x4xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<16x256xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %mm0 = linalg.matmul ins(%x, %w0 : tensor<16x32xf32>, tensor<32x256xf32>) outs(%z0 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h0 = math.tanh %mm0 : tensor<16x256xf32>
  %cut = pp.boundary %h0 : tensor<16x256xf32>
  %e1 = tensor.empty() : tensor<16x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %mm1 = linalg.matmul ins(%cut, %w1 : tensor<16x256xf32>, tensor<256x4xf32>) outs(%z1 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %d = arith.subf %mm1, %y : tensor<16x4xf32>
  %sq = arith.mulf %d, %d : tensor<16x4xf32>
  %ez = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%ez : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%sq : tensor<16x4xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %s = arith.addf %a, %acc : f32
      linalg.yield %s : f32
    }
  return %loss : tensor<f32>
}
