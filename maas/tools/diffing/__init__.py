"""`python -m maas diff`: both sides rendered (`sides`, `git`), compared (`fields`, `access`, `limits`, `review`) and
written out (`formats`)."""
