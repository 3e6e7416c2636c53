"""Small helpers the harness, the nemesis and the checker share: atomic file writes, a
tolerant JSONL reader and a poll-until-deadline loop. It imports nothing of kchaos, so it
keeps the dependency direction of docs/architecture.md; the worker keeps its own (it
ships alone and imports nothing but the ledger contract)."""
