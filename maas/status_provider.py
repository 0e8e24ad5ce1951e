"""Where Pulumi states written before the package layout of 2026-12 find the status writer.

Pulumi pickles a dynamic provider by reference to its class; a state written then names
`maas.status_provider.StatusProvider`, and deleting or refreshing those resources unpickles it from here.
"""

from .deploy.status_writer import StatusProvider

__all__ = ["StatusProvider"]
