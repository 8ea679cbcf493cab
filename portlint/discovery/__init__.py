"""Stage 1, discovery: which files a scan reads (`files`), what language each is (`languages`),
the byte prefilter that skips a family before any parse (`prefilter`), and CI shards (`shard`)."""
