"""Pure unit tests of the worker's parts (no broker)."""

from __future__ import annotations

import ast
import json
import os
import time
from itertools import islice
from pathlib import Path

import pytest

from workloads.ledger.client import ClientConfig, generate
from workloads.worker import bugs
from workloads.worker.assignor import MemberInfo, Subscription, compute_assignment
from workloads.worker.checkpoint import delete_checkpoint, read_checkpoint, write_checkpoint
from workloads.worker.clients import heartbeat_interval_ms
from workloads.worker.config import parse_args
from workloads.worker.control import ControlFile
from workloads.worker.statedir import StateDirectory
from workloads.worker.store import KeyValueStore

WORKER = Path(__file__).resolve().parents[2] / "workloads" / "worker"


def test_checkpoint_format_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "0_1" / ".checkpoint"
    write_checkpoint(p, {("app-dedup-changelog", 1): 41, ("app-balances-changelog", 1): 40})
    assert p.read_text() == "0\n2\napp-balances-changelog 1 40\napp-dedup-changelog 1 41\n"
    assert read_checkpoint(p) == {("app-dedup-changelog", 1): 41, ("app-balances-changelog", 1): 40}
    assert not list(p.parent.glob("*.tmp"))
    assert delete_checkpoint(p) and read_checkpoint(p) is None and not delete_checkpoint(p)


def test_checkpoint_rejects_torn_file(tmp_path: Path) -> None:
    p = tmp_path / ".checkpoint"
    p.write_text("0\n2\nt 0 5\n")
    with pytest.raises(ValueError):
        read_checkpoint(p)


def test_cleaner_removes_only_unlocked_old_dirs(tmp_path: Path) -> None:
    sd = StateDirectory(tmp_path / "app")
    for t in ("0_0", "0_1", "0_2", "global"):
        sd.task_dir(t)
    old = time.time() - 120
    for t in ("0_0", "0_1", "global"):
        os.utime(sd.app_dir / t, (old, old))
    assert sd.lock("0_0", "StreamThread-1")
    cleaned = sd.clean_obsolete(delay_ms=60_000)
    assert [c.task for c in cleaned] == ["0_1"]  # 0_0 locked, 0_2 young, global never
    assert sorted(p.name for p in sd.app_dir.iterdir()) == ["0_0", "0_2", "global"]
    assert sd.owner("0_1") is None


def test_task_locks_are_per_thread(tmp_path: Path) -> None:
    sd = StateDirectory(tmp_path / "app")
    assert sd.lock("0_0", "A") and sd.lock("0_0", "A")
    assert not sd.lock("0_0", "B")
    sd.unlock("0_0", "B")  # not the owner: no effect
    assert sd.owner("0_0") == "A"
    sd.unlock("0_0", "A")
    assert sd.lock("0_0", "B")


def test_store_wal_off_flush_and_digest(tmp_path: Path) -> None:
    kv = KeyValueStore(tmp_path / "s", 64 * 1024)
    kv.open()
    assert kv.is_empty()
    kv.put("a", "1")
    kv.put("b", "2")
    kv.put("b", None)
    assert kv.get("a") == "1" and kv.get("b") is None
    assert kv.digest()[1] == 1
    kv.close()
    kv.open()  # close flushed the memtable
    assert kv.get("a") == "1"
    kv.wipe()
    assert not (tmp_path / "s").exists()


def test_control_file_rereads_on_change_and_survives_garbage(tmp_path: Path) -> None:
    p = tmp_path / "control.json"
    c = ControlFile(p)
    assert c.checkpoint_delay_ms("close") == 0
    p.write_text(json.dumps({"checkpoint_delay_ms": 250}))
    assert c.checkpoint_delay_ms("close") == 250
    p.write_text("{not json")
    assert c.checkpoint_delay_ms("close") == 250  # keeps the last good value
    p.write_text(json.dumps({"checkpoint_delay_ms": 0, "other": 1}))
    assert c.checkpoint_delay_ms("close") == 0
    assert ControlFile(None).checkpoint_delay_ms("close") == 0


def test_control_file_delays_only_the_listed_reasons(tmp_path: Path) -> None:
    p = tmp_path / "control.json"
    c = ControlFile(p)
    p.write_text(json.dumps({"checkpoint_delay_ms": 300, "checkpoint_delay_reasons": ["close"]}))
    assert c.checkpoint_delay_ms("close") == 300
    assert c.checkpoint_delay_ms("standby-commit") == 0
    p.write_text(json.dumps({"checkpoint_delay_ms": 300, "checkpoint_delay_reasons": []}))
    assert c.checkpoint_delay_ms("standby-commit") == 300  # empty list: every write
    p.unlink()
    assert c.checkpoint_delay_ms("close") == 0


def test_event_generator_is_seeded_and_resends_ids() -> None:
    cfg = ClientConfig(seed=7, accounts=5, dup_fraction=0.3)
    a = list(islice(generate(cfg), 300))
    assert a == list(islice(generate(cfg), 300))
    ids = [e.event_id for e in a]
    assert len(set(ids)) < len(ids)  # duplicates on purpose, with identical payloads
    first = {}
    for e in a:
        assert first.setdefault(e.event_id, e) == e


def members(
    spec: dict[str, int], prev: dict[str, tuple[str, ...]] | None = None
) -> list[MemberInfo]:
    prev = prev or {}
    return [
        MemberInfo(f"{p}-T{i}", p, f"T{i}", frozenset(prev.get(f"{p}-T{i}", ())))
        for p, n in spec.items() for i in range(1, n + 1)
    ]


def test_assignor_balances_sticks_and_places_standbys_elsewhere() -> None:
    tasks = [f"0_{p}" for p in range(4)]
    a = compute_assignment(tasks, members({"A": 2}), standbys=1)
    assert {m: x.active for m, x in a.items()} == {"A-T1": ("0_0", "0_2"), "A-T2": ("0_1", "0_3")}
    assert all(not x.standby for x in a.values())  # one process: nowhere to put standbys
    prev = {m: x.active for m, x in a.items()}
    b = compute_assignment(tasks, members({"A": 2, "B": 1}, prev), standbys=1)
    actives = [t for x in b.values() for t in x.active]
    assert sorted(actives) == tasks
    for t in tasks:  # a standby never shares the active's process
        owner = next(m for m, x in b.items() if t in x.active)[0]
        holders = [m[0] for m, x in b.items() if t in x.standby]
        assert holders and owner not in holders
    assert set(b["A-T1"].active) | set(b["A-T2"].active) <= {"0_0", "0_1", "0_2", "0_3"}
    assert b["A-T1"].active[0] == "0_0"  # sticky


def test_subscription_round_trip() -> None:
    s = Subscription("pod-1", "StreamThread-2", ("0_1",), ("0_0",), ("0_0", "0_1"))
    assert Subscription.decode(s.encode()) == s
    assert Subscription.decode(b"garbage") is None


def test_bug_registry_is_complete_and_plain() -> None:
    assert len(bugs.BUG_NAMES) >= 8 and set(bugs.REGISTRY) == set(bugs.BUG_NAMES)
    for b in bugs.REGISTRY.values():
        assert b.mechanism and b.trigger and b.symptom and b.where
    # the harness reads BUG_NAMES from the file text, without importing the worker
    tree = ast.parse((WORKER / "bugs.py").read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign)
                and getattr(n.targets[0], "id", "") == "BUG_NAMES")
    assert ast.literal_eval(node.value) == bugs.BUG_NAMES
    with pytest.raises(ValueError):
        bugs.parse_bugs("KAFKA-7672,nope")


def test_cli_flags() -> None:
    cfg = parse_args(["--bootstrap", "127.0.0.1:9092", "--state-dir", "/tmp/x", "--threads", "2",
                      "--guarantee", "at_least_once", "--bugs", "KAFKA-8187,KIP-406"])
    assert cfg.threads == 2 and not cfg.eos and cfg.bug("KIP-406") and not cfg.bug("KAFKA-7672")
    assert cfg.changelog("dedup") == "ledger-app-dedup-changelog"


def test_worker_imports_no_harness() -> None:
    for f in WORKER.glob("*.py"):
        tree = ast.parse(f.read_text())
        for n in ast.walk(tree):
            names = []
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                names = [n.module or ""]
            for name in names:
                assert name.split(".")[0] not in ("harness", "faults", "checker"), f"{f}: {name}"


@pytest.mark.parametrize(("session_ms", "heartbeat_ms"),
                         [(2_000, 500), (6_000, 1_200), (10_000, 2_000), (45_000, 2_000)])
def test_heartbeat_follows_short_sessions_and_is_capped_for_long_ones(
        session_ms: int, heartbeat_ms: int) -> None:
    # A long drawn session must not slow every rebalance: members hear of one at a heartbeat.
    assert heartbeat_interval_ms(session_ms) == heartbeat_ms
