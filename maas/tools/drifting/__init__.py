"""`python -m maas drift`: what `pulumi up` would change in the live objects of a snapshot, field by field.

The program's objects are rendered against the snapshot (`report`), each applied to its live object as a
server-side apply merges it (`apply`, with the list and map types and the defaults of each kind's schema,
`schemas`), and the changes written out (`formats`) as `diff` writes its objects section.
"""
