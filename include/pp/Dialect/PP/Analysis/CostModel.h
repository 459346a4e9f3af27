//===- CostModel.h - analytic FLOPs, bytes and stage costs ------*- C++ -*-===//
//
// Estimates what ops cost from their types alone (FLOPs from a linalg op's
// iteration domain and payload, bytes from its operands and results), and
// what a contiguous run of a training step's ops costs as a pipeline stage
// on a device: forward (F), input-gradient (B) and weight-gradient (W)
// time, weight and activation bytes, and the bytes crossing its boundaries.
// docs/CostModel.md defines every quantity.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_COSTMODEL_H
#define PP_DIALECT_PP_ANALYSIS_COSTMODEL_H

#include "pp/Dialect/PP/Analysis/DeviceDescription.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace mlir::pp {

/// The forward work of an op: floating-point operations and bytes it reads
/// and writes.
struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;
  /// For one matrix product (a contraction): its smallest dimension, which
  /// picks the device's rate for its shape class; 0 otherwise.
  double gemmDim = 0.0;

  OpCost &operator+=(const OpCost &other) {
    flops += other.flops;
    bytes += other.bytes;
    gemmDim = 0.0; // a sum is no single product
    return *this;
  }
};

/// Bytes a value of `type` occupies: elements times element width for a
/// shaped type (a dynamic dimension counts as 1), the width of a scalar.
double getStorageBytes(Type type);

/// Estimates the forward cost of `op`, including the ops nested in its
/// regions. A linalg op does (iterations of its loops) x (arith and math
/// ops in its payload) FLOPs; an elementwise arith or math op one per
/// element; constants, casts and tensor.empty nothing.
OpCost estimateOpCost(Operation *op);

/// The sum of `estimateOpCost` over the ops of `block`.
OpCost estimateBlockCost(Block &block);

/// What a stage of the ops [begin, end) of a chain costs per micro-batch on
/// one device. Times are in seconds, sizes in bytes.
struct StageCost {
  double flops = 0.0;
  double forward = 0.0;        // F
  double backwardInput = 0.0;  // B
  double backwardWeight = 0.0; // W
  double parameterBytes = 0.0;
  /// What the forward keeps for the backward: every distinct value the
  /// stage's ops read, except weights.
  double activationBytes = 0.0;
  /// The part B keeps for W: the inputs and outputs of the ops that read
  /// weights.
  double stashBytes = 0.0;
  /// The part that comes from before the stage (data and activations of
  /// earlier ops): all a stage whose backward recomputes its forward keeps.
  double inputBytes = 0.0;

  double compute() const { return forward + backwardInput + backwardWeight; }
};

/// Factors on an op's analytic F, B and W: measured / analytic time of the
/// profiled stage that held it (docs/CostModel.md, "Profile-guided
/// planning").
struct CostCalibration {
  double forward = 1.0;
  double backwardInput = 1.0;
  double backwardWeight = 1.0;
};

/// The ops of a training step in program order, as the planner cuts them
/// into stages, with the values they exchange.
class StageCostModel {
public:
  /// One op of the chain.
  struct Op {
    Operation *op = nullptr;
    OpCost cost;
    SmallVector<int64_t> weights; // indices into `weightBytes`
    SmallVector<int64_t> reads;   // indices into `values`: activations read
    SmallVector<int64_t> writes;  // indices into `values`: results
    /// What W needs from this op: its activations and results when it
    /// reads weights, nothing otherwise.
    SmallVector<int64_t> stash;
  };
  /// One value an op of the chain reads or defines.
  struct ChainValue {
    double bytes = 0.0;
    /// Index of the op that defines it; -1 for a data argument.
    int64_t definer = -1;
    /// Index of the last op that reads it; the number of ops when the step
    /// returns it.
    int64_t lastUse = -1;
  };

  /// Builds the chain of `ops` (in program order) of the training step
  /// `func`. Values of ops outside `ops` are re-created where needed, so
  /// reading one reads the weights it is computed from.
  StageCostModel(func::FuncOp func, ArrayRef<Operation *> ops);

  int64_t size() const { return ops.size(); }
  ArrayRef<Op> getOps() const { return ops; }
  ArrayRef<ChainValue> getValues() const { return values; }
  ArrayRef<double> getWeightBytes() const { return weightBytes; }

  /// Whether a cut before op `index` would split a weight's users between
  /// two stages (its gradient is accumulated in one).
  bool splitsWeight(int64_t index) const { return weightSpan[index]; }

  /// The cost of a stage of the ops [begin, end) on `device`. The first
  /// stage's inputs take no gradient: its ops' B work counts as W.
  StageCost getStageCost(int64_t begin, int64_t end,
                         const DeviceDescription &device) const;
  /// F + B + W of op `index` on `device`: B about F, W about F for an op
  /// that reads weights and nothing for one that does not, each times the
  /// op's calibration.
  double getComputeTime(int64_t index, const DeviceDescription &device) const;

  /// Scales the times of the ops [begin, end) by `factors` from now on.
  void calibrate(int64_t begin, int64_t end, const CostCalibration &factors);

  /// Weight and activation bytes of the stage [begin, end), in constant
  /// time.
  double getParameterBytes(int64_t begin, int64_t end) const {
    return parameterSums.get(begin, end);
  }
  double getActivationBytes(int64_t begin, int64_t end) const {
    return activationSums.get(begin, end);
  }
  /// The part of the activation bytes of [begin, end) defined before
  /// `begin`: the stage's inputs.
  double getInputBytes(int64_t begin, int64_t end) const {
    return inputSums.get(begin, end);
  }
  /// F of op `index` on `device` (times its calibration): what recomputing
  /// its forward adds to the backward.
  double getForwardTime(int64_t index, const DeviceDescription &device) const;

  /// The costs of the stages [begin, end) for every end in (begin, size()],
  /// in order, in time linear in their number.
  SmallVector<StageCost>
  getStageCostsFrom(int64_t begin, const DeviceDescription &device) const;

  /// Bytes that cross a cut before op `index`: values defined before it
  /// and needed at or after it (or returned by the step).
  double getBoundaryBytes(int64_t index) const { return boundaryBytes[index]; }

  /// Time to send the values crossing a cut before op `index` from a rank
  /// on `from` to one on `to`: the slower link's latency and bandwidth.
  double getTransferTime(int64_t index, const DeviceDescription &from,
                         const DeviceDescription &to) const;

private:
  /// Distinct-value byte sums over every range [begin, end) of ops.
  struct RangeSums {
    int64_t size = 0;
    std::vector<double> sums; // row-major, (begin, end - begin - 1)
    double get(int64_t begin, int64_t end) const {
      return sums[begin * size + (end - begin - 1)];
    }
  };
  RangeSums sumDistinct(SmallVector<int64_t> Op::*ids, ArrayRef<double> bytes,
                        bool inputsOnly = false) const;
  void computeBoundaries();

  std::vector<Op> ops;
  SmallVector<CostCalibration> calibration; // per op
  SmallVector<ChainValue> values;
  SmallVector<double> weightBytes;
  SmallVector<bool> weightSpan;
  SmallVector<double> boundaryBytes;
  RangeSums parameterSums, activationSums, stashSums, inputSums;
};

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_COSTMODEL_H
