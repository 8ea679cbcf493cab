"""Stage 5, rules: one module (or package) per rule family, named after its folder under the
repository's `rules/`; each detector turns the analyses' facts into findings."""
