// Cost files, device files and models are read only when they are regular
// files, opened without blocking: a FIFO with no writer used to block
// open() forever, and /dev/zero was read until `LLVM ERROR: out of memory`.
// Each ends at once (under `timeout`) with one error naming the file.
// RUN: rm -rf %t && mkdir %t && cd %t && mkfifo fifo.json
// RUN: not timeout 30 pp-opt %s --pp-schedule="num-stages=2 cost-file=/dev/zero" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-ZERO
// COST-ZERO: error: cannot read cost file '/dev/zero': it is a character device; only regular files are read
// RUN: not timeout 30 pp-opt %s --pp-schedule="num-stages=2 cost-file=fifo.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-FIFO
// COST-FIFO: error: cannot read cost file 'fifo.json': it is a FIFO; only regular files are read
// RUN: not timeout 30 pp-opt %s --pp-schedule="num-stages=2 cost-file=." -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST-DIR
// COST-DIR: error: cannot read cost file '.': it is a directory; only regular files are read
// RUN: not timeout 30 pp-opt %s --pp-partition-stages="num-stages=2 device-file=fifo.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-FIFO
// DEVICE-FIFO: error: cannot read device file 'fifo.json': it is a FIFO; only regular files are read
// RUN: not timeout 30 pp-opt %s --pp-partition-stages="num-stages=2 device-file=/dev/zero" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEVICE-ZERO
// DEVICE-ZERO: error: cannot read device file '/dev/zero': it is a character device
// RUN: not timeout 30 pp-compile %pp_src_root/examples/mlp/mlp.mlir --stages 2 --cost-file /dev/zero -o /dev/null 2>&1 | FileCheck %s --check-prefix=COMPILE-ZERO
// COMPILE-ZERO: error: cannot read cost file '/dev/zero': it is a character device
// RUN: not timeout 30 pp-compile fifo.json --stages 2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODEL-FIFO
// MODEL-FIFO: cannot open input file 'fifo.json': it is a FIFO; only regular files are read
// RUN: not timeout 30 pp-compile /dev/zero --stages 2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODEL-ZERO
// MODEL-ZERO: cannot open input file '/dev/zero': it is a character device
// A model on standard input is read from a file, a pipe or a terminal, up
// to the model size bound; /dev/zero there was read until memory ran out.
// RUN: not timeout 30 pp-compile - --stages 2 -o /dev/null < /dev/zero 2>&1 | FileCheck %s --check-prefix=STDIN-ZERO
// STDIN-ZERO: cannot open input file '<stdin>': it is a character device; only regular files, pipes and terminals are read
// RUN: cat %s | pp-compile - --stages 1 --microbatches 1 --emit=schedule -o - | FileCheck %s --check-prefix=STDIN-PIPE
// RUN: pp-compile - --stages 1 --microbatches 1 --emit=schedule -o - < %s | FileCheck %s --check-prefix=STDIN-PIPE
// STDIN-PIPE: pp.schedule @train_step_schedule

func.func @train_step(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {pp.param}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tensor.empty() : tensor<f32>
  %sf = linalg.fill ins(%z : f32) outs(%s : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%y : tensor<4x4xf32>) outs(%sf : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
