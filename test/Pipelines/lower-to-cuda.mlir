// pp-lower-to-cuda takes a verified schedule with stage functions to the
// LLVM dialect for NVIDIA GPUs: contractions call pprt_gemm, every other
// loop nest is a kernel in a gpu.binary for sm_90, and pp-compile
// --target=cuda runs exactly this pipeline.
// REQUIRES: nvptx
// RUN: pp-opt %s --pp-elementwise-to-linalg --pp-schedule-pipeline="num-stages=2 num-microbatches=2 schedule=gpipe" -o %t.sched.mlir
// RUN: pp-opt %t.sched.mlir --pp-lower-to-cuda="kernel-format=isa" | FileCheck %s --check-prefixes=CHECK,PTX
// RUN: %if cuda %{ pp-opt %t.sched.mlir --pp-lower-to-cuda | FileCheck %s --check-prefixes=CHECK,CUBIN %}
// RUN: %if cuda %{ pp-compile %s --target=cuda --stages 2 --microbatches 2 --schedule gpipe --emit=mlir -o %t.compile.mlir %}
// RUN: %if cuda %{ pp-opt %t.sched.mlir --pp-lower-to-cuda -o %t.opt.mlir %}
// RUN: %if cuda %{ sed -e 's/TimeInMs = [0-9]*/TimeInMs = N/g' %t.compile.mlir > %t.compile.norm %}
// RUN: %if cuda %{ sed -e 's/TimeInMs = [0-9]*/TimeInMs = N/g' %t.opt.mlir > %t.opt.norm %}
// RUN: %if cuda %{ diff -B %t.compile.norm %t.opt.norm %}

// Host code is the LLVM dialect; no tensor, buffer or loop op is left.
// CHECK-NOT: func.func
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
// CHECK-NOT: pp.
// Stage 0's forward: the 8x32 by 32x256 product is a library GEMM (cuBLAS
// under --backend cuda), then tanh one kernel: 256 threads per block along
// the contiguous dimension, a block per row (grid 1x8x1).
// CHECK-LABEL: llvm.func @train_step_s0_forward(
// CHECK-DAG: %[[C256:.*]] = llvm.mlir.constant(256 : index) : i64
// CHECK-DAG: %[[C8:.*]] = llvm.mlir.constant(8 : index) : i64
// CHECK-DAG: %[[C1:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK: llvm.call @pprt_gemm(
// CHECK: gpu.launch_func @train_step_s0_forward_kernel::@train_step_s0_forward_kernel blocks in (%[[C1]], %[[C8]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// Each kernel is a binary for sm_90: PTX text, or a CUDA ELF (EM_CUDA is
// 0xBE) that ptxas built.
// CHECK: gpu.binary @train_step_s0_forward_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90">
// PTX-SAME: assembly = "{{.*}}.target sm_90{{.*}}.visible .entry train_step_s0_forward_kernel(
// CUBIN-SAME: bin = "\7FELF\02\01\01A{{.*}}\02\00\BE\00
// Its backward: the tanh derivative into a managed temporary
// (mgpuMemAlloc's host-shared flag), the weight gradient GEMM, and the
// temporary freed on the stream.
// CHECK-LABEL: llvm.func @train_step_s0_backward(
// CHECK: %[[SHARED:.*]] = llvm.mlir.constant(1 : i8) : i8
// CHECK: llvm.call @mgpuMemAlloc(%{{.*}}, %{{.*}}, %[[SHARED]])
// CHECK: gpu.launch_func @train_step_s0_backward_kernel::
// CHECK: llvm.call @pprt_gemm(
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: llvm.call @mgpuMemFree(%{{.*}}, %[[STREAM]])
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK: gpu.binary @train_step_s1_backward_kernel
// CHECK-LABEL: llvm.func @pp_run_step(

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
