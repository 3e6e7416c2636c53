"""One run (docs/architecture.md, "A run"): setup, load + faults, heal, drain, stop,
collect, check, report.

Every phase is timed into run.json; whatever breaks, the processes are stopped and what
was collected stays in the run folder.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from checker.model import UNKNOWN, Verdict, exit_code
from common.waiting import wait_until
from faults.clock import settle_traces
from faults.kinds import Need, needs_of
from faults.model import Plan, pod_name
from faults.nemesis import Nemesis
from faults.observe import TraceWatcher
from faults.plan import plan as draw_plan
from faults.platform import Platform
from harness.config.protocol import STREAMS, configure_streams_group, streams_group_config
from harness.config.run import RunConfig, plan_settings
from harness.errors import HarnessError, exit_code_for_exception
from harness.history import History
from harness.platforms import Placement, open_platform
from harness.platforms.supervised import RestartPolicy, SupervisedPlatform
from harness.procs import ProcessRegistry
from harness.results import new_run_dir, write_json
from harness.run import runinfo
from harness.run.check_phase import CHECK_SPARK, RunCheck
from harness.run.drain import DrainOutcome, wait_drained
from harness.run.healwatch import HealWatch
from harness.run.progress import Progress, ProgressSink
from harness.run.statedir import StateDirWatcher
from harness.run.topics import GroupMembers, LagProbe
from harness.run.workload import Load, Workload, open_workload
from harness.sut import PodSettings, SystemUnderTest, open_sut, refuse_plan

POD_READY_TIMEOUT_S = 120.0
# The load starts once every pod is RUNNING: a coarser poll adds its half to every run.
POD_READY_POLL_S = 0.1
T = TypeVar("T")


@dataclass(frozen=True)
class RunOutcome:
    run_dir: Path
    verdict: Verdict
    exit_code: int


def draw_run_plan(config: RunConfig) -> Plan:
    """The run's plan, from its settings, the fault kinds its platform applies here and those
    its SUT refuses (a broad profile leaves them out); `repro`, `shrink`, `bisect` replay it."""
    from harness.platforms import platform_kinds

    return draw_plan(config.seed, config.profile, config.pods, config.brokers,
                     config.time_limit_s, platform_kinds(config.platform, config.bootstrap),
                     open_sut(config).refused_faults, settings=plan_settings(config))


class Run:
    def __init__(self, config: RunConfig, results_dir: Path, plan: Plan | None = None) -> None:
        self.config = config
        self.plan = plan or draw_run_plan(config)
        self.sut: SystemUnderTest = open_sut(config)
        refuse_plan(self.sut, self.plan)  # bad input: before a run folder exists
        self.run_dir = new_run_dir(results_dir, f"{config.profile}-s{config.seed}")
        self.registry = ProcessRegistry(self.run_dir)
        self.history = History(self.run_dir)
        self.workload: Workload = open_workload(config, self.history, self.sut)
        self.progress = Progress(faults_planned=len(self.plan.steps), pods=config.pods)
        self.timings: dict[str, Any] = {}
        self.info = runinfo.initial(self.run_dir, config, self.plan)
        self.placement: Placement | None = None
        self.platform: Platform | None = None
        self.supervisor: SupervisedPlatform | None = None
        self.nemesis: Nemesis | None = None
        self.statedir: StateDirWatcher | None = None
        self.heal_watch: HealWatch | None = None
        self.check = RunCheck(self.run_dir, self.registry, config.spark_master)
        self.dead_pods: list[str] = []
        self.deaths: list[dict[str, Any]] = []
        self._sink: ProgressSink = lambda p: None

    # -- the phases ------------------------------------------------------------------------

    def execute(self, sink: ProgressSink | None = None) -> RunOutcome:
        """The phases in order. Whatever ends the run (a verdict, an error, Ctrl-C or
        SIGTERM), run.json records the exit code the `kchaos` process ends with."""
        if sink is not None:
            self._sink = sink
        write_json(self.run_dir / "run.json", self.info)
        write_json(self.run_dir / "plan.json", runinfo.plan_document(self.plan, None, self.config))
        verdict: Verdict = UNKNOWN
        code: int | None = None
        try:
            bootstrap = self._phase("setup", self._setup)
            self._phase("load", lambda: self._load(bootstrap))
            self._phase("heal", self._heal)
            drain = self._phase("drain", lambda: self._drain(bootstrap))
            self._phase("stop", self._stop_workload)
            self._phase("collect", lambda: self._collect(bootstrap, drain))
            # The check reads only stored files: the brokers stop meanwhile.
            with ThreadPoolExecutor(1, thread_name_prefix="stop-kafka") as pool:
                stopped = pool.submit(self._timed, "stop-kafka", self._tear_down_placement)
                verdict = self._phase("check", self.check.judge)
                stopped.result()
            code = exit_code(verdict)
            return RunOutcome(self.run_dir, verdict, code)
        except BaseException as exc:
            code = exit_code_for_exception(exc)
            self.info["error"] = f"{type(exc).__name__}: {exc}".rstrip(": ")
            self._abort()
            raise
        finally:
            # The check is over: its Spark first, before a teardown that may raise (an
            # engine gone mid-run) and leave the rest of this block undone.
            self._stop_check_spark()
            self._tear_down_placement()
            self.history.close()
            self.info["timings"] = self.timings
            self.info["verdict"] = verdict
            self.info["exit_code"] = code
            self.info["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            write_json(self.run_dir / "run.json", self.info)
            self._phase("report", self._report)

    def _phase(self, name: str, action: Callable[[], T]) -> T:
        self.progress.phase = name
        self._sink(self.progress)
        return self._timed(name, action)

    def _timed(self, name: str, action: Callable[[], T]) -> T:
        started = time.monotonic()
        try:
            return action()
        finally:
            self.timings[f"{name}_s"] = round(time.monotonic() - started, 2)

    def _setup(self) -> str:
        c = self.config
        mark = time.monotonic()
        parts = self.timings.setdefault("setup_parts", {})  # setup's phases: bench_run.py

        def part(name: str) -> None:
            nonlocal mark
            now = time.monotonic()
            parts[f"{name}_s"] = round(now - mark, 2)
            mark = now

        self.sut.prepare()
        part("sut")
        self.placement = open_platform(
            c.platform, self.run_dir, self.registry, self.sut,
            PodSettings.from_run(c, c.bootstrap or ""), c.nodes, c.brokers, c.bootstrap,
            needs_of(s.fault for s in self.plan.steps), c.kafka_version,
        )
        self.supervisor = SupervisedPlatform(
            self.placement.platform, RestartPolicy(mode=c.restart), self.history.record
        )
        self.supervisor.start()
        self.platform = self.supervisor
        bootstrap = self.placement.bootstrap
        self.info["bootstrap"] = bootstrap
        part("kafka")
        self.workload.setup(bootstrap, replication=min(3, c.brokers))
        if ran_with := self.workload.ran_with():  # an app's guarantee, cache and whose each was
            self.info["ran_with"] = dict(ran_with)
            write_json(self.run_dir / "run.json", self.info)
        part("topics")
        if c.group_protocol == STREAMS:  # before any member joins: the group's settings
            wanted = streams_group_config(c.standbys, c.session_timeout_ms)
            self.info["streams_group_config"] = {
                "set": wanted, "held": configure_streams_group(bootstrap, c.application_id,
                                                               wanted)}
            part("group")
        if self.sut.watches_state_dirs:
            self.statedir = StateDirWatcher(self.platform, c.application_id)
            self.statedir.start()
        for i in range(c.pods):
            self.platform.add_pod(pod_name(i), f"node-{i}")
        self.watcher = TraceWatcher(self.platform, c.application_id)
        self._wait_pods_running()
        part("pods")
        return bootstrap

    def _wait_pods_running(self) -> None:
        platform = self.platform
        assert platform is not None

        def all_running() -> bool:
            self._watch_deaths()
            states = {p.name: self._client_state(p.name) for p in platform.pods()}
            self.progress.pods_up = sum(1 for s in states.values() if s == "RUNNING")
            self._sink(self.progress)
            if all(s == "RUNNING" for s in states.values()):
                return True
            if self.deaths and self.config.restart == "never":
                # (With a restart policy the pod gets its restarts; one that cannot come up
                # ends as the timeout below.)
                raise HarnessError(f"a pod exited at start: see {self.run_dir / 'pods'}")
            return False

        if wait_until(all_running, POD_READY_TIMEOUT_S, interval_s=POD_READY_POLL_S):
            return
        raise HarnessError(f"pods not RUNNING after {POD_READY_TIMEOUT_S:.0f}s: see pods/*/")

    def _client_state(self, pod: str) -> str | None:
        state = None
        for event in self.watcher.events(pod):
            if event.get("event") == "client-state":
                state = event.get("to")
        return state

    def _load(self, bootstrap: str) -> None:
        assert self.platform is not None
        c = self.config
        assert self.placement is not None
        ctx = self.placement.fault_context(
            self.platform, c.application_id, self.workload.global_topic,
            GroupMembers(bootstrap, c.application_id, c.group_protocol == STREAMS))
        self.nemesis = Nemesis(self.plan, ctx, self.watcher, self.history.record)
        self.check.launch()
        client = self.workload.load(bootstrap)
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch_load, args=(bootstrap, client, stop),
                                   name="progress", daemon=True)
        beside = [threading.Thread(target=work, args=(stop,), name=f"workload-{i}", daemon=True)
                  for i, work in enumerate(self.workload.background())]
        self.nemesis.start()
        watcher.start()
        for thread in beside:
            thread.start()
        healed = False
        try:
            client.run(c.time_limit_s, stop)
            stop.set()
            for thread in beside:
                thread.join(timeout=30)
            self.nemesis.stop_and_heal()
            healed = True
        finally:
            stop.set()
            self.check.hurry()  # the load is over: the check comes soon
            if not healed:  # aborted: _abort stops the nemesis without healing
                self.nemesis.stop_without_heal()
            client.close()
            watcher.join(timeout=10)
            self._count(client)

    def _watch_load(self, bootstrap: str, client: Load, stop: threading.Event) -> None:
        last_lag = 0.0
        probe = LagProbe(bootstrap, self.config.application_id, self.workload.lag_topics())
        rated = self.workload.rate_topics()
        try:
            while not stop.wait(0.5):
                self._watch_deaths()
                self._count(client)
                if time.monotonic() - last_lag > 3:
                    self.progress.lag = probe.lag()
                    last_lag = time.monotonic()
                    if rated:  # the report's topic rates and group lag (harness/report/series.py)
                        self.history.record("harness", "info", "topic-progress", {
                            "lag": self.progress.lag,
                            **{side: probe.ends(topics) for side, topics in rated.items()}})
                self._sink(self.progress)
        finally:
            probe.close()

    def _count(self, client: Load) -> None:
        assert self.platform is not None and self.nemesis is not None
        self.progress.sent, self.progress.acked = client.counters.sent, client.counters.acked
        self.progress.faults_applied = self.nemesis.applied
        self.progress.faults_failed = self.nemesis.failed
        self.progress.pods_up = sum(1 for p in self.platform.pods() if p.running)

    def _watch_deaths(self) -> list[str]:
        """Pods that exited on their own (not by the nemesis); the supervisor has put each
        exit, with its cause, into the history and restarts the pod after its back-off."""
        assert self.platform is not None
        exited = self.platform.poll()
        for name, code in exited:
            self.deaths.append({"target": name, "exit_code": code})
        return [name for name, _ in exited]

    def _heal(self) -> None:
        """Bring every original pod back (a start also ends a restart back-off); the drain
        watches the ones restarted here (harness/run/healwatch.py)."""
        assert self.platform is not None
        self._watch_deaths()
        restarted = []
        for i in range(self.config.pods):
            pod = self.platform.pod(pod_name(i))
            if not pod.running:
                self.platform.start_pod(pod.name)
                restarted.append(pod.name)
                self.history.record("harness", "info", "heal-start", {"target": pod.name})
        self.heal_watch = HealWatch([pod_name(i) for i in range(self.config.pods)],
                                    restarted, time.monotonic(), time.time_ns())

    def _drain(self, bootstrap: str) -> DrainOutcome:
        """The drain and the heal's death watch together. A pod restarted at heal that
        exits within the watch, or is down at its end, is dead: it explains a stall;
        `unavailable` itself is judged on the drain."""
        platform, watch = self.platform, self.heal_watch
        assert platform is not None and watch is not None

        def settled() -> bool:
            now = time.monotonic()
            watch.observe(now, self._watch_deaths(),
                          [p.name for p in platform.pods() if not p.running])
            return watch.settled(
                now, lambda pod: self.watcher.running_since(pod, watch.healed_ns))

        try:
            return wait_drained(bootstrap, self.config.application_id,
                                self.config.drain_budget_s, settled=settled,
                                give_up=watch.all_dead, topics=self.workload.lag_topics(),
                                progress_window_s=2 * self.config.commit_interval_ms / 1000)
        finally:
            self.dead_pods = watch.dead()

    def _stop_workload(self) -> None:
        """Everything but the brokers, which collection still reads: the pods (with what the
        platform made for them), the state-dir watcher and the accounts updater."""
        if self.platform is not None:
            self.platform.teardown()
        self._stop_statedir()
        self.workload.close()
        if Need.CLOCK in needs_of(s.fault for s in self.plan.steps):
            # The pods' traces back on the harness's clock, before anything reads them.
            self.info["clock_settled_lines"] = settle_traces(self.run_dir)

    def _abort(self) -> None:
        """The run is ending early (error, Ctrl-C, SIGTERM): no healing, which would restart
        killed pods and resume paused ones only for the teardown to stop them; pods still
        up are killed where they stand. Never raises: the teardown must still happen."""
        if self.nemesis is not None:
            with contextlib.suppress(Exception):
                self.nemesis.stop_without_heal()
        if self.supervisor is not None:
            self.supervisor.stop()  # nothing killed here is restarted (nor a nemesis kill)
        platform = self.supervisor.inner if self.supervisor is not None else self.platform
        if platform is None:
            return
        for pod in platform.pods():
            if pod.running:
                with contextlib.suppress(Exception):
                    platform.kill_pod(pod.name)

    def _stop_statedir(self) -> None:
        statedir, self.statedir = self.statedir, None
        if statedir is not None:
            statedir.stop()
            self.info["statedir_events"] = statedir.events

    def _tear_down_placement(self) -> None:
        """The brokers too, and any process the registry still holds; only once."""
        if self.supervisor is not None:
            self.supervisor.stop()  # clean-up never restarts a pod just to stop it
        placement, self.placement = self.placement, None  # once, even if called again
        if placement is not None:
            placement.teardown()
        self._stop_statedir()
        # The check may be on the run's own Spark while the brokers stop: it stops after.
        self.registry.stop_all(keep=(CHECK_SPARK,))

    def _collect(self, bootstrap: str, drain: DrainOutcome) -> None:
        c = self.config
        meta = {
            "guarantee": c.pod_guarantee, "partitions": c.partitions,
            "application_id": c.application_id, "drained": drain.drained,
            "drain_seconds": drain.seconds, "drain": drain.to_meta(),
            "dead_pods": self.dead_pods, "deaths": self.deaths, "bugs": list(c.bugs),
            "restarts": self.supervisor.restart_count() if self.supervisor else 0,
            "sut": self.sut.name, "not_applicable": dict(self.sut.not_applicable),
        }
        self.info["restarts"] = meta["restarts"]
        self.info["collect"] = runinfo.as_json(self.workload.collect(self.run_dir, bootstrap,
                                                                     meta))

    def _stop_check_spark(self) -> None:
        spark = self.check.stop()
        if spark is not None:
            self.info["check_spark"] = spark

    def _report(self) -> None:
        if self.nemesis is not None:
            write_json(self.run_dir / "plan.json",
                       runinfo.plan_document(self.plan, self.nemesis.outcomes,
                                             self.config))
        runinfo.render_reports(self.run_dir)
