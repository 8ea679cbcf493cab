"""The driver that runs the stages over a scan: `engine` (one file through frontends, analyses,
rules and findings), `workers` (the same in parallel), `stdin_scan` (one buffer)."""
