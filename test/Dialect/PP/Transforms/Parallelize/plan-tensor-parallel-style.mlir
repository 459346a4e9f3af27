// RUN: pp-opt %s -verify-diagnostics --pp-plan-tensor-parallel=style=zigzag

// expected-error @+1 {{unknown tensor-parallel plan style 'zigzag'; the known one is megatron}}
func.func @train_step(%x: tensor<8x16xf32>, %w: tensor<16x8xf32> {pp.param}) -> tensor<8x16xf32> {
  return %x : tensor<8x16xf32>
}
