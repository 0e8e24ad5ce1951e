"""Models: the routes that serve them, the ExternalModel children, and the MaaS resources (with status) that
maas-api reads."""
