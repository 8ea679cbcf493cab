"""Stage 6, findings: what happens to the rules' findings before output -- one finding per
construct (`precedence`), suppressions, baseline, rule selection, changed lines, and the line
hashes that fingerprint a finding (`fingerprint`)."""
