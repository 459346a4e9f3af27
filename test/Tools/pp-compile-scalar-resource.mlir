// A scalar constant held as a resource, as PyTorch exports hold a scalar
// buffer (register_buffer("scale", torch.tensor(0.5))): the program and
// the profile build, and the program trains as with the constant written
// as a literal.
// REQUIRES: mpi
// RUN: pp-compile %s --stages 1 --microbatches 2 -o %t.resource
// RUN: sed 's/dense_resource<scale>/dense<5.000000e-01>/' %s > %t.literal.mlir
// RUN: pp-compile %t.literal.mlir --stages 1 --microbatches 2 -o %t.literal
// RUN: %t.resource --steps 3 | grep loss > %t.resource.txt
// RUN: %t.literal --steps 3 | grep loss > %t.literal.txt
// RUN: diff %t.resource.txt %t.literal.txt
// RUN: FileCheck %s --input-file=%t.resource.txt
// RUN: pp-compile %s --stages 2 --microbatches 2 --emit=profile --profile-steps 1 --profile-warmup 0 -o %t.json > /dev/null
// RUN: FileCheck %s --check-prefix=PROFILE --input-file=%t.json
// CHECK: step 3 loss
// PROFILE: "format": "pp-profile-v1"
func.func @train_step(%x: tensor<8x4xf32>, %y: tensor<8x2xf32> {pp.target},
                      %w0: tensor<4x4xf32> {pp.param},
                      %w1: tensor<4x2xf32> {pp.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm0 = linalg.matmul ins(%x, %w0 : tensor<8x4xf32>, tensor<4x4xf32>) outs(%z0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %h = linalg.tanh ins(%mm0 : tensor<8x4xf32>) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e = tensor.empty() : tensor<8x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %mm = linalg.matmul ins(%h, %w1 : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z : tensor<8x2xf32>) -> tensor<8x2xf32>
  %t = arith.constant dense_resource<scale> : tensor<f32>
  %bt = linalg.broadcast ins(%t : tensor<f32>) outs(%e : tensor<8x2xf32>) dimensions = [0, 1]
  %s = linalg.mul ins(%mm, %bt : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %d = linalg.sub ins(%s, %y : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %sq = linalg.mul ins(%d, %d : tensor<8x2xf32>, tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) -> tensor<8x2xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%sq : tensor<8x2xf32>) outs(%zs : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %sum : tensor<f32>
}
{-# dialect_resources: { builtin: { scale: "0x040000000000003F" } } #-}
