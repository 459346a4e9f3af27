//===- DeviceDescription.h - what a pipeline rank's device can do -*- C++
//-*-===//
//
// The device parameters the cost model turns FLOPs and bytes into time and
// memory with: built-in descriptions (a CPU core, an H200) and JSON device
// files with one device for all ranks or one per rank (docs/CostModel.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_DEVICEDESCRIPTION_H
#define PP_DIALECT_PP_ANALYSIS_DEVICEDESCRIPTION_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
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

/// The built-in device called `name` (`cpu`, `h200`), or none.
std::optional<DeviceDescription> lookupBuiltinDevice(StringRef name);

/// The names of the built-in devices, comma separated.
std::string listBuiltinDevices();

/// Parses a device file: one device object (every rank) or
/// `{"ranks": [device, ...]}` (one per rank). A device object names a
/// built-in `base` and overrides some fields, or gives every field; it may
/// add `gemm_flops` (pp-calibrate's rates by shape class) and `meta`.
llvm::Expected<SmallVector<DeviceDescription>> parseDeviceFile(StringRef json);

/// The devices of `numRanks` ranks from the planner options: the file when
/// `deviceFile` is set, else the built-in names in `devices` (one for every
/// rank or one per rank). A single device is repeated for every rank.
llvm::Expected<SmallVector<DeviceDescription>>
resolveDevices(ArrayRef<std::string> devices, StringRef deviceFile,
               int64_t numRanks);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_ANALYSIS_DEVICEDESCRIPTION_H
