/-
  Relations: Prop-valued inductive predicates and proofs about them by rule
  induction, inversion and constructors. Covers a parity-like predicate on
  `Nat`, pointwise and ordering predicates on lists, and a path relation.
-/

namespace HwRelations

/-- `Paired n`: `n` is reached from `0` by steps of two. -/
inductive Paired : Nat → Prop
  | base : Paired 0
  | twoMore {n : Nat} : Paired n → Paired (n + 2)

/-- `Each q xs`: every element of `xs` satisfies `q`. -/
inductive Each {α : Type} (q : α → Prop) : List α → Prop
  | empty : Each q []
  | more {x : α} {xs : List α} : q x → Each q xs → Each q (x :: xs)

/-- `Climbing xs`: the list never goes down from one entry to the next. -/
inductive Climbing : List Nat → Prop
  | none : Climbing []
  | one (a : Nat) : Climbing [a]
  | link {a b : Nat} {rest : List Nat} :
      a ≤ b → Climbing (b :: rest) → Climbing (a :: b :: rest)

/-- `Path r a c`: `c` is reached from `a` in zero or more `r`-steps. -/
inductive Path {α : Type} (r : α → α → Prop) : α → α → Prop
  | stay (a : α) : Path r a a
  | hop {a b c : α} : r a b → Path r b c → Path r a c

/-- Six is paired: three steps of two from zero. -/
theorem relations_paired_six : Paired 6 := by
  apply Paired.twoMore
  apply Paired.twoMore
  apply Paired.twoMore
  exact Paired.base

/-- Peeling one step off a paired number leaves a paired number. -/
theorem relations_paired_peel (n : Nat) (h : Paired (n + 2)) : Paired n := by
  cases h with
  | twoMore h' => exact h'

/-- Paired numbers are closed under addition. -/
theorem relations_paired_add (m n : Nat) (hm : Paired m) (hn : Paired n) :
    Paired (m + n) := by
  induction hn with
  | base => simpa using hm
  | @twoMore k _ ih =>
    rw [← Nat.add_assoc]
    exact Paired.twoMore ih

/-- A paired number and its successor are never both paired. -/
theorem relations_paired_not_succ (n : Nat) (h : Paired n) : ¬ Paired (n + 1) := by
  induction h with
  | base =>
    intro h1
    cases h1
  | @twoMore k _ ih =>
    intro h3
    apply ih
    cases h3 with
    | twoMore h' => exact h'

/-- `Paired` is exactly "remainder zero modulo two". -/
theorem relations_paired_iff_mod (n : Nat) : Paired n ↔ n % 2 = 0 := by
  constructor
  · intro h
    induction h with
    | base => rfl
    | twoMore _ ih => omega
  · intro h
    induction n using Nat.strongRecOn with
    | _ n ih =>
      match n, h with
      | 0, _ => exact Paired.base
      | 1, h1 => simp at h1
      | k + 2, h2 =>
        exact Paired.twoMore (ih k (by omega) (by omega))

/-- `Each` distributes over appending two lists. -/
theorem relations_each_append {α : Type} (q : α → Prop) (xs ys : List α)
    (hx : Each q xs) (hy : Each q ys) : Each q (xs ++ ys) := by
  induction hx with
  | empty => simpa using hy
  | more hx _ ih => exact Each.more hx ih

/-- A weaker property holds wherever a stronger one does. -/
theorem relations_each_weaken {α : Type} (q s : α → Prop) (xs : List α)
    (hqs : ∀ x, q x → s x) (h : Each q xs) : Each s xs := by
  induction h with
  | empty => exact Each.empty
  | more hx _ ih => exact Each.more (hqs _ hx) ih

/-- `Each` agrees with membership-based quantification. -/
theorem relations_each_iff_mem {α : Type} (q : α → Prop) (xs : List α) :
    Each q xs ↔ ∀ x, x ∈ xs → q x := by
  constructor
  · intro h
    induction h with
    | empty => simp
    | more hx _ ih =>
      intro y hy
      simp at hy
      rcases hy with rfl | hy
      · exact hx
      · exact ih y hy
  · intro h
    induction xs with
    | nil => exact Each.empty
    | cons x xs ih =>
      apply Each.more
      · exact h x (by simp)
      · exact ih (fun y hy => h y (by simp [hy]))

/-- Dropping the head of a climbing list keeps it climbing. -/
theorem relations_climbing_tail (a : Nat) (xs : List Nat) (h : Climbing (a :: xs)) :
    Climbing xs := by
  cases h with
  | one => exact Climbing.none
  | link _ h' => exact h'

/-- In a climbing list the head is below every later entry. -/
theorem relations_climbing_head_below (a : Nat) (xs : List Nat) (h : Climbing (a :: xs)) :
    Each (fun y => a ≤ y) xs := by
  induction xs generalizing a with
  | nil => exact Each.empty
  | cons b rest ih =>
    cases h with
    | link hab hrest =>
      apply Each.more hab
      have hb := ih b hrest
      clear ih hrest
      induction hb with
      | empty => exact Each.empty
      | more hy _ ih2 => exact Each.more (Nat.le_trans hab hy) ih2

/-- Paths can be glued end to end. -/
theorem relations_path_glue {α : Type} (r : α → α → Prop) (a b c : α)
    (h1 : Path r a b) (h2 : Path r b c) : Path r a c := by
  induction h1 with
  | stay => exact h2
  | hop hab _ ih => exact Path.hop hab (ih h2)

/-- A path may be extended by one more step at its end. -/
theorem relations_path_snoc {α : Type} (r : α → α → Prop) (a b c : α)
    (h : Path r a b) (hbc : r b c) : Path r a c := by
  induction h with
  | stay => exact Path.hop hbc (Path.stay c)
  | hop hxy _ ih => exact Path.hop hxy (ih hbc)

/-- A map that sends steps to steps sends paths to paths. -/
theorem relations_path_map {α β : Type} (r : α → α → Prop) (s : β → β → Prop) (f : α → β)
    (hf : ∀ x y, r x y → s (f x) (f y)) (a b : α) (h : Path r a b) :
    Path s (f a) (f b) := by
  induction h with
  | stay x => exact Path.stay (f x)
  | hop hxy _ ih => exact Path.hop (hf _ _ hxy) ih

/-- Counting up by one reaches exactly the numbers that are not smaller. -/
theorem relations_path_succ_iff (a b : Nat) :
    Path (fun m n => n = m + 1) a b ↔ a ≤ b := by
  constructor
  · intro h
    induction h with
    | stay => exact Nat.le_refl _
    | hop hxy _ ih => omega
  · intro h
    obtain ⟨k, rfl⟩ := Nat.exists_eq_add_of_le h
    clear h
    induction k generalizing a with
    | zero => exact Path.stay a
    | succ k ih =>
      have rest : Path (fun m n => n = m + 1) (a + 1) (a + 1 + k) := ih (a + 1)
      rw [Nat.add_assoc, Nat.add_comm 1 k] at rest
      exact Path.hop rfl rest

end HwRelations
