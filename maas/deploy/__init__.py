"""The Pulumi layer: the program `pulumi up` runs, the components and providers that register the plan, and the
status writer (a dynamic provider)."""
