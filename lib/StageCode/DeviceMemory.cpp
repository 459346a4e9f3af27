//===- DeviceMemory.cpp - GPU stage code's buffers from the GPU runtime ---===//
//
// pp-device-memory: turns heap temporaries into managed GPU allocations and
// dense copies into device copies, so kernels reach every buffer they use.
//
//===----------------------------------------------------------------------===//

#include "pp/StageCode/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::pp {
#define GEN_PASS_DEF_PPDEVICEMEMORY
#include "pp/StageCode/Passes.h.inc"
} // namespace mlir::pp

using namespace mlir;

namespace {

bool isDense(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getLayout().isIdentity();
}

/// Replaces `op` by the async form of a GPU op, which `emit` builds after
/// the token it is given, and a wait for it: synchronous gpu.dealloc and
/// gpu.memcpy have no lowering, and the stream the wait creates is the
/// runtime's one, so the order holds.
void replaceOnStream(
    Operation *op,
    function_ref<Value(OpBuilder &, Location, Type token, Value start)> emit) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Type token = gpu::AsyncTokenType::get(builder.getContext());
  Value start =
      gpu::WaitOp::create(builder, loc, token, ValueRange()).getAsyncToken();
  Value done = emit(builder, loc, token, start);
  gpu::WaitOp::create(builder, loc, Type(), ValueRange{done});
  op->erase();
}

void rewriteAlloc(memref::AllocOp alloc) {
  OpBuilder builder(alloc);
  auto managed = gpu::AllocOp::create(
      builder, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
      ValueRange(), alloc.getDynamicSizes(), alloc.getSymbolOperands(),
      /*hostShared=*/true);
  alloc.replaceAllUsesWith(managed.getMemref());
  alloc.erase();
}

void rewriteDealloc(memref::DeallocOp dealloc) {
  Value memref = dealloc.getMemref();
  replaceOnStream(
      dealloc, [&](OpBuilder &builder, Location loc, Type token, Value start) {
        return gpu::DeallocOp::create(builder, loc, token, ValueRange{start},
                                      memref)
            .getAsyncToken();
      });
}

void rewriteCopy(memref::CopyOp copy) {
  Value target = copy.getTarget(), source = copy.getSource();
  replaceOnStream(
      copy, [&](OpBuilder &builder, Location loc, Type token, Value start) {
        return gpu::MemcpyOp::create(builder, loc, token, ValueRange{start},
                                     target, source)
            .getAsyncToken();
      });
}

/// Whether `op` reads a constant global: a tensor constant of the model,
/// such as a PyTorch buffer, rather than pp-static-scratch's scratch.
bool readsConstant(Operation *op) {
  auto get = dyn_cast<memref::GetGlobalOp>(op);
  auto global = get ? SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                          get, get.getNameAttr())
                    : memref::GlobalOp();
  return global && global.getConstant();
}

/// Host memory a kernel would read: a stack buffer or a global used by a
/// linalg op (each becomes a kernel).
LogicalResult checkHostBuffers(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    if (!isa<memref::AllocaOp, memref::GetGlobalOp>(op))
      return WalkResult::advance();
    for (Operation *user : op->getResult(0).getUsers())
      if (isa<linalg::LinalgOp>(user)) {
        InFlightDiagnostic diag = op->emitError();
        if (readsConstant(op))
          diag << "a constant tensor (a buffer of the model) that GPU code "
                  "would read from host memory, which the CUDA target does "
                  "not place on the device yet";
        else
          diag << "host memory that GPU code would read (lower without "
                  "pp-static-scratch)";
        diag.attachNote(user->getLoc()) << "read here";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct DeviceMemory : pp::impl::PPDeviceMemoryBase<DeviceMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkHostBuffers(module)))
      return signalPassFailure();
    module.walk([](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        rewriteAlloc(alloc);
      else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        rewriteDealloc(dealloc);
      else if (auto copy = dyn_cast<memref::CopyOp>(op);
               copy && isDense(copy.getSource()) && isDense(copy.getTarget()))
        rewriteCopy(copy);
    });
  }
};

} // namespace
