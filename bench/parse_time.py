"""tree-sitter-cuda's own parse time over a list of files: the floor under any analysis
that parses every CUDA/C++ file once (portlint's CUDA scan does, for the files that hold
something a detector looks for).

    python bench/parse_time.py FILELIST      # one path a line, relative to the working folder

All files are read first; then each is parsed once with the grammar portlint loads, in
this one process (one core). Prints JSON: files, lines, the CPU and wall seconds of the
parse loop alone (reading and start-up are left out)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    paths = [Path(line) for line in Path(argv[0]).read_text().splitlines() if line]
    sources = [p.read_bytes() for p in paths]

    import tree_sitter
    import tree_sitter_cuda

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    cpu, wall = time.process_time(), time.perf_counter()
    nodes = 0
    for data in sources:
        nodes += parser.parse(data).root_node.descendant_count
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(json.dumps({
        "files": len(sources), "lines": sum(d.count(b"\n") for d in sources), "nodes": nodes,
        "parse_cpu_s": round(cpu, 3), "parse_wall_s": round(wall, 3),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
