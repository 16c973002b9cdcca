"""Twin detection: a theorem's canonical form (`canonical`), near-twins (`near_twins`), template clusters
(`clusters`, over `union_find`) and a set's similarity to a corpus (`similarity`)."""
