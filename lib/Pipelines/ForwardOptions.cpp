//===- ForwardOptions.cpp - pipeline options to the passes they set -------===//
//
// Both sides print their options as `{name=value ...}` (the textual form
// MLIR parses pipelines from); each of the pipeline's values is parsed into
// the pass, which takes those it has an option for.
//
//===----------------------------------------------------------------------===//

#include "ForwardOptions.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::pp;

/// The `name=value` entries of an option list as MLIR prints it, `{...}`
/// after an optional pass name; values may hold blanks inside braces or
/// quotes.
static llvm::StringMap<StringRef> splitOptions(StringRef text) {
  llvm::StringMap<StringRef> entries;
  size_t open = text.find('{');
  if (open == StringRef::npos)
    return entries;
  text = text.drop_front(open + 1);
  text.consume_back("}");
  while (!text.empty()) {
    text = text.ltrim(' ');
    size_t end = 0;
    int depth = 0;
    char quote = 0;
    for (; end < text.size(); ++end) {
      char c = text[end];
      if (quote) {
        quote = c == quote ? 0 : quote;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      } else if (c == ' ' && depth == 0) {
        break;
      }
    }
    auto [name, value] = text.take_front(end).split('=');
    if (!name.empty())
      entries[name] = value;
    text = text.drop_front(end);
  }
  return entries;
}

std::unique_ptr<Pass>
mlir::pp::forwardOptions(const detail::PassOptions &options,
                         std::unique_ptr<Pass> pass,
                         ArrayRef<StringRef> except) {
  std::string given, taken;
  llvm::raw_string_ostream givenStream(given), takenStream(taken);
  options.print(givenStream);
  pass->printAsTextualPipeline(takenStream);
  // An empty list prints nothing: a name the pass does not print may still
  // be one of its options.
  llvm::StringMap<StringRef> printed = splitOptions(taken);
  for (const auto &entry : splitOptions(given)) {
    StringRef name = entry.getKey(), value = entry.getValue();
    if (value.empty() || llvm::is_contained(except, name))
      continue;
    std::string error;
    if (succeeded(pass->initializeOptions((name + "=" + value).str(),
                                          [&](const Twine &message) {
                                            error = message.str();
                                            return failure();
                                          })))
      continue;
    // Both sides print what they parse, so a name the pass prints fails
    // only if the two give it different types: a bug in pp.
    if (printed.contains(name))
      llvm::report_fatal_error("pipeline option '" + name + "' of " +
                               pass->getArgument() +
                               " does not parse there: " + error);
  }
  return pass;
}
