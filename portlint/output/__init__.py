"""Stage 7, output: report formats (`formats`), the migration report (`report`), `--fix`
(`fixes`), `--add-suppressions` and `merge-sarif`."""
