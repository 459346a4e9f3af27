//===- ForwardOptions.h - pipeline options to the passes they set -*- C++
//-*-===//
//
// A pipeline's option reaches each pass that has an option of the same
// name without a line of its own: the pipelines forward them by name.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_PIPELINES_FORWARDOPTIONS_H
#define LIB_PIPELINES_FORWARDOPTIONS_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir::pp {

/// Sets every option of `pass` that `options` has under the same name to
/// the pipeline's value, except those named in `except` (an option that
/// means something else there, or that the pipeline sets itself). A list
/// the pipeline leaves empty keeps the pass's default. Returns `pass`.
std::unique_ptr<Pass> forwardOptions(const detail::PassOptions &options,
                                     std::unique_ptr<Pass> pass,
                                     ArrayRef<StringRef> except = {});

} // namespace mlir::pp

#endif // LIB_PIPELINES_FORWARDOPTIONS_H
