// pp-lower-to-cuda{precision=bf16} on lower-to-cuda.mlir's model: each
// GEMM's A and B are rounded into managed bf16 temporaries by a kernel each
// (PTX cvt.rn.bf16.f32), pprt_gemm reads them as bf16 (ab_type 2) into an
// f32 C (c_type 0), and the temporaries are freed after the call.
// REQUIRES: nvptx
// RUN: pp-opt %S/lower-to-cuda.mlir --pp-elementwise-to-linalg --pp-schedule-pipeline="num-stages=2 num-microbatches=2 schedule=gpipe" -o %t.sched.mlir
// RUN: pp-opt %t.sched.mlir --pp-lower-to-cuda="kernel-format=isa precision=bf16" | FileCheck %s
// RUN: pp-opt %t.sched.mlir --pp-lower-to-cuda="kernel-format=isa" | FileCheck %s --check-prefix=FP32

// CHECK-LABEL: llvm.func @train_step_s0_forward(
// CHECK-DAG: %[[F32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[BF16:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: gpu.launch_func @train_step_s0_forward_kernel::@train_step_s0_forward_kernel
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: gpu.launch_func @train_step_s0_forward_kernel_0::@train_step_s0_forward_kernel
// CHECK: llvm.call @pprt_gemm(%[[BF16]], %[[F32]],
// CHECK: llvm.call @mgpuMemFree(
// CHECK: llvm.call @mgpuMemFree(
// CHECK: gpu.binary @train_step_s0_forward_kernel [{{.*}}cvt.rn.bf16.f32
// CHECK: gpu.binary @train_step_s0_forward_kernel_0 [{{.*}}cvt.rn.bf16.f32

// The default keeps fp32 inputs: no bf16 anywhere.
// FP32-NOT: bf16
