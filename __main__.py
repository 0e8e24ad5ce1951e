"""Pulumi entry point: everything lives in the `maas` package."""

from maas.program import main

main()
