"""The seam between the harness and the system under test (SUT): what runs in each pod.

A SUT says how to prepare itself (build, once per version, cached), the command line of
one pod (a process, or a container and what it is made of), which fault kinds it can take
and which checks cannot be judged for it. Every
SUT speaks the same pod command-line contract (`PodSettings.argv`: the flags of
`python -m workloads.worker`), writes the same trace format and the same ledger topics,
so platforms, the nemesis and the checker need nothing else from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal, Protocol

from common.guarantees import EXACTLY_ONCE_V2
from faults.kinds import FAULT_KINDS
from faults.model import Plan
from harness.config.run import RunConfig
from harness.errors import UsageError


@dataclass(frozen=True)
class PodPaths:
    """Where one pod keeps its state (its volume), writes its trace, reads its control file
    (paths as the pod sees them: host paths locally, mount points in a container)."""

    state_dir: str
    trace: str
    control: str


@dataclass(frozen=True)
class PodSettings:
    """The settings every pod of a run shares. Defaults are RunConfig's (one source);
    `argv` turns them into the pod flags: each field `x_y` is the flag `--x-y`."""

    bootstrap: str
    application_id: str = RunConfig.application_id
    threads: int = RunConfig.threads
    standbys: int = RunConfig.standbys
    guarantee: str = EXACTLY_ONCE_V2  # RunConfig.pod_guarantee's where none is given
    bugs: tuple[str, ...] = ()
    commit_interval_ms: int = RunConfig.commit_interval_ms
    write_buffer_bytes: int = RunConfig.write_buffer_bytes
    cleaner_delay_ms: int = RunConfig.cleaner_delay_ms
    cleaner_interval_ms: int = RunConfig.cleaner_interval_ms
    session_timeout_ms: int = RunConfig.session_timeout_ms
    transaction_timeout_ms: int = RunConfig.transaction_timeout_ms
    max_poll_records: int = RunConfig.max_poll_records
    restore_max_poll_records: int = RunConfig.restore_max_poll_records
    group_protocol: str = RunConfig.group_protocol
    extra_args: tuple[str, ...] = ()

    @staticmethod
    def from_run(config: RunConfig, bootstrap: str) -> PodSettings:
        names = {f.name for f in fields(PodSettings)} - {"bootstrap", "extra_args", "guarantee"}
        shared = {name: getattr(config, name) for name in names}
        return PodSettings(bootstrap=bootstrap, guarantee=config.pod_guarantee, **shared)

    def argv(self, pod: str, paths: PodPaths) -> list[str]:
        """The pod's flags (no program): the shared settings, then the pod's own. The
        flags of `ONLY_WHEN_SET` are left out at their defaults: a pod's command line is
        what it was before the knobs (faults/knobs.py) unless one was drawn, and an app
        that does not know them yet (the Kafka Streams app of an older generation) runs
        every profile that draws nothing."""
        args: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra_args" or (f.name == "bugs" and not value):
                continue
            if f.name in ONLY_WHEN_SET and value == f.default:
                continue
            text = ",".join(value) if f.name == "bugs" else str(value)
            args += [f"--{f.name.replace('_', '-')}", text]
        args += [
            "--instance-id", pod,
            "--state-dir", paths.state_dir,
            "--trace", paths.trace,
            "--control-file", paths.control,
        ]
        return [*args, *self.extra_args]


# Pod flags added with the knobs: passed only when they differ from their default. At the
# default each SUT keeps its own: the worker the same values, Kafka Streams a 10 s
# transaction timeout under exactly-once and max.poll.records 1000 for every consumer.
ONLY_WHEN_SET = frozenset({"session_timeout_ms", "transaction_timeout_ms", "max_poll_records",
                           "restore_max_poll_records",
                           # classic, the default: the Python worker takes no other
                           "group_protocol"})


@dataclass(frozen=True)
class PodImage:
    """What a pod's container is made of on the docker platform: the kchaos worker image
    ("worker"), or a Java runtime with `jars` in CONTAINER_APP_DIR ("jvm")."""

    runtime: Literal["worker", "jvm"]
    jars: tuple[Path, ...] = ()


CONTAINER_APP_DIR = "/opt/kchaos-app"


class SystemUnderTest(Protocol):
    name: str
    # Fault kinds this SUT cannot take, each with the reason (said when refusing a plan).
    refused_faults: Mapping[str, str]
    # Checks that cannot be judged from what this SUT records, each with the reason.
    not_applicable: Mapping[str, str]
    # Whether the harness records the pods' checkpoint and SST files (the SUT does not
    # trace its checkpoint operations itself).
    watches_state_dirs: bool

    @property
    def version(self) -> str | None:
        """The Kafka Streams release its pods run; None for a SUT that is not Kafka Streams."""
        ...

    @classmethod
    def from_config(cls, config: RunConfig) -> SystemUnderTest:
        """Built from the run's settings, before its folder exists: UsageError (254) for
        what only this SUT can judge (a release it cannot run, an app that is not one)."""
        ...

    def prepare(self) -> None:
        """Build or fetch what the pods run (cached); UsageError if a tool is missing."""
        ...

    def command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        """The full command line of one pod on this machine, program first."""
        ...

    def env(self) -> dict[str, str]:
        """Environment variables the pod needs on top of the harness's."""
        ...

    def pod_image(self) -> PodImage:
        """Its pods' image on the docker platform (built by the platform on first use);
        UsageError if its pods cannot run in a container."""
        ...

    def container_command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        """What the image's entrypoint is given, with the container's paths."""
        ...


def refused_for(lacks: Mapping[str, str]) -> dict[str, str]:
    """The fault kinds a SUT refuses, each with its reason: those that need what it lacks
    (`lacks`: a `faults.kinds.Need`'s value -> why this SUT has none). A new kind with such
    a need is refused without a word here."""
    return {kind.name: f"it needs {need.description}; {lacks[need]}"
            for kind in FAULT_KINDS.values() if (need := kind.needs) is not None and need in lacks}


def refuse_plan(sut: SystemUnderTest, plan: Plan) -> None:
    """UsageError (exit 254) naming the first planned fault this SUT cannot take."""
    for step in plan.steps:
        reason = sut.refused_faults.get(step.fault)
        if reason is not None:
            raise UsageError(
                f"--sut {sut.name} cannot take fault {step.fault!r} (step {step.id} of the "
                f"plan): {reason}; choose another --profile"
            )
