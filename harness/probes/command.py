"""`kchaos probe NAME --kafka-versions A,B,...`: one probe on each broker release.

Each release gets a fresh cluster in `<results>/<stamp>-probe-NAME/kafka-<version>/` (its
brokers' logs and data stay there as evidence); `probe.json` beside them holds every
result so far, written after each release so an interrupted probe keeps what it saw.
Exit 1 if a release showed the behaviour, 0 if none did.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.table import Table

from harness.console import err, out
from harness.errors import UsageError
from harness.probes import leaderless_markers
from harness.results import new_run_dir, write_json

Probe = Callable[..., leaderless_markers.ProbeResult]
PROBES: dict[str, tuple[Probe, str]] = {
    "leaderless-markers": (leaderless_markers.probe, leaderless_markers.HANGING),
}



def parse_versions(text: str) -> list[str]:
    """A comma-separated list of broker releases, each one a run could start."""
    from harness.config.run import SETTINGS

    versions = [v.strip() for v in text.split(",") if v.strip()]
    if not versions:
        raise UsageError("--kafka-versions: name at least one release, e.g. 4.2.2,4.4.0")
    return [str(SETTINGS["kafka_version"].checked(v)) for v in versions]


def probe_releases(results_dir: Path, name: str, versions_text: str) -> int:
    if name not in PROBES:
        raise UsageError(f"no probe {name!r}: kchaos has {', '.join(sorted(PROBES))}")
    versions = parse_versions(versions_text)
    run, shows = PROBES[name]
    folder = new_run_dir(results_dir, f"probe-{name}")
    results: list[leaderless_markers.ProbeResult] = []
    for version in versions:
        with err.status(f"{name} on Kafka {version}") as status:
            result = run(version, folder / f"kafka-{version}",
                         say=lambda text, v=version: status.update(f"Kafka {v}: {text}"))
        results.append(result)
        write_json(folder / "probe.json",
                   {"probe": name, "results": [r.as_dict() for r in results]})
        out.print(f"Kafka {version}: [bold]{result.verdict}[/]")
    out.print(_table(results))
    out.print(f"evidence: {folder}", soft_wrap=True)
    return 1 if any(r.verdict == shows for r in results) else 0


def _table(results: list[leaderless_markers.ProbeResult]) -> Table:
    records = leaderless_markers.RECORDS
    table = Table("Kafka", "verdict", "end offset", "LSO", "open txn from",
                  "coordinator's state", "marker dropped (coordinator log)",
                  "after an aborted 2nd txn", "committed records read committed",
                  "read uncommitted")
    for r in results:
        table.add_row(r.kafka_version, r.verdict, str(r.log_end), str(r.last_stable),
                      "-" if r.open_transaction_start is None else str(r.open_transaction_start),
                      r.coordinator_state, "yes" if r.coordinator_log else "no",
                      r.after_abort, f"{r.first_read_committed} of {records}",
                      f"{r.first_read_uncommitted} of {records}")
    return table
