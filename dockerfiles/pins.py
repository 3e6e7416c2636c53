"""Print the pyproject.toml pins of the named packages, one a line (a requirements file):
the images install exactly the versions the harness is tested with.

    python pins.py pyproject.toml kafka-python rocksdict > requirements.txt
"""

import re
import sys
import tomllib


def main(pyproject: str, names: list[str]) -> int:
    with open(pyproject, "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    pins = {re.split(r"[=<>~!\[ ;]", d, maxsplit=1)[0].lower(): d for d in deps}
    missing = [name for name in names if name.lower() not in pins]
    if missing:
        print(f"{pyproject} pins none of {missing}", file=sys.stderr)
        return 1
    print("\n".join(pins[name.lower()].split(";")[0].split("#")[0].strip() for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
