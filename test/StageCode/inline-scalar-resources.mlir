// RUN: pp-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(pp-inline-scalar-resources))' | FileCheck %s

// A scalar resource becomes the literal of its blob; a larger one stays a
// resource.
// CHECK-LABEL: func.func @scalars
// CHECK-DAG: arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG: arith.constant dense<3> : tensor<i64>
// CHECK-DAG: arith.constant dense<true> : tensor<i1>
// CHECK-DAG: arith.constant dense_resource<vector> : tensor<2xf32>
// CHECK-NOT: dense_resource<{{scale|count|flag}}>
func.func @scalars() -> (tensor<f32>, tensor<i64>, tensor<i1>, tensor<2xf32>) {
  %scale = arith.constant dense_resource<scale> : tensor<f32>
  %count = arith.constant dense_resource<count> : tensor<i64>
  %flag = arith.constant dense_resource<flag> : tensor<i1>
  %vector = arith.constant dense_resource<vector> : tensor<2xf32>
  return %scale, %count, %flag, %vector : tensor<f32>, tensor<i64>, tensor<i1>, tensor<2xf32>
}
{-# dialect_resources: { builtin: {
  scale: "0x040000000000003F",
  count: "0x080000000300000000000000",
  flag: "0x0100000001",
  vector: "0x040000000000803F00000040"
} } #-}

// -----

func.func @missing() -> tensor<f32> {
  // expected-error @+1 {{reads the resource 'absent', whose data the module does not hold}}
  %t = arith.constant dense_resource<absent> : tensor<f32>
  return %t : tensor<f32>
}

// -----

func.func @wrong_size() -> tensor<f32> {
  // expected-error @+1 {{reads the resource 'short' of 2 bytes as 'tensor<f32>'}}
  %t = arith.constant dense_resource<short> : tensor<f32>
  return %t : tensor<f32>
}
{-# dialect_resources: { builtin: { short: "0x040000000000" } } #-}
