module
/-
Lean's own library as a theorem pool (`burnqed_core/lean/library.py`,
`burnqed_core/data/core_pool.py`): trusted code of the worker's header,
loaded after the checker (`judge.lean`) by `burnqed_load`, before any
untrusted text exists.

* `burnqed_modules "nonce"`: every module the worker imported, with its direct
  imports (Lean's own header data: `Environment.header`).
* `burnqed_library "nonce" maxSize M*`: the theorems of the modules `M`, read
  from their `.olean` data (`ModuleData.constants`), each with its type as Lean
  prints it, a structural skeleton (for the near-twin rule), its size and the
  modules of the constants its type uses. In the installed (exported-level)
  library a theorem is stored as an axiom without its proof, so a theorem here
  is a theorem or an axiom whose type is a proposition; the library's true
  axioms are told apart in Python by the list taken from Lean's sources.
* `burnqed_type% M X`: a term, the type of the library constant `X` of module
  `M` exactly as stored (universe parameters as fresh universe metavariables,
  which a declaration's header turns into its own parameters). So
  `theorem t : burnqed_type% M X := by ...` poses `X` by its stored type, never
  by printed text that may not read back, while the goal the policy sees is
  Lean's own rendering of that type.

The answers are one message at the command's position: the nonce, then
netstrings (`<length>:<text>`), as the checker's. Written under the same
constraints of the WebAssembly build as `judge.lean` (hand-written list
functions, fuel-bounded structural recursion, no `for` loops over arrays, no
character-level string code): see docs/trusted-checker.md.
-/
public meta import Lean.Elab.Frontend
public meta import Lean.Replay

-- burnqed: the header loads what follows with `burnqed_load` (judge.py).
namespace BurnqedLibrary
open Lean Elab Command Meta

meta def nm : Name → String
  | .anonymous => ""
  | .str p s => let q := nm p; if q.isEmpty then s else q ++ "." ++ s
  | .num p k => nm p ++ "." ++ toString k

/-! Answers grow to tens of thousands of fields: every function over them is
tail-recursive (a deep recursion overflows the WebAssembly stack, which traps
the worker thread: the worker then never answers) and fields are pushed onto
an array. -/

/-- `acc` with the netstrings (`<length>:<text>`) of `a[i:]`; `fuel` bounds the walk. -/
meta def netsFrom (a : Array String) (i : Nat) : Nat → String → String
  | 0, acc => acc
  | fuel + 1, acc => match a[i]? with
    | some x => netsFrom a (i + 1) fuel (acc ++ toString x.length ++ ":" ++ x)
    | none => acc

meta def nets (a : Array String) : String := netsFrom a 0 a.size ""

meta def pushAll : Array String → List String → Array String
  | acc, [] => acc
  | acc, x :: xs => pushAll (acc.push x) xs

meta def lenN : List Name → Nat
  | [] => 0
  | _ :: xs => lenN xs + 1

meta def lastPart : Name → String
  | .str _ s => s
  | .num _ k => toString k
  | .anonymous => ""

meta def hasNum : Name → Bool
  | .anonymous => false
  | .num _ _ => true
  | .str p _ => hasNum p

/-- Inductive types whose name the skeleton keeps: the logic, not a container. -/
meta def keepType : Name → Bool
  | `Eq | `Iff | `And | `Or | `Not | `True | `False | `Exists | `HEq | `Subtype | `Prod | `PProd | `Sigma
  | `PSigma => true
  | _ => false

/-- A constant in the skeleton: `I` for an instance, `T` for an inductive type
(a container or a number type), else the last component of its name; so
`List.map_append` and `Array.map_append` get one skeleton. -/
meta def tok (env : Environment) (c : Name) : String :=
  if isInstanceCore env c then "I"
  else match env.find? c with
    | some (.inductInfo _) => if keepType c then lastPart c else "T"
    | _ => lastPart c

/-- The structure of a type with binder names, binder kinds, universe levels
and namespaces erased (`tok`). -/
meta def skel (env : Environment) : Nat → Expr → String
  | 0, _ => "?"
  | _ + 1, .bvar i => "#" ++ toString i
  | _ + 1, .sort _ => "S"
  | _ + 1, .const c _ => tok env c
  | f + 1, .app a b => "(" ++ skel env f a ++ " " ++ skel env f b ++ ")"
  | f + 1, .lam _ t b _ => "(L " ++ skel env f t ++ " " ++ skel env f b ++ ")"
  | f + 1, .forallE _ t b _ => "(P " ++ skel env f t ++ " " ++ skel env f b ++ ")"
  | f + 1, .letE _ t v b _ => "(Z " ++ skel env f t ++ " " ++ skel env f v ++ " " ++ skel env f b ++ ")"
  | _ + 1, .lit (.natVal n) => toString n
  | _ + 1, .lit (.strVal s) => "\"" ++ s ++ "\""
  | f + 1, .mdata _ e => skel env f e
  | f + 1, .proj s i e => "(J " ++ lastPart s ++ " " ++ toString i ++ " " ++ skel env f e ++ ")"
  | _ + 1, _ => "?"

/-- Nodes of `e`, a shared subterm counted at each occurrence (the size of the
printed statement, not of the DAG); past the fuel, more than any limit. -/
meta def size : Nat → Expr → Nat
  | 0, _ => 1000000
  | f + 1, .app a b => 1 + size f a + size f b
  | f + 1, .lam _ t b _ => 1 + size f t + size f b
  | f + 1, .forallE _ t b _ => 1 + size f t + size f b
  | f + 1, .letE _ t v b _ => 1 + size f t + size f v + size f b
  | f + 1, .mdata _ e => size f e
  | f + 1, .proj _ _ e => 1 + size f e
  | _ + 1, _ => 1

meta def idxOf (a : Array Name) (n : Name) : Nat → Option Nat
  | 0 => none
  | k + 1 => if a.getD k .anonymous == n then some k else idxOf a n k

meta def memS (s : String) : List String → Bool
  | [] => false
  | x :: xs => s == x || memS s xs

meta def arrList (a : Array Name) : Nat → List Name → List Name
  | 0, acc => acc
  | k + 1, acc => arrList a k (a.getD k .anonymous :: acc)

meta def joinS : List String → String
  | [] => ""
  | [x] => x
  | x :: xs => x ++ " " ++ joinS xs

meta def moduleOf (env : Environment) (n : Name) : Name :=
  match env.getModuleIdxFor? n with
  | some i => env.header.moduleNames.getD i.toNat .anonymous
  | none => .anonymous

/-- The modules of the constants `cs`, each once ("" for a constant of no module). -/
meta def modsOf (env : Environment) (acc : List String) : List Name → List String
  | [] => acc
  | c :: cs =>
    let m := nm (moduleOf env c)
    if memS m acc then modsOf env acc cs else modsOf env (m :: acc) cs

/-- Whether `e` is a proposition, by Lean's `isProp` (a MetaM run of its own:
`liftTermElabM` is specialised away in this build). -/
meta def isPropType (env : Environment) (e : Expr) : IO Bool := do
  let ctx : Core.Context := { fileName := "<burnqed-library>", fileMap := default, options := {} }
  let st : Core.State := { env := env }
  try ((Meta.isProp e).run' {} {}).toIO' ctx st catch _ => pure false

/-- A theorem, or an axiom (an exported-level theorem has no proof): name, type, universes. -/
meta def asTheorem : ConstantInfo → Option (Name × Expr × List Name)
  | .thmInfo v => some (v.name, v.type, v.levelParams)
  | .axiomInfo v => some (v.name, v.type, v.levelParams)
  | _ => none

/-- One constant: its fields pushed onto `acc` when it is a theorem kept
(`T name universes size type skeleton modules`), a count in `sk` (name, size,
instance) when a rule
that needs the environment leaves it out (internal, private or numbered name,
size, instance), nothing for a constant that is not a theorem (the name and
size rules come before the proposition test, so their counts may include an
axiom that is not a theorem). -/
meta def constFields (env : Environment) (maxSize : Nat) (ci : ConstantInfo) (acc : Array String)
    (sk : Nat × Nat × Nat) : IO (Array String × Nat × Nat × Nat) := do
  match asTheorem ci with
  | none => return (acc, sk)
  | some (n, ty, lps) =>
    -- the cheap rules first: the proposition test and the printer cost a MetaM run each
    if n.isInternal || isPrivateName n || hasNum n then return (acc, (sk.1 + 1, sk.2.1, sk.2.2))
    let sz := size 10000 ty
    if sz > maxSize then return (acc, (sk.1, sk.2.1 + 1, sk.2.2))
    if !(← isPropType env ty) then return (acc, sk)
    if isInstanceCore env n then return (acc, (sk.1, sk.2.1, sk.2.2 + 1))
    let ctx : MessageDataContext := { env := env, mctx := {}, lctx := {}, opts := {} }
    let pp ← (MessageData.withContext ctx (.ofExpr ty)).toString
    let used := ty.getUsedConstants
    let mods := modsOf env [] (arrList used used.size [])
    return (pushAll acc ["T", nm n, toString (lenN lps), toString sz, pp, skel env 400 ty, joinS mods], sk)

/-- The constants `a[i:]` (`fuel` bounds the walk), in order. -/
meta def constsFields (env : Environment) (maxSize : Nat) (a : Array ConstantInfo) (i : Nat) :
    Nat → Array String → Nat × Nat × Nat → IO (Array String × Nat × Nat × Nat)
  | 0, acc, sk => pure (acc, sk)
  | fuel + 1, acc, sk => do
    match a[i]? with
    | some ci =>
      let (acc', sk') ← constFields env maxSize ci acc sk
      constsFields env maxSize a (i + 1) fuel acc' sk'
    | none => pure (acc, sk)

meta def importNames (a : Array Import) : Nat → List String → List String
  | 0, acc => acc
  | k + 1, acc => importNames a k (nm (a.getD k { module := .anonymous }).module :: acc)

/-- `M name imports` for the modules `i..` (`fuel` bounds the walk), in the environment's order. -/
meta def moduleFields (env : Environment) (i : Nat) : Nat → Array String → Array String
  | 0, acc => acc
  | fuel + 1, acc => match env.header.moduleNames[i]? with
    | some m =>
      let md := env.header.moduleData.getD i default
      moduleFields env (i + 1) fuel (pushAll acc ["M", nm m, joinS (importNames md.imports md.imports.size [])])
    | none => acc

/-- The answer, one message at the command's own position. -/
meta def answer (stx : Syntax) (s : String) : CommandElabM Unit := do
  let ctx ← read
  let pos := ctx.fileMap.toPosition (stx.getPos?.getD 0)
  let msg : Message := { fileName := ctx.fileName, pos := pos, severity := .information, data := .ofFormat (.text s) }
  modify fun st => { st with messages := st.messages.add msg }

syntax (name := modulesCmd) "burnqed_modules " str : command

/-- `burnqed_modules "nonce"`: `M name imports` for every imported module. -/
@[command_elab modulesCmd] public meta def elabModules : CommandElab := fun stx => do
  let nonce := ((stx.getArg 1).isStrLit?).getD ""
  let env ← getEnv
  let fs := moduleFields env 0 env.header.moduleNames.size #["v1"]
  answer stx (nonce ++ nets (fs.push "end"))

/-- The modules `mods[i:]` (`fuel` bounds the walk), in order: `M name constants`,
the theorems, then `C reason count` for each rule that left theorems out; `N name`
for a module the worker does not import. -/
meta def modulesOut (env : Environment) (maxSize : Nat) (mods : Array Syntax) (i : Nat) :
    Nat → Array String → IO (Array String)
  | 0, acc => pure acc
  | fuel + 1, acc => do
    match mods[i]? with
    | none => pure acc
    | some stx =>
      let m := stx.getId
      let names := env.header.moduleNames
      match idxOf names m names.size with
      | none => modulesOut env maxSize mods (i + 1) fuel (pushAll acc ["N", nm m])
      | some j =>
        let md := env.header.moduleData.getD j default
        let head := pushAll acc ["M", nm m, toString md.constants.size]
        let (acc', sk) ← constsFields env maxSize md.constants 0 md.constants.size head (0, 0, 0)
        let counts := ["C", "name", toString sk.1, "C", "size", toString sk.2.1, "C", "instance",
          toString sk.2.2]
        modulesOut env maxSize mods (i + 1) fuel (pushAll acc' counts)

syntax (name := libraryCmd) "burnqed_library " str num ident* : command

/-- `burnqed_library "nonce" maxSize M*`: per module `M name constants`, its
theorems (`constFields`) and the counts of the rules (`C reason count`); `N name`
for a module the worker lacks. -/
@[command_elab libraryCmd] public meta def elabLibrary : CommandElab := fun stx => do
  let nonce := ((stx.getArg 1).isStrLit?).getD ""
  let maxSize := ((stx.getArg 2).isNatLit?).getD 0
  let env ← getEnv
  let mods := (stx.getArg 3).getArgs
  let fs ← liftIO <| modulesOut env maxSize mods 0 mods.size #["v1"]
  answer stx (nonce ++ nets (fs.push "end"))

meta def freshLevels : List Name → Term.TermElabM (List Level)
  | [] => pure []
  | _ :: ns => do return (← mkFreshLevelMVar) :: (← freshLevels ns)

syntax (name := typeTerm) "burnqed_type% " ident ident : term

/-- `burnqed_type% M X`: the type of constant `X`, which must come from module
`M`, exactly as the library stores it. -/
@[term_elab typeTerm] public meta def elabType : Term.TermElab := fun stx _ => do
  let m := (stx.getArg 1).getId
  let n := (stx.getArg 2).getId
  let env ← getEnv
  match env.find? n with
  | none => throwError "burnqed_type%: no such library constant"
  | some ci =>
    if moduleOf env n != m then throwError "burnqed_type%: the constant is not of that module"
    let us ← freshLevels ci.levelParams
    return ci.type.instantiateLevelParams ci.levelParams us

end BurnqedLibrary
