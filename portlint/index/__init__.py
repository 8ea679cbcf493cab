"""Stage 3, the project index: the cross-file Python model (`project`) and the per-file context
the analyses and rules read (`context`)."""
