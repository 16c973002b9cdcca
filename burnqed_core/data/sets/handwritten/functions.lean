/-
  Functions: higher-order functions on a tree type of our own and on core
  `List` and `Option`, equalities between functions by `funext`, `Iff`
  characterisations, and functions defined by well-founded recursion with
  accumulator versions proved equal to the direct ones.
-/

namespace HwFunctions

/-- A binary tree carrying a value at every fork. -/
inductive Bush (α : Type) where
  | bare : Bush α
  | fork : Bush α → α → Bush α → Bush α

/-- Apply a function to every value of a bush, keeping its shape. -/
def Bush.remap {α β : Type} (f : α → β) : Bush α → Bush β
  | .bare => .bare
  | .fork l a r => .fork (l.remap f) (f a) (r.remap f)

/-- The values of a bush, read from left to right, put in front of `acc`. -/
def Bush.flattenOnto {α : Type} : Bush α → List α → List α
  | .bare, acc => acc
  | .fork l a r, acc => l.flattenOnto (a :: r.flattenOnto acc)

/-- Run `g` on the result of `f`. -/
def after {α β γ : Type} (g : β → γ) (f : α → β) : α → γ := fun a => g (f a)

/-- Apply `f` to a value `n` times, the first application innermost. -/
def applyN {α : Type} (f : α → α) : Nat → α → α
  | 0, a => a
  | n + 1, a => applyN f n (f a)

/-- The sum of the decimal digits of a number. -/
def digitSum (n : Nat) : Nat :=
  if n < 10 then n else n % 10 + digitSum (n / 10)
termination_by n

/-- How many halvings bring a number down to one or below. -/
def halvings (n : Nat) : Nat :=
  if n ≤ 1 then 0 else 1 + halvings (n / 2)
termination_by n

/-- `halvings` with a running count `acc`. -/
def halvingsAcc (n acc : Nat) : Nat :=
  if n ≤ 1 then acc else halvingsAcc (n / 2) (acc + 1)
termination_by n

/-- The sum of the squares of a list of numbers. -/
def squareSum : List Nat → Nat
  | [] => 0
  | x :: xs => x * x + squareSum xs

/-- `squareSum` with a running total `acc`. -/
def squareSumAcc : List Nat → Nat → Nat
  | [], acc => acc
  | x :: xs, acc => squareSumAcc xs (acc + x * x)

/-- The first entry of a list that passes the test `p`, if any. -/
def firstHit {α : Type} (p : α → Bool) : List α → Option α
  | [] => none
  | x :: xs => if p x then some x else firstHit p xs

/-- The values that `f` returns on the entries of a list, skipping `none`. -/
def collect {α β : Type} (f : α → Option β) : List α → List β
  | [] => []
  | x :: xs =>
    match f x with
    | some b => b :: collect f xs
    | none => collect f xs

/-- Composition with `after` can be regrouped. -/
theorem functions_after_assoc {α β γ δ : Type} (h : γ → δ) (g : β → γ) (f : α → β) :
    after h (after g f) = after (after h g) f := by
  funext a
  rfl

/-- Mapping over an option commutes with composition. -/
theorem functions_option_map_after {α β γ : Type} (g : β → γ) (f : α → β) :
    Option.map (after g f) = after (Option.map g) (Option.map f) := by
  funext o
  cases o with
  | none => rfl
  | some a => rfl

/-- Remapping by a composite is remapping twice. -/
theorem functions_remap_after {α β γ : Type} (g : β → γ) (f : α → β) :
    Bush.remap (after g f) = after (Bush.remap g) (Bush.remap f) := by
  funext t
  induction t with
  | bare => rfl
  | fork l a r ihl ihr =>
    show Bush.fork (Bush.remap (after g f) l) (after g f a) (Bush.remap (after g f) r) = _
    rw [ihl, ihr]
    rfl

/-- Reading a remapped bush is mapping over the reading of the bush. -/
theorem functions_flattenOnto_remap {α β : Type} (f : α → β) (t : Bush α) (acc : List α) :
    (t.remap f).flattenOnto (acc.map f) = (t.flattenOnto acc).map f := by
  induction t generalizing acc with
  | bare => rfl
  | fork l a r ihl ihr =>
    simp only [Bush.remap, Bush.flattenOnto]
    rw [ihr, ← List.map_cons, ihl]

/-- One more application can be done last instead of first. -/
theorem functions_applyN_succ_after {α : Type} (f : α → α) (n : Nat) :
    applyN f (n + 1) = after f (applyN f n) := by
  have key : ∀ m b, applyN f (m + 1) b = f (applyN f m b) := by
    intro m
    induction m with
    | zero =>
      intro b
      rfl
    | succ m ih =>
      intro b
      show applyN f (m + 1) (f b) = f (applyN f (m + 1) b)
      rw [ih (f b)]
      rfl
  funext a
  exact key n a

/-- A function that commutes with `f` commutes with every iterate of `f`. -/
theorem functions_applyN_commute {α : Type} (f g : α → α) (h : ∀ x, f (g x) = g (f x))
    (n : Nat) (a : α) : applyN f n (g a) = g (applyN f n a) := by
  induction n generalizing a with
  | zero => rfl
  | succ n ih =>
    simp only [applyN]
    rw [h, ih]

/-- The digit sum of a number is never larger than the number. -/
theorem functions_digitSum_le (n : Nat) : digitSum n ≤ n := by
  induction n using Nat.strongRecOn with
  | _ n ih =>
    rw [digitSum]
    split
    · exact Nat.le_refl n
    · have h := ih (n / 10) (by omega)
      omega

/-- A number and its digit sum leave the same remainder modulo nine. -/
theorem functions_digitSum_mod_nine (n : Nat) : digitSum n % 9 = n % 9 := by
  fun_induction digitSum n with
  | case1 => rfl
  | case2 n _ ih => omega

/-- A power of two is halved exactly its exponent many times. -/
theorem functions_halvings_pow (k : Nat) : halvings (2 ^ k) = k := by
  induction k with
  | zero =>
    show halvings 1 = 0
    rw [halvings]
    simp
  | succ k ih =>
    have hpos := Nat.two_pow_pos k
    have h1 : ¬ 2 ^ (k + 1) ≤ 1 := by
      rw [Nat.pow_succ]
      omega
    have h2 : 2 ^ (k + 1) / 2 = 2 ^ k := by
      rw [Nat.pow_succ]
      omega
    rw [halvings, if_neg h1, h2, ih]
    omega

/-- The accumulator version of `halvings` adds its count to the start value. -/
theorem functions_halvingsAcc_eq (n acc : Nat) : halvingsAcc n acc = acc + halvings n := by
  induction n using Nat.strongRecOn generalizing acc with
  | _ n ih =>
    rw [halvingsAcc, halvings]
    by_cases h : n ≤ 1
    · simp [h]
    · have e := ih (n / 2) (by omega) (acc + 1)
      rw [if_neg h, if_neg h]
      omega

/-- Summing squares with an accumulator started at zero gives `squareSum`. -/
theorem functions_squareSumAcc_eq (xs : List Nat) : squareSumAcc xs 0 = squareSum xs := by
  have key : ∀ acc, squareSumAcc xs acc = acc + squareSum xs := by
    induction xs with
    | nil =>
      intro acc
      rfl
    | cons x xs ih =>
      intro acc
      simp only [squareSumAcc, squareSum]
      rw [ih, Nat.add_assoc]
  simp [key]

/-- `firstHit` finds nothing exactly when every entry fails the test. -/
theorem functions_firstHit_none_iff {α : Type} (p : α → Bool) (xs : List α) :
    firstHit p xs = none ↔ ∀ x, x ∈ xs → p x = false := by
  induction xs with
  | nil => simp [firstHit]
  | cons y ys ih =>
    cases hy : p y with
    | true => simp [firstHit, hy]
    | false =>
      have step : firstHit p (y :: ys) = firstHit p ys := by simp [firstHit, hy]
      rw [step, ih]
      constructor
      · intro h x hx
        rcases List.mem_cons.mp hx with rfl | hx'
        · exact hy
        · exact h x hx'
      · intro h x hx
        exact h x (List.mem_cons_of_mem y hx)

/-- A value is collected exactly when some entry is sent to it. -/
theorem functions_mem_collect_iff {α β : Type} (f : α → Option β) (xs : List α) (b : β) :
    b ∈ collect f xs ↔ ∃ a, a ∈ xs ∧ f a = some b := by
  induction xs with
  | nil => simp [collect]
  | cons x xs ih =>
    cases hx : f x with
    | none =>
      have step : collect f (x :: xs) = collect f xs := by simp [collect, hx]
      rw [step, ih]
      constructor
      · rintro ⟨a, ha, hfa⟩
        exact ⟨a, List.mem_cons_of_mem x ha, hfa⟩
      · rintro ⟨a, ha, hfa⟩
        rcases List.mem_cons.mp ha with rfl | ha'
        · rw [hx] at hfa
          cases hfa
        · exact ⟨a, ha', hfa⟩
    | some c =>
      have step : collect f (x :: xs) = c :: collect f xs := by simp [collect, hx]
      rw [step, List.mem_cons, ih]
      constructor
      · rintro (rfl | ⟨a, ha, hfa⟩)
        · exact ⟨x, by simp, hx⟩
        · exact ⟨a, List.mem_cons_of_mem x ha, hfa⟩
      · rintro ⟨a, ha, hfa⟩
        rcases List.mem_cons.mp ha with rfl | ha'
        · rw [hx] at hfa
          exact Or.inl (Option.some.inj hfa).symm
        · exact Or.inr ⟨a, ha', hfa⟩

end HwFunctions
