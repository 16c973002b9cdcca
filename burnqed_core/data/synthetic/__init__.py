"""The generator of the bundled theorem sets: the first families and the `Family` record (`families`), one module
per proof technique (`techniques`), the catalogue of every family (`catalogue`), per-theorem renaming
(`renaming`) and the set writer (`generate_sets`)."""
