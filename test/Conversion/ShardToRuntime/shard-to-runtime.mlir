// RUN: pp-opt %s -split-input-file --convert-shard-to-runtime | FileCheck %s
// Shard collectives have no bufferization of their own: after this pass the
// stage code bufferizes.
// RUN: pp-opt %s -split-input-file --convert-shard-to-runtime \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUF

shard.grid @pp_tp(shape = 2)

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @reduce(
// CHECK-SAME: %[[X:.*]]: tensor<8x4xf32>
// CHECK: %[[SRC:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK: %[[ALLOC:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: memref.copy %[[SRC]], %[[ALLOC]]
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[ALLOC]]
// CHECK: %[[PTR:.*]] = llvm.inttoptr
// CHECK: %[[SUM:.*]] = arith.constant 0 : i32
// CHECK: call @pprt_tp_all_reduce(%c0_i32, %[[PTR]], %c32_i64, %[[SUM]]) : (i32, !llvm.ptr, i64, i32) -> ()
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[ALLOC]] restrict writable
// CHECK: return %[[R]]
// BUF-LABEL: func.func @reduce(
// BUF: call @pprt_tp_all_reduce
// BUF-NOT: shard.
func.func @reduce(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %r = shard.all_reduce %x on @pp_tp grid_axes = [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @pp_tp(shape = 2)

// A vocabulary-parallel cross-entropy's maximum (and a minimum): the
// reduction is the call's last argument (pprt_reduction: max 1, min 2).
// CHECK-LABEL: func.func @extrema(
// CHECK: %[[MAX:.*]] = arith.constant 1 : i32
// CHECK: call @pprt_tp_all_reduce(%c0_i32, %{{.*}}, %c8_i64, %[[MAX]])
// CHECK: %[[MIN:.*]] = arith.constant 2 : i32
// CHECK: call @pprt_tp_all_reduce(%{{.*}}, %{{.*}}, %{{.*}}, %[[MIN]])
// BUF-LABEL: func.func @extrema(
// BUF-COUNT-2: call @pprt_tp_all_reduce
// BUF-NOT: shard.
func.func @extrema(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %hi = shard.all_reduce %x on @pp_tp grid_axes = [0] reduction = max : tensor<8xf32> -> tensor<8xf32>
  %lo = shard.all_reduce %x on @pp_tp grid_axes = [0] reduction = min : tensor<8xf32> -> tensor<8xf32>
  return %hi, %lo : tensor<8xf32>, tensor<8xf32>
}

// -----

shard.grid @pp_tp(shape = 2)

// Gathered along dimension 1: T blocks of 8x2, block i to columns 2i, 2i+1.
// CHECK-LABEL: func.func @gather(
// CHECK: %[[RECV:.*]] = memref.alloc() : memref<2x8x2xf32>
// CHECK: call @pprt_tp_all_gather(%c0_i32, %{{.*}}, %{{.*}}, %c16_i64) : (i32, !llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: %[[BLOCKS:.*]] = bufferization.to_tensor %[[RECV]] restrict writable : memref<2x8x2xf32> to tensor<2x8x2xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[BLOCKS]] : tensor<2x8x2xf32>) outs(%{{.*}} : tensor<8x2x2xf32>) permutation = [1, 0, 2]
// CHECK: tensor.collapse_shape %[[T]] {{\[\[}}0], [1, 2]] : tensor<8x2x2xf32> into tensor<8x4xf32>
// BUF-LABEL: func.func @gather(
// BUF: call @pprt_tp_all_gather
func.func @gather(%x: tensor<8x2xf32>) -> tensor<8x4xf32> {
  %r = shard.all_gather %x on @pp_tp grid_axes = [0] gather_axis = 1 : tensor<8x2xf32> -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

shard.grid @pp_tp(shape = 2)

// This process's block of rows, and its index for the lead-rank test.
// CHECK-LABEL: func.func @slice(
// CHECK: %[[TP:.*]] = call @pprt_tp_index() : () -> i32
// CHECK: %[[I:.*]] = arith.index_cast %[[TP]] : i32 to index
// CHECK: %[[OFF:.*]] = arith.muli %[[I]], %c4
// CHECK: tensor.extract_slice %{{.*}}[%[[OFF]], 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
// CHECK: call @pprt_tp_index() : () -> i32
// CHECK-NOT: shard.
func.func @slice(%x: tensor<8x4xf32>) -> (tensor<4x4xf32>, index) {
  %r = shard.all_slice %x on @pp_tp grid_axes = [0] slice_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
  %i = shard.process_multi_index on @pp_tp axes = [0] : index
  return %r, %i : tensor<4x4xf32>, index
}
