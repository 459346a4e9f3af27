//===- Passes.h - pp's registered pass pipelines ----------------*- C++ -*-===//
//
// The pass pipelines that take a model to a verified schedule and a
// schedule to the LLVM dialect, with their options; pp-compile and pp-opt
// both run them.
//
//===----------------------------------------------------------------------===//

#ifndef PP_PIPELINES_PASSES_H
#define PP_PIPELINES_PASSES_H

#include "pp/Scheduling/PartitionPlanner.h"
#include "pp/Scheduling/ScheduleOption.h"
#include "pp/StageCode/GemmLayout.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace pp {

/// The values of the pipelines' `zero-gather` option.
inline auto getZeroGatherValues() {
  return llvm::cl::values(
      clEnumValN(ZeroGather::Stage, "stage",
                 "a stage's weights once per step, held until its "
                 "optimizer step"),
      clEnumValN(ZeroGather::Param, "param",
                 "each weight around each stage function's reads of it"));
}

/// Options of `pp-schedule-pipeline`: the pipeline to train on and the
/// devices the stage planner plans for. pp-compile and pp.compile take
/// them under their own spellings (pp/Compiler/Compile.h), with these
/// descriptions as their help.

struct SchedulePipelineOptions
    : public PassPipelineOptions<SchedulePipelineOptions> {
  PassOptions::Option<std::string> function{
      *this, "function", llvm::cl::desc("Training-step function"),
      llvm::cl::init("train_step")};
  PassOptions::Option<int64_t> numMicrobatches{
      *this, "num-microbatches", llvm::cl::desc("Micro-batches per step"),
      llvm::cl::init(1)};
  PassOptions::Option<int64_t> numStages{*this, "num-stages",
                                         llvm::cl::desc("Pipeline stages"),
                                         llvm::cl::init(1)};
  PassOptions::Option<int64_t> numRanks{
      *this, "num-ranks",
      llvm::cl::desc("Pipeline ranks (default: one per stage; fewer for "
                     "interleaved schedules)"),
      llvm::cl::init(0)};
  /// The help lists the registry's schedules as it is when the options are
  /// made (pass plugins' included).
  PassOptions::Option<sched::ScheduleChoice> schedule{
      *this, "schedule", llvm::cl::desc(sched::getScheduleOptionHelp()),
      llvm::cl::init(sched::ScheduleChoice::get("1f1b"))};
  PassOptions::Option<TransferSemantics> semantics{
      *this, "semantics",
      llvm::cl::desc("How the program's transfers synchronise: the "
                     "scheduler times candidates, pp-insert-transfers "
                     "orders and pp-simulate times the program under it "
                     "(default rendezvous, an order that runs on NCCL and "
                     "MPI alike; pp-compile's default is its target's: "
                     "async on CPUs, rendezvous with CUDA)"),
      llvm::cl::init(TransferSemantics::rendezvous),
      llvm::cl::values(clEnumValN(TransferSemantics::async, "async",
                                  "sends never block (MPI)"),
                       clEnumValN(TransferSemantics::rendezvous, "rendezvous",
                                  "a send waits for its receive (NCCL)"))};
  PassOptions::Option<bool> splitBackward{
      *this, "split-backward",
      llvm::cl::desc("Run each backward as input gradient (B) then weight "
                     "gradient (W)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> slices{
      *this, "slices",
      llvm::cl::desc("Sequence slices per micro-batch: the step is computed "
                     "in k slices of its sequence, each stage's slices run "
                     "as their own actions (schedule seq1f1b; "
                     "docs/Seq1F1B.md)"),
      llvm::cl::init(1)};
  PassOptions::Option<std::string> sliceSplit{
      *this, "slice-split",
      llvm::cl::desc("How the sequence is cut into slices: uniform "
                     "(default) or balanced (equal estimated work, later "
                     "slices shorter where causal attention dominates)"),
      llvm::cl::init("uniform")};
  PassOptions::Option<int64_t> numReplicas{
      *this, "num-replicas",
      llvm::cl::desc("Data-parallel replicas of the pipeline: the program "
                     "then runs on ranks x replicas MPI processes and "
                     "all-reduces each stage's weight gradients"),
      llvm::cl::init(1)};
  PassOptions::ListOption<int64_t> zero{
      *this, "zero",
      llvm::cl::desc("ZeRO stage of the data-parallel replicas, one for "
                     "every stage or one per stage (comma separated): 0 "
                     "(default), 1, the optimizer state sharded over them "
                     "(reduce-scatter, update of each replica's block, "
                     "all-gather), or 3, the weights sharded too (gathered "
                     "before each stage's first compute; "
                     "docs/DataParallel.md)")};
  PassOptions::Option<ZeroGather> zeroGather{
      *this, "zero-gather",
      llvm::cl::desc("ZeRO-3's unit of gathering the weights, recorded on "
                     "the schedule (default stage)"),
      llvm::cl::init(ZeroGather::Stage), getZeroGatherValues()};
  PassOptions::Option<int64_t> tensorParallel{
      *this, "tensor-parallel",
      llvm::cl::desc("Processes per tensor-parallel group: each pipeline "
                     "rank becomes T processes running the same actions, "
                     "its weights split as their pp.split says or, "
                     "without one, as Megatron-LM splits an MLP (the "
                     "program then runs on ranks x T x replicas processes; "
                     "docs/TensorParallel.md)"),
      llvm::cl::init(1)};
  PassOptions::Option<int64_t> devices{
      *this, "devices",
      llvm::cl::desc("Devices to lay out: pp-plan-parallelism chooses the "
                     "tensor-parallel size, the stages and the replicas "
                     "(T x stages x replicas = devices) that the options "
                     "do not set, for the memory-cap per device (default "
                     "0: no planning; docs/TensorParallel.md)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> planOptimizer{
      *this, "plan-optimizer",
      llvm::cl::desc("Optimizer whose state --devices counts in each "
                     "device's memory: sgd or adam (default adam)"),
      llvm::cl::init("adam")};
  PassOptions::ListOption<int64_t> planZero{
      *this, "plan-zero",
      llvm::cl::desc("ZeRO levels --devices chooses from, per stage, where "
                     "zero is not given: each stage takes the first, in "
                     "ascending order, that fits the memory-cap; comma "
                     "separated (default 0,1,3, without 3 where the other "
                     "options cannot run it; docs/DataParallel.md)")};
  PassOptions::Option<bool> vocabularyParallel{
      *this, "vocabulary-parallel",
      llvm::cl::desc("With tensor-parallel above 1, also split the token "
                     "embedding table and the head on the vocabulary, as "
                     "Megatron-LM's vocabulary-parallel embedding and "
                     "cross-entropy; nothing at tensor-parallel=1, as for "
                     "the unsplit reference; docs/TensorParallel.md)"),
      llvm::cl::init(false)};
  PassOptions::Option<sched::ScheduleChoice> planSchedule{
      *this, "plan-schedule",
      llvm::cl::desc("Schedule the stage planner plans for (default: "
                     "schedule)")};
  PassOptions::Option<int64_t> planRanks{
      *this, "plan-ranks",
      llvm::cl::desc("Ranks the stage planner plans for (default -1: "
                     "num-ranks)"),
      llvm::cl::init(-1)};
  PassOptions::ListOption<std::string> device{
      *this, "device",
      llvm::cl::desc("Device the stage planner costs each pipeline rank on: "
                     "cpu or h200 for every rank, or one per rank, comma "
                     "separated (default cpu; docs/CostModel.md)")};
  PassOptions::Option<std::string> deviceFile{
      *this, "device-file",
      llvm::cl::desc("JSON file describing every rank's device for the "
                     "stage planner (docs/CostModel.md)"),
      llvm::cl::value_desc("file"), llvm::cl::init("")};
  PassOptions::Option<std::string> costFile{
      *this, "cost-file",
      llvm::cl::desc("pp-profile-v1 JSON measured on the partition these "
                     "options plan: the stage planner calibrates its costs "
                     "with it and plans again (docs/CostModel.md)"),
      llvm::cl::value_desc("file"), llvm::cl::init("")};
  PassOptions::ListOption<double> memoryCap{
      *this, "memory-cap",
      llvm::cl::desc("Bytes each pipeline rank may hold, for the stage "
                     "planner: one value for every rank or one per rank, "
                     "comma separated (default: the device's memory; "
                     "docs/CostModel.md)")};
  PassOptions::Option<RecomputePolicy> recompute{
      *this, "recompute",
      llvm::cl::desc("Which stages' backwards recompute their forward from "
                     "the stage inputs instead of keeping activations "
                     "(default none; docs/Recompute.md)"),
      llvm::cl::init(RecomputePolicy::None),
      llvm::cl::values(
          clEnumValN(RecomputePolicy::None, "none", "no stage"),
          clEnumValN(RecomputePolicy::All, "all", "every stage"),
          clEnumValN(RecomputePolicy::Auto, "auto",
                     "those the stage planner needs to fit every rank's "
                     "memory cap, at the least added compute"))};
};

/// The tensor-level options pp-lower-to-cpu and pp-lower-to-cuda share:
/// each means the same in both pipelines.
template <typename Derived>
struct StageCodePipelineOptions : public PassPipelineOptions<Derived> {
  using PassOptions = mlir::detail::PassOptions; // a dependent base's name
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Polynomial approximations of tanh, exp, expm1 and "
                     "erf, and divisions by constants as multiplications, "
                     "in stage code (default true; false: libm calls and "
                     "divisions; the same on CPUs and GPUs, so both compute "
                     "alike)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> factorContractions{
      *this, "factor-contractions",
      llvm::cl::desc("Split contractions of products into GEMMs and "
                     "elementwise ops (pp-factor-contractions; on by "
                     "default)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse elementwise ops on tensors into their consumers "
                     "(pp-fuse-elementwise; on by default; on a GPU one "
                     "kernel per fused chain)"),
      llvm::cl::init(true)};
  PassOptions::Option<GemmPrecision> precision{
      *this, "precision",
      llvm::cl::desc("Element type the GEMMs read their inputs in (default "
                     "fp32)"),
      llvm::cl::init(GemmPrecision::FP32),
      llvm::cl::values(
          clEnumValN(GemmPrecision::FP32, "fp32", "fp32 throughout"),
          clEnumValN(GemmPrecision::BF16, "bf16",
                     "GEMM inputs rounded to bf16 with fp32 accumulation "
                     "(every contraction a pprt_gemm call, cuBLAS GemmEx on "
                     "a GPU); fp32 weights, optimizer and loss"))};

  /// Copies these options from another pipeline's.
  template <typename Other>
  void setStageCodeOptions(const StageCodePipelineOptions<Other> &other) {
    approximateMath = other.approximateMath;
    factorContractions = other.factorContractions;
    fuseElementwise = other.fuseElementwise;
    precision = other.precision;
  }
};

/// Options of `pp-lower-to-cpu`.
struct LowerToCPUPipelineOptions
    : public StageCodePipelineOptions<LowerToCPUPipelineOptions> {
  PassOptions::Option<bool> staticScratch{
      *this, "static-scratch",
      llvm::cl::desc("Stage-code temporaries in static buffers or on the "
                     "stack (default true; false: on the heap, allocated "
                     "every call)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> foldGemmAdds{
      *this, "fold-gemm-adds",
      llvm::cl::desc("Start library GEMMs from the bias or residual added to "
                     "their result, accumulating with beta = 1 "
                     "(pp-fold-gemm-adds; on by default)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> maxStackBytes{
      *this, "max-stack-bytes",
      llvm::cl::desc("Temporaries up to this size go to the stack"),
      llvm::cl::init(4096)};
  PassOptions::Option<ZeroGather> zeroGather{
      *this, "zero-gather",
      llvm::cl::desc("ZeRO-3's unit of gathering the weights (default "
                     "stage)"),
      llvm::cl::init(ZeroGather::Stage), getZeroGatherValues()};
  PassOptions::Option<bool> gathers{
      *this, "gathers",
      llvm::cl::desc("Compute one-hot sums (embedding lookups, cross-entropy "
                     "picks, torch.gather, and their gradients) as gathers "
                     "and scatter-adds (pp-collapse-one-hot; on by default; "
                     "false: as sums over the table)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeContractions{
      *this, "vectorize-contractions",
      llvm::cl::desc("Tile and vectorize generated contractions into "
                     "register tiles of FMAs for the target's vector width "
                     "(pp-vectorize-contractions; on by default)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> batchByProduct{
      *this, "batch-by-product",
      llvm::cl::desc("With gemm=auto: batched contractions of unscaled "
                     "products (attention's heads) as large as one product, "
                     "so small ones become FMA tiles (pp-select-gemm; "
                     "default false)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> wideTileVectors{
      *this, "wide-tile-vectors",
      llvm::cl::desc("At 512-bit vectors: vectors per row of "
                     "pp-vectorize-contractions' register tiles where the "
                     "output's rows hold that many (default 0: tile-vectors' "
                     "2 everywhere)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> vectorizeElementwise{
      *this, "vectorize-elementwise",
      llvm::cl::desc("Vectorize elementwise ops and reductions "
                     "(pp-vectorize-elementwise; on by default)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> outlineLoopNests{
      *this, "outline-loop-nests",
      llvm::cl::desc("Stage code as calls of one function per distinct loop "
                     "nest (pp-outline-loop-nests; on by default: compile "
                     "time linear in the model's depth)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Run the outermost parallel loop of each large "
                     "vectorized loop nest on OpenMP threads "
                     "(pp-parallelize-loop-nests, convert-scf-to-openmp; "
                     "the program links the OpenMP runtime and runs as "
                     "many threads as its --threads; default false)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> parallelMinWork{
      *this, "parallel-min-work",
      llvm::cl::desc("With parallel-loops: the element operations a loop "
                     "nest needs to run on several threads (smaller ones "
                     "stay serial: a fork and join costs microseconds)"),
      llvm::cl::init(262144)};
  PassOptions::Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Width of the target's widest vector registers in bits, "
                     "for pp-vectorize-contractions and "
                     "pp-vectorize-elementwise (512 for AVX-512, 256 for AVX "
                     "and AVX2, 128 for SSE and NEON)"),
      llvm::cl::init(512)};
  PassOptions::Option<GemmChoice> gemm{
      *this, "gemm",
      llvm::cl::desc("Where contractions are computed (default auto)"),
      llvm::cl::init(GemmChoice::Auto),
      llvm::cl::values(
          clEnumValN(GemmChoice::Generated, "generated",
                     "MLIR-generated code for every contraction"),
          clEnumValN(GemmChoice::Library, "library",
                     "pprt_gemm (a BLAS) wherever a contraction maps"),
          clEnumValN(GemmChoice::Auto, "auto",
                     "per shape, by the measured rule of pp-select-gemm "
                     "(bench/gemm_choice.md)"))};
};

/// Options of `pp-lower-to-cuda`: the tensor-level ones are
/// `pp-lower-to-cpu`'s; every contraction pprt_gemm can compute becomes a
/// library call (cuBLAS under `--backend cuda`).
struct LowerToCUDAPipelineOptions
    : public StageCodePipelineOptions<LowerToCUDAPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("GPU architecture kernels are built for (default "
                     "sm_90)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> kernelFormat{
      *this, "kernel-format",
      llvm::cl::desc("What gpu-module-to-binary embeds: bin (a cubin, needs "
                     "ptxas), fatbin (needs ptxas and fatbinary) or isa "
                     "(PTX the driver compiles at load)"),
      llvm::cl::init("bin")};
  PassOptions::Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("CUDA toolkit whose ptxas builds the kernels (default: "
                     "the one pp was configured with, else ptxas on PATH)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the elementwise and reduction "
                     "kernels (pp-map-parallel-loops)"),
      llvm::cl::init(256)};
  PassOptions::Option<int64_t> kernelOptLevel{
      *this, "kernel-opt-level",
      llvm::cl::desc("LLVM optimisation level of the kernels (0-3)"),
      llvm::cl::init(3)};
};

/// TOSA to the linalg, tensor and arith ops pp differentiates.
void buildTosaToLinalgPipeline(OpPassManager &pm);

/// Elementwise arith and math ops on tensors to linalg.generic.
void buildElementwiseToLinalgPipeline(OpPassManager &pm);

/// A model to a verified schedule with its stage functions.
/// Runs the schedule pipeline's preparation of the training step and
/// pp-plan-parallelism for `options.devices`, which records its layout as
/// `pp.parallelism` on the step; it chooses each stage's ZeRO level among
/// `zeroLevels` unless `options.zero` gives them, and under ZeRO-3 gathers
/// per param too where `paramGathers`.
void buildPlanParallelismPipeline(OpPassManager &pm,
                                  const SchedulePipelineOptions &options,
                                  ArrayRef<int64_t> zeroLevels,
                                  bool paramGathers = false);

void buildSchedulePipeline(OpPassManager &pm,
                           const SchedulePipelineOptions &options);

/// A verified schedule with stage functions to the LLVM dialect, in the
/// phases below, in this order.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUPipelineOptions &options);

/// Tensor-level optimisation of the stage functions.
void buildStageCodeOptimizationPhase(OpPassManager &pm,
                                     const LowerToCPUPipelineOptions &options);
/// Tensors to buffers, with one out-parameter per result and no heap
/// temporaries.
void buildBufferizationPhase(OpPassManager &pm,
                             const LowerToCPUPipelineOptions &options);
/// Buffer-level rewrites, the runtime calls, and linalg to loops.
void buildMemRefPhase(OpPassManager &pm,
                      const LowerToCPUPipelineOptions &options);
/// Loops, vectors and buffers to the LLVM dialect.
void buildToLLVMPhase(OpPassManager &pm,
                      const LowerToCPUPipelineOptions &options);

/// A verified schedule with stage functions to the LLVM dialect for NVIDIA
/// GPUs: contractions call pprt_gemm, every other loop nest becomes a
/// kernel embedded as a cubin, and host code launches them through the
/// `mgpu*` entry points libpprt's CUDA backend implements.
void buildLowerToCUDAPipeline(OpPassManager &pm,
                              const LowerToCUDAPipelineOptions &options);
/// Why `options` cannot build kernels, or an empty string: a chip that is
/// not `sm_<digits>` with an optional `a` or `f` (an empty one crashed
/// upstream's NVVM target verifier) or a kernel-opt-level outside 0-3.
std::string checkLowerToCUDAOptions(const LowerToCUDAPipelineOptions &options);
/// Buffer-level rewrites and the runtime calls for GPUs, then loop nests
/// to outlined kernels (`gpu.launch_func` and `gpu.module`).
void buildKernelOutliningPhase(OpPassManager &pm,
                               const LowerToCUDAPipelineOptions &options);
/// The kernels to NVVM and a binary for `chip` (`gpu.binary`).
void buildKernelBinaryPhase(OpPassManager &pm,
                            const LowerToCUDAPipelineOptions &options);
/// Host code, with its kernel launches, to the LLVM dialect.
void buildHostToLLVMPhase(OpPassManager &pm);

/// Registers the pipelines above with the pass registry.
void registerPPPipelines();

} // namespace pp
} // namespace mlir

#endif // PP_PIPELINES_PASSES_H
