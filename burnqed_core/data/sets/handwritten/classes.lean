/-
  Classes: type classes and structures defined from scratch: `Blend` (an
  associative operation with a neutral value), `Sized` and `Shrinkable`, with
  instances for small record types; the theorems check the laws and the
  operations derived from them (folding a list, powers, repeated shrinking).
-/

namespace HwClasses

/-- An associative way to combine two values, with a value that changes nothing. -/
class Blend (α : Type) where
  blend : α → α → α
  plain : α
  blend_assoc : ∀ a b c : α, blend (blend a b) c = blend a (blend b c)
  plain_blend : ∀ a : α, blend plain a = a
  blend_plain : ∀ a : α, blend a plain = a

/-- Values that carry a natural-number size. -/
class Sized (α : Type) where
  size : α → Nat

/-- Values with a measure and a step that never makes the measure bigger. -/
class Shrinkable (α : Type) where
  measure : α → Nat
  shrink : α → α
  shrink_le : ∀ a : α, measure (shrink a) ≤ measure a

/-- A spot on a grid, with natural coordinates. -/
structure Spot where
  x : Nat
  y : Nat

/-- A record holding two values of possibly different types. -/
structure Duo (α β : Type) where
  left : α
  right : β

/-- A wrapper around a count; counts are combined by taking the larger one. -/
structure Tally where
  count : Nat

/-- Spots blend by adding coordinates. -/
instance : Blend Spot where
  blend p q := ⟨p.x + q.x, p.y + q.y⟩
  plain := ⟨0, 0⟩
  blend_assoc a b c := by
    show Spot.mk _ _ = Spot.mk _ _
    simp [Nat.add_assoc]
  plain_blend a := by
    cases a
    show Spot.mk _ _ = Spot.mk _ _
    simp
  blend_plain a := by
    cases a
    show Spot.mk _ _ = Spot.mk _ _
    simp

/-- Tallies blend by keeping the larger count. -/
instance : Blend Tally where
  blend s t := ⟨max s.count t.count⟩
  plain := ⟨0⟩
  blend_assoc a b c := by
    show Tally.mk (max (max a.count b.count) c.count) =
      Tally.mk (max a.count (max b.count c.count))
    rw [Nat.max_assoc]
  plain_blend a := by
    show Tally.mk (max 0 a.count) = Tally.mk a.count
    rw [Nat.zero_max]
  blend_plain a := by
    show Tally.mk (max a.count 0) = Tally.mk a.count
    rw [Nat.max_zero]

/-- Duos blend side by side. -/
instance {α β : Type} [Blend α] [Blend β] : Blend (Duo α β) where
  blend p q := ⟨Blend.blend p.left q.left, Blend.blend p.right q.right⟩
  plain := ⟨Blend.plain, Blend.plain⟩
  blend_assoc a b c := by
    show Duo.mk _ _ = Duo.mk _ _
    rw [Blend.blend_assoc, Blend.blend_assoc]
  plain_blend a := by
    cases a
    show Duo.mk _ _ = Duo.mk _ _
    rw [Blend.plain_blend, Blend.plain_blend]
  blend_plain a := by
    cases a
    show Duo.mk _ _ = Duo.mk _ _
    rw [Blend.blend_plain, Blend.blend_plain]

/-- The size of a spot is its distance from the corner, walking along the grid. -/
instance : Sized Spot where
  size p := p.x + p.y

/-- The total size of the entries of a list. -/
def totalSize {α : Type} [Sized α] : List α → Nat
  | [] => 0
  | a :: as => Sized.size a + totalSize as

/-- The size of a list is the total size of its entries. -/
instance {α : Type} [Sized α] : Sized (List α) where
  size := totalSize

/-- A tally is measured by its count and shrinks by halving it. -/
instance : Shrinkable Tally where
  measure t := t.count
  shrink t := ⟨t.count / 2⟩
  shrink_le t := Nat.div_le_self t.count 2

/-- Blend every entry of a list, from the right. -/
def blendAll {α : Type} [Blend α] : List α → α
  | [] => Blend.plain
  | a :: as => Blend.blend a (blendAll as)

/-- Blend every entry of a list into a running value, from the left. -/
def blendFrom {α : Type} [Blend α] (acc : α) : List α → α
  | [] => acc
  | a :: as => blendFrom (Blend.blend acc a) as

/-- Blend `n` copies of a value. -/
def blendPow {α : Type} [Blend α] (a : α) : Nat → α
  | 0 => Blend.plain
  | n + 1 => Blend.blend a (blendPow a n)

/-- Shrink a value `n` times in a row. -/
def shrinkTimes {α : Type} [Shrinkable α] : Nat → α → α
  | 0, a => a
  | n + 1, a => shrinkTimes n (Shrinkable.shrink a)

/-- Exchange the two sides of a duo. -/
def Duo.swap {α β : Type} (d : Duo α β) : Duo β α := ⟨d.right, d.left⟩

/-- Blending spots does not depend on the order. -/
theorem classes_spot_blend_comm (p q : Spot) :
    Blend.blend p q = Blend.blend q p := by
  show Spot.mk _ _ = Spot.mk _ _
  rw [Nat.add_comm p.x q.x, Nat.add_comm p.y q.y]

/-- Two spots with the same coordinates are the same spot. -/
theorem classes_spot_ext (p q : Spot) (hx : p.x = q.x) (hy : p.y = q.y) : p = q := by
  cases p
  cases q
  simp_all

/-- Swapping a duo twice gives it back. -/
theorem classes_duo_swap_swap {α β : Type} (d : Duo α β) : d.swap.swap = d := by
  cases d
  rfl

/-- The size of a blend of spots is the sum of their sizes. -/
theorem classes_spot_size_blend (p q : Spot) :
    Sized.size (Blend.blend p q) = Sized.size p + Sized.size q := by
  show (p.x + q.x) + (p.y + q.y) = (p.x + p.y) + (q.x + q.y)
  omega

/-- A value that leaves everything unchanged from the left is the neutral value. -/
theorem classes_neutral_unique {α : Type} [Blend α] (e : α)
    (h : ∀ a : α, Blend.blend e a = a) : e = Blend.plain := by
  have h1 := h Blend.plain
  rw [Blend.blend_plain] at h1
  exact h1

/-- Blending an appended list is blending the two blends. -/
theorem classes_blendAll_append {α : Type} [Blend α] (xs ys : List α) :
    blendAll (xs ++ ys) = Blend.blend (blendAll xs) (blendAll ys) := by
  induction xs with
  | nil =>
    simp only [List.nil_append, blendAll]
    rw [Blend.plain_blend]
  | cons x xs ih =>
    simp only [List.cons_append, blendAll]
    rw [ih, Blend.blend_assoc]

/-- Folding from the left, starting at the neutral value, agrees with `blendAll`. -/
theorem classes_blendFrom_plain {α : Type} [Blend α] (xs : List α) :
    blendFrom Blend.plain xs = blendAll xs := by
  have key : ∀ acc : α, blendFrom acc xs = Blend.blend acc (blendAll xs) := by
    induction xs with
    | nil =>
      intro acc
      simp only [blendFrom, blendAll]
      rw [Blend.blend_plain]
    | cons x xs ih =>
      intro acc
      simp only [blendFrom, blendAll]
      rw [ih, Blend.blend_assoc]
  rw [key, Blend.plain_blend]

/-- Powers add: `m + n` copies blend to the blend of `m` copies and `n` copies. -/
theorem classes_blendPow_add {α : Type} [Blend α] (a : α) (m n : Nat) :
    blendPow a (m + n) = Blend.blend (blendPow a m) (blendPow a n) := by
  induction m with
  | zero =>
    simp only [Nat.zero_add, blendPow]
    rw [Blend.plain_blend]
  | succ m ih =>
    rw [Nat.succ_add]
    simp only [blendPow]
    rw [ih, Blend.blend_assoc]

/-- The size of a list of spots is the size of their blend. -/
theorem classes_spot_size_blendAll (ps : List Spot) :
    Sized.size (blendAll ps) = Sized.size ps := by
  induction ps with
  | nil => rfl
  | cons p ps ih =>
    have hl : Sized.size (p :: ps) = Sized.size p + Sized.size ps := rfl
    have hb : Sized.size (Blend.blend p (blendAll ps)) =
        Sized.size p + Sized.size (blendAll ps) := by
      show (p.x + (blendAll ps).x) + (p.y + (blendAll ps).y) =
        (p.x + p.y) + ((blendAll ps).x + (blendAll ps).y)
      omega
    rw [hl, blendAll, hb, ih]

/-- Blending tallies gives a count at least as large as each one blended. -/
theorem classes_tally_blendAll_upper (ts : List Tally) (t : Tally) (ht : t ∈ ts) :
    t.count ≤ (blendAll ts).count := by
  induction ts with
  | nil => simp at ht
  | cons s ss ih =>
    have hc : (blendAll (s :: ss)).count = max s.count (blendAll ss).count := rfl
    rw [hc]
    rcases List.mem_cons.mp ht with rfl | hmem
    · omega
    · have := ih hmem
      omega

/-- Shrinking any number of times never makes the measure bigger. -/
theorem classes_shrinkTimes_le {α : Type} [Shrinkable α] (n : Nat) (a : α) :
    Shrinkable.measure (shrinkTimes n a) ≤ Shrinkable.measure a := by
  induction n generalizing a with
  | zero => simp [shrinkTimes]
  | succ n ih =>
    simp only [shrinkTimes]
    exact Nat.le_trans (ih _) (Shrinkable.shrink_le a)

/-- Shrinking a tally `n` times divides its count by `2 ^ n`. -/
theorem classes_tally_shrinkTimes (n : Nat) (t : Tally) :
    (shrinkTimes n t).count = t.count / 2 ^ n := by
  induction n generalizing t with
  | zero => simp [shrinkTimes]
  | succ n ih =>
    simp only [shrinkTimes]
    rw [ih]
    show t.count / 2 / 2 ^ n = t.count / 2 ^ (n + 1)
    rw [Nat.div_div_eq_div_mul, Nat.pow_succ, Nat.mul_comm]

end HwClasses
