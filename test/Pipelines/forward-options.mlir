// The pipelines hand each pass the pipeline options it has a namesake for,
// and keep those that mean something else there: the options each pass
// of the built pipeline gets. (The empty module has no training step and no
// schedule, so the runs fail after the pipeline is printed.)

// RUN: not pp-opt %s --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   --pass-pipeline="builtin.module(pp-schedule-pipeline{num-microbatches=8 num-stages=4 schedule=zbv split-backward=true semantics=async slices=2 slice-split=balanced tensor-parallel=2 vocabulary-parallel=true num-replicas=2 zero=1 memory-cap=1e9 device=cpu,h200 recompute=auto plan-ranks=3 function=step})" \
// RUN:   | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: pp-plan-tensor-parallel{function=step style=megatron tensor-parallel=2 vocabulary=true}
// SCHEDULE: pp-split-sequence{function=step seq-dim=1 slices=2 split=balanced}
// SCHEDULE: pp-split-microbatches{function=step num-microbatches=8}
// The planner plans for plan-ranks, reads the micro-batches from the split
// and takes the memory cap in bytes.
// SCHEDULE: pp-partition-stages{cost-file= device={cpu,h200} device-file= function=step memory-cap={1.000000e+09} num-microbatches=0 num-ranks=3 num-stages=4 {{.*}} recompute=auto record-costs=true schedule=zbv}
// SCHEDULE: pp-split-slice-stages{function=step}
// SCHEDULE: pp-derive-backward{function=step}
// pp-schedule's memory cap, stages and recompute are its own.
// SCHEDULE: pp-schedule{{[{].*}} function=step num-microbatches=8 num-ranks=0 num-stages=0 schedule=zbv semantics=async slices=2 split-backward=true }
// SCHEDULE-NOT: pp-schedule{{.*}}memory-cap=
// SCHEDULE: pp-insert-transfers{num-replicas=2 semantics=rendezvous zero={1} zero-gather=stage}
// SCHEDULE: pp-shard-stages{tensor-parallel=2}

// RUN: not pp-opt %s --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   --pass-pipeline="builtin.module(pp-lower-to-cpu{precision=bf16 vector-bits=256 max-stack-bytes=100 vectorize-contractions=true parallel-loops=true parallel-min-work=5})" \
// RUN:   | FileCheck %s --check-prefix=CPU
// bf16 makes every contraction a library call whatever gemm says.
// CPU: pp-select-gemm{batch-by-product=false gemm=library {{.*}}vectorize-contractions=true}
// CPU: pp-static-scratch{alignment=64 max-stack-bytes=100}
// CPU: convert-gemm-to-runtime{precision=bf16}
// CPU: pp-vectorize-contractions{{[{].*}}vector-bits=256
// CPU: pp-vectorize-elementwise{{[{].*}}vector-bits=256
// CPU: pp-parallelize-loop-nests{min-work=5}

// Attention's products as FMA tiles: the choice and the tile shape.
// RUN: not pp-opt %s --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   --pass-pipeline="builtin.module(pp-lower-to-cpu{batch-by-product=true wide-tile-vectors=4})" \
// RUN:   | FileCheck %s --check-prefix=HEADS
// HEADS: pp-select-gemm{batch-by-product=true gemm=auto
// HEADS: pp-vectorize-contractions{{[{].*}}wide-tile-vectors=4}

// RUN: not pp-opt %s --dump-pass-pipeline -o /dev/null 2>&1 \
// RUN:   --pass-pipeline="builtin.module(pp-lower-to-cuda{precision=bf16 block-size=128})" \
// RUN:   | FileCheck %s --check-prefix=CUDA
// CUDA: convert-gemm-to-runtime{precision=bf16}
// CUDA: pp-map-parallel-loops{block-size=128}

module {}
