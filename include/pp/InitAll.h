//===- InitAll.h - register everything a pp tool needs ----------*- C++ -*-===//
//
// One place that registers the pp dialect and passes together with the
// upstream dialects, interfaces and passes that models and lowering use.
//
//===----------------------------------------------------------------------===//

#ifndef PP_INITALL_H
#define PP_INITALL_H

namespace mlir {
class DialectRegistry;
namespace pp {

/// Registers the pp dialect and all upstream dialects and extensions.
void registerAllDialects(DialectRegistry &registry);

/// Registers the pp passes and pipelines and all upstream passes.
void registerAllPasses();

} // namespace pp
} // namespace mlir

#endif // PP_INITALL_H
