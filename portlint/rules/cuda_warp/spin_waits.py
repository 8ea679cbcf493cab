"""PTL109: per-thread spin waits that need independent thread scheduling (opt-in rule)."""

from __future__ import annotations

import re

from portlint.frontends.cuda.parse import enclosing, node_text, nodes_of_types
from portlint.rules.cuda_warp.analysis import Analysis


_ELECTION = re.compile(r"(?:==\s*0\b(?!\.)|\b0\s*==)")
_THREADISH = re.compile(r"threadIdx|thread_rank|lane|\btid\b|__lane_id")


def spin_waits(a: Analysis) -> None:
    for loop in nodes_of_types(a.root, ("while_statement", "do_statement", "for_statement")):
        if not a.is_device(loop):
            continue
        cond = loop.child_by_field_name("condition")
        if cond is None:
            continue
        ctext = node_text(cond)
        if not re.search(r"\batomicCAS\w*\s*\(|\batomicExch\w*\s*\(", ctext):
            continue
        # one elected lane per warp (`if (lane == 0)`) does not contend inside a warp
        guard = enclosing(loop, ("if_statement",))
        elected = False
        while guard is not None:
            gc = guard.child_by_field_name("condition")
            gtext = node_text(gc) if gc is not None else ""
            if _ELECTION.search(gtext) and _THREADISH.search(gtext) and "||" not in gtext:
                elected = True
                break
            guard = enclosing(guard, ("if_statement",))
        if elected:
            continue
        a.hit("PTL109", loop, fields={"what": "A per-thread spin lock"}, confidence="low",
              suggestion="Lanes of one AMD wavefront execute in lockstep: when one lane holds the lock and another "
                         "spins, the holder never reaches its release. Elect one lane per wave (`if (lane == 0)`) to take "
                         "the lock, or use a lock-free atomic update.")
