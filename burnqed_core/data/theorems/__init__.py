"""Theorem sets and their loaders (`load`), the file formats they read (`external`, `lean_file`,
`lean_dojo_trace`), Lean's own library as a pool (`core_pool`), a user's file checked theorem by theorem
(`file_check`) and the fixed stratified sample of a set (`sampling`)."""
