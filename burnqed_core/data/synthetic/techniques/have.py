"""The technique "have": a helper lemma stated with ``have``, proved, then used.

Each family defines, in its preamble, functions (and sometimes data types) of
its own and asks for proofs by one technique, in several surface forms:

* ``thave``: a **helper lemma** stated with ``have name : stmt := by ...``,
  proved inside by ``induction``, ``cases`` or ``omega``, then used to finish
  (``rw [name]``, ``exact ... name ...``, ``have := name n`` and ``omega``,
  ``simp only [name]``). The goals talk about compositions of user functions
  (``quoK (mulK (mulK n))``, ``sumL (dup (dup xs))``, ``walk (n + m)``) that the
  main goal's own induction would not close: the lemma is the general fact
  about the inner or outer function;
* ``tlem``: a **helper lemma** stated with ``have name : stmt := by ...``, proved inside
  (by ``induction`` on a user type with ``<;>``, or ``cases``), then used (``rw [h, h]``, ``simp only [h]``,
  ``have := h ...`` and ``omega``). The data: a user binary tree ``Bin`` (a weight, a mirror, a relabelling by
  ``+ k``, fork and tip counts), a user list ``Seq`` with constructors of its own (concatenation, sum, length), a
  record ``Wallet`` moved by a ``Nat``-indexed iterator ``payN``, an option-like ``Slot`` bumped ``n`` times. The
  lemmas are generalised statements (``∀ k u``, ``∀ m v``) that the goal instantiates, invariants (``tips u =
  forks u + 1``), monotonicity steps (``fill d (bumpS u) ≤ fill d u + 1``) used twice, and two lemmas about two
  functions of one goal.

How every technique's preamble, names and proofs are written (renaming, what the checker can unfold,
what a proof may name) is said once in `burnqed_core.data.synthetic.techniques`.

The style rule of `burnqed_core.data.synthetic.techniques.predicates` holds: a prover sees only the proof state, and
every name of the preamble is renamed per theorem, so no step names a constructor, inductive type or definition that
the state it applies to does not print: inductions are ``induction t`` with bullets, ``rename_i`` or ``<;>`` (never
``with | fork l x r``), a ``have`` states its lemma only with functions the goal shows, and a function that only an
unfolding brings into the goal (``bumpS`` under ``bumpN``, ``Heavy`` under ``trimH``) is named after that unfolding.
Lean core names (``Nat.lt_or_ge``, ``if_pos``) are fine. No preamble definition calls a core ``List`` function (the
trusted checker could not unfold it).
"""

from __future__ import annotations

import random

from burnqed_core.data.synthetic.families import Family, Instance, _distinct, _pick, namespaced

# ---------------------------------------------------------------------------
# thave: a helper lemma stated with `have`, proved, then used
# ---------------------------------------------------------------------------


def _walk_defs(a: int, b: int) -> str:
    return f"""\
def walk : Nat → Nat
  | 0 => {a}
  | n + 1 => walk n + {b}"""


def _walk_closed(a: int, b: int) -> str:
    """``hw : ∀ k, walk k = b * k + a``, by induction."""
    return (f"have hw : ∀ k, walk k = {b} * k + {a} := by\n  intro k\n  induction k with\n  | zero => rfl\n"
            "  | succ k ih => simp only [walk, ih]; omega")


def _quo_defs(k: int) -> str:
    zeros = "\n".join(f"  | {i} => 0" for i in range(k))
    return f"""\
def mulK : Nat → Nat
  | 0 => 0
  | n + 1 => mulK n + {k}

def quoK : Nat → Nat
{zeros}
  | n + {k} => quoK n + 1"""


QUO_LEMMA = ("have hq : ∀ m, quoK (mulK m) = m := by\n  intro m\n  induction m with\n  | zero => rfl\n"
             "  | succ j ih => simp only [mulK, quoK, ih]")


def _pos_defs(c: int) -> str:
    return f"""\
def pos : Nat → Nat
  | 0 => {c}
  | n + 1 => n + 1"""


DUP_DEFS = """\
def dup : List Nat → List Nat
  | [] => []
  | x :: xs => x :: x :: dup xs

def sumL : List Nat → Nat
  | [] => 0
  | x :: xs => x + sumL xs

def lenL : List Nat → Nat
  | [] => 0
  | _ :: xs => lenL xs + 1

def addAll (k : Nat) : List Nat → List Nat
  | [] => []
  | x :: xs => (x + k) :: addAll k xs"""


def _shunt_defs(c: int) -> str:
    return f"""\
def shunt : Nat → Nat → Nat
  | 0, m => m
  | n + 1, m => shunt n (m + {c})"""


LAMPS = ("dim", "mid", "bright", "blaze")


def _lamp_defs(s: int) -> str:
    ctors = "\n".join(f"  | {c}" for c in LAMPS[:s])
    nxt = "\n".join(f"  | .{LAMPS[i]} => .{LAMPS[(i + 1) % s]}" for i in range(s))
    return f"""\
inductive Lamp where
{ctors}

def nxt : Lamp → Lamp
{nxt}

def spin : Nat → Lamp → Lamp
  | 0, l => l
  | n + 1, l => spin n (nxt l)"""


def _have_lemma(rng: random.Random) -> list[Instance]:
    """Helper lemmas by induction/cases/omega, used by rw, exact, omega and simp only."""
    out = []
    (a1, b1), (a2, b2) = _pick(rng, [(a, b) for a in range(0, 8) for b in range(2, 8)], 2)
    pre = namespaced(f"BqHvWalk_{a1}_{b1}", _walk_defs(a1, b1))
    out.append(Instance(f"walk_add_{a1}_{b1}", f"(n m : Nat) : walk (n + m) + {a1} = walk n + walk m",
                        (_walk_closed(a1, b1), "rw [hw, hw, hw]", "omega"), pre))
    out.append(Instance(f"walk_mono_{a1}_{b1}", "(n m : Nat) (h : n ≤ m) : walk n ≤ walk m",
                        ("have hw : ∀ k, walk n ≤ walk (n + k) := by\n  intro k\n  induction k with\n"
                         "  | zero => simp\n"
                         "  | succ k ih => rw [← Nat.add_assoc]; simp only [walk]; omega",
                         "obtain ⟨k, rfl⟩ := Nat.exists_eq_add_of_le h", "exact hw k"), pre))
    out.append(Instance(f"walk_twice_{a1}_{b1}", f"(n : Nat) : walk (2 * n) + {a1} = 2 * walk n",
                        (_walk_closed(a1, b1), "rw [hw, hw]", "omega"), pre))
    pre = namespaced(f"BqHvWalk_{a2}_{b2}", _walk_defs(a2, b2))
    out.append(Instance(f"walk_twice_{a2}_{b2}", f"(n : Nat) : walk (2 * n) + {a2} = 2 * walk n",
                        (_walk_closed(a2, b2), "have h₁ := hw (2 * n)", "have h₂ := hw n", "omega"), pre))

    k1, k2 = rng.sample([2, 3, 4], 2)
    pre = namespaced(f"BqHvQuo_{k1}", _quo_defs(k1))
    out.append(Instance(f"quo_exact_{k1}", "(n : Nat) : quoK (mulK (mulK n)) = mulK n",
                        (QUO_LEMMA, "exact hq (mulK n)"), pre))
    out.append(Instance(f"quo_rw_{k1}", "(n : Nat) : mulK (quoK (mulK n)) = mulK n", (QUO_LEMMA, "rw [hq]"), pre))
    pre = namespaced(f"BqHvQuo_{k2}", _quo_defs(k2))
    out.append(Instance(f"quo_simp_{k2}", "(n m : Nat) : quoK (mulK n) + quoK (mulK m) = m + n",
                        (QUO_LEMMA, "simp only [hq]", "omega"), pre))
    out.append(Instance(f"quo_lt_{k2}", "(n m : Nat) (h : quoK (mulK n) < quoK (mulK m)) : n < m",
                        (QUO_LEMMA, "have h₁ := hq n", "have h₂ := hq m", "omega"), pre))

    c = rng.randint(2, 9)
    pre = namespaced(f"BqHvPos_{c}", _pos_defs(c))
    out.append(Instance(f"pos_mul_{c}", "(n m : Nat) : 0 < pos n * pos m",
                        ("have hp : ∀ k, 0 < pos k := by\n  intro k\n  cases k with\n  | zero => simp [pos]\n"
                         "  | succ j => simp [pos]", "exact Nat.mul_pos (hp n) (hp m)"), pre))
    out.append(Instance(f"pos_add_{c}", "(n m : Nat) : 2 ≤ pos n + pos m",
                        ("have hp : ∀ k, 1 ≤ pos k := by\n  intro k\n  cases k <;> simp [pos]",
                         "have h₁ := hp n", "have h₂ := hp m", "omega"), pre))
    out.append(Instance(f"pos_pos_{c}", "(n : Nat) : pos (pos n) = pos n",
                        ("have hp : ∀ k, pos k ≠ 0 := by\n  intro k\n  cases k <;> simp [pos]",
                         "obtain ⟨j, hj⟩ := Nat.exists_eq_succ_of_ne_zero (hp n)", "rw [hj]", "rfl"), pre))

    k = rng.randint(1, 9)
    pre = namespaced("BqHvDup", DUP_DEFS)
    out.append(Instance("dup_dup", "(xs : List Nat) : sumL (dup (dup xs)) = 4 * sumL xs",
                        ("have hd : ∀ ys, sumL (dup ys) = 2 * sumL ys := by\n  intro ys\n  induction ys with\n"
                         "  | nil => rfl\n  | cons y ys ih => simp only [dup, sumL, ih]; omega",
                         "rw [hd, hd]", "omega"), pre))
    out.append(Instance(f"len_addAll_dup_{k}", f"(xs : List Nat) : lenL (addAll {k} (dup xs)) = 2 * lenL xs",
                        (f"have h₁ : ∀ ys, lenL (addAll {k} ys) = lenL ys := by\n  intro ys\n"
                         "  induction ys <;> simp [addAll, lenL, *]",
                         "have h₂ : ∀ ys, lenL (dup ys) = 2 * lenL ys := by\n  intro ys\n"
                         "  induction ys <;> simp [dup, lenL, *] <;> omega",
                         "rw [h₁, h₂]"), pre))

    c = rng.randint(2, 9)
    pre = namespaced(f"BqHvShunt_{c}", _shunt_defs(c))
    out.append(Instance(f"shunt_zero_{c}", f"(n : Nat) : shunt n 0 = {c} * n",
                        (f"have hs : ∀ n m, shunt n m = {c} * n + m := by\n  intro n\n  induction n with\n"
                         "  | zero => simp [shunt]\n  | succ k ih => intro m; simp only [shunt, ih]; omega",
                         "have h := hs n 0", "omega"), pre))

    s = rng.choice([3, 4])
    pre = namespaced(f"BqHvLamp_{s}", _lamp_defs(s))
    cycle = "nxt (" * (s - 1) + "nxt l" + ")" * (s - 1)
    out.append(Instance(f"spin_period_{s}", f"(n : Nat) (l : Lamp) : spin ({s} * n) l = l",
                        (f"have hc : ∀ l, {cycle} = l := by\n  intro l\n  cases l <;> rfl",
                         "induction n generalizing l with\n| zero => rfl\n"
                         "| succ k ih => rw [Nat.mul_succ]; simp only [spin, hc, ih]"), pre))
    out.append(Instance(f"spin_succ_{s}", "(n : Nat) (l : Lamp) : spin (n + 1) l = nxt (spin n l)",
                        ("have hc : ∀ k l, spin k (nxt l) = nxt (spin k l) := by\n  intro k\n  induction k with\n"
                         "  | zero => intro l; rfl\n  | succ j ih => intro l; simp only [spin, ih]",
                         "simp only [spin]", "exact hc n l"), pre))
    return _distinct(out, per_preamble=True)

# ---------------------------------------------------------------------------
# tlem: helper lemmas on user trees, user lists, records and option-like types
# ---------------------------------------------------------------------------

# A user binary tree and its weight, shared by the `tlem` and `tsplit` preambles.
BIN_CORE = """\
inductive Bin where
  | tip : Bin
  | fork : Bin → Nat → Bin → Bin

def wsum : Bin → Nat
  | .tip => 0
  | .fork l x r => wsum l + x + wsum r
"""

FORKS = """\
def forks : Bin → Nat
  | .tip => 0
  | .fork l _ r => forks l + forks r + 1
"""

BIN_DEFS = BIN_CORE + """
def turn : Bin → Bin
  | .tip => .tip
  | .fork l x r => .fork (turn r) x (turn l)

def addK (k : Nat) : Bin → Bin
  | .tip => .tip
  | .fork l x r => .fork (addK k l) (x + k) (addK k r)

def forks : Bin → Nat
  | .tip => 0
  | .fork l _ r => forks l + forks r + 1

def tips : Bin → Nat
  | .tip => 1
  | .fork l _ r => tips l + tips r"""

SEQ_DEFS = """\
inductive Seq where
  | stop : Seq
  | put : Nat → Seq → Seq

def cat : Seq → Seq → Seq
  | .stop, t => t
  | .put x s, t => .put x (cat s t)

def ssum : Seq → Nat
  | .stop => 0
  | .put x s => x + ssum s

def slen : Seq → Nat
  | .stop => 0
  | .put _ s => slen s + 1"""


def _wallet_defs(k: int) -> str:
    return f"""\
structure Wallet where
  coins : Nat
  moves : Nat

def pay (w : Wallet) : Wallet := ⟨Wallet.coins w + {k}, Wallet.moves w + 1⟩

def payN : Nat → Wallet → Wallet
  | 0, w => w
  | n + 1, w => payN n (pay w)"""


SLOT_DEFS = """\
inductive Slot where
  | hole : Slot
  | full : Nat → Slot

def fill (d : Nat) : Slot → Nat
  | .hole => d
  | .full n => n

def bumpS : Slot → Slot
  | .hole => .hole
  | .full n => .full (n + 1)

def bumpN : Nat → Slot → Slot
  | 0, s => s
  | n + 1, s => bumpS (bumpN n s)"""

TURN_LEMMA = ("have h : ∀ u, wsum (turn u) = wsum u := by\n  intro u\n"
              "  induction u <;> simp only [wsum, turn, *] <;> omega")
ADDK_LEMMA = ("have h : ∀ k u, wsum (addK k u) = wsum u + k * forks u := by\n  intro k u\n"
              "  induction u <;> simp only [wsum, addK, forks, Nat.mul_add, Nat.mul_one, *] <;> omega")
TIPS_LEMMA = ("have h : ∀ u, tips u = forks u + 1 := by\n  intro u\n"
              "  induction u <;> simp only [tips, forks, *] <;> omega")


def _cat_lemma(f: str) -> str:
    return (f"have h : ∀ u v, {f} (cat u v) = {f} u + {f} v := by\n  intro u v\n"
            f"  induction u <;> simp only [cat, {f}, *] <;> omega")


def _coins_lemma(k: int) -> str:
    return (f"have h : ∀ m v, Wallet.coins (payN m v) = Wallet.coins v + {k} * m := by\n  intro m\n"
            "  induction m <;> intro v <;> simp only [payN, pay, *] <;> omega")


MOVES_LEMMA = ("have h : ∀ m v, Wallet.moves (payN m v) = Wallet.moves v + m := by\n  intro m\n"
               "  induction m <;> intro v <;> simp only [payN, pay, *] <;> omega")


def _bump_lemma(d: int) -> str:
    return (f"have h : ∀ u, fill {d} (bumpS u) ≤ fill {d} u + 1 := by\n  intro u\n"
            "  cases u <;> simp only [bumpS, fill] <;> omega")


def _lemmas(rng: random.Random) -> list[Instance]:
    """Helper lemmas on a user tree, a user list, a record moved by a Nat-indexed iterator and an option-like
    type: generalised (``∀ k u``) and instantiated, invariants and monotonicity steps used twice."""
    out = []
    pre = namespaced("BqLmBin", BIN_DEFS)
    out.append(Instance("bin_turn", "(t : Bin) : wsum (turn (turn t)) + wsum (turn t) = 2 * wsum t",
                        (TURN_LEMMA, "simp only [h]", "omega"), pre))
    out.append(Instance("bin_tips", "(t s : Bin) : tips t + tips s = forks t + forks s + 2",
                        (TIPS_LEMMA, "rw [h, h]", "omega"), pre))
    for a, b in _pick(rng, [(i, j) for i in range(1, 8) for j in range(i + 1, 10)], 2):
        out.append(Instance(f"bin_addK_{a}_{b}",
                            f"(t : Bin) : wsum (addK {a} t) + wsum (addK {b} t) = 2 * wsum t + {a + b} * forks t",
                            (ADDK_LEMMA, "rw [h, h]", "omega"), pre))
    for k in _pick(rng, list(range(1, 10)), 2):
        out.append(Instance(f"bin_forks_{k}", f"(t : Bin) : forks (addK {k} (turn t)) = forks t",
                            (f"have h₁ : ∀ u, forks (addK {k} u) = forks u := by\n  intro u\n"
                             f"  induction u <;> simp only [addK, forks, *]",
                             "have h₂ : ∀ u, forks (turn u) = forks u := by\n  intro u\n"
                             "  induction u <;> simp only [turn, forks, *] <;> omega",
                             "rw [h₁, h₂]"), pre))

    pre = namespaced("BqLmSeq", SEQ_DEFS)
    out.append(Instance("seq_len", "(s t : Seq) : slen (cat s t) = slen (cat t s)",
                        (_cat_lemma("slen"), "rw [h, h]", "omega"), pre))
    out.append(Instance("seq_sum", "(s t : Seq) : ssum (cat s (cat t s)) = 2 * ssum s + ssum t",
                        (_cat_lemma("ssum"), "simp only [h]", "omega"), pre))
    out.append(Instance("seq_both", "(s t : Seq) : ssum (cat s t) + slen (cat t s) = ssum t + ssum s + slen (cat s t)",
                        (_cat_lemma("ssum"), _cat_lemma("slen").replace("have h ", "have h' "),
                         "rw [h, h', h']", "omega"), pre))

    for k in _pick(rng, list(range(2, 10)), 2):
        pre = namespaced(f"BqLmWallet_{k}", _wallet_defs(k))
        out.append(Instance(f"wallet_coins_{k}",
                            "(n : Nat) (w : Wallet) : Wallet.coins (payN n (pay w)) = Wallet.coins w + "
                            f"{k} * (n + 1)",
                            (_coins_lemma(k), "rw [h]", "simp only [pay]", "omega"), pre))
    out.append(Instance(f"wallet_moves_{k}",
                        "(n m : Nat) (w : Wallet) : Wallet.moves (payN (n + m) (pay w)) = "
                        "Wallet.moves (payN n w) + m + 1",
                        (MOVES_LEMMA, "rw [h, h]", "simp only [pay]", "omega"), pre))

    pre = namespaced("BqLmSlot", SLOT_DEFS)
    for d in _pick(rng, list(range(0, 10)), 2):
        out.append(Instance(f"slot_twice_{d}", f"(s : Slot) : fill {d} (bumpS (bumpS s)) ≤ fill {d} s + 2",
                            (_bump_lemma(d), "have h₁ := h (bumpS s)", "have h₂ := h s", "omega"), pre))
    for d in _pick(rng, list(range(0, 10)), 2):
        out.append(Instance(f"slot_iter_{d}", f"(n : Nat) (s : Slot) : fill {d} (bumpN n s) ≤ fill {d} s + n",
                            ("induction n", "· simp only [bumpN]\n  omega", "rename_i j ih", "simp only [bumpN]",
                             _bump_lemma(d), "have := h (bumpN j s)", "omega"), pre))
    return _distinct(out, per_preamble=True)


HAVE_FAMILIES: tuple[Family, ...] = (
    Family("thave", "train", True,
           "helper lemmas stated with have (proved by induction, cases or omega) and used by rw, exact, omega or "
           "simp only: compositions of user functions on Nat and List Nat, an enum cycled by an iterator",
           _have_lemma, technique="have"),
    Family("tlem", "train", True,
           "helper lemmas stated with have on user trees, user lists, a record moved by a Nat-indexed iterator and "
           "an option-like type: generalised lemmas (∀ k u) instantiated by the goal, invariants and monotonicity "
           "steps used twice, two lemmas about two functions; used by rw, simp only, have := and omega",
           _lemmas, technique="have"),
)
