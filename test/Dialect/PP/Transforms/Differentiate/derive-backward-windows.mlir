// RUN: pp-opt %s -split-input-file --pp-derive-backward | FileCheck %s

// A convolution's input gradient (stride 3, dilation 2): the loop over
// output positions runs over the input's positions instead, and the result
// gradient, spread by the stride into zeros and padded by the window's
// reach (2 * (3 - 1) = 4), is read at `position - 2 * offset + 4`, so the
// sum over the window's offsets is the transposed convolution. The weight
// gradient reads the input through the forward's window. Neither reads the
// operand it is the gradient of, so the backward's inputs are the loss
// gradient, the weight for the input gradient and the input for the weight
// gradient, nothing more.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
// CHECK-DAG: #[[SPREAD:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2 - d4 * 2 + 4)>
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 * 3 + d4 * 2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<2x4x3xf32> {pp.slot = #pp.slot<loss_grad>}
// CHECK-SAME: %[[WA:[a-z0-9]+]]: tensor<4x3x3xf32> {pp.slot = #pp.slot<param 1>}
// CHECK-SAME: %[[XA:[a-z0-9]+]]: tensor<2x3x12xf32> {pp.slot = #pp.slot<param 0>}
// CHECK: %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<2x4x16xf32>
// CHECK: %[[SPREADG:.*]] = tensor.insert_slice %[[G]] into %[[ZEROS]][0, 0, 4] [2, 4, 3] [1, 1, 3] : tensor<2x4x3xf32> into tensor<2x4x16xf32>
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[W]], #[[SPREAD]], #[[X]]], iterator_types = ["parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%[[WA]], %[[SPREADG]] : {{.*}}) outs(%{{.*}} : tensor<2x3x12xf32>)
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#[[WINDOW]], #[[Y]], #[[W]]], iterator_types = ["reduction", "parallel", "reduction", "parallel", "parallel"]} ins(%[[XA]], %[[G]] : {{.*}}) outs(%{{.*}} : tensor<4x3x3xf32>)
// CHECK: return %[[DX]], %[[DW]]
func.func @train_step(%x: tensor<2x3x12xf32> {pp.param}, %w: tensor<4x3x3xf32> {pp.param}) -> tensor<2x4x3xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<2x3x12xf32>, tensor<4x3x3xf32>) -> tensor<2x4x3xf32> {
  ^bb0(%a: tensor<2x3x12xf32>, %b: tensor<4x3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x4x3xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    %y = linalg.conv_1d_ncw_fcw {dilations = dense<2> : vector<1xi64>, strides = dense<3> : vector<1xi64>}
        ins(%a, %b : tensor<2x3x12xf32>, tensor<4x3x3xf32>) outs(%init : tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
    pp.yield %y : tensor<2x4x3xf32>
  }
  return %r : tensor<2x4x3xf32>
}

// -----

// Max pooling (window 3, stride 2): the max rule's tie count runs over the
// forward's windows; the routed gradient spreads the max and the shared
// result gradient alike, so each input position compares itself with the
// max of every window that holds it.
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + d3)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-DAG: #[[SPREAD:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 - d3 + 2)>
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: %[[XA:[a-z0-9]+]]: tensor<2x3x7xf32> {pp.slot = #pp.slot<param 0>}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<2x3x3xf32> {pp.slot = #pp.slot<saved stage 0 value 0>}
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<2x3x3xf32> {pp.slot = #pp.slot<loss_grad>}
// CHECK: %[[COUNT:.*]] = linalg.generic {indexing_maps = [#[[WINDOW]], #[[Y]], #[[K]], #[[Y]]]
// CHECK: %[[SHARE:.*]] = linalg.div ins(%[[G]], %[[COUNT]] :
// CHECK: %[[SPREADM:.*]] = tensor.insert_slice %[[M]] into %{{.*}}[0, 0, 2] [2, 3, 3] [1, 1, 2] : tensor<2x3x3xf32> into tensor<2x3x9xf32>
// CHECK: %[[SPREADS:.*]] = tensor.insert_slice %[[SHARE]] into %{{.*}}[0, 0, 2] [2, 3, 3] [1, 1, 2] : tensor<2x3x3xf32> into tensor<2x3x9xf32>
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[Y]], #[[SPREAD]], #[[SPREAD]], #[[K]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XA]], %[[SPREADM]], %[[SPREADS]], %{{.*}} : {{.*}}) outs(%{{.*}} : tensor<2x3x7xf32>)
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[MV:.*]]: f32, %[[SV:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK: %[[ATTAINS:.*]] = arith.cmpf oeq, %[[XV]], %[[MV]] : f32
// CHECK: arith.select %[[ATTAINS]], %[[SV]], %{{.*}} : f32
// CHECK: return %[[DX]]
func.func @train_step(%x: tensor<2x3x7xf32> {pp.param}) -> tensor<2x3x3xf32> {
  %r = pp.stage 0 (%x) : (tensor<2x3x7xf32>) -> tensor<2x3x3xf32> {
  ^bb0(%a: tensor<2x3x7xf32>):
    %lowest = arith.constant -3.40282347E+38 : f32
    %e = tensor.empty() : tensor<2x3x3xf32>
    %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %window = tensor.empty() : tensor<3xf32>
    %y = linalg.pooling_ncw_max {dilations = dense<1> : vector<1xi64>, strides = dense<2> : vector<1xi64>}
        ins(%a, %window : tensor<2x3x7xf32>, tensor<3xf32>) outs(%init : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    pp.yield %y : tensor<2x3x3xf32>
  }
  return %r : tensor<2x3x3xf32>
}

// -----

// A 2-D grouped convolution, as torch-mlir writes nn.Conv2d(groups=2):
// both spatial dimensions spread at once, the group loop stays plain.
// CHECK-DAG: #[[SPREAD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3 - d6 * 2 + 4, d4 - d7 * 2 + 4)>
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 4, 4] [2, 2, 2, 3, 3] [1, 1, 1, 1, 1] : tensor<2x2x2x3x3xf32> into tensor<2x2x2x11x11xf32>
// CHECK: linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #[[SPREAD]], #{{[a-z0-9]+}}], {{.*}} outs(%{{.*}} : tensor<2x2x2x7x7xf32>)
func.func @train_step(%x: tensor<2x2x2x7x7xf32> {pp.param}, %w: tensor<2x2x2x3x3xf32> {pp.param}) -> tensor<2x2x2x3x3xf32> {
  %r = pp.stage 0 (%x, %w) : (tensor<2x2x2x7x7xf32>, tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32> {
  ^bb0(%a: tensor<2x2x2x7x7xf32>, %b: tensor<2x2x2x3x3xf32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x2x2x3x3xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
    %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
        ins(%a, %b : tensor<2x2x2x7x7xf32>, tensor<2x2x2x3x3xf32>) outs(%init : tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
    pp.yield %y : tensor<2x2x2x3x3xf32>
  }
  return %r : tensor<2x2x2x3x3xf32>
}
