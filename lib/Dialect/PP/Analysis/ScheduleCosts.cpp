//===- ScheduleCosts.cpp - a #pp.cost as the scheduling library's ---------===//
//
// Copies the per-stage arrays, the per-micro-batch tables, the transfer
// time, the optimizer steps and the step's set-up of a #pp.cost.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleCosts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::pp;

sched::StageCosts mlir::pp::getStageCosts(CostAttr cost) {
  auto copy = [](DenseF64ArrayAttr values) {
    return SmallVector<double>(values.asArrayRef());
  };
  sched::StageCosts costs;
  costs.forward = copy(cost.getForward());
  costs.backwardInput = copy(cost.getBackwardInput());
  costs.backwardWeight = copy(cost.getBackwardWeight());
  costs.activation = copy(cost.getActivation());
  costs.stash = copy(cost.getStash());
  costs.transfer = cost.getComm().getValueAsDouble();
  sched::MicrobatchCosts &table = costs.perMicrobatch;
  table.numMicrobatches = cost.getNumMicrobatches();
  auto copyTable = [](DenseF64ArrayAttr values) {
    return values ? SmallVector<double>(values.asArrayRef())
                  : SmallVector<double>();
  };
  table.forward = copyTable(cost.getMicrobatchForward());
  table.backwardInput = copyTable(cost.getMicrobatchBackwardInput());
  table.backwardWeight = copyTable(cost.getMicrobatchBackwardWeight());
  table.activation = copyTable(cost.getMicrobatchActivation());
  table.stash = copyTable(cost.getMicrobatchStash());
  costs.optimizer = copyTable(cost.getOptimizer());
  if (FloatAttr overhead = cost.getStepOverhead())
    costs.stepOverhead = overhead.getValueAsDouble();
  return costs;
}

CostAttr mlir::pp::getCostAttr(MLIRContext *context,
                               const sched::StageCosts &costs) {
  Builder b(context);
  auto array = [&](ArrayRef<double> values) {
    return values.empty() ? DenseF64ArrayAttr()
                          : b.getDenseF64ArrayAttr(values);
  };
  const sched::MicrobatchCosts &table = costs.perMicrobatch;
  return CostAttr::get(
      context, array(costs.forward), array(costs.backwardInput),
      array(costs.backwardWeight), b.getF64FloatAttr(costs.transfer),
      array(costs.activation), array(costs.stash), array(table.forward),
      array(table.backwardInput), array(table.backwardWeight),
      array(table.activation), array(table.stash), array(costs.optimizer),
      costs.stepOverhead > 0 ? b.getF64FloatAttr(costs.stepOverhead)
                             : FloatAttr());
}
