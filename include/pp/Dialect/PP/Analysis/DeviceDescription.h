//===- DeviceDescription.h - built-in devices and device files -*- C++ -*-===//
//
// Where the cost model's devices come from: built-in descriptions (a CPU
// core, an H200) and JSON device files with one device for all ranks or one
// per rank (docs/CostModel.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_ANALYSIS_DEVICEDESCRIPTION_H
#define PP_DIALECT_PP_ANALYSIS_DEVICEDESCRIPTION_H

#include "pp/Scheduling/Device.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::pp {

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
