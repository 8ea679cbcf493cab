"""`portlint server`: a Language Server over stdio (pygls). `positions` and `buffers` are
plain Python; only `server` imports pygls, and only when the command starts."""
