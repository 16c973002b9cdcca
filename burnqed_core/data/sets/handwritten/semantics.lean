/-
  Semantics of a tiny arithmetic language with numbered variables, sums,
  products and a test for zero: an evaluator, a big-step and a small-step
  relation, constant folding and substitution, and how they all agree.
-/

namespace HwSemantics

/-- Syntax: literals, variables `slot i`, sums, products and `ifz c t e`
(which is `t` when `c` is zero and `e` otherwise). -/
inductive Tm where
  | num : Nat → Tm
  | slot : Nat → Tm
  | add : Tm → Tm → Tm
  | mul : Tm → Tm → Tm
  | ifz : Tm → Tm → Tm → Tm

/-- A store gives every variable a value. -/
abbrev Store := Nat → Nat

/-- The evaluator. -/
def Tm.value (σ : Store) : Tm → Nat
  | num n => n
  | slot i => σ i
  | add a b => a.value σ + b.value σ
  | mul a b => a.value σ * b.value σ
  | ifz c t e => if c.value σ = 0 then t.value σ else e.value σ

/-- Big-step semantics: `Gives σ e n` when `e` evaluates to `n` under `σ`. -/
inductive Gives (σ : Store) : Tm → Nat → Prop
  | num (n : Nat) : Gives σ (.num n) n
  | slot (i : Nat) : Gives σ (.slot i) (σ i)
  | add {a b : Tm} {x y : Nat} : Gives σ a x → Gives σ b y → Gives σ (.add a b) (x + y)
  | mul {a b : Tm} {x y : Nat} : Gives σ a x → Gives σ b y → Gives σ (.mul a b) (x * y)
  | ifzYes {c t e : Tm} {v : Nat} : Gives σ c 0 → Gives σ t v → Gives σ (.ifz c t e) v
  | ifzNo {c t e : Tm} {k v : Nat} : Gives σ c (k + 1) → Gives σ e v → Gives σ (.ifz c t e) v

/-- Small-step semantics, left to right: variables are looked up, operands
are reduced left first, and `ifz` reduces its test before choosing. -/
inductive Step (σ : Store) : Tm → Tm → Prop
  | look (i : Nat) : Step σ (.slot i) (.num (σ i))
  | addL {a a' : Tm} (b : Tm) : Step σ a a' → Step σ (.add a b) (.add a' b)
  | addR (n : Nat) {b b' : Tm} : Step σ b b' → Step σ (.add (.num n) b) (.add (.num n) b')
  | addNum (n m : Nat) : Step σ (.add (.num n) (.num m)) (.num (n + m))
  | mulL {a a' : Tm} (b : Tm) : Step σ a a' → Step σ (.mul a b) (.mul a' b)
  | mulR (n : Nat) {b b' : Tm} : Step σ b b' → Step σ (.mul (.num n) b) (.mul (.num n) b')
  | mulNum (n m : Nat) : Step σ (.mul (.num n) (.num m)) (.num (n * m))
  | ifzTest {c c' : Tm} (t e : Tm) : Step σ c c' → Step σ (.ifz c t e) (.ifz c' t e)
  | ifzZero (t e : Tm) : Step σ (.ifz (.num 0) t e) t
  | ifzSucc (k : Nat) (t e : Tm) : Step σ (.ifz (.num (k + 1)) t e) e

/-- Zero or more small steps. -/
inductive Steps (σ : Store) : Tm → Tm → Prop
  | done (e : Tm) : Steps σ e e
  | next {e₁ e₂ e₃ : Tm} : Step σ e₁ e₂ → Steps σ e₂ e₃ → Steps σ e₁ e₃

/-- Sum of two terms, adding at once when both are literals. -/
def addNow : Tm → Tm → Tm
  | .num n, .num m => .num (n + m)
  | a, b => .add a b

/-- Product of two terms, multiplying at once when both are literals. -/
def mulNow : Tm → Tm → Tm
  | .num n, .num m => .num (n * m)
  | a, b => .mul a b

/-- Test for zero, deciding at once when the test is a literal. -/
def ifzNow : Tm → Tm → Tm → Tm
  | .num 0, t, _ => t
  | .num (_ + 1), _, e => e
  | c, t, e => .ifz c t e

/-- Constant folding, bottom up. -/
def Tm.fold : Tm → Tm
  | num n => .num n
  | slot i => .slot i
  | add a b => addNow a.fold b.fold
  | mul a b => mulNow a.fold b.fold
  | ifz c t e => ifzNow c.fold t.fold e.fold

/-- `e.plug i s` replaces every `slot i` of `e` by `s`. -/
def Tm.plug : Tm → Nat → Tm → Tm
  | num n, _, _ => .num n
  | slot j, i, s => if j = i then s else .slot j
  | add a b, i, s => .add (a.plug i s) (b.plug i s)
  | mul a b, i, s => .mul (a.plug i s) (b.plug i s)
  | ifz c t e, i, s => .ifz (c.plug i s) (t.plug i s) (e.plug i s)

/-- The store `σ` with variable `i` set to `v`. -/
def Store.set (σ : Store) (i v : Nat) : Store :=
  fun j => if j = i then v else σ j

/-- `Ground e`: `e` mentions no variable. -/
inductive Ground : Tm → Prop
  | num (n : Nat) : Ground (.num n)
  | add {a b : Tm} : Ground a → Ground b → Ground (.add a b)
  | mul {a b : Tm} : Ground a → Ground b → Ground (.mul a b)
  | ifz {c t e : Tm} : Ground c → Ground t → Ground e → Ground (.ifz c t e)

/-- A worked example: `ifz (x0 * 0) (x1 + 3) 8` with `x1 = 4`. -/
theorem semantics_value_example :
    (Tm.ifz (.mul (.slot 0) (.num 0)) (.add (.slot 1) (.num 3)) (.num 8)).value
      (fun i => if i = 1 then 4 else 9) = 7 := by
  decide

/-- Adding a literal zero on the right changes nothing. -/
theorem semantics_add_num_zero (σ : Store) (e : Tm) :
    (Tm.add e (.num 0)).value σ = e.value σ := by
  simp [Tm.value]

/-- The `ifz` of a literal zero picks its second argument. -/
theorem semantics_ifz_zero_value (σ : Store) (t e : Tm) :
    (Tm.ifz (.num 0) t e).value σ = t.value σ := by
  simp [Tm.value]

/-- Every term evaluates, in the big-step sense, to what the evaluator says. -/
theorem semantics_gives_value (σ : Store) (e : Tm) : Gives σ e (e.value σ) := by
  induction e with
  | num n => exact Gives.num n
  | slot i => exact Gives.slot i
  | add a b iha ihb => exact Gives.add iha ihb
  | mul a b iha ihb => exact Gives.mul iha ihb
  | ifz c t f ihc iht ihf =>
    simp only [Tm.value]
    split
    · next h =>
      rw [h] at ihc
      exact Gives.ifzYes ihc iht
    · next h =>
      obtain ⟨k, hk⟩ := Nat.exists_eq_succ_of_ne_zero h
      rw [hk] at ihc
      exact Gives.ifzNo ihc ihf

/-- Whatever the big-step relation derives is the evaluator's answer. -/
theorem semantics_value_of_gives (σ : Store) (e : Tm) (n : Nat) (h : Gives σ e n) :
    e.value σ = n := by
  induction h with
  | num n => rfl
  | slot i => rfl
  | add _ _ iha ihb => simp [Tm.value, iha, ihb]
  | mul _ _ iha ihb => simp [Tm.value, iha, ihb]
  | ifzYes _ _ ihc iht => simp [Tm.value, ihc, iht]
  | ifzNo _ _ ihc ihf => simp [Tm.value, ihc, ihf]

/-- The big-step relation is deterministic. -/
theorem semantics_gives_deterministic (σ : Store) (e : Tm) (n m : Nat)
    (h₁ : Gives σ e n) (h₂ : Gives σ e m) : n = m := by
  induction h₁ generalizing m with
  | num => cases h₂; rfl
  | slot => cases h₂; rfl
  | add _ _ iha ihb =>
    cases h₂ with
    | add ha hb => rw [iha _ ha, ihb _ hb]
  | mul _ _ iha ihb =>
    cases h₂ with
    | mul ha hb => rw [iha _ ha, ihb _ hb]
  | ifzYes _ _ ihc iht =>
    cases h₂ with
    | ifzYes _ ht => exact iht _ ht
    | ifzNo hc _ => exact absurd (ihc _ hc) (by omega)
  | ifzNo _ _ ihc ihf =>
    cases h₂ with
    | ifzYes hc _ => exact absurd (ihc _ hc) (by omega)
    | ifzNo _ hf => exact ihf _ hf

/-- Constant folding preserves the meaning of every term under every store. -/
theorem semantics_fold_sound (σ : Store) (e : Tm) : e.fold.value σ = e.value σ := by
  have hAdd : ∀ a b : Tm, (addNow a b).value σ = a.value σ + b.value σ := by
    intro a b
    unfold addNow
    split <;> rfl
  have hMul : ∀ a b : Tm, (mulNow a b).value σ = a.value σ * b.value σ := by
    intro a b
    unfold mulNow
    split <;> rfl
  have hIfz : ∀ c t f : Tm, (ifzNow c t f).value σ = (Tm.ifz c t f).value σ := by
    intro c t f
    unfold ifzNow
    split <;> simp [Tm.value]
  induction e with
  | num n => rfl
  | slot i => rfl
  | add a b iha ihb => simp only [Tm.fold, hAdd, iha, ihb, Tm.value]
  | mul a b iha ihb => simp only [Tm.fold, hMul, iha, ihb, Tm.value]
  | ifz c t f ihc iht ihf => simp only [Tm.fold, hIfz, Tm.value, ihc, iht, ihf]

/-- Folding a term without variables leaves a single literal. -/
theorem semantics_fold_ground (e : Tm) (h : Ground e) : ∃ n, e.fold = .num n := by
  induction h with
  | num n => exact ⟨n, rfl⟩
  | add _ _ iha ihb =>
    obtain ⟨x, hx⟩ := iha
    obtain ⟨y, hy⟩ := ihb
    exact ⟨x + y, by simp [Tm.fold, hx, hy, addNow]⟩
  | mul _ _ iha ihb =>
    obtain ⟨x, hx⟩ := iha
    obtain ⟨y, hy⟩ := ihb
    exact ⟨x * y, by simp [Tm.fold, hx, hy, mulNow]⟩
  | ifz _ _ _ ihc iht ihf =>
    obtain ⟨x, hx⟩ := ihc
    obtain ⟨y, hy⟩ := iht
    obtain ⟨z, hz⟩ := ihf
    cases x with
    | zero => exact ⟨y, by simp [Tm.fold, hx, hy, ifzNow]⟩
    | succ k => exact ⟨z, by simp [Tm.fold, hx, hz, ifzNow]⟩

/-- Plugging a term into a variable is evaluating under the updated store. -/
theorem semantics_plug_value (σ : Store) (i : Nat) (s e : Tm) :
    (e.plug i s).value σ = e.value (Store.set σ i (s.value σ)) := by
  induction e with
  | num n => rfl
  | slot j =>
    simp only [Tm.plug, Store.set, Tm.value]
    split <;> rfl
  | add a b iha ihb => simp only [Tm.plug, Tm.value, iha, ihb]
  | mul a b iha ihb => simp only [Tm.plug, Tm.value, iha, ihb]
  | ifz c t f ihc iht ihf => simp only [Tm.plug, Tm.value, ihc, iht, ihf]

/-- A small step never changes the value of a term. -/
theorem semantics_step_value (σ : Store) (e e' : Tm) (h : Step σ e e') :
    e'.value σ = e.value σ := by
  induction h with
  | look i => rfl
  | addL b _ ih => simp [Tm.value, ih]
  | addR n _ ih => simp [Tm.value, ih]
  | addNum n m => rfl
  | mulL b _ ih => simp [Tm.value, ih]
  | mulR n _ ih => simp [Tm.value, ih]
  | mulNum n m => rfl
  | ifzTest t f _ ih => simp [Tm.value, ih]
  | ifzZero t f => simp [Tm.value]
  | ifzSucc k t f => simp [Tm.value]

/-- The small-step relation is deterministic. -/
theorem semantics_step_deterministic (σ : Store) (e e₁ e₂ : Tm)
    (h₁ : Step σ e e₁) (h₂ : Step σ e e₂) : e₁ = e₂ := by
  have numStuck : ∀ n t, ¬ Step σ (.num n) t := by
    intro n t h
    cases h
  induction h₁ generalizing e₂ with
  | look i => cases h₂; rfl
  | addL b ha ih =>
    cases h₂ with
    | addL _ ha' => rw [ih _ ha']
    | addR _ _ => exact absurd ha (numStuck _ _)
    | addNum _ _ => exact absurd ha (numStuck _ _)
  | addR n hb ih =>
    cases h₂ with
    | addL _ ha' => exact absurd ha' (numStuck _ _)
    | addR _ hb' => rw [ih _ hb']
    | addNum _ _ => exact absurd hb (numStuck _ _)
  | addNum n m =>
    cases h₂ with
    | addL _ ha' => exact absurd ha' (numStuck _ _)
    | addR _ hb' => exact absurd hb' (numStuck _ _)
    | addNum _ _ => rfl
  | mulL b ha ih =>
    cases h₂ with
    | mulL _ ha' => rw [ih _ ha']
    | mulR _ _ => exact absurd ha (numStuck _ _)
    | mulNum _ _ => exact absurd ha (numStuck _ _)
  | mulR n hb ih =>
    cases h₂ with
    | mulL _ ha' => exact absurd ha' (numStuck _ _)
    | mulR _ hb' => rw [ih _ hb']
    | mulNum _ _ => exact absurd hb (numStuck _ _)
  | mulNum n m =>
    cases h₂ with
    | mulL _ ha' => exact absurd ha' (numStuck _ _)
    | mulR _ hb' => exact absurd hb' (numStuck _ _)
    | mulNum _ _ => rfl
  | ifzTest t f hc ih =>
    cases h₂ with
    | ifzTest _ _ hc' => rw [ih _ hc']
    | ifzZero _ _ => exact absurd hc (numStuck _ _)
    | ifzSucc _ _ _ => exact absurd hc (numStuck _ _)
  | ifzZero t f =>
    cases h₂ with
    | ifzTest _ _ hc' => exact absurd hc' (numStuck _ _)
    | ifzZero _ _ => rfl
  | ifzSucc k t f =>
    cases h₂ with
    | ifzTest _ _ hc' => exact absurd hc' (numStuck _ _)
    | ifzSucc _ _ _ => rfl

/-- Every term that is not yet a literal can take a small step. -/
theorem semantics_step_progress (σ : Store) (e : Tm) (h : ∀ n, e ≠ .num n) :
    ∃ e', Step σ e e' := by
  induction e with
  | num n => exact absurd rfl (h n)
  | slot i => exact ⟨_, Step.look i⟩
  | add a b iha ihb =>
    cases a with
    | num n =>
      cases b with
      | num m => exact ⟨_, Step.addNum n m⟩
      | _ =>
        obtain ⟨b', hb⟩ := ihb (by intro k hk; cases hk)
        exact ⟨_, Step.addR n hb⟩
    | _ =>
      obtain ⟨a', ha⟩ := iha (by intro k hk; cases hk)
      exact ⟨_, Step.addL b ha⟩
  | mul a b iha ihb =>
    cases a with
    | num n =>
      cases b with
      | num m => exact ⟨_, Step.mulNum n m⟩
      | _ =>
        obtain ⟨b', hb⟩ := ihb (by intro k hk; cases hk)
        exact ⟨_, Step.mulR n hb⟩
    | _ =>
      obtain ⟨a', ha⟩ := iha (by intro k hk; cases hk)
      exact ⟨_, Step.mulL b ha⟩
  | ifz c t f ihc _ _ =>
    cases c with
    | num n =>
      cases n with
      | zero => exact ⟨_, Step.ifzZero t f⟩
      | succ k => exact ⟨_, Step.ifzSucc k t f⟩
    | _ =>
      obtain ⟨c', hc⟩ := ihc (by intro k hk; cases hk)
      exact ⟨_, Step.ifzTest t f hc⟩

/-- Running small steps down to a literal agrees with the big-step relation. -/
theorem semantics_steps_gives (σ : Store) (e : Tm) (n : Nat) (h : Steps σ e (.num n)) :
    Gives σ e n := by
  have back : ∀ a a', Step σ a a' → ∀ v, Gives σ a' v → Gives σ a v := by
    intro a a' hs
    induction hs with
    | look i =>
      intro v hv
      cases hv
      exact Gives.slot i
    | addL b _ ih =>
      intro v hv
      cases hv with
      | add ha hb => exact Gives.add (ih _ ha) hb
    | addR n _ ih =>
      intro v hv
      cases hv with
      | add ha hb => exact Gives.add ha (ih _ hb)
    | addNum n m =>
      intro v hv
      cases hv
      exact Gives.add (Gives.num n) (Gives.num m)
    | mulL b _ ih =>
      intro v hv
      cases hv with
      | mul ha hb => exact Gives.mul (ih _ ha) hb
    | mulR n _ ih =>
      intro v hv
      cases hv with
      | mul ha hb => exact Gives.mul ha (ih _ hb)
    | mulNum n m =>
      intro v hv
      cases hv
      exact Gives.mul (Gives.num n) (Gives.num m)
    | ifzTest t f _ ih =>
      intro v hv
      cases hv with
      | ifzYes hc ht => exact Gives.ifzYes (ih _ hc) ht
      | ifzNo hc hf => exact Gives.ifzNo (ih _ hc) hf
    | ifzZero t f =>
      intro v hv
      exact Gives.ifzYes (Gives.num 0) hv
    | ifzSucc k t f =>
      intro v hv
      exact Gives.ifzNo (Gives.num (k + 1)) hv
  generalize hlit : Tm.num n = target at h
  induction h with
  | done e =>
    subst hlit
    exact Gives.num n
  | next hs _ ih => exact back _ _ hs _ (ih hlit)

end HwSemantics
