"""`python -m workloads.worker ...`: run one pod of the streams worker until SIGTERM."""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys

from workloads.worker.app import StreamsApp
from workloads.worker.config import parse_args


def main(argv: list[str] | None = None) -> int:
    try:
        cfg = parse_args(argv)
    except ValueError as e:
        print(f"worker: {e}", file=sys.stderr)
        return 2
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format=f"%(asctime)s {cfg.instance_id} %(threadName)s %(levelname)s %(name)s: %(message)s",
    )
    # kafka-python is chatty at INFO (every fetch session, every reconnect)
    logging.getLogger("kafka").setLevel(os.environ.get("KCHAOS_KAFKA_LOG_LEVEL", "WARNING"))
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>` dumps every thread's stack
    app = StreamsApp(cfg)
    signal.signal(signal.SIGTERM, lambda *_: app.stop_on_signal())
    signal.signal(signal.SIGINT, lambda *_: app.stop_on_signal())
    try:
        return app.run()
    except Exception as e:
        logging.getLogger(__name__).exception("worker failed")
        app.tracer.emit("main", "fatal", error=f"{type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    code = main()
    logging.shutdown()
    if code != 0:
        # Fatal: die now, whatever client threads (kafka IO, producer sender) still run.
        os._exit(code)
    sys.exit(code)
