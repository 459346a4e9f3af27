//===- JSONDepth.h - bound the nesting of JSON before parsing ---*- C++ -*-===//
//
// llvm::json::parse and the destructor of llvm::json::Value recurse once per
// nesting level, so a deeply nested file overflows the stack. pp's JSON
// readers scan for the nesting depth first and reject deeper documents.
//
//===----------------------------------------------------------------------===//

#ifndef PP_DIALECT_PP_UTILS_JSONDEPTH_H
#define PP_DIALECT_PP_UTILS_JSONDEPTH_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <utility>

namespace mlir::pp {

/// The deepest nesting of arrays and objects pp's JSON readers accept; its
/// formats need 4 levels.
inline constexpr unsigned kMaxJSONDepth = 64;

/// The byte offset of the first `[` or `{` of `text` that opens level
/// `maxDepth + 1`, or nullopt if the text nests no deeper than `maxDepth`.
/// Brackets inside strings do not count; the text need not be valid JSON.
std::optional<size_t> findTooDeepJSON(llvm::StringRef text,
                                      unsigned maxDepth = kMaxJSONDepth);

/// The 1-based line and column of byte `offset` of `text`, for readers
/// whose diagnostics carry no source manager.
std::pair<size_t, size_t> getLineAndColumn(llvm::StringRef text, size_t offset);

} // namespace mlir::pp

#endif // PP_DIALECT_PP_UTILS_JSONDEPTH_H
