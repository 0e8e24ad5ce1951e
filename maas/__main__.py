"""`python -m maas` and the `maas` console script (pyproject.toml `[project.scripts]`): the offline tools."""

import sys

from .gc_tuning import tune_gc
from .tools.cli import main as cli_main


def main() -> int:
    tune_gc()
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
