"""Pulumi entry point: everything lives in the `maas` package."""

from maas.deploy.program import main

main()
