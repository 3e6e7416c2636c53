"""Seed + profile -> the run's settings ("knobs"), for the broad profiles (issue 33).

Every run used to share one configuration per profile: a session timeout equal to the
transaction timeout (10 s), fixed threads, standbys, partitions, commit interval, write
buffer and poll sizes. Real deployments differ, and some bugs live only where two
settings disagree (a session longer than the transaction timeout, at-least-once with
standbys, ...). As FoundationDB's BUGGIFY and Antithesis do, a broad profile draws them
from the seed: `draw(seed, profile)` is a pure function with its own random stream
(`kchaos-knobs:<profile>:<seed>`, not the plan's `kchaos:<profile>:<seed>`), so the
fault plan a seed draws does not change (tests/faults/golden_plans.json).

Each knob is a RunConfig field (harness/config/run.py, where the draw is applied: options
given on the command line win, and a drawn value that contradicts one of them gives way).
Its values are realistic ones, each range below with why; `KNOBS` is the one list
(the report, the shrink's knob phase and the tests read it).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

from common.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE_V2
from faults.params import ProfileSettings
from faults.plan import REGISTRY
from faults.windows import longest_session_s, newcomer_takes_a_task

Value = int | float | str


@dataclass(frozen=True)
class Knob:
    name: str  # a RunConfig field (and a pod flag, `--name-with-dashes`)
    values: tuple[Value, ...]  # every value the draw may give
    why: str  # where the range comes from


KIB, MIB = 1024, 1024 * 1024

# Kafka Streams' commit.interval.ms default is 100 ms under exactly-once and 30 s under
# at-least-once (StreamsConfig); each guarantee draws around its own.
EOS_COMMIT_MS: tuple[int, ...] = (100, 500, 2000, 5000)
ALOS_COMMIT_MS: tuple[int, ...] = (100, 1000, 5000, 30_000)
# A transaction lasts its commit interval plus the commit and the loop's latency. Kafka
# Streams refuses a transaction timeout below the commit interval
# (StreamsConfig.verifyEOSTransactionTimeoutCompatibility); at exactly the interval the
# coordinator (which looks every second on kchaos' brokers) aborts most transactions, a
# configuration in which nothing ever commits. The draw keeps twice the interval.
TXN_OVER_COMMIT = 2
# Pairs Kafka Streams sets with one setting, drawn as one value (`draw`): the same ranges.
POLL_RECORDS: tuple[int, ...] = (1, 10, 100, 1000)
CLEANER_MS: tuple[int, ...] = (1000, 10_000, 60_000, 600_000)

KNOBS: tuple[Knob, ...] = (
    Knob("guarantee", (EXACTLY_ONCE_V2, AT_LEAST_ONCE),
         "both of Kafka Streams' guarantees; exactly-once two seeds in three, since most "
         "coverage classes (crash-in-txn, flush-then-abort) are exactly-once moments"),
    Knob("commit_interval_ms", tuple(sorted({*EOS_COMMIT_MS, *ALOS_COMMIT_MS})),
         "exactly-once 100 ms (Kafka Streams' default) to 5 s (the long transactions the "
         "targeted profiles use); at-least-once 100 ms to 30 s (its default)"),
    Knob("session_timeout_ms", (6000, 10_000, 15_000, 30_000, 45_000),
         "6 s: a broker's default group.min.session.timeout.ms (less is refused); 10 s: the "
         "consumer default before Kafka 3.0; 45 s: since (KIP-735); `all`'s pauses and "
         "crashes follow it (faults/windows.py); at most what the run can outwait "
         "(`bounded`)"),
    Knob("transaction_timeout_ms", (5000, 10_000, 30_000, 60_000),
         "10 s: Kafka Streams' exactly-once default; 60 s: the producer's default and the "
         "most kchaos' brokers accept (transaction.max.timeout.ms); 5 s below both; "
         "at least twice the commit interval (TXN_OVER_COMMIT)"),
    Knob("threads", (1, 2, 3, 4),
         "1: Kafka Streams' num.stream.threads default; up to 4 per pod on a 2-core machine"),
    Knob("standbys", (0, 1, 2),
         "0: Kafka Streams' default; 2 with 2 pods is more than can be placed (Kafka Streams "
         "places what it can, and a scale-out pod gives room)"),
    Knob("partitions", (1, 2, 4, 6, 8, 12),
         "1 (one task, every other thread idle) to 12 (more tasks than threads); at least "
         "enough for a scaled-out pod to take one (`bounded`): 6 for 2 pods"),
    Knob("write_buffer_bytes", (8 * KIB, 64 * KIB, 1 * MIB, 16 * MIB),
         "16 MiB: Kafka Streams' RocksDB write_buffer_size; 8 KiB and 64 KiB: kchaos' small "
         "buffers that make memtables flush inside a transaction"),
    Knob("max_poll_records", POLL_RECORDS,
         "1000: Kafka Streams' max.poll.records; 1: one record a poll (slow processing); "
         "500, the consumer's default, is every undrawn run's already"),
    Knob("restore_max_poll_records", POLL_RECORDS,
         "the same value as max_poll_records (Kafka Streams' setting bounds its restore "
         "consumer too): a restoration of a changelog longer than one poll"),
    Knob("cleaner_delay_ms", CLEANER_MS,
         "600 s: Kafka Streams' state.cleanup.delay.ms (never within a run); 1 s to 60 s: "
         "the cleaner deletes a task's directory it left during the run"),
    Knob("cleaner_interval_ms", CLEANER_MS,
         "the cleanup delay (Kafka Streams runs its cleaner at that period)"),
    Knob("write_buffer_count", (2, 3, 6),
         "3: Kafka Streams' max_write_buffer_number; 2, the least RocksDB keeps; 6 lets "
         "memtables queue behind a slow flush"),
    Knob("window_retention_ms", (10_000, 30_000, 120_000),
         "a window and its grace is 6 s; 10 s drops segments within seconds, 120 s keeps "
         "every segment of a minute's run"),
    Knob("window_segment_ms", (1000, 5000, 60_000),
         "60 s: what Kafka Streams gives a short retention (max(retention / 2, 60 s)); 1 s "
         "and 5 s: several segments, each its own RocksDB, live at once"),
    Knob("rate", (50.0, 100.0, 200.0, 300.0),
         "events per second: 100 is the default; 300 is the targeted profiles' (a memtable "
         "flush within a transaction); 50 leaves the machine room"),
)
BY_NAME: Mapping[str, Knob] = {k.name: k for k in KNOBS}


def draws(profile: str) -> bool:
    """Whether `profile` draws the knobs (its `draws_knobs`; which do and why:
    faults/mixes.py)."""
    chosen = REGISTRY.get(profile)
    return chosen is not None and chosen.draws_knobs


def draw(seed: int, profile: str) -> ProfileSettings:
    """The knobs `profile` draws for `seed` (none for a profile that is not broad). Pure:
    the same (seed, profile) gives the same values on any machine and process (a
    `random.Random` seeded with a string)."""
    if not draws(profile):
        return ProfileSettings()
    rng = random.Random(f"kchaos-knobs:{profile}:{seed}")
    guarantee = rng.choice((EXACTLY_ONCE_V2, EXACTLY_ONCE_V2, AT_LEAST_ONCE))
    commit = rng.choice(EOS_COMMIT_MS if guarantee == EXACTLY_ONCE_V2 else ALOS_COMMIT_MS)
    txn_values = [int(v) for v in BY_NAME["transaction_timeout_ms"].values
                  if int(v) >= TXN_OVER_COMMIT * commit]
    poll = int(rng.choice(BY_NAME["max_poll_records"].values))
    cleaner = int(rng.choice(BY_NAME["cleaner_delay_ms"].values))
    return ProfileSettings(
        guarantee=guarantee,
        commit_interval_ms=commit,
        session_timeout_ms=int(rng.choice(BY_NAME["session_timeout_ms"].values)),
        transaction_timeout_ms=rng.choice(txn_values),
        threads=int(rng.choice(BY_NAME["threads"].values)),
        standbys=int(rng.choice(BY_NAME["standbys"].values)),
        partitions=int(rng.choice(BY_NAME["partitions"].values)),
        write_buffer_bytes=int(rng.choice(BY_NAME["write_buffer_bytes"].values)),
        max_poll_records=poll,
        restore_max_poll_records=poll,
        cleaner_delay_ms=cleaner,
        cleaner_interval_ms=cleaner,
        rate=float(rng.choice(BY_NAME["rate"].values)),
        # Drawn after the others, so that each seed keeps the values it drew before these.
        write_buffer_count=int(rng.choice(BY_NAME["write_buffer_count"].values)),
        window_retention_ms=int(rng.choice(BY_NAME["window_retention_ms"].values)),
        window_segment_ms=int(rng.choice(BY_NAME["window_segment_ms"].values)),
    )


def bounded(drawn: ProfileSettings, pods: int, time_limit_s: float) -> ProfileSettings:
    """The draw bounded where it would leave the faults nothing to hit in a run of `pods`
    pods and `time_limit_s` seconds (the draw knows only the seed and the profile):

    - partitions: the next value of the range with which a scaled-out pod takes a task
      (and gives it back: `task-returns`), a move or a crash leaves a task to fail over
      and each pod holds one (faults.windows.newcomer_takes_a_task: 6, 8 or 12 for 2
      pods; 4, 8 or 12 for 3). One partition for two pods left `all` one task: a seed
      reached three classes;
    - the session timeout: at most the longest the run can outwait (a pause at the first
      fault past it and the rebalance, before the end: faults.windows.longest_session_s;
      a 60 s run keeps 45 s, a 30 s run 15 s). A longer session made no zombie, no
      failover and no promotion possible.

    Bounded to the nearest value of the range, not drawn again, so that the other knobs
    and the plan's own stream stay as the seed drew them."""
    out = ProfileSettings(**drawn)
    if "partitions" in out:
        fitting = [int(v) for v in BY_NAME["partitions"].values
                   if newcomer_takes_a_task(int(v), pods)]
        above = [v for v in fitting if v >= out["partitions"]]  # the next that fits
        out["partitions"] = min(above) if above else max(fitting, default=out["partitions"])
    if "session_timeout_ms" in out:
        values = sorted(int(v) for v in BY_NAME["session_timeout_ms"].values)
        longest = [v for v in values if v <= longest_session_s(time_limit_s) * 1000]
        out["session_timeout_ms"] = min(out["session_timeout_ms"],
                                        longest[-1] if longest else values[0])
    return out


def transaction_timeout_for(commit_interval_ms: int) -> int:
    """The smallest transaction timeout of the range that keeps TXN_OVER_COMMIT times the
    commit interval (the largest if none does): where a drawn transaction timeout gives way
    to a commit interval given explicitly."""
    values = sorted(int(v) for v in BY_NAME["transaction_timeout_ms"].values)
    fitting = [v for v in values if v >= TXN_OVER_COMMIT * commit_interval_ms]
    return fitting[0] if fitting else values[-1]


def commit_interval_for(transaction_timeout_ms: int) -> int:
    """The longest commit interval of the ranges whose TXN_OVER_COMMIT times fits the
    transaction timeout (the shortest if none does): where a drawn commit interval gives
    way to a transaction timeout given explicitly."""
    values = sorted({*EOS_COMMIT_MS, *ALOS_COMMIT_MS})
    fitting = [v for v in values if TXN_OVER_COMMIT * v <= transaction_timeout_ms]
    return fitting[-1] if fitting else values[0]
