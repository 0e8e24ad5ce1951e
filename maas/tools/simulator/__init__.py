"""The request simulator: what the gateway, Authorino, maas-api and the token limits do with one request, read off
the rendered objects (see `chain.py` for the stages)."""

from .chain import Network, Outcome, SimulationError, simulate
from .request import Caller, Request, normalised

__all__ = ["Caller", "Network", "Outcome", "Request", "SimulationError", "normalised", "simulate"]
