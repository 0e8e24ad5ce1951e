"""The offline tools behind `python -m maas`: render (the program under the mock engine), output directories, CEL."""
