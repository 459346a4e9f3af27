"""Fails if a code block of the docs that names its source no longer is
that source's text.

A fenced block whose info string is a language and a path,

    ```cpp examples/schedule-plugin/EagerOneFOneB.cpp

must appear verbatim, as a run of whole lines, in that file (relative to
the repository root), so that quoted code cannot drift from the code that
is built and tested.
"""

import argparse
import pathlib
import re
import sys

FENCE = re.compile(r"^( *)```(\w+) +(\S+)\s*$")


def quoted_blocks(markdown):
    """Yields (line number, path, text) of each block that names a file."""
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        # A block inside a list item is indented as its fence is.
        indent = match.group(1)
        start = i
        i += 1
        body = []
        while i < len(lines) and lines[i] != indent + "```":
            body.append(lines[i][len(indent):])
            i += 1
        yield start + 1, match.group(3), body
        i += 1


def contains_lines(haystack, needle):
    n = len(needle)
    return any(haystack[k:k + n] == needle for k in range(len(haystack) - n + 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("docs", nargs="+")
    args = parser.parse_args()
    root = pathlib.Path(args.root)
    failures = checked = 0
    for doc in args.docs:
        text = (root / doc).read_text()
        for line, path, body in quoted_blocks(text):
            source = root / path
            checked += 1
            if not source.exists():
                print(f"{doc}:{line}: quotes {path}, which does not exist")
                failures += 1
            elif not contains_lines(source.read_text().splitlines(), body):
                print(f"{doc}:{line}: the block is not the text of {path}")
                failures += 1
    print(f"checked {checked} quoted blocks, {failures} out of date")
    return 1 if failures or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
