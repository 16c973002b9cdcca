/-
The tail that `burnqed_core/lean/checker_module.py` appends to a copy of `judge.lean` to compile the
trusted checker once into a module, `BurnqedChecker`, that every worker imports instead of elaborating
the checker's source at its start (docs/lean.md, "The checker as a module").

Lean writes a `module`'s compiled code (IR) for the interpreter in a part of its own that this
WebAssembly build's importer never reads: only the `meta` closure stays in the `.olean`, and the
closed terms, boxed variants and reduced-arity helpers that the interpreter needs are missing
("unknown declaration"). So this tail writes the module itself, as one file: Lean's own module data
(`mkModuleData`, every level), with the IR entries replaced by every IR declaration the checker's
constants reach (sorted by name, as the importer's binary search expects), and each IR-only name
(a closed term, a boxed variant) also declared as an `unsafe opaque … : Nat`, so that the importer
maps the name to this module: the interpreter finds a declaration's module through its constant.
Being `unsafe`, these names can appear in no theorem.

Written for the WebAssembly build's exported-level library, like the checker: hand-written list
functions, no library helper the compiler would specialise.
-/
namespace BurnqedCheckerBuild
open Lean Elab Command

meta def memN (n : Name) : List Name → Bool
  | [] => false
  | x :: xs => x == n || memN n xs

mutual
/-- The functions an IR body calls or partially applies. -/
meta partial def usedBody (acc : List Name) : IR.FnBody → List Name
  | .vdecl _ _ e b => usedBody (match e with | .fap f _ => f :: acc | .pap f _ => f :: acc | _ => acc) b
  | .jdecl _ _ v b => usedBody (usedBody acc v) b
  | .case _ _ _ alts => usedAlts acc alts 0
  | e => if e.isTerminal then acc else usedBody acc e.body

meta partial def usedAlts (acc : List Name) (alts : Array IR.Alt) (i : Nat) : List Name :=
  if h : i < alts.size then usedAlts (usedBody acc alts[i].body) alts (i + 1) else acc
end

/-- The IR declarations of this file reachable from `todo`, each with its boxed variant. -/
meta partial def irClosure (env : Environment) (todo seen : List Name) (acc : List IR.Decl) : List IR.Decl :=
  match todo with
  | [] => acc
  | n :: rest =>
    if memN n seen || (env.getModuleIdxFor? n).isSome then irClosure env rest seen acc
    else match IR.findEnvDecl env n with
      | none => irClosure env rest (n :: seen) acc
      | some d =>
        let more := match d with
          | .fdecl _ _ _ b _ => usedBody [] b
          | _ => []
        irClosure env ((n ++ `_boxed) :: BurnqedJudge.app more rest) (n :: seen) (d :: acc)

meta def irDecls (env : Environment) : List IR.Decl :=
  irClosure env (BurnqedJudge.localNames env) [] []

meta partial def mergeD : List IR.Decl → List IR.Decl → List IR.Decl
  | [], ys => ys
  | xs, [] => xs
  | x :: xs, y :: ys =>
    if Name.quickLt x.name y.name then x :: mergeD xs (y :: ys) else y :: mergeD (x :: xs) ys

meta def splitD : List IR.Decl → List IR.Decl → List IR.Decl → List IR.Decl × List IR.Decl
  | [], a, b => (a, b)
  | x :: xs, a, b => splitD xs b (x :: a)

meta partial def sortD : List IR.Decl → List IR.Decl
  | [] => []
  | [x] => [x]
  | xs => let (a, b) := splitD xs [] []; mergeD (sortD a) (sortD b)

meta unsafe def castAll : List IR.Decl → Array EnvExtensionEntry → Array EnvExtensionEntry
  | [], acc => acc
  | d :: ds, acc => castAll ds (acc.push (unsafeCast d))

meta unsafe def irEntriesUnsafe (decls : List IR.Decl) : Array EnvExtensionEntry :=
  castAll (sortD decls) #[]

/-- The IR declarations as the extension's entries, sorted by name. -/
@[implemented_by irEntriesUnsafe]
meta opaque irEntries (decls : List IR.Decl) : Array EnvExtensionEntry

/-- The module data's entries with extension `n`'s replaced by `full`. -/
meta def replaceEntries (es : Array (Name × Array EnvExtensionEntry)) (n : Name) (full : Array EnvExtensionEntry)
    (i : Nat) (acc : Array (Name × Array EnvExtensionEntry)) : Array (Name × Array EnvExtensionEntry) :=
  if h : i < es.size then
    replaceEntries es n full (i + 1) (acc.push (if es[i].1 == n then (n, full) else es[i]))
  else acc
termination_by es.size - i

/-- The names of IR declarations that are no constant of `env`. -/
meta def irOnly (env : Environment) : List IR.Decl → List Name → List Name
  | [], acc => acc
  | d :: ds, acc => irOnly env ds (if env.contains d.name then acc else d.name :: acc)

meta def pushNames : List Name → Array Name → Array Name
  | [], acc => acc
  | n :: ns, acc => pushNames ns (acc.push n)

meta def pushMarkers : List Name → Array ConstantInfo → Array ConstantInfo
  | [], acc => acc
  | n :: ns, acc =>
    let cv : ConstantVal := { name := n, levelParams := [], type := .const `Nat [] }
    pushMarkers ns (acc.push (.opaqueInfo (OpaqueVal.mk cv (.const `Nat.zero []) true [n])))

/-- This file's module data, written to `path` as one file (see the file's header). -/
meta def save (path : String) : CommandElabM Unit := do
  let env ← getEnv
  let data ← mkModuleData env .private
  let decls := irDecls env
  let aux := irOnly env decls []
  let data := { data with
    entries := replaceEntries data.entries IR.declMapExt.name (irEntries decls) 0 #[]
    constNames := pushNames aux data.constNames
    constants := pushMarkers aux data.constants }
  saveModuleData path env.mainModule data
  IO.println "burnqed: the checker module is written"

end BurnqedCheckerBuild
