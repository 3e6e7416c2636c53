"""`python -m checker RUN_DIR [--spark-master URL]`: re-judge a stored run, no Kafka needed.

Exit codes are Jepsen's: 0 valid, 1 anomalies, 2 unknown, 254 bad arguments, 255 the
checker itself failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checker.check import check_run
from checker.model import exit_code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker", description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--spark-master", default=None, help="default: local[*]")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 254
    if not (args.run_dir / "history").is_dir():
        print(f"checker: {args.run_dir}/history is not a directory", file=sys.stderr)
        return 254
    try:
        doc = check_run(args.run_dir, args.spark_master)
    except Exception as exc:
        print(f"checker: failed: {exc}", file=sys.stderr)
        return 255
    for name, res in doc["checks"].items():
        extra = f"  ({res['error'].splitlines()[0]})" if "error" in res else ""
        print(f"{name:18} {res['valid']!s:8} {res['count']}{extra}")
    print(f"verdict: {doc['verdict']}  ({args.run_dir / 'results.json'})")
    return exit_code(doc["verdict"])


if __name__ == "__main__":
    sys.exit(main())
