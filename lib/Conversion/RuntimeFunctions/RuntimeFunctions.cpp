//===- RuntimeFunctions.cpp - signatures of the libpprt entry points ------===//
//
// The one table of the pprt_* functions the conversions call, with their C
// signatures as MLIR function types.
//
//===----------------------------------------------------------------------===//

#include "pp/Conversion/RuntimeFunctions.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::pp;

RuntimeFunctions::RuntimeFunctions(MLIRContext *context) {
  Builder b(context);
  Type ptr = LLVM::LLVMPointerType::get(context), i32 = b.getI32Type(),
       i64 = b.getI64Type(), f32 = b.getF32Type();
  auto fn = [&](StringRef name, ArrayRef<Type> args,
                ArrayRef<Type> results = {}) {
    return RuntimeFunction{name, b.getFunctionType(args, results)};
  };
  setProgram = fn("pprt_set_program", {ptr, i32, i32, i32, i32});
  setDataParallel = fn("pprt_set_data_parallel", {ptr, i32});
  setWeightVersions = fn("pprt_set_weight_versions", {ptr, i32});
  setStageZero = fn("pprt_set_stage_zero", {ptr, i32, i32});
  defineBuffer =
      fn("pprt_define_buffer", {ptr, i32, i32, i32, i32, i32, i32, ptr});
  setIdBound = fn("pprt_set_id_bound", {ptr, i32, i64});
  setIdIgnored = fn("pprt_set_id_ignored", {ptr, i32, i64});
  setPackedInput = fn("pprt_set_packed_input", {ptr, i32, i32});
  defineSaved = fn("pprt_define_saved", {ptr, i32, i32, i32});
  setBufferVariant = fn("pprt_set_buffer_variant", {ptr, i32, i32});
  setMicrobatchVariant = fn("pprt_set_microbatch_variant", {ptr, i32, i32});
  setPlanMicrobatchVariant =
      fn("pprt_set_plan_microbatch_variant", {ptr, i32, i32, i32});
  setStepPlans = fn("pprt_set_step_plans", {ptr, ptr, i32});
  setPacking = fn("pprt_set_packing", {ptr, i32});
  stepPlan = fn("pprt_step_plan", {ptr}, {i32});
  setSlices = fn("pprt_set_slices", {ptr, i32});
  buffer = fn("pprt_buffer", {ptr, i32, i32}, {ptr});
  paramAcquire = fn("pprt_param_acquire", {ptr, i32}, {ptr});
  paramRelease = fn("pprt_param_release", {ptr, i32});
  send = fn("pprt_send", {ptr, i32, i32, i32, i32, i32});
  recv = fn("pprt_recv", {ptr, i32, i32, i32, i32, i32});
  groupBegin = fn("pprt_group_begin", {ptr});
  groupEnd = fn("pprt_group_end", {ptr});
  accumulate = fn("pprt_accumulate", {ptr, i32, i32, i32});
  recordLoss = fn("pprt_record_loss", {ptr, i32, i32});
  updateState = fn("pprt_update_state", {ptr, i32, i32, i32});
  allReduce = fn("pprt_all_reduce", {ptr, i32});
  reduceScatter = fn("pprt_reduce_scatter", {ptr, i32});
  allGather = fn("pprt_all_gather", {ptr, i32});
  optimizerStep = fn("pprt_optimizer_step", {ptr, i32});
  actionBegin = fn("pprt_action_begin", {ptr, i32, i32, i32});
  actionEnd = fn("pprt_action_end", {ptr});
  stepIsFirst = fn("pprt_step_is_first", {ptr}, {i32});
  stepIsLast = fn("pprt_step_is_last", {ptr}, {i32});
  setStepOffset = fn("pprt_set_step_offset", {ptr, i32});
  // ab_type, c_type, trans_a, trans_b, batch, m, n, k, alpha, a, lda,
  // stride_a, b, ldb, stride_b, beta, c, ldc, stride_c.
  gemm = fn("pprt_gemm", {i32, i32, i32, i32, i64, i64, i64, i64, f32, ptr, i64,
                          i64, ptr, i64, i64, f32, ptr, i64, i64});
  randomSeed = fn("pprt_random_seed", {i64}, {i64});
  setTensorParallel = fn("pprt_set_tensor_parallel", {ptr, i32});
  setBufferSplit = fn("pprt_set_buffer_split", {ptr, i32, i32, i32});
  // dtype, buf, count; dtype, send, recv, count.
  tpAllReduce = fn("pprt_tp_all_reduce", {i32, ptr, i64, i32});
  tpAllGather = fn("pprt_tp_all_gather", {i32, ptr, ptr, i64});
  tpIndex = fn("pprt_tp_index", {}, {i32});
}

FailureOr<func::FuncOp> RuntimeFunction::declare(ModuleOp module) const {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
    if (existing.getFunctionType() == type)
      return existing;
    return existing.emitError("'")
           << name << "' is declared with type " << existing.getFunctionType()
           << ", not the runtime's " << type;
  }
  auto builder = OpBuilder::atBlockEnd(module.getBody());
  auto declaration = func::FuncOp::create(builder, module.getLoc(), name, type);
  declaration.setPrivate();
  return declaration;
}

func::CallOp RuntimeFunction::create(OpBuilder &b, Location loc,
                                     SymbolTable &symbols,
                                     ValueRange args) const {
  assert(TypeRange(args) == type.getInputs() &&
         "operands do not match the pprt.h signature");
  auto callee = symbols.lookup<func::FuncOp>(name);
  if (!callee) {
    callee = func::FuncOp::create(loc, name, type);
    callee.setPrivate();
    symbols.insert(callee);
  }
  return func::CallOp::create(b, loc, callee, args);
}
