"""The model every stage shares: findings and rules (`model`, `catalog`, `registry`, `rule_ids`,
`rule_links`), the line model (`lines`), settings (`config`), the per-process and per-scan
state (`session`, `cache`), comment syntax (`comments`), the one reader and the one writer of
files (`files`), the bounded parser of untrusted documents (`jsonfile`: JSON, TOML) and glob
matching (`globs`)."""
