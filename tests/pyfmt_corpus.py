#!/usr/bin/env python3
"""pyfmt_corpus.py - writes tests/golden/pyfmt.txt: what Python prints for each entry of tests/pyfmt_corpus.txt.

For a JSON entry the golden line is repr(v) and json.dumps(v) (Python's
defaults: ", " and ": ", ensure_ascii) separated by a tab, where v is
json.loads(entry); str(v) is repr(v) for everything but a string. For
a "float X" entry it is repr(x). Neither repr nor json.dumps writes a
tab or a newline raw, so every output fits on its line.

Usage: tests/pyfmt_corpus.py [OUT]   (default: tests/golden/pyfmt.txt;
"-" for stdout). check_pyfmt runs it to see that the committed golden
file is still what Python prints.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def entries(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield line


def golden(entry):
    if entry.startswith("float "):
        text = entry[len("float "):]
        x = float.fromhex(text) if "0x" in text else float(text)
        return repr(x)
    v = json.loads(entry)
    return repr(v) + "\t" + json.dumps(v)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "golden", "pyfmt.txt")
    lines = [golden(e) for e in entries(os.path.join(HERE,
                                                     "pyfmt_corpus.txt"))]
    text = "".join(line + "\n" for line in lines)
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
