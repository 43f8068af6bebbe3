#!/usr/bin/python3
"""Independent check of poslab's train/val split, written from docs/formats.md alone.

Usage:
  spec_split.py SOURCE.txt DATA_DIR
      SOURCE.txt: one UTF-8 text file (no BOM, LF line ends: what `poslab prepare` keeps as
      is) that `poslab prepare --corpus SOURCE.txt --out DATA_DIR` prepared. Checks that
      vocab.json is the sorted set of its code points and that train.bin / val.bin hold
      exactly the split of docs/formats.md: the first floor(0.9 n) characters extended to the end of that
      line -> train, the rest -> val. Also shows that nanoGPT's plain cut at floor(0.9 n)
      would differ on this file (so the check can tell the two readings apart).
Exit status 0 if poslab agrees, 1 if not.
"""

import json
import struct
import sys


def spec_split(text):
    """docs/formats.md, for one source file: (train, val)."""
    n = len(text)  # code points
    cut = int(n * 0.9)  # floor(0.9 n)
    if cut > 0 and text[cut - 1] != "\n":
        nl = text.find("\n", cut)
        cut = n if nl < 0 else nl + 1  # to the end of that line, its newline included
    return text[:cut], text[cut:]


def read_ids(path):
    with open(path, "rb") as f:
        raw = f.read()
    return list(struct.unpack(f"<{len(raw) // 2}H", raw))


def main():
    source, data = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    with open(f"{data}/vocab.json", encoding="utf-8") as f:
        vocab = json.load(f)
    problems = []
    if vocab != sorted(set(text)):
        problems.append("vocab.json is not the sorted set of the text's characters")
    train, val = spec_split(text)
    ours_train = "".join(vocab[i] for i in read_ids(f"{data}/train.bin"))
    ours_val = "".join(vocab[i] for i in read_ids(f"{data}/val.bin"))
    if ours_train != train or ours_val != val:
        problems.append(f"split: poslab train/val = {len(ours_train)}/{len(ours_val)} "
                        f"characters, expected = {len(train)}/{len(val)}")
    plain = int(len(text) * 0.9)
    note = "discriminates" if plain != len(train) else "WEAK: the cut falls on a line end"
    print(f"split: {len(text)} characters -> train {len(train)}, val {len(val)}; "
          f"nanoGPT's plain cut would give train {plain} ({note})")
    for p in problems:
        print(f"FAIL: {p}")
    return 1 if problems or plain == len(train) else 0


if __name__ == "__main__":
    sys.exit(main())
