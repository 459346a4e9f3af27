//===- JSONDepth.cpp - bound the nesting of JSON before parsing -----------===//
//
// One linear pass over the text that counts open brackets outside strings.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Utils/JSONDepth.h"

using namespace mlir;

std::optional<size_t> pp::findTooDeepJSON(llvm::StringRef text,
                                          unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
    case '"':
      inString = true;
      break;
    case '[':
    case '{':
      if (++depth > maxDepth)
        return i;
      break;
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::pair<size_t, size_t> pp::getLineAndColumn(llvm::StringRef text,
                                               size_t offset) {
  llvm::StringRef before = text.take_front(offset);
  size_t lineStart = before.rfind('\n') + 1; // npos + 1 == 0
  return {before.count('\n') + 1, offset - lineStart + 1};
}
