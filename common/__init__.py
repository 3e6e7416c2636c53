"""Small helpers the harness, the nemesis and the checker share: atomic file writes, a
tolerant JSONL reader and a poll-until-deadline loop; and the words they share of stored
files: the processing guarantees' names and the fault kinds' traits plan.json carries. It
imports nothing of kchaos, so it keeps the dependency direction of docs/architecture.md;
the worker keeps its own (it ships alone and imports nothing but the ledger contract)."""
