"""Pulumi entry point: everything lives in the `maas` package."""

from maas.deploy.program import main
from maas.gc_tuning import tune_gc

tune_gc()
main()
