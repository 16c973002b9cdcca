module
/-
The trusted checker of burnqed (`burnqed_core/lean/judge.py`): the header of
every document of the embedded Lean worker, elaborated when the worker starts,
before any untrusted text exists.

`burnqed_judge "nonce" "preamble" "expected" "candidate" name*` elaborates the
candidate text (a string literal: the outer parser never reads it as Lean) with
Lean's own parser and command elaborator after the trusted preamble, on a copy
of this environment, and computes the verdict from the resulting environment as
a value: each name's declaration and the ones it needs that the candidate added
are replayed through the kernel onto the preamble's environment (whatever
options the candidate set), its type must equal the type the trusted `expected`
text gives the name, and the leaves of its axioms are collected by this code.
The answer is one message: the nonce, then netstrings (`<length>:<text>`).

Written for the WebAssembly build's exported-level library: no library function
that the compiler would specialise (their private helpers are missing), no
`partial def` walks, no character-level string code (it traps in this build),
hence the hand-written list functions.
-/
public meta import Lean.Elab.Frontend
public meta import Lean.Replay

namespace BurnqedJudge
open Lean Elab Command

meta def nm : Name → String
  | .anonymous => ""
  | .str p s => let q := nm p; if q.isEmpty then s else q ++ "." ++ s
  | .num p k => nm p ++ "." ++ toString k

/-- The names of `ns` that `env` does not have. -/
meta def absent (env : Environment) : List Name → List Name
  | [] => []
  | n :: ns => if env.contains n then absent env ns else n :: absent env ns

/-- The names of `ns` that `env` has, before `acc`. -/
meta def present (env : Environment) : List Name → List Name → List Name
  | [], acc => acc
  | n :: ns, acc => if env.contains n then present env ns (n :: acc) else present env ns acc

/-- Parse and elaborate the commands of `inputCtx` one by one, with Lean's
own parser and command elaborator; true when the parse reached the end of the
text (false after `#exit`), and the names of `watch` that were declared by a
command elaborated with `variable`s in scope (added to `vars`). -/
meta partial def elabAll (inputCtx : Parser.InputContext) (ps : Parser.ModuleParserState)
    (watch vars : List Name) : CommandElabM (Bool × List Name) := do
  let st ← get
  let sc : Scope := match st.scopes with
    | s :: _ => s
    | [] => { header := "" }
  let pmctx : Parser.ParserModuleContext :=
    { env := st.env, options := sc.opts, currNamespace := sc.currNamespace, openDecls := sc.openDecls }
  let (cmd, ps', msgs') := Parser.parseCommand inputCtx pmctx ps st.messages
  set { st with messages := msgs' }
  if Parser.isTerminalCommand cmd then return (cmd.getKind == ``Lean.Parser.Command.eoi, vars)
  let before := if sc.varDecls.size == 0 then [] else absent st.env watch
  elabCommandTopLevel cmd
  let envAfter ← getEnv
  let vars' := match before with
    | [] => vars
    | ns => present envAfter ns vars
  elabAll inputCtx ps' watch vars'

syntax (name := loadCmd) "burnqed_load " str : command

/-- `burnqed_load "text"`: elaborate `text` (the rest of this file) here, in
this scope, keeping what it declares, but without info trees. The worker
sends the references of every info tree in the document after each edit
(~0.4 MB of JSON for this file, measured): loaded as a string, the checker
costs an edit 0.043 s instead of 0.131 s (median, one tactic). -/
@[command_elab loadCmd] public meta def elabLoad : CommandElab := fun stx => do
  let text := (stx[1].isStrLit?).getD ""
  let inputCtx : Parser.InputContext := Parser.InputContext.mk text "<burnqed-judge>"
  let inner (ctx : Context) : Context :=
    { ctx with fileName := "<burnqed-judge>", fileMap := inputCtx.fileMap, snap? := none, cancelTk? := none }
  discard <| withReader inner (withEnableInfoTree false (elabAll inputCtx {} [] []))

-- burnqed: the header loads what follows with `burnqed_load` (judge.py).

/-- Elaborate `text` as commands after the state `st` (its messages dropped),
with this command's own elaborator; the outer state is restored after. -/
meta def runC (st : Command.State) (text : String) (watch : List Name) :
    CommandElabM (Command.State × Bool × List Name) := do
  let saved ← get
  set { st with messages := {} }
  let inputCtx : Parser.InputContext := Parser.InputContext.mk text "<burnqed>"
  let inner (ctx : Context) : Context :=
    { ctx with fileName := "<burnqed>", fileMap := inputCtx.fileMap, snap? := none, cancelTk? := none }
  let (complete, vars) ← withReader inner (elabAll inputCtx {} watch [])
  let out ← get
  set saved
  return (out, complete, vars)

meta def run (st : Command.State) (text : String) : CommandElabM Command.State := do
  return (← runC st text []).1

meta def anyError : List Message → Bool
  | [] => false
  | m :: ms => m.severity == .error || anyError ms

meta def mem (n : Name) : List Name → Bool
  | [] => false
  | m :: ms => n == m || mem n ms

meta def app : List Name → List Name → List Name
  | [], ys => ys
  | x :: xs, ys => x :: app xs ys

meta def arrList (a : Array Name) : Nat → List Name → List Name
  | 0, acc => acc
  | k + 1, acc => arrList a k (a.getD k .anonymous :: acc)

meta def usedBy (ci : ConstantInfo) : List Name :=
  let a := ci.type.getUsedConstants
  let b := match ci.value? (allowOpaque := true) with
    | some v => v.getUsedConstants
    | none => #[]
  app (arrList a a.size []) (arrList b b.size [])

meta def keepNew (envP : Environment) (acc : List Name) (self : Name) : List Name → List Name
  | [] => []
  | d :: ds => if envP.contains d || mem d acc || d == self then keepNew envP acc self ds
    else d :: keepNew envP acc self ds

/-- Constants of `envU` reachable from `todo` that `envP` lacks, dependencies first. -/
meta def closure (envU envP : Environment) : Nat → List Name → List Name → Except String (List Name)
  | 0, _, _ => .error "declaration graph too large"
  | _, [], acc => .ok acc
  | fuel + 1, n :: rest, acc =>
    if envP.contains n || mem n acc then closure envU envP fuel rest acc
    else match envU.find? n with
      | none => .error s!"unknown constant {nm n}"
      | some ci =>
        match keepNew envP acc n (usedBy ci) with
        | [] => closure envU envP fuel rest (app acc [n])
        | deps => closure envU envP fuel (app deps (n :: rest)) acc


meta def ctorsOf (envU : Environment) : List Name → Except String (List Constructor)
  | [] => .ok []
  | c :: cs => match envU.find? c with
    | some (.ctorInfo v) => match ctorsOf envU cs with
      | .ok rest => .ok ({ name := c, type := v.type } :: rest)
      | .error e => .error e
    | _ => .error s!"missing constructor {nm c}"

meta def indTypes (envU : Environment) : List Name → Except String (List InductiveType)
  | [] => .ok []
  | i :: is => match envU.find? i with
    | some (.inductInfo v) => match ctorsOf envU v.ctors, indTypes envU is with
      | .ok cs, .ok rest => .ok ({ name := i, type := v.type, ctors := cs } :: rest)
      | .error e, _ => .error e
      | _, .error e => .error e
    | _ => .error s!"missing inductive {nm i}"

meta def kadd (k : Kernel.Environment) (d : Declaration) (what : Name) : Except String Kernel.Environment :=
  match k.addDecl {} d with
  | .ok k' => .ok k'
  | .error _ => .error s!"the kernel rejects {nm what}"

/-- Add the constants `ns` of `envU` (dependencies first) to the kernel
environment `k`, each checked by the kernel whatever options the document set.
Constructors and recursors are not sent: they must equal what the kernel made
from their inductive. -/
meta def replayAll (envU : Environment) : List Name → Kernel.Environment → Except String Kernel.Environment
  | [], k => .ok k
  | n :: ns, k =>
    let next (r : Except String Kernel.Environment) := match r with
      | .ok k' => replayAll envU ns k'
      | .error e => .error e
    match envU.find? n with
    | some (.thmInfo v) => next (kadd k (.thmDecl v) n)
    | some (.defnInfo v) => next (kadd k (.defnDecl v) n)
    | some (.opaqueInfo v) => next (kadd k (.opaqueDecl v) n)
    | some (.axiomInfo v) => next (kadd k (.axiomDecl v) n)
    | some (.inductInfo v) =>
      if (k.find? n).isSome then replayAll envU ns k
      else match indTypes envU v.all with
        | .ok ts => next (kadd k (.inductDecl v.levelParams v.numParams ts v.isUnsafe) n)
        | .error e => .error e
    | some (.ctorInfo v) => match k.find? n with
      | some (.ctorInfo w) => if v == w then replayAll envU ns k else .error s!"constructor {nm n} differs from the kernel's"
      | _ => .error s!"constructor {nm n} has no inductive"
    | some (.recInfo v) => match k.find? n with
      | some (.recInfo w) => if v == w then replayAll envU ns k else .error s!"recursor {nm n} differs from the kernel's"
      | _ => .error s!"recursor {nm n} has no inductive"
    | some (.quotInfo _) => .error "a quotient declaration"
    | none => .error s!"unknown constant {nm n}"


/-- The leaves of the constants reachable from `todo` in `k`: axioms (L: local,
I: imported), unsafe constants (U) and names the kernel lacks (N); "F" when
the walk ran out of fuel. -/
meta def leaves (envP : Environment) (k : Kernel.Environment) :
    Nat → List Name → NameSet → List String → List String
  | 0, _, _, acc => "F:fuel" :: acc
  | _, [], _, acc => acc
  | fuel + 1, n :: rest, seen, acc =>
    if seen.contains n then leaves envP k fuel rest seen acc
    else
      let seen' := seen.insert n
      let loc := if (envP.getModuleIdxFor? n).isSome then "I" else "L"
      match k.find? n with
      | none => leaves envP k fuel rest seen' (("N:" ++ nm n) :: acc)
      | some ci =>
        if ci.isUnsafe then leaves envP k fuel rest seen' (("U:" ++ nm n) :: acc)
        else match ci with
          | .axiomInfo _ => leaves envP k fuel rest seen' ((loc ++ ":" ++ nm n) :: acc)
          | _ => leaves envP k fuel (app (usedBy ci) rest) seen' acc

/-- Netstrings: `<length>:<text>` per field, so that no text (a message, a
name of the document's) can pass for another field. -/
meta def nets : List String → String
  | [] => ""
  | x :: xs => toString x.length ++ ":" ++ x ++ nets xs

meta def msgFields : List Message → IO (List String)
  | [] => pure []
  | m :: ms => do
    let sev := match m.severity with | .error => "error" | .warning => "warning" | .information => "info"
    let txt ← m.data.toString
    let rest ← msgFields ms
    return "M" :: sev :: toString m.pos.line :: toString m.pos.column :: txt :: rest

meta def lenS : List String → Nat
  | [] => 0
  | _ :: xs => lenS xs + 1

meta def appS : List String → List String → List String
  | [], ys => ys
  | x :: xs, ys => x :: appS xs ys

meta def judgeOne (envU envP : Environment) (envT? : Option Environment) (k0 : Kernel.Environment)
    (idx : Nat) (n : Name) : List String :=
  let out (status : String) (ls : List String) := "D" :: toString idx :: status :: toString (lenS ls) :: ls
  match envU.find? n with
  | none => out "missing" []
  | some _ =>
    match closure envU envP 100000 [n] [] with
    | .error e => out "closure" [e]
    | .ok ns => match replayAll envU ns k0 with
      | .error e => out "kernel" [e]
      | .ok k => match k.find? n with
        | some (.thmInfo v) =>
          let typeOk := match envT? with
            | none => true
            | some envT => match envT.find? n with
              | some ci => ci.type == v.type && ci.levelParams == v.levelParams
              | none => false
          if !typeOk then out "type_differs" []
          else out "ok" (leaves envP k 1000000 [n] {} [])
        | _ => out "not_theorem" []

/-- Instances among `cs` that the candidate declared (not in `envP`) for a
class it did not declare: the statement's meaning changed by the file. -/
meta def instFlags (envU envP : Environment) : List Name → List String
  | [] => []
  | c :: cs =>
    let rest := instFlags envU envP cs
    if envP.contains c || !(Meta.isInstanceCore envU c) then rest
    else match envU.find? c with
      | some ci => match ci.type.getForallBody.getAppFn.constName? with
        | some cls => if envP.contains cls then ("instance " ++ nm c ++ " of " ++ nm cls) :: rest else rest
        | none => rest
      | none => rest

/-- Warnings on the meaning of `n`'s statement (what Lean elaborated, not what
its text says): declared while `variable`s were in scope (they may add
hypotheses), or using an instance the file declared for a class it did not. -/
meta def flagsOne (envU envP : Environment) (vars : List Name) (idx : Nat) (n : Name) : List String :=
  match envU.find? n with
  | none => []
  | some ci =>
    let w (t : String) : List String := ["W", toString idx, t]
    let v := if mem n vars then w "variables" else []
    let a := ci.type.getUsedConstants
    let rec each : List String → List String
      | [] => []
      | t :: ts => appS (w t) (each ts)
    appS v (each (instFlags envU envP (arrList a a.size [])))

/-- `n` inside the namespace `ns`. -/
meta def qualify (ns : Name) : Name → Name
  | .anonymous => ns
  | .str q x => .str (qualify ns q) x
  | .num q k => .num (qualify ns q) k

meta def qualifyAll (ns : Name) : List Name → List Name
  | [] => []
  | n :: rest => qualify ns n :: qualifyAll ns rest

meta def judgeAll (envU envP : Environment) (envT? : Option Environment) (k0 : Kernel.Environment)
    (vars : List Name) : Nat → List Name → List String
  | _, [] => []
  | i, n :: ns => appS (judgeOne envU envP envT? k0 i n)
      (appS (flagsOne envU envP vars i n) (judgeAll envU envP envT? k0 vars (i + 1) ns))

/-- The namespace a state leaves open: asked names are relative to it. -/
meta def spaceOf (st : Command.State) : Name :=
  match st.scopes with
  | sc :: _ => sc.currNamespace
  | [] => .anonymous

/-- The verdict on `candidate`, elaborated after the trusted `preamble`: for
each of `names`, whether the kernel accepts its declaration replayed (with its
dependencies the candidate added) onto the preamble's environment, whether its
type is the one `expected` (trusted text, elaborated after the same preamble)
gives that name, and the leaves of its axioms. -/
meta def judge (env0 : Environment) (nonce preamble expected candidate : String) (names : List Name) :
    CommandElabM String := do
  let opts : Options := (({} : Options).setBool `Elab.async false).setNat `maxHeartbeats 200000
  let st0 := Command.mkState env0 {} opts
  -- The worker's document is a `module` (for `meta import`): public and
  -- exposed by default, so that names and unfolding are those of a plain file.
  let sS ← run st0 "@[expose] public section\n"
  let sP ← run sS preamble
  let pMsgs ← liftIO <| msgFields sP.messages.toList
  if anyError sP.messages.toList then
    return nonce ++ nets (appS ("v1" :: "P" :: pMsgs) ["end"])
  let envT? ← if expected.isEmpty then pure none else do
    let sT ← run sP expected
    if anyError sT.messages.toList then pure none else pure (some sT.env)
  if !expected.isEmpty && envT?.isNone then
    return nonce ++ nets ["v1", "E", "end"]
  let (sU, complete, vars) ← runC sP candidate (qualifyAll (spaceOf sP) names)
  let ds := judgeAll sU.env sP.env envT? sP.env.toKernelEnv vars 0 (qualifyAll (spaceOf sP) names)
  let ms ← liftIO <| msgFields sU.messages.toList
  return nonce ++ nets (appS ("v1" :: "X" :: (if complete then "1" else "0") :: ds) (appS ms ["end"]))

syntax (name := judgeCmd) "burnqed_judge " str str str str ident* : command

meta def idents (a : Array Syntax) : Nat → List Name → List Name
  | 0, acc => acc
  | k + 1, acc => idents a k ((a.getD k Syntax.missing).getId :: acc)

@[command_elab judgeCmd] public meta def elabJudge : CommandElab := fun stx => do
  let arg (i : Nat) := (stx[i].isStrLit?).getD ""
  let env ← getEnv
  let ids := stx[5].getArgs
  let out ← (judge env (arg 1) (arg 2) (arg 3) (arg 4) (idents ids ids.size []))
  let ctx ← read
  let msg : Message := { fileName := ctx.fileName, pos := ⟨1, 0⟩, severity := .information, data := .ofFormat (.text out) }
  modify fun st => { st with messages := st.messages.add msg }


/-- "1" when `text` (a candidate as it sits in a proof block) parses, with
Lean's parser in this environment, as `by` and exactly one tactic sequence
that consumes the whole text; else "0". -/
meta def oneSeq (env : Environment) (text : String) : String :=
  match Parser.runParserCategory env `term ("by\n" ++ text) "<candidate>" with
  | .ok _ => "1"
  | .error _ => "0"

meta def seqAll (env : Environment) (a : Array Syntax) : Nat → List String → List String
  | 0, acc => acc
  | k + 1, acc => seqAll env a k (oneSeq env (((a.getD k Syntax.missing).isStrLit?).getD "") :: acc)

syntax (name := tacticsCmd) "burnqed_tactics " str str* : command

/-- `burnqed_tactics "nonce" "c1" "c2" ...`: whether each candidate is one
tactic sequence by Lean's own parser (`oneSeq`), answered like `burnqed_judge`. -/
@[command_elab tacticsCmd] public meta def elabTactics : CommandElab := fun stx => do
  let nonce := (stx[1].isStrLit?).getD ""
  let cs := stx[2].getArgs
  let out := nonce ++ nets (appS ("v1" :: seqAll (← getEnv) cs cs.size []) ["end"])
  let ctx ← read
  let msg : Message := { fileName := ctx.fileName, pos := ⟨1, 0⟩, severity := .information, data := .ofFormat (.text out) }
  modify fun st => { st with messages := st.messages.add msg }

end BurnqedJudge
