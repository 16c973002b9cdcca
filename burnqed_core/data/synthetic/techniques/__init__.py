"""The corpus families by proof technique, one module per technique, named by it (the technique labels of
`burnqed_core.data.synthetic.families.TECHNIQUES`)."""
