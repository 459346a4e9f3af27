// Bad planner options and device files are diagnosed on the training step.
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device=tpu" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device=cpu,cpu,cpu" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/three-devices.json" 2>&1 | FileCheck %s --check-prefix=FILECOUNT
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/bad-device-field.json" 2>&1 | FileCheck %s --check-prefix=FIELD
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/incomplete-device.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device-file=%S/../Inputs/none.json" 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 device=cpu device-file=%S/../Inputs/h200-custom.json" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 schedule=fastest" 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not pp-opt %s --pp-partition-stages="num-stages=3 num-ranks=2" 2>&1 | FileCheck %s --check-prefix=PLACE
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 num-ranks=1 schedule=1f1b" 2>&1 | FileCheck %s --check-prefix=GENERATOR
// RUN: not pp-opt %s --pp-partition-stages="num-stages=-2" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 num-microbatches=-1" 2>&1 | FileCheck %s --check-prefix=MICRO
// RUN: not pp-opt %s --pp-partition-stages="num-stages=513" 2>&1 | FileCheck %s --check-prefix=PLANNED
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 memory-cap=1e9,1e9,1e9" 2>&1 | FileCheck %s --check-prefix=CAPCOUNT
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 memory-cap=1e9,-1" 2>&1 | FileCheck %s --check-prefix=CAPNEGATIVE
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 memory-cap=inf" 2>&1 | FileCheck %s --check-prefix=CAPINF
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 memory-cap=nan" 2>&1 | FileCheck %s --check-prefix=CAPNAN
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 param-copies=-1" 2>&1 | FileCheck %s --check-prefix=COPIES
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 param-copies=nan" 2>&1 | FileCheck %s --check-prefix=COPIESNAN
// RUN: not pp-opt %s --pp-partition-stages="num-stages=2 param-copies=1e9" 2>&1 | FileCheck %s --check-prefix=COPIESHUGE

// CAPCOUNT: error: memory-cap has 3 values, expected 1 or one per rank (2)
// CAPNEGATIVE: error: memory-cap must be a finite number of bytes between 0 (the device's capacity) and 1e280, got -1
// CAPINF: error: memory-cap must be a finite number of bytes between 0 (the device's capacity) and 1e280, got inf
// CAPNAN: error: memory-cap must be a finite number of bytes between 0 (the device's capacity) and 1e280, got nan
// COPIES: error: param-copies must be between 0 and 1024, got -1
// COPIESNAN: error: param-copies must be between 0 and 1024, got nan
// COPIESHUGE: error: param-copies must be between 0 and 1024, got 1e+09

// NAME: [[@LINE+12]]:1: error: unknown device 'tpu'; the built-in devices are cpu, h200
// COUNT: error: 3 devices given for 2 ranks; give one for every rank or one per rank
// FILECOUNT: error: 3 devices given for 2 ranks
// FIELD: error: device file '{{.*}}bad-device-field.json': rank 1's device: unknown field 'peak_flop'
// MISSING: error: device file '{{.*}}incomplete-device.json': the device: missing 'link_bandwidth' (or a 'base' device to take it from)
// NOFILE: error: cannot read device file '{{.*}}none.json'
// BOTH: error: give either 'device' or 'device-file', not both
// SCHEDULE: for the --schedule option: unknown schedule 'fastest'; expected one of: gpipe, 1f1b
// PLACE: error: cannot place 3 stages on 2 ranks with 1 micro-batches
// GENERATOR: error: {{.*}}1f1b
// NEGATIVE: error: num-stages must be at least 1 without stage markers, got -2
// MICRO: error: num-microbatches must be at least 1, got -1
func.func @train_step(%x: tensor<4x3xf32>, %w: tensor<3x3xf32> {pp.param}) -> tensor<4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %a = linalg.add ins(%x, %x : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %b = linalg.exp ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = linalg.exp ins(%b : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}

// The planner's search grows as stages x ops^2.
// PLANNED: error: num-stages is 513; at most 512 stages are planned (pp-schedule takes up to 65536 stage functions)
