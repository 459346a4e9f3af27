//===- ScheduleImport.h - external schedules into pp.schedule ---*- C++ -*-===//
//
// Reads pipeline schedules written outside the compiler into a module that
// holds one `pp.schedule`: the `pp-schedule-v1` JSON contract
// (docs/ScheduleJSON.md) and the per-rank action CSV of PyTorch's
// torch.distributed.pipelining. Errors are diagnostics located in the input
// file.
//
//===----------------------------------------------------------------------===//

#ifndef PP_TARGET_SCHEDULEIMPORT_H
#define PP_TARGET_SCHEDULEIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
namespace pp {

/// Parses the main buffer of `sourceMgr` as a `pp-schedule-v1` document.
/// The schedule is `@<name>_schedule` for `@train_step` and keeps the
/// document's cost block and memory cap. Returns null after emitting a
/// diagnostic at the offending JSON value.
OwningOpRef<ModuleOp> importScheduleFromJSON(llvm::SourceMgr &sourceMgr,
                                             MLIRContext *context);

/// Parses the main buffer of `sourceMgr` as a PyTorch pipelining CSV: row r
/// holds the actions of rank r (`0F1`, `1I0`, `1W0`, `2B3`, `0SEND_F1`, ...).
/// A stage is placed on the rank whose row holds its forwards; stages and
/// micro-batches are counted from the largest indices used. A CSV without
/// SEND/RECV actions gives a schedule without transfers, which
/// `pp-insert-transfers` completes. Returns null after emitting a diagnostic
/// at the offending cell.
OwningOpRef<ModuleOp> importScheduleFromPyTorchCSV(llvm::SourceMgr &sourceMgr,
                                                   MLIRContext *context);

/// Registers `--import-pp-schedule-json` and `--import-pytorch-csv`.
void registerScheduleImportTranslations();

} // namespace pp
} // namespace mlir

#endif // PP_TARGET_SCHEDULEIMPORT_H
