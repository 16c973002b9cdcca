"""The corpus families by proof technique, one module per technique, named by it (the technique labels of
`burnqed_core.data.synthetic.families.TECHNIQUES`).

How the families are written. Families of structures, classes, ``Iff`` and ``funext``:

Proofs name only what their proof state shows (2026-11-27, see
`burnqed_core.data.pairs.prepare.visibility`): ``cases d <;> rfl`` and ``induction s`` with
bullets or ``next x s ih =>`` instead of ``with | ctor ...`` alternatives, a
definition reached only through another one named in a later step
(``simp only [qsize, push]``, then ``simp only [lenQ]``), ``show`` only with
names the goal prints.

Like `burnqed_core.data.synthetic.families`, instances use fixed names and are renamed
per theorem by `burnqed_core.data.synthetic.renaming` (structure fields, class methods
and named instances are renamed like definitions, a named constructor like a
constructor). Renaming rewrites a dotted name only when its head is renamed,
so a field is projected as ``Pt.px p`` (or ``p.px`` on a statement variable),
never as ``q.px`` on a name bound by a proof or a definition; names avoid
those of core Lean that a proof also uses (``zero``, ``nil``, ``flip``).
The embedded Lean cannot compile a preamble definition that calls a core list
function with a compiled implementation (``++``, ``List.length``,
``List.reverse``: "Unknown constant `List.appendTR._redArg`") or an instance
field that is a bare core function (``combine a b := a + b`` needs
``Nat.add._boxed``), so the preambles define their own (``lenQ``, ``addN``);
statements and proofs may use them freely. No single automation tactic
(``grind``, ``simp_all``, ``omega``, ``decide``, ``rfl``, ``simp``) unfolds the
user definitions: ``rfl`` alone closes the few goals that hold by structure eta
or unfolding, the others close none.

The other techniques (``generalizing``, ``have``, ``induction``, ``prop_cases``):

Like `burnqed_core.data.synthetic.families`, instances use fixed names and are renamed
per theorem by `burnqed_core.data.synthetic.renaming`; the preambles use only the forms
renaming knows (``inductive`` with one ``|`` line per constructor, ``def``
lines, ``match`` alternatives after a ``def`` line), and names that a proof
also uses for something else are avoided (no user ``map``/``length``/``nil``:
``List.map``, ``xs.length`` and ``| nil =>`` must keep theirs). No preamble
``def`` calls a core ``List`` function (``++``, ``List.map``, ``List.length``)
in its body: the trusted checker cannot then realise the definition's
equation lemmas (``simp [f]``/``rw [f]`` fail with "enableRealizationsForConst
must be called"), so the lists are flattened and measured by user functions.

They are in the bundled corpus through `burnqed_core.data.synthetic.catalogue.ALL_FAMILIES`.
"""
