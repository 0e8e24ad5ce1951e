"""The policy pack that `pulumi preview --policy-pack policy/` runs: the guardrails of `guardrails.py`."""

from guardrails import ENFORCEMENT, POLICIES
from pulumi_policy import PolicyPack

PolicyPack(name="maas-guardrails", enforcement_level=ENFORCEMENT, policies=POLICIES)
