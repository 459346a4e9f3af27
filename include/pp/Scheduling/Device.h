//===- Device.h - what a pipeline rank's device can do ----------*- C++ -*-===//
//
// The device parameters the cost model turns FLOPs and bytes into time and
// memory with (docs/CostModel.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_DEVICE_H
#define PP_SCHEDULING_DEVICE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <string>

namespace mlir::pp {

/// One device, in SI units.
struct DeviceDescription {
  std::string name;
  /// Floating-point operations per second the device can sustain at best.
  double peakFlops = 0.0;
  /// Bytes per second between the device and its memory.
  double memoryBandwidth = 0.0;
  /// Bytes per second, and seconds before the first byte arrives, of a
  /// point-to-point transfer to a neighbouring rank.
  double linkBandwidth = 0.0;
  double linkLatency = 0.0;
  /// Bytes of memory for weights, gradients and activations.
  double memoryCapacity = 0.0;
  /// Measured matrix-multiplication rates by shape class, ascending: a
  /// product whose smallest dimension is at least `minDim` runs at `flops`
  /// (the first class's rate below it). None: every product at peakFlops.
  struct GemmRate {
    double minDim, flops;
  };
  SmallVector<GemmRate> gemmRates;

  /// The rate of a matrix product whose smallest dimension is `dim`.
  double getGemmRate(double dim) const;
  /// Roofline time of work that does `flops` operations and moves `bytes`;
  /// a matrix product (`gemmDim`, its smallest dimension, > 0) runs at its
  /// shape class's rate.
  double computeTime(double flops, double bytes, double gemmDim = 0.0) const {
    double rate = gemmDim > 0 ? getGemmRate(gemmDim) : peakFlops;
    return std::max(flops / rate, bytes / memoryBandwidth);
  }
};

} // namespace mlir::pp

#endif // PP_SCHEDULING_DEVICE_H
