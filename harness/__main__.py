"""`python -m harness` is the `kchaos` command."""

from harness.cli import main

raise SystemExit(main())
