import sys

from .gc_tuning import tune_gc
from .tools.cli import main

tune_gc()
sys.exit(main())
