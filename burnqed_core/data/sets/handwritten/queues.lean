/-
  Queues: a first-in first-out queue kept as two lists, a `front` to take
  from and a `back` that holds the newest element first. Reversal is done with
  an accumulator; the theorems relate each operation to the list it stands for.
-/

namespace HwQueues

/-- `revOnto xs acc` moves the elements of `xs`, one by one, onto `acc`. -/
def revOnto {α : Type} : List α → List α → List α
  | [], acc => acc
  | x :: xs, acc => revOnto xs (x :: acc)

/-- `glue xs ys`: the elements of `xs` followed by those of `ys`. -/
def glue {α : Type} : List α → List α → List α
  | [], ys => ys
  | x :: xs, ys => x :: glue xs ys

/-- The number of elements of a list. -/
def len {α : Type} : List α → Nat
  | [] => 0
  | _ :: xs => len xs + 1

/-- A queue: elements leave from `front`; `back` holds the newest first. -/
structure Queue (α : Type) where
  front : List α
  back : List α

/-- The queue with nothing in it. -/
def blank {α : Type} : Queue α := ⟨[], []⟩

/-- The elements of a queue, oldest first. -/
def contents {α : Type} (q : Queue α) : List α := glue q.front (revOnto q.back [])

/-- How many elements a queue holds. -/
def count {α : Type} (q : Queue α) : Nat := len q.front + len q.back

/-- Add an element at the far end. -/
def enq {α : Type} (x : α) (q : Queue α) : Queue α := ⟨q.front, x :: q.back⟩

/-- Take the oldest element, turning the back around when the front is used up. -/
def deq {α : Type} : Queue α → Option (α × Queue α)
  | ⟨x :: f, b⟩ => some (x, ⟨f, b⟩)
  | ⟨[], b⟩ =>
    match revOnto b [] with
    | [] => none
    | x :: f => some (x, ⟨f, []⟩)

/-- Add the elements of a list, first element first. -/
def enqAll {α : Type} : List α → Queue α → Queue α
  | [], q => q
  | x :: xs, q => enqAll xs (enq x q)

/-- Take up to `n` elements, in the order they leave the queue. -/
def drain {α : Type} : Nat → Queue α → List α
  | 0, _ => []
  | n + 1, q =>
    match deq q with
    | none => []
    | some (x, q') => x :: drain n q'

/-- Move the back to the front when the front is empty. -/
def settle {α : Type} (q : Queue α) : Queue α :=
  match q.front with
  | [] => ⟨revOnto q.back [], []⟩
  | _ :: _ => q

/-- `Settled q`: the front is empty only when the whole queue is. -/
inductive Settled {α : Type} : Queue α → Prop
  | drained : Settled ⟨[], []⟩
  | ready {x : α} {f b : List α} : Settled ⟨x :: f, b⟩

/-- The blank queue holds nothing. -/
theorem queues_contents_blank {α : Type} : contents (blank : Queue α) = [] := by
  rfl

/-- A queue holding one element hands it back and is blank again. -/
theorem queues_deq_enq_blank {α : Type} (x : α) :
    deq (enq x blank) = some (x, blank) := by
  rfl

/-- With a nonempty front, the contents start with the front's head. -/
theorem queues_contents_cons_front {α : Type} (x : α) (f b : List α) :
    contents ⟨x :: f, b⟩ = x :: contents ⟨f, b⟩ := by
  simp [contents, glue]

/-- Moving a list onto an accumulator is reversing it in front of the accumulator. -/
theorem queues_revOnto_eq {α : Type} (xs acc : List α) :
    revOnto xs acc = xs.reverse ++ acc := by
  induction xs generalizing acc with
  | nil => simp [revOnto]
  | cons x xs ih => simp [revOnto, ih]

/-- Adding an element puts it at the end of the contents. -/
theorem queues_contents_enq {α : Type} (x : α) (q : Queue α) :
    contents (enq x q) = contents q ++ [x] := by
  have hrev : ∀ (xs acc tail : List α), revOnto xs (acc ++ tail) = revOnto xs acc ++ tail := by
    intro xs
    induction xs with
    | nil =>
      intro acc tail
      rfl
    | cons y ys ih =>
      intro acc tail
      exact ih (y :: acc) tail
  have hglue : ∀ (xs ys tail : List α), glue xs (ys ++ tail) = glue xs ys ++ tail := by
    intro xs ys tail
    induction xs with
    | nil => rfl
    | cons y xs ih => simp [glue, ih]
  simp only [contents, enq, revOnto]
  rw [← hglue]
  exact congrArg (glue q.front) (hrev q.back [] [x])

/-- Adding an element makes the queue one longer. -/
theorem queues_count_enq {α : Type} (x : α) (q : Queue α) :
    count (enq x q) = count q + 1 := by
  simp [count, enq, len]
  omega

/-- The count of a queue is the length of its contents. -/
theorem queues_count_eq_length {α : Type} (q : Queue α) :
    count q = (contents q).length := by
  have hlen : ∀ (xs : List α), len xs = xs.length := by
    intro xs
    induction xs with
    | nil => rfl
    | cons y ys ih => simp [len, ih]
  have hrev : ∀ (xs acc : List α), (revOnto xs acc).length = xs.length + acc.length := by
    intro xs
    induction xs with
    | nil => simp [revOnto]
    | cons y ys ih =>
      intro acc
      simp only [revOnto, ih, List.length_cons]
      omega
  have hglue : ∀ (xs ys : List α), (glue xs ys).length = xs.length + ys.length := by
    intro xs ys
    induction xs with
    | nil => simp [glue]
    | cons y xs ih =>
      simp only [glue, List.length_cons, ih]
      omega
  simp [count, contents, hlen, hrev, hglue]

/-- Nothing can be taken exactly when the queue holds nothing. -/
theorem queues_deq_none_iff {α : Type} (q : Queue α) :
    deq q = none ↔ contents q = [] := by
  obtain ⟨f, b⟩ := q
  cases f with
  | cons y f => simp [deq, contents, glue]
  | nil =>
    simp only [deq, contents, glue]
    split
    · next h => simp [h]
    · next x f h => simp [h]

/-- What `deq` hands out is the head of the contents, and the rest stays. -/
theorem queues_deq_some {α : Type} (q q' : Queue α) (x : α)
    (h : deq q = some (x, q')) : contents q = x :: contents q' := by
  obtain ⟨f, b⟩ := q
  cases f with
  | cons y f =>
    simp only [deq, Option.some.injEq, Prod.mk.injEq] at h
    obtain ⟨rfl, rfl⟩ := h
    simp [contents, glue]
  | nil =>
    simp only [deq] at h
    split at h
    · contradiction
    · next y f hrev =>
      simp only [Option.some.injEq, Prod.mk.injEq] at h
      obtain ⟨rfl, rfl⟩ := h
      have hnil : ∀ (xs : List α), glue xs [] = xs := by
        intro xs
        induction xs with
        | nil => rfl
        | cons z zs ih => simp [glue, ih]
      simp [contents, glue, hrev, revOnto, hnil]

/-- Adding a list of elements appends it to the contents. -/
theorem queues_contents_enqAll {α : Type} (xs : List α) (q : Queue α) :
    contents (enqAll xs q) = contents q ++ xs := by
  have hrev : ∀ (ys acc : List α), revOnto ys acc = ys.reverse ++ acc := by
    intro ys
    induction ys with
    | nil => simp [revOnto]
    | cons y ys ih =>
      intro acc
      simp [revOnto, ih]
  have hglue : ∀ (ys zs : List α), glue ys zs = ys ++ zs := by
    intro ys zs
    induction ys with
    | nil => rfl
    | cons y ys ih => simp [glue, ih]
  induction xs generalizing q with
  | nil => simp [enqAll]
  | cons y ys ih =>
    rw [enqAll, ih]
    simp [contents, enq, hrev, hglue]

/-- Adding two lists in a row is adding their concatenation. -/
theorem queues_enqAll_append {α : Type} (xs ys : List α) :
    enqAll (xs ++ ys) = enqAll ys ∘ enqAll xs := by
  funext q
  induction xs generalizing q with
  | nil => simp [enqAll]
  | cons x xs ih =>
    simp only [List.cons_append, enqAll]
    exact ih (enq x q)

/-- With enough steps, draining a queue yields all of its contents in order. -/
theorem queues_drain_contents {α : Type} (n : Nat) (q : Queue α) (hn : count q ≤ n) :
    drain n q = contents q := by
  have hrev : ∀ (ys acc : List α), revOnto ys acc = ys.reverse ++ acc := by
    intro ys
    induction ys with
    | nil => simp [revOnto]
    | cons y ys ih =>
      intro acc
      simp [revOnto, ih]
  have hglue : ∀ (ys zs : List α), glue ys zs = ys ++ zs := by
    intro ys zs
    induction ys with
    | nil => rfl
    | cons y ys ih => simp [glue, ih]
  have hlen : ∀ (ys : List α), len ys = ys.length := by
    intro ys
    induction ys with
    | nil => rfl
    | cons y ys ih => simp [len, ih]
  induction n generalizing q with
  | zero =>
    obtain ⟨f, b⟩ := q
    simp [count, hlen] at hn
    obtain ⟨rfl, rfl⟩ := hn
    rfl
  | succ n ih =>
    obtain ⟨f, b⟩ := q
    cases f with
    | cons x f =>
      have hc : count ⟨f, b⟩ ≤ n := by
        simp [count, len] at hn ⊢
        omega
      simp [drain, deq, ih _ hc, contents, glue]
    | nil =>
      cases hb : revOnto b [] with
      | nil => simp [drain, deq, hb, contents, glue]
      | cons x f =>
        have hlf : len f + 1 = len b := by
          have := congrArg List.length hb
          simp [hrev, hlen] at this ⊢
          omega
        have hc : count (⟨f, []⟩ : Queue α) ≤ n := by
          simp [count, len] at hn ⊢
          omega
        simp [drain, deq, hb, ih _ hc, contents, glue, revOnto, hglue]

/-- Settling always leaves a settled queue. -/
theorem queues_settle_settled {α : Type} (q : Queue α) : Settled (settle q) := by
  obtain ⟨f, b⟩ := q
  cases f with
  | cons x f => exact Settled.ready
  | nil =>
    simp only [settle]
    cases revOnto b [] with
    | nil => exact Settled.drained
    | cons y ys => exact Settled.ready

/-- Settling does not change what the queue holds. -/
theorem queues_settle_contents {α : Type} (q : Queue α) :
    contents (settle q) = contents q := by
  obtain ⟨f, b⟩ := q
  cases f with
  | nil =>
    have hnil : ∀ (xs : List α), glue xs [] = xs := by
      intro xs
      induction xs with
      | nil => rfl
      | cons z zs ih => simp [glue, ih]
    simp [settle, contents, revOnto, glue, hnil]
  | cons x f => rfl

/-- A settled queue with something in it has something in its front. -/
theorem queues_settled_front {α : Type} (q : Queue α) (h : Settled q)
    (hne : contents q ≠ []) : q.front ≠ [] := by
  cases h with
  | drained =>
    exfalso
    exact hne rfl
  | ready => simp

end HwQueues
