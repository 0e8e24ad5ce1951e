"""The parts of `python -m maas import` (`maas/tools/importer.py`): one module per kind of thing imported."""
