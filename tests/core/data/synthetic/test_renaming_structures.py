"""Renaming of preambles with ``structure``, ``class`` and ``instance`` declarations
(`burnqed_core.data.synthetic.renaming`):
structures and classes are types, their fields and methods and named instances are definitions, a named
constructor (``mk ::``) is a constructor; the renaming of every other preamble is unchanged."""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.families import FAMILIES, Instance
from burnqed_core.data.synthetic.generate_sets import SEED
from burnqed_core.data.synthetic.renaming import CONSTRUCTORS, FUNCTIONS, TYPES, declared, identifiers, rename_instance
from tests.core.data.synthetic.family_cases import PREDICATES as TECHNIQUE_FAMILIES

PRE = """\
namespace BqS
structure Pt where
  px : Nat
  py : Nat

structure Entry where
  make ::
  qty : Nat
  (flag live : Bool)

class Weigh (α : Type) where
  weight : α → Nat
  scale : Nat → α → α := fun _ a => a

inductive Shape where
  | dot : Nat → Shape
  | pair : Shape → Shape → Shape

def Shape.wt : Shape → Nat
  | .dot n => n + 1
  | .pair a b => Shape.wt a + Shape.wt b

instance weighShape : Weigh Shape where
  weight := Shape.wt

instance : Weigh Nat := ⟨fun n => n, fun k n => k * n⟩

instance weighList {α : Type} [Weigh α] : Weigh (List α) := ⟨fun _ => 0, fun _ xs => xs⟩

def toggle (e : Entry) : Entry := { e with flag := !Entry.flag e }
end BqS
open BqS"""

STATEMENT = "(p : Pt) (e : Entry) (s : Shape) : Weigh.weight s + p.px = Entry.qty (toggle e) + Pt.py p"
PROOF = ("show Shape.wt s + Pt.px p = Entry.qty e + p.py", "simp [weighShape, Entry.make, Pt.mk]")


def test_structures_classes_and_instances_are_declared() -> None:
    d = declared(PRE, STATEMENT)
    assert d.namespaces == ("BqS",)
    assert d.types == ("Pt", "Entry", "Weigh", "Shape")
    assert d.constructors == ("make", "dot", "pair")
    # fields and methods in order, then definitions and named instances; an anonymous instance declares nothing,
    # and an instance's ``weight := ...`` line is no field
    assert d.functions == ("px", "py", "qty", "flag", "live", "weight", "scale", "wt", "weighShape", "weighList",
                           "toggle")
    assert dict(d.variables) == {"p": "value", "e": "value", "s": "value"}


def test_fields_methods_and_instances_are_renamed_everywhere() -> None:
    inst = Instance("k", STATEMENT, PROOF, PRE)
    new, mapping = rename_instance(inst, "tstruct", "train", SEED)
    d = declared(PRE, STATEMENT)
    for name in d.types:
        assert mapping[name] in TYPES["train"]
    for name in d.constructors:
        assert mapping[name] in CONSTRUCTORS["train"]
    for name in d.functions:
        assert mapping[name] in FUNCTIONS["train"]
    gone = set(d.types) | set(d.constructors) | set(d.functions)
    for text in (new.preamble, new.statement, *new.proof):
        assert not gone & set(identifiers(text)), text
    assert f"  {mapping['px']} : Nat" in new.preamble and f"  {mapping['make']} ::" in new.preamble
    assert f"  ({mapping['flag']} {mapping['live']} : Bool)" in new.preamble
    assert f"instance {mapping['weighShape']} : {mapping['Weigh']} {mapping['Shape']} where" in new.preamble
    assert f"  {mapping['weight']} := {mapping['Shape']}.{mapping['wt']}" in new.preamble
    assert (f"{{ {mapping['e']} with {mapping['flag']} := !{mapping['Entry']}.{mapping['flag']} {mapping['e']} }}"
            in new.preamble)
    # projections on a statement variable and on a type name follow the field
    assert f"{mapping['p']}.{mapping['px']}" in new.statement and f"{mapping['Pt']}.{mapping['py']}" in new.statement
    assert f"{mapping['p']}.{mapping['py']}" in new.proof[0]
    assert declared(new.preamble, new.statement).functions == tuple(mapping[n] for n in d.functions)
    assert rename_instance(inst, "tstruct", "train", SEED) == (new, mapping)


def test_instance_forms_and_lookalikes() -> None:
    pre = ("structure Box (α : Type) where\n  mk' ::\n  val : α\n\ndef unbox {α : Type} (b : Box α) : α := Box.val b\n"
           "instance (priority := low) boxInst : Inhabited (Box Nat) := ⟨⟨0⟩⟩\n"
           "instance instFoo : Inhabited Nat where\n  default := 1\n"
           "instance {α : Type} [Inhabited α] : Inhabited (Box α) := ⟨⟨default⟩⟩\n"
           "class Two (α : Type) where\n  (a b : α)\n"
           "instance : Two Nat where\n  a := 0\n  b := 1")
    d = declared(pre, "(b : Box Nat) : unbox b = Box.val b")
    assert d.types == ("Box", "Two")
    assert d.constructors == ("mk'",)
    assert d.functions == ("val", "unbox", "boxInst", "instFoo", "a", "b")
    assert dict(d.variables) == {"b": "value"}


def test_renaming_of_inductive_and_def_preambles_is_unchanged() -> None:
    """The families without structures declare exactly what the line rules for ``inductive`` and ``def`` find
    (the bundled sets' byte-identity is `test_sets.test_regeneration_is_byte_identical`)."""
    for family in [*FAMILIES, *TECHNIQUE_FAMILIES]:
        for inst in family.generate(random.Random(f"{SEED}:{family.name}")):
            lines = inst.preamble.splitlines()
            assert not any(ln.startswith(("structure ", "class ", "instance ")) for ln in lines), inst.key
            d = declared(inst.preamble, inst.statement)
            defs = [ln.split()[1].split(".")[-1] for ln in lines if ln.startswith("def ")]
            assert d.functions == tuple(dict.fromkeys(defs)), (family.name, inst.key)
            assert d.types == tuple(dict.fromkeys(ln.split()[1] for ln in lines if ln.startswith("inductive ")))
