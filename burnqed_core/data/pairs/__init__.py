"""Tactic pairs: the prompt format of a pair (`prompt`, with canonical local names and numerals: `local_names`,
`numerals`), alpha-renaming augmentation (`alpha_rename`), preparation of a training set (`prepare`), mixing in
earlier iterations' proofs (`mixing`) and what a traced state shows (`visibility`)."""
