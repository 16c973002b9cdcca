/-
  Bits: natural numbers written as strings of binary digits, least
  significant digit first. The theorems check increment, addition with a
  carry, complement and trimming against the number a string denotes.
-/

namespace HwBits

/-- A digit string: `tip` ends it, `zero b` and `one b` put a digit before `b`. -/
inductive Bits where
  | tip : Bits
  | zero : Bits → Bits
  | one : Bits → Bits

open Bits

/-- The number a digit string denotes. -/
def val : Bits → Nat
  | tip => 0
  | zero b => 2 * val b
  | one b => 2 * val b + 1

/-- How many digits a string has. -/
def width : Bits → Nat
  | tip => 0
  | zero b => width b + 1
  | one b => width b + 1

/-- Add one, carrying through the leading ones. -/
def inc : Bits → Bits
  | tip => one tip
  | zero b => one b
  | one b => zero (inc b)

/-- The digit string of a number, built by counting up from zero. -/
def fromNat : Nat → Bits
  | 0 => tip
  | n + 1 => inc (fromNat n)

/-- Exchange every digit for the other one. -/
def flip : Bits → Bits
  | tip => tip
  | zero b => one (flip b)
  | one b => zero (flip b)

/-- Add two strings and an incoming carry, digit by digit. -/
def addc : Bool → Bits → Bits → Bits
  | c, tip, b => if c then inc b else b
  | c, zero a, tip => if c then one a else zero a
  | c, one a, tip => if c then zero (inc a) else one a
  | false, zero a, zero b => zero (addc false a b)
  | true, zero a, zero b => one (addc false a b)
  | false, zero a, one b => one (addc false a b)
  | true, zero a, one b => zero (addc true a b)
  | false, one a, zero b => one (addc false a b)
  | true, one a, zero b => zero (addc true a b)
  | false, one a, one b => zero (addc true a b)
  | true, one a, one b => one (addc true a b)

/-- Drop the zeros at the high end of a string. -/
def trim : Bits → Bits
  | tip => tip
  | zero b =>
    match trim b with
    | tip => tip
    | t => zero t
  | one b => one (trim b)

/-- `Tidy b`: `b` is nonempty and its highest digit is a one. -/
inductive Tidy : Bits → Prop
  | top : Tidy (one tip)
  | zero {b : Bits} : Tidy b → Tidy (zero b)
  | one {b : Bits} : Tidy b → Tidy (one b)

/-- A zero digit in front doubles the value. -/
theorem bits_val_zero_digit (b : Bits) : val (zero b) = val b + val b := by
  simp [val]
  omega

/-- Incrementing a string that ends in a zero digit only changes that digit. -/
theorem bits_inc_zero_digit (b : Bits) : inc (zero b) = one b := by
  rfl

/-- Six is written `0, 1, 1`, least significant digit first. -/
theorem bits_fromNat_six : fromNat 6 = zero (one (one tip)) := by
  rfl

/-- Reading after incrementing is reading and adding one. -/
theorem bits_val_comp_inc : val ∘ inc = Nat.succ ∘ val := by
  funext b
  induction b with
  | tip => rfl
  | zero b => simp [inc, val]
  | one b ih =>
    simp only [Function.comp_apply, Nat.succ_eq_add_one] at ih ⊢
    simp only [inc, val, ih]
    omega

/-- `fromNat` is a right inverse of `val`. -/
theorem bits_val_fromNat (n : Nat) : val (fromNat n) = n := by
  have hinc : ∀ b, val (inc b) = val b + 1 := by
    intro b
    induction b with
    | tip => rfl
    | zero b => rfl
    | one b ih =>
      simp only [inc, val, ih]
      omega
  induction n with
  | zero => rfl
  | succ n ih => rw [fromNat, hinc, ih]

/-- Addition with a carry is correct. -/
theorem bits_val_addc (c : Bool) (a b : Bits) :
    val (addc c a b) = val a + val b + (if c then 1 else 0) := by
  have hinc : ∀ b, val (inc b) = val b + 1 := by
    intro b
    induction b with
    | tip => rfl
    | zero b => rfl
    | one b ih =>
      simp only [inc, val, ih]
      omega
  induction a generalizing b c with
  | tip => cases c <;> simp [addc, val, hinc]
  | zero a ih =>
    cases b with
    | tip => cases c <;> simp [addc, val] <;> omega
    | zero b => cases c <;> simp [addc, val, ih] <;> omega
    | one b => cases c <;> simp [addc, val, ih] <;> omega
  | one a ih =>
    cases b with
    | tip => cases c <;> simp [addc, val, hinc] <;> omega
    | zero b => cases c <;> simp [addc, val, ih] <;> omega
    | one b => cases c <;> simp [addc, val, ih] <;> omega

/-- Every string denotes a number below two to the power of its width. -/
theorem bits_val_lt_pow (b : Bits) : val b < 2 ^ width b := by
  induction b with
  | tip => simp [val, width]
  | zero b ih =>
    simp only [val, width, Nat.pow_succ]
    omega
  | one b ih =>
    simp only [val, width, Nat.pow_succ]
    omega

/-- A string and its complement add up to the largest number of that width. -/
theorem bits_val_add_flip (b : Bits) : val b + val (flip b) + 1 = 2 ^ width b := by
  induction b with
  | tip => rfl
  | zero b ih =>
    simp only [val, flip, width, Nat.pow_succ]
    omega
  | one b ih =>
    simp only [val, flip, width, Nat.pow_succ]
    omega

/-- Complementing twice gives the string back. -/
theorem bits_flip_flip (b : Bits) : flip (flip b) = b := by
  induction b with
  | tip => rfl
  | zero b ih => simp [flip, ih]
  | one b ih => simp [flip, ih]

/-- Trimming does not change the value. -/
theorem bits_val_trim (b : Bits) : val (trim b) = val b := by
  induction b with
  | tip => rfl
  | zero b ih =>
    cases ht : trim b with
    | tip =>
      rw [ht] at ih
      simp only [val] at ih
      simp [trim, ht, val]
      omega
    | zero t =>
      rw [ht] at ih
      simp only [val] at ih
      simp [trim, ht, val]
      omega
    | one t =>
      rw [ht] at ih
      simp only [val] at ih
      simp [trim, ht, val]
      omega
  | one b ih => simp [trim, val, ih]

/-- A string denotes zero exactly when trimming leaves nothing. -/
theorem bits_val_eq_zero_iff (b : Bits) : val b = 0 ↔ trim b = tip := by
  induction b with
  | tip => simp [val, trim]
  | zero b ih =>
    cases ht : trim b with
    | tip =>
      simp [ht] at ih
      simp [val, trim, ht]
      omega
    | zero t =>
      simp [ht] at ih
      simp [val, trim, ht]
      omega
    | one t =>
      simp [ht] at ih
      simp [val, trim, ht]
      omega
  | one b ih =>
    simp [val, trim]

/-- A tidy string denotes a positive number. -/
theorem bits_tidy_val_pos (b : Bits) (h : Tidy b) : 0 < val b := by
  induction h with
  | top => decide
  | zero _ ih =>
    simp only [val]
    omega
  | one _ ih =>
    simp only [val]
    omega

/-- Incrementing keeps a string tidy. -/
theorem bits_tidy_inc (b : Bits) (h : Tidy b) : Tidy (inc b) := by
  induction h with
  | top => exact Tidy.zero Tidy.top
  | zero hb _ => exact Tidy.one hb
  | one _ ih => exact Tidy.zero ih

/-- A single zero digit is not tidy. -/
theorem bits_not_tidy_zero_tip : ¬ Tidy (zero tip) := by
  intro h
  cases h with
  | zero h' => cases h'

/-- Every positive number is written as a tidy string. -/
theorem bits_tidy_fromNat (n : Nat) : Tidy (fromNat (n + 1)) := by
  have hinc : ∀ b, Tidy b → Tidy (inc b) := by
    intro b h
    induction h with
    | top => exact Tidy.zero Tidy.top
    | zero hb _ => exact Tidy.one hb
    | one _ ih => exact Tidy.zero ih
  induction n with
  | zero => exact Tidy.top
  | succ n ih => exact hinc _ ih

/-- Reading a tidy string and writing the number back gives the same string. -/
theorem bits_fromNat_val_tidy (b : Bits) (h : Tidy b) : fromNat (val b) = b := by
  have hodd : ∀ n, fromNat (2 * n + 1) = one (fromNat n) := by
    intro n
    induction n with
    | zero => rfl
    | succ n ih =>
      calc fromNat (2 * (n + 1) + 1) = inc (inc (fromNat (2 * n + 1))) := by
            rw [show 2 * (n + 1) + 1 = 2 * n + 1 + 1 + 1 by omega]
            rfl
        _ = inc (inc (one (fromNat n))) := by rw [ih]
        _ = one (fromNat (n + 1)) := rfl
  have heven : ∀ n, fromNat (2 * n + 2) = zero (fromNat (n + 1)) := by
    intro n
    calc fromNat (2 * n + 2) = inc (fromNat (2 * n + 1)) := rfl
      _ = inc (one (fromNat n)) := by rw [hodd]
      _ = zero (fromNat (n + 1)) := rfl
  have hpos : ∀ c, Tidy c → 0 < val c := by
    intro c hc
    induction hc with
    | top => decide
    | zero _ ih =>
      simp only [val]
      omega
    | one _ ih =>
      simp only [val]
      omega
  induction h with
  | top => rfl
  | @zero c hc ih =>
    obtain ⟨m, hm⟩ : ∃ m, val c = m + 1 := ⟨val c - 1, by have := hpos c hc; omega⟩
    rw [hm] at ih
    show fromNat (2 * val c) = zero c
    rw [hm, show 2 * (m + 1) = 2 * m + 2 by omega, heven, ih]
  | @one c hc ih =>
    show fromNat (2 * val c + 1) = one c
    rw [hodd, ih]

/-- Tidy strings are exactly the nonempty strings that trimming leaves alone. -/
theorem bits_tidy_iff_trim (b : Bits) : Tidy b ↔ trim b = b ∧ b ≠ tip := by
  constructor
  · intro h
    induction h with
    | top =>
      refine ⟨rfl, ?_⟩
      intro h
      cases h
    | @zero c _ ih =>
      obtain ⟨htc, hne⟩ := ih
      refine ⟨?_, by intro h; cases h⟩
      cases c with
      | tip => exact absurd rfl hne
      | zero d => rw [trim, htc]
      | one d => rw [trim, htc]
    | @one c _ ih =>
      obtain ⟨htc, _⟩ := ih
      refine ⟨?_, by intro h; cases h⟩
      rw [trim, htc]
  · rintro ⟨htr, hne⟩
    induction b with
    | tip => exact absurd rfl hne
    | zero c ih =>
      cases hc : trim c with
      | tip => simp [trim, hc] at htr
      | zero d =>
        simp [trim, hc] at htr
        apply Tidy.zero
        apply ih
        · rw [hc, htr]
        · rw [← htr]
          intro h
          cases h
      | one d =>
        simp [trim, hc] at htr
        apply Tidy.zero
        apply ih
        · rw [hc, htr]
        · rw [← htr]
          intro h
          cases h
    | one c ih =>
      simp [trim] at htr
      cases c with
      | tip => exact Tidy.top
      | zero d => exact Tidy.one (ih htr (by intro h; cases h))
      | one d => exact Tidy.one (ih htr (by intro h; cases h))

end HwBits
