"""Issue 26, round seven: failing tests of the attack on the surfaces added since round six
(docs/threat-model.md, "Round seven"). Not collected (the name does not start with `test_`);
run it by name.

A (medium, a 300-header include chain raised RecursionError in the guard map) and B (medium,
every file searched every include line of every header it reaches again, 45 s for 20 files
over 8 MB of headers) failed on main (ebc447c) and were closed in the same stop: their tests
moved, with near misses, to `tests/test_attack_round7.py`. No round-seven item is open
above low; this file holds no test."""
