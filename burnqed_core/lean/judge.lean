module
/-
The trusted checker of burnqed (`burnqed_core/lean/judge.py`): the header of
every document of the embedded Lean worker, elaborated when the worker starts,
before any untrusted text exists (docs/trusted-checker.md).

`burnqed_judge "nonce" "mode" "trust" "module" "preamble" "expected"
"candidate" (line col)* name*` elaborates the preamble and the candidate
(string literals: the outer parser never reads them as Lean) with Lean's own
parser and command elaborator on a copy of this environment, and computes the
verdict from the resulting environment as a value: each judged declaration
and every constant it needs that is not the library's (the preamble's
included, unless the preamble is one of the package's own, by hash) are
replayed through the kernel onto this environment (the library's modules),
whatever options the text set; its type must equal the one the trusted
`expected` text gives the name; the premise rule of a library module; the
leaves of its axioms; what makes its statement mean more than its text; the
goals at the given positions, from the same run. The answer is one message:
the nonce, then netstrings (`<length>:<text>`).

`burnqed_step "nonce" k <tactics>` is the goal reader of a batch block: the
candidate as a nested tactic sequence, its end state reported by this code.

Written for the WebAssembly build's exported-level library: no library function
that the compiler would specialise (their private helpers are missing), no
`partial def` walks over characters, no character-level string code (it traps
in this build), hence the hand-written list functions.

A walk whose `let rec`/`where` helper calls back into the walk (`paList`,
`theoremsOf`, `commandKinds`, `listed`) is `partial` (its fuel or its list still
bounds it): Lean cannot make such a walk structural, and its termination
search (well-founded recursion, `decreasing_tactic` on every guessed measure)
took about two thirds of this file's load at every worker start
(docs/testing.md). `partial` compiles the same code; only the kernel's copy
of the walk becomes opaque, which nothing proves anything about.
-/public meta import Lean.Elab.Frontend
public meta import Lean.Replay
public meta import Lean.Compiler.ExternAttr
public meta import Lean.Compiler.ImplementedByAttr

namespace BurnqedJudge
open Lean Elab Command

meta def nm : Name → String
  | .anonymous => ""
  | .str p s => let q := nm p; if q.isEmpty then s else q ++ "." ++ s
  | .num p k => nm p ++ "." ++ toString k

meta def appMsgs : List Message → List Message → List Message
  | [], ys => ys
  | x :: xs, ys => x :: appMsgs xs ys

/-- Parse and elaborate the commands of `inputCtx` one by one, with Lean's
own parser and command elaborator, keeping every message (Lean resets a
command's messages when the next one starts: the frontend reports them in
between). -/
meta partial def elabAll (inputCtx : Parser.InputContext) (ps : Parser.ModuleParserState)
    (msgs : List Message) : CommandElabM (List Message) := do
  let st ← get
  let sc : Scope := match st.scopes with
    | s :: _ => s
    | [] => { header := "" }
  let pmctx : Parser.ParserModuleContext :=
    { env := st.env, options := sc.opts, currNamespace := sc.currNamespace, openDecls := sc.openDecls }
  let (cmd, ps', msgs') := Parser.parseCommand inputCtx pmctx ps {}
  let msgs := appMsgs msgs msgs'.toList
  if Parser.isTerminalCommand cmd then return msgs
  elabCommandTopLevel cmd
  let msgs := appMsgs msgs (← get).messages.toList
  elabAll inputCtx ps' msgs

syntax (name := loadCmd) "burnqed_load " str : command

/-- `burnqed_load "text"`: elaborate `text` (the rest of this file) here, in
this scope, keeping what it declares, but without info trees. The worker
sends the references of every info tree in the document after each edit
(~0.4 MB of JSON for this file, measured): loaded as a string, the checker
costs an edit 0.043 s instead of 0.131 s (median, one tactic). -/
@[command_elab loadCmd] public meta def elabLoad : CommandElab := fun stx => do
  let text := ((stx.getArg 1).isStrLit?).getD ""
  let inputCtx : Parser.InputContext := Parser.InputContext.mk text "<burnqed-judge>"
  let inner (ctx : Context) : Context :=
    { ctx with fileName := "<burnqed-judge>", fileMap := inputCtx.fileMap, snap? := none, cancelTk? := none }
  let saved := (← get).messages
  let msgs ← withReader inner (withEnableInfoTree false (elabAll inputCtx {} []))
  -- What the checker's own text says (an error in it) is the header's: a worker never starts without it.
  let rec add : MessageLog → List Message → MessageLog
    | log, [] => log
    | log, m :: ms => add (log.add m) ms
  modify fun st => { st with messages := add saved msgs }

-- burnqed: the header loads what follows with `burnqed_load` (judge.py).

/-! ## Lists, names, netstrings (hand-written: see the file's header) -/

meta def app : List Name → List Name → List Name
  | [], ys => ys
  | x :: xs, ys => x :: app xs ys

meta def appS : List String → List String → List String
  | [], ys => ys
  | x :: xs, ys => x :: appS xs ys

meta def mem (n : Name) : List Name → Bool
  | [] => false
  | m :: ms => n == m || mem n ms

meta def memS (x : String) : List String → Bool
  | [] => false
  | y :: ys => x == y || memS x ys

meta def lenS : List String → Nat
  | [] => 0
  | _ :: xs => lenS xs + 1

meta def lenN : List Name → Nat
  | [] => 0
  | _ :: xs => lenN xs + 1

meta def revN : List Name → List Name → List Name
  | [], acc => acc
  | x :: xs, acc => revN xs (x :: acc)

meta def dedupS : List String → List String → List String
  | [], acc => acc
  | x :: xs, acc => if memS x acc then dedupS xs acc else dedupS xs (x :: acc)

meta def arrList (a : Array Name) : Nat → List Name → List Name
  | 0, acc => acc
  | k + 1, acc => arrList a k (a.getD k .anonymous :: acc)

meta def joinNames : List Name → String
  | [] => ""
  | [x] => nm x
  | x :: xs => nm x ++ ", " ++ joinNames xs

meta def joinS : List String → String
  | [] => ""
  | [x] => x
  | x :: xs => x ++ ", " ++ joinS xs

/-- Netstrings: `<length>:<text>` per field, so that no text (a message, a
name of the document's) can pass for another field. -/
meta def nets : List String → String
  | [] => ""
  | x :: xs => toString x.length ++ ":" ++ x ++ nets xs

/-- The parts of a name, last first, each as an atomic name. -/
meta def partsRev : Name → List Name
  | .anonymous => []
  | .str p s => .str .anonymous s :: partsRev p
  | .num p k => .num .anonymous k :: partsRev p

meta def ofParts : List Name → Name → Name
  | [], acc => acc
  | .str _ s :: ps, acc => ofParts ps (.str acc s)
  | .num _ k :: ps, acc => ofParts ps (.num acc k)
  | _ :: ps, acc => ofParts ps acc

meta def dropToNum : List Name → List Name
  | [] => []
  | .num _ _ :: ps => ps
  | _ :: ps => dropToNum ps

/-- The name a user wrote for `n` (a private name without its `_private.<module>.0` prefix). -/
meta def userName (n : Name) : Name :=
  match revN (partsRev n) [] with
  | .str _ "_private" :: rest => ofParts (dropToNum rest) .anonymous
  | _ => n

meta def prefixParts : List Name → List Name → Bool
  | [], _ => true
  | _ :: _, [] => false
  | x :: xs, y :: ys => x == y && prefixParts xs ys

/-- Whether `c`'s user name ends with the parts of `w` (a name as written in a declaration). -/
meta def endsWith (c w : Name) : Bool :=
  let ws := match revN (partsRev w) [] with
    | .str _ "_root_" :: rest => revN rest []
    | _ => partsRev w
  prefixParts ws (partsRev (userName c))

/-- `n` inside the namespace `ns`. -/
meta def qualify (ns : Name) : Name → Name
  | .anonymous => ns
  | .str q x => .str (qualify ns q) x
  | .num q k => .num (qualify ns q) k

/-- The name Lean declares for a declaration written `w` in namespace `ns` (`_root_.x`: `x`). -/
meta def declaredName (ns w : Name) : Name :=
  match revN (partsRev w) [] with
  | .str _ "_root_" :: rest => ofParts rest .anonymous
  | _ => qualify ns w

/-- The proper suffixes of `n`'s user name (`A.B.c`: `B.c`, `c`). -/
meta def suffixes (n : Name) : List Name :=
  let rec go : List Name → List Name
    | [] => []
    | _ :: rest => match rest with
      | [] => []
      | _ => ofParts rest .anonymous :: go rest
  go (revN (partsRev (userName n)) [])

meta def lastPart : Name → String
  | .str _ s => s
  | .num _ k => toString k
  | .anonymous => ""

meta def rootPart (n : Name) : String :=
  match revN (partsRev n) [] with
  | p :: _ => lastPart p
  | [] => ""

/-! ## The constants a file declared -/

abbrev CEntries := Array (PersistentHashMap.Entry Name ConstantInfo (PersistentHashMap.Node Name ConstantInfo))

meta def entryNames (es : CEntries) (sub : PersistentHashMap.Node Name ConstantInfo → List Name → List Name) :
    Nat → List Name → List Name
  | 0, acc => acc
  | k + 1, acc => match es.getD k .null with
    | .entry n _ => entryNames es sub k (n :: acc)
    | .ref node => entryNames es sub k (sub node acc)
    | .null => entryNames es sub k acc

meta def nodeNames : Nat → PersistentHashMap.Node Name ConstantInfo → List Name → List Name
  | 0, _, acc => acc
  | fuel + 1, .entries es, acc => entryNames es (nodeNames fuel) es.size acc
  | _ + 1, .collision ks _ _, acc => arrList ks ks.size acc

/-- The constants of `env` that are not imported (this document's). -/
meta def localNames (env : Environment) : List Name :=
  nodeNames 64 env.constants.map₂.root []

/-- The constants of `after` that `before` lacks. -/
meta def newNames (before after : Environment) : List Name :=
  let rec keep : List Name → List Name
    | [] => []
    | n :: ns => if before.contains n then keep ns else n :: keep ns
  keep (localNames after)

/-- Meta-level code: a constant whose type ends in one of Lean's own types
(`Lean.Macro`, an elaborator, a parser, a delaborator...) or in `IO`. -/
meta def isMetaType (ci : ConstantInfo) : Bool :=
  match ci.type.getForallBody.getAppFn.constName? with
  | some h => memS (rootPart h) ["Lean", "IO", "EIO", "BaseIO", "ST"]
  | none => false

/-- Meta-level code that can only compute syntax (a macro, a parser
description, an unexpander): it changes how a text reads, but runs no effect
(it cannot read the process's input or write its output without `unsafe`
code, which gets no verdict). -/
meta def isPureSyntax (ci : ConstantInfo) : Bool :=
  match ci.type.getForallBody.getAppFn.constName? with
  | some h => h == `Lean.Macro || h == `Lean.ParserDescr || h == `Lean.TrailingParserDescr ||
      h == `Lean.PrettyPrinter.Unexpander
  | none => false

/-- Code that could read the process's memory: an `unsafe` declaration (not
the compiler's own `_unsafe_rec` copy of a recursive definition), an
`implemented_by` other than that copy, or an `extern`. -/
meta def unsafeCode (env : Environment) (n : Name) (ci : ConstantInfo) : Bool :=
  if lastPart n == "_unsafe_rec" then false
  else if ci.isUnsafe then true
  else if isExtern env n then true
  else match Compiler.getImplementedBy? env n with
    | some impl => lastPart impl != "_unsafe_rec"
    | none => false

/-- Commands that run no code of the file and change no syntax (a policy of
this checker: anything else is reported as code the file ran). -/
meta def plainCommands : List String :=
  ["declaration", "namespace", "section", "end", "open", "variable", "universe", "set_option",
   "attribute", "export", "in", "mutual", "noncomputableSection", "check", "print", "printAxioms",
   "reduce", "synth", "include", "omit", "moduleDoc", "deriving", "eoi", "checkFailure", "printEqnsDecl"]

meta def isPlain (k : Name) : Bool :=
  match k with
  | .str p s => p == `Lean.Parser.Command && memS s plainCommands
  | _ => false

/-- Commands that declare syntax and macros only (pure: see `isPureSyntax`). -/
meta def isSyntaxCommand (k : Name) : Bool :=
  match k with
  | .str p s => p == `Lean.Parser.Command &&
      memS s ["macro", "macro_rules", "syntax", "notation", "mixfix", "syntaxAbbrev", "syntaxCat"]
  | _ => false

/-- `open … renaming a → b` (and `open X (a)` when it renames) in scope, as `a → X.b`. -/
meta def renamings : List OpenDecl → List String
  | [] => []
  | .explicit id decl :: rest =>
    if lastPart decl == lastPart id && partsRev id == [.str .anonymous (lastPart id)] then renamings rest
    else (nm id ++ " → " ++ nm decl) :: renamings rest
  | _ :: rest => renamings rest

meta def usedBy (ci : ConstantInfo) : List Name :=
  let a := ci.type.getUsedConstants
  let b := match ci.value? (allowOpaque := true) with
    | some v => v.getUsedConstants
    | none => #[]
  app (arrList a a.size []) (arrList b b.size [])

meta def dropOwn (own : List Name) : List Name → List Name
  | [] => []
  | d :: ds => if mem d own then dropOwn own ds else d :: dropOwn own ds


/-! ## What a statement means beyond its text -/

/-- Whether every constant of `e` is one of `env0`'s (the library and this checker). -/
meta def onlyIn (env0 : Environment) (e : Expr) : Bool :=
  let a := e.getUsedConstants
  let rec all : List Name → Bool
    | [] => true
    | c :: cs => env0.contains c && all cs
  all (arrList a a.size [])

/-- The class `c`'s type concludes in (an instance, a default instance, a
unification hint's class...), if any. -/
meta def classOf (env : Environment) (ci : ConstantInfo) : Option Name :=
  match ci.type.getForallBody.getAppFn.constName? with
  | some h => if isClass env h then some h else none
  | none => none

meta def isReducible (env : Environment) (c : Name) : Bool :=
  match getReducibilityStatusCore env c with
  | .reducible => true
  | _ => false

/-- Whether the constants `cs` are the library's once the file's reducible
definitions among them are unfolded (`abbrev RNat := Nat`: `OfNat RNat 2` is
`OfNat Nat 2` to instance resolution). -/
meta def libOnly (env0 env : Environment) : Nat → List Name → Bool
  | 0, _ => false
  | _, [] => true
  | f + 1, c :: cs =>
    if env0.contains c then libOnly env0 env f cs
    else match env.find? c with
      | some (.defnInfo v) =>
        if isReducible env c then let u := v.value.getUsedConstants; libOnly env0 env f (app (arrList u u.size []) cs)
        else false
      | _ => false

/-- `c` concludes in a class of the library for the library's types, its own
reducible definitions unfolded: an instance (declared, `local`, `scoped` or
a default one; active or not where it is read) that changes what the library's
notation means. -/
meta def libInstance (env0 env : Environment) (ci : ConstantInfo) : Option Name :=
  match classOf env ci with
  | some cls =>
    let t := ci.type.getUsedConstants
    if env0.contains cls && libOnly env0 env 10000 (arrList t t.size []) then some cls else none
  | none => none

/-- Flags on the constants reachable from `todo` through the file's own
declarations (types, and values of definitions): an instance the file
declared of a library class for library types (`OfNat Nat 2`, `Add Nat`),
and a file constant whose name ends in a library name (`Foo.Nat` read as
`Nat` inside `namespace Foo`). -/
meta def meaningWalk (env0 envU : Environment) : Nat → List Name → NameSet → List String → List String
  | 0, _, _, acc => "walk: out of fuel" :: acc
  | _, [], _, acc => acc
  | fuel + 1, c :: rest, seen, acc =>
    if seen.contains c || env0.contains c then meaningWalk env0 envU fuel rest seen acc
    else
      let seen := seen.insert c
      match envU.find? c with
      | none => meaningWalk env0 envU fuel rest seen acc
      | some ci =>
        let acc := match libInstance env0 envU ci with
          | some cls => ("instance " ++ nm (userName c) ++ " of " ++ nm cls) :: acc
          | none => acc
        let rec sh : List Name → List String → List String
          | [], a => a
          | s :: ss, a => if env0.contains s then ("shadow " ++ nm (userName c) ++ " " ++ nm s) :: a else sh ss a
        let acc := sh (suffixes c) acc
        let more := match ci with
          | .thmInfo _ => let t := ci.type.getUsedConstants; arrList t t.size []
          | _ => usedBy ci
        meaningWalk env0 envU fuel (app more rest) seen acc

meta def prefixAll (p : String) : List String → List String
  | [] => []
  | x :: xs => (p ++ x) :: prefixAll p xs

/-- The identifiers a text names (a binder's own name names no constant:
`(two : Nat)`, `∀ two, …`, `fun two => …` are left out), as written. -/
meta partial def textIdents (fuel : Nat) (stx : Syntax) (acc : List Name) : List Name :=
  match fuel with
  | 0 => acc
  | f + 1 => match stx with
    | .ident _ _ v _ => v :: acc
    | .node _ k args =>
      if k == `Lean.binderIdent || k == `Lean.Parser.Term.binderIdent then acc
      else
        let skip : Nat :=
          if k == `Lean.Parser.Term.explicitBinder || k == `Lean.Parser.Term.implicitBinder ||
              k == `Lean.Parser.Term.strictImplicitBinder || k == `Lean.Parser.Term.instBinder ||
              k == `Lean.Parser.Term.forall || k == `Lean.Parser.Term.depArrow then 1
          else if k == `Lean.Parser.Term.basicFun then 0
          else 1000000
        go f args skip args.size acc
    | _ => acc
where
  go (f : Nat) (args : Array Syntax) (skip : Nat) : Nat → List Name → List Name
    | 0, acc => acc
    | j + 1, acc =>
      let a := args.getD j .missing
      go f args skip j (if j == skip then binders f a acc else textIdents f a acc)
  binders (f : Nat) (a : Syntax) (acc : List Name) : List Name :=
    match a with
    | .ident .. => acc
    | .node _ k args => if k == nullKind then bs f args args.size acc else textIdents f a acc
    | _ => acc
  bs (f : Nat) (args : Array Syntax) : Nat → List Name → List Name
    | 0, acc => acc
    | j + 1, acc => match args.getD j .missing with
      | .ident .. => bs f args j acc
      | s => bs f args j (textIdents f s acc)

/-- The signatures (the statement's text) of the theorem-like declarations of a command. -/
meta partial def sigsOf : Nat → Syntax → List Syntax
  | 0, _ => []
  | f + 1, stx =>
    if stx.getKind == ``Lean.Parser.Command.declaration then
      let inner := stx.getArg 1
      if inner.getKind == ``Lean.Parser.Command.theorem || inner.getKind == ``Lean.Parser.Command.axiom then
        [inner.getArg 2]
      else if inner.getKind == ``Lean.Parser.Command.example then [inner.getArg 1]
      else []
    else
      let args := stx.getArgs
      let rec each : Nat → List Syntax → List Syntax
        | 0, acc => acc
        | j + 1, acc => each j (appX (sigsOf f (args.getD j .missing)) acc)
      each args.size []
where
  appX : List Syntax → List Syntax → List Syntax
    | [], ys => ys
    | x :: xs, ys => x :: appX xs ys

/-- The axioms a command declares (`axiom n : T`, also under `… in`): the
trusted statement of a checked theorem is one (`expected_text`). -/
meta partial def axiomsOf : Nat → Syntax → List (Name × String × Nat × Nat)
  | 0, _ => []
  | f + 1, stx =>
    if stx.getKind == ``Lean.Parser.Command.declaration then
      let inner := stx.getArg 1
      if inner.getKind == ``Lean.Parser.Command.axiom then [(((inner.getArg 1).getArg 0).getId, "axiom", 0, 0)]
      else []
    else if stx.getKind == ``Lean.Parser.Command.in then axiomsOf f (stx.getArg 2)
    else []

meta def idsOf : List Syntax → List Name
  | [] => []
  | s :: ss => app (textIdents 100000 s []) (idsOf ss)

meta def anyPart (c : Name) : List Name → Bool
  | [] => false
  | p :: ps => endsWith c p || anyPart c ps

/-- Whether the text names `c`: an identifier whose parts end `c`'s user name
(`Foo.t` written `t` inside `namespace Foo`), or one of whose parts is `c`'s
last (`e.fold.value` for `Tm.fold` and `Tm.value`: field notation). -/
meta def named (ids : List Name) (c : Name) : Bool :=
  match ids with
  | [] => false
  | w :: ws => (w != .anonymous && (endsWith c w || anyPart c (partsRev w))) || named ws c

meta def memLook (c : Name) : List (Name × Name × Bool) → Option (Name × Name × Bool)
  | [] => none
  | (w, sk, force) :: rest => if endsWith c w then some (w, sk, force) else memLook c rest

/-- `sk` or one of its proper suffixes is a constant of `env0` (`Foo.Nat`: `Nat`). -/
meta def libSuffix (env0 : Environment) (sk : Name) : Option Name :=
  if env0.contains sk then some sk
  else
    let rec go : List Name → Option Name
      | [] => none
      | s :: ss => if env0.contains s then some s else go ss
    go (suffixes sk)

meta def typeFormer (ci : ConstantInfo) : Bool :=
  match ci.type.getForallBody with
  | .sort _ => true
  | _ => false

/-- The file's constants that a statement reaches and its text does not show:
walked from the elaborated statement's constants, in `env` (the environment
the statement was elaborated in), into the values of reducible definitions
(`abbrev`, `@[reducible]`), never into a definition the user named (its
meaning is the file's own, as the file writes it) nor an instance's (an honest
instance's implementation; the others are `meaningWalk`'s). A function the text does not name (a coercion's, a unification
hint's, a default instance's) is flagged `hidden c`; a type inferred for a
variable, a constructor (`⟨1, 2⟩`), a projection, an auxiliary definition and
a class are not (the instances among them are `meaningWalk`'s). `looks`: the
text's identifiers confusable with a library name (`Νat`), with their
skeletons: `lookalike c lib`. -/
meta def hiddenWalk (env0 env : Environment) (ids : List Name) (looks : List (Name × Name × Bool)) :
    Nat → List Name → NameSet → List String → List String
  | 0, _, _, acc => "walk: out of fuel" :: acc
  | _, [], _, acc => acc
  | fuel + 1, c :: rest, seen, acc =>
    if seen.contains c || env0.contains c then hiddenWalk env0 env ids looks fuel rest seen acc
    else
      let seen := seen.insert c
      match env.find? c with
      | none => hiddenWalk env0 env ids looks fuel rest seen acc
      | some ci =>
        let acc := match memLook (userName c) looks with
          | some (_, sk, force) => match libSuffix env0 sk with
            | some lib => ("lookalike " ++ nm (userName c) ++ " " ++ nm lib) :: acc
            | none => if force then ("lookalike " ++ nm (userName c) ++ " " ++ nm sk) :: acc else acc
          | none => acc
        let inst := (classOf env ci).isSome
        let plain := match ci with
          | .ctorInfo _ => true
          | .recInfo _ => true
          | .inductInfo _ => true
          | _ => inst || typeFormer ci || c.isInternal || (env.getProjectionFnInfo? c).isSome ||
              Meta.isMatcherCore env c || isAuxRecursor env c || isNoConfusion env c
        let acc := if plain || named ids (userName c) then acc else ("hidden " ++ nm (userName c)) :: acc
        let more := if !inst && isReducible env c then
            match ci.value? (allowOpaque := false) with
            | some v => let u := v.getUsedConstants; arrList u u.size []
            | none => []
          else []
        hiddenWalk env0 env ids looks fuel (app more rest) seen acc

/-- The file constants a statement names directly, instances and internal
names aside (`file c`: marked in the printed statement). -/
meta def fileMarks (env0 env : Environment) : List Name → List String
  | [] => []
  | c :: cs =>
    if env0.contains c || c.isInternal then fileMarks env0 env cs
    else match env.find? c with
      | some ci => match classOf env ci with
        | some _ => fileMarks env0 env cs
        | none => ("file " ++ nm (userName c)) :: fileMarks env0 env cs
      | none => fileMarks env0 env cs

/-- What the statement of `n` (a constant of `env`, elaborated there from a
signature naming `ids`) means beyond its text: `meaningWalk`'s flags and
`hiddenWalk`'s, in the environment it was elaborated in (a `local` or
`scoped` instance, `open … in`, a section's `attribute [local instance]`). -/
meta def meaningAt (env0 env : Environment) (ids : List Name) (looks : List (Name × Name × Bool)) (n : Name) :
    List String :=
  match env.find? n with
  | some ci =>
    let t := ci.type.getUsedConstants
    let cs := arrList t t.size []
    appS (meaningWalk env0 env 100000 cs {} [])
      (appS (hiddenWalk env0 env ids looks 100000 cs {} []) (fileMarks env0 env cs))
  | none => []

/-! ## Elaborating a text with Lean's parser and command elaborator -/

meta partial def paList {α : Type} (fuel : Nat) : PersistentArrayNode α → List α → List α
  | .leaf vs, acc => arr vs vs.size acc
  | .node cs, acc => match fuel with
    | 0 => acc
    | f + 1 => nodes f cs cs.size acc
where
  arr (vs : Array α) : Nat → List α → List α
    | 0, acc => acc
    | k + 1, acc => match vs[k]? with
      | some v => arr vs k (v :: acc)
      | none => arr vs k acc
  nodes (f : Nat) (cs : Array (PersistentArrayNode α)) : Nat → List α → List α
    | 0, acc => acc
    | k + 1, acc => match cs[k]? with
      | some c => nodes f cs k (paList f c acc)
      | none => nodes f cs k acc

meta def paToList {α : Type} (a : PersistentArray α) : List α :=
  paList 64 a.root (paList.arr a.tail a.tail.size [])

meta def appTrees : List InfoTree → List InfoTree → List InfoTree
  | [], ys => ys
  | x :: xs, ys => x :: appTrees xs ys

/-- What a command of the elaborated text did, as this checker saw it. -/
structure CmdRec where
  news : List Name
  vars : Bool
  renames : List String
  metasBefore : List Name
  ranBefore : List String
  line : Nat
  endLine : Nat
  /-- theorem-like declarations: (written name, keyword, 0-based line, column of the keyword) -/
  thms : List (Name × String × Nat × Nat)
  /-- the namespace the command was elaborated in -/
  ns : Name := .anonymous
  /-- per theorem-like declaration (its constant): what its statement means beyond its text, computed
  in the environment it was elaborated in (`meaningAt`) -/
  meaning : List (Name × List String) := []

structure Loop where
  cmds : List CmdRec := []
  metas : List Name := []
  /-- meta-level constants whose code can run effects (elaborators, `IO`) -/
  effects : List Name := []
  ran : List String := []
  unsafeDecls : List Name := []
  exNames : List Name := []
  complete : Bool := false
  /-- every message of the text, in order (parse errors included) -/
  msgs : List Message := []
  /-- the info trees of its commands (when kept) -/
  trees : List InfoTree := []
  /-- the library's environment (with this checker): what `meaningAt` compares with -/
  lib : Option Environment := none
  /-- the text's identifiers confusable with a library name: (identifier, skeleton, always flag) -/
  looks : List (Name × Name × Bool) := []

meta def pos0 (fm : FileMap) (p : Option String.Pos.Raw) : Nat × Nat :=
  match p with
  | some q => let r := fm.toPosition q; (r.line - 1, r.column)
  | none => (0, 0)

/-- `example … := v` as `theorem <name> … := v` (Lean adds no constant for an
example: to be judged it needs a name); none for an example without a type. -/
meta def exampleAsTheorem (name : Name) (ex : Syntax) : Option Syntax :=
  let kw := ex.getArg 0
  let sig := ex.getArg 1
  let optType := sig.getArg 1
  if optType.getNumArgs == 0 then none
  else
    let declId := Syntax.node .none ``Lean.Parser.Command.declId #[mkIdentFrom kw name, Syntax.node .none nullKind #[]]
    let declSig := Syntax.node .none ``Lean.Parser.Command.declSig #[sig.getArg 0, optType.getArg 0]
    some (Syntax.node .none ``Lean.Parser.Command.theorem #[Syntax.atom kw.getHeadInfo "theorem", declId, declSig, ex.getArg 2])

meta def appT : List (Name × String × Nat × Nat) → List (Name × String × Nat × Nat) → List (Name × String × Nat × Nat)
  | [], ys => ys
  | x :: xs, ys => x :: appT xs ys

/-- The theorem-like declarations of a command (`theorem`, `example` renamed
`example_<line>`, inside `… in` and `mutual`), and the command with its
examples renamed. `used`: example names taken so far. -/
meta partial def theoremsOf (fm : FileMap) (env : Environment) (ns : Name) :
    Nat → Syntax → List Name → (Syntax × List (Name × String × Nat × Nat) × List Name)
  | 0, stx, used => (stx, [], used)
  | fuel + 1, stx, used =>
    let k := stx.getKind
    if k == ``Lean.Parser.Command.declaration then
      let inner := stx.getArg 1
      let ik := inner.getKind
      if ik == ``Lean.Parser.Command.theorem then
        let (l, c) := pos0 fm inner.getPos?
        (stx, [(((inner.getArg 1).getArg 0).getId, "theorem", l, c)], used)
      else if ik == ``Lean.Parser.Command.example then
        let (l, c) := pos0 fm inner.getPos?
        let base := Name.mkSimple ("example_" ++ toString (l + 1))
        let nm0 := if env.contains (ns ++ base) || mem base used then
          Name.mkSimple ("example_" ++ toString (l + 1) ++ "_" ++ toString c) else base
        match exampleAsTheorem nm0 inner with
        | some thm => (stx.setArg 1 thm, [(nm0, "example", l, c)], nm0 :: used)
        | none => (stx, [(nm0, "example", l, c)], used)
      else (stx, [], used)
    else if k == ``Lean.Parser.Command.in then
      let (inner, ts, used') := theoremsOf fm env ns fuel (stx.getArg 2) used
      (stx.setArg 2 inner, ts, used')
    else if k == ``Lean.Parser.Command.mutual then
      let cs := (stx.getArg 1).getArgs
      let rec each : Nat → List (Name × String × Nat × Nat) → List Name → List (Name × String × Nat × Nat) × List Name
        | 0, acc, u => (acc, u)
        | j + 1, acc, u =>
          let (_, ts, u') := theoremsOf fm env ns fuel (cs.getD j .missing) u
          each j (appT ts acc) u'
      let (ts, used') := each cs.size [] used
      (stx, ts, used')
    else
      -- Any other command that holds commands (`#guard_msgs in …`, a combinator
      -- the file declared): the theorem-like declarations inside it, in order.
      -- Listing one that is never declared is safe (it is judged `missing`).
      let args := stx.getArgs
      let rec walk : Nat → Syntax → List (Name × String × Nat × Nat) → List Name →
          (Syntax × List (Name × String × Nat × Nat) × List Name)
        | 0, s, acc, u => (s, acc, u)
        | k + 1, s, acc, u =>
          let j := args.size - (k + 1)
          let (a', ts, u') := theoremsOf fm env ns fuel (args.getD j .missing) u
          walk k (s.setArg j a') (appT acc ts) u'
      walk args.size stx [] used

meta def classify (env : Environment) (lp : Loop) : List Name → Loop
  | [] => lp
  | n :: ns =>
    match env.find? n with
    | none => classify env lp ns
    | some ci =>
      let lp := if isMetaType ci then { lp with metas := n :: lp.metas } else lp
      let lp := if isMetaType ci && !isPureSyntax ci then { lp with effects := n :: lp.effects } else lp
      let lp := if unsafeCode env n ci then { lp with unsafeDecls := n :: lp.unsafeDecls } else lp
      classify env lp ns

meta partial def commandKinds : Nat → Syntax → List String
  | 0, _ => []
  | fuel + 1, stx =>
    let k := stx.getKind
    if k == ``Lean.Parser.Command.in then appS (commandKinds fuel (stx.getArg 0)) (commandKinds fuel (stx.getArg 2))
    else if k == ``Lean.Parser.Command.mutual then
      let cs := (stx.getArg 1).getArgs
      let rec each : Nat → List String → List String
        | 0, acc => acc
        | j + 1, acc => each j (appS (commandKinds fuel (cs.getD j .missing)) acc)
      each cs.size []
    else if isPlain k || isSyntaxCommand k then [] else [nm k]

/-- The constant a theorem-like declaration added: the new constant of its
command whose user name is exactly the name Lean declares for it
(`declaredName`); never one picked by a suffix (a `where` helper `q.q`). -/
meta def resolve (d : Name) : List Name → Option Name
  | [] => none
  | c :: cs => if userName c == d then some c else resolve d cs

meta def meaningsOf (env0 env : Environment) (ids : List Name) (looks : List (Name × Name × Bool)) (ns : Name)
    (news : List Name) : List (Name × String × Nat × Nat) → List (Name × List String)
  | [] => []
  | (w, _, _, _) :: rest =>
    let more := meaningsOf env0 env ids looks ns news rest
    match resolve (declaredName ns w) news with
    | some n => (n, meaningAt env0 env ids looks n) :: more
    | none => more

/-- Parse and elaborate the commands of `inputCtx` one by one, with Lean's
own parser and command elaborator, recording what each did (`CmdRec`). -/
meta partial def elabLoop (inputCtx : Parser.InputContext) (ps : Parser.ModuleParserState) (lp : Loop) :
    CommandElabM Loop := do
  let st ← get
  let sc : Scope := match st.scopes with
    | s :: _ => s
    | [] => { header := "" }
  let pmctx : Parser.ParserModuleContext :=
    { env := st.env, options := sc.opts, currNamespace := sc.currNamespace, openDecls := sc.openDecls }
  let (cmd, ps', msgs') := Parser.parseCommand inputCtx pmctx ps {}
  let lp := { lp with msgs := appMsgs lp.msgs msgs'.toList }
  if Parser.isTerminalCommand cmd then
    return { lp with complete := cmd.getKind == ``Lean.Parser.Command.eoi }
  let (cmd', thms, exNames) := theoremsOf inputCtx.fileMap st.env sc.currNamespace 64 cmd lp.exNames
  let (l, _) := pos0 inputCtx.fileMap cmd.getPos?
  let (el, _) := pos0 inputCtx.fileMap cmd.getTailPos?
  let before := st.env
  elabCommandTopLevel cmd'
  let stA ← get
  let after := stA.env
  let lp := { lp with msgs := appMsgs lp.msgs stA.messages.toList,
                      trees := appTrees (paToList stA.infoState.trees) lp.trees }
  let news := newNames before after
  let judged := appT thms (axiomsOf 64 cmd')
  let meaning := match lp.lib, judged with
    | _, [] => []
    | none, _ => []
    | some env0, _ => meaningsOf env0 after (idsOf (sigsOf 64 cmd')) lp.looks sc.currNamespace news judged
  let rec_ : CmdRec := { news, vars := sc.varDecls.size != 0, renames := renamings sc.openDecls,
                         metasBefore := lp.metas, ranBefore := lp.ran, line := l, endLine := el, thms,
                         ns := sc.currNamespace, meaning }
  let lp := classify after { lp with cmds := rec_ :: lp.cmds, exNames } news
  let lp := { lp with ran := appS (commandKinds 64 cmd) lp.ran }
  elabLoop inputCtx ps' lp

/-- Elaborate `text` as commands after the state `st` (its messages dropped),
with this command's own elaborator, as a file named `fileName` would be; the
outer state is restored after. `infoTrees`: keep Lean's info trees (for the
goals at positions). -/
meta def runC (st : Command.State) (fileName text : String) (lp : Loop) (infoTrees : Bool := false) :
    CommandElabM (Command.State × Loop) := do
  let saved ← get
  set { st with messages := {}, infoState := { st.infoState with enabled := infoTrees, trees := {} } }
  let inputCtx : Parser.InputContext := Parser.InputContext.mk text fileName
  let inner (ctx : Context) : Context :=
    { ctx with fileName, fileMap := inputCtx.fileMap, snap? := none, cancelTk? := none, ref := .missing,
               macroStack := [], cmdPos := 0 }
  let lp' ← withReader inner (elabLoop inputCtx {} { lp with cmds := [], complete := false, msgs := [], trees := [] })
  let out ← get
  set saved
  let rec add : MessageLog → List Message → MessageLog
    | log, [] => log
    | log, m :: ms => add (log.add m) ms
  return ({ out with messages := add {} lp'.msgs }, lp')

/-! ## The kernel replay -/

/-- Where the replay stops: the constants of `base` (the library, and with a
trusted preamble the preamble's environment too). -/
meta def keepNew (known : Name → Bool) (acc : List Name) (self : Name) : List Name → List Name
  | [] => []
  | d :: ds => if known d || mem d acc || d == self then keepNew known acc self ds
    else d :: keepNew known acc self ds

/-- The constructors of every inductive type of a block. -/
meta def blockCtors (envU : Environment) : List Name → List Name
  | [] => []
  | i :: is => match envU.find? i with
    | some (.inductInfo w) => app w.ctors (blockCtors envU is)
    | _ => blockCtors envU is

/-- What the constructors `cs` mention in their types, less the block's own
types and constructors `own`: an inductive depends on them (a predicate whose
constructor takes a proof of another predicate needs that one first). -/
meta def ctorUses (envU : Environment) (own : List Name) : List Name → List Name
  | [] => []
  | c :: cs => match envU.find? c with
    | some ci => let a := ci.type.getUsedConstants
      app (dropOwn own (arrList a a.size [])) (ctorUses envU own cs)
    | none => ctorUses envU own cs

/-- What the constant `ci` needs before it: the constants of its type and
value, and for an inductive those of its block's constructors' types. -/
meta def needs (envU : Environment) (ci : ConstantInfo) : List Name :=
  match ci with
  | .inductInfo v =>
    let cs := blockCtors envU v.all
    app (usedBy ci) (ctorUses envU (app v.all cs) cs)
  | _ => usedBy ci

/-- Constants of `envU` reachable from `todo` that are not `known` (the
library's, or already replayed), dependencies first. -/
meta def closure (envU : Environment) (known : Name → Bool) : Nat → List Name → List Name →
    Except String (List Name)
  | 0, _, _ => .error "declaration graph too large"
  | _, [], acc => .ok acc
  | fuel + 1, n :: rest, acc =>
    if known n || mem n acc then closure envU known fuel rest acc
    else match envU.find? n with
      | none => .error s!"unknown constant {nm (userName n)}"
      | some ci =>
        match keepNew known acc n (needs envU ci) with
        | [] => closure envU known fuel rest (app acc [n])
        | deps => closure envU known fuel (app deps (n :: rest)) acc

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
  | .error _ => .error s!"the kernel rejects {nm (userName what)}"

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
      | some (.ctorInfo w) => if v == w then replayAll envU ns k
        else .error s!"constructor {nm (userName n)} differs from the kernel's"
      | _ => .error s!"constructor {nm (userName n)} has no inductive"
    | some (.recInfo v) => match k.find? n with
      | some (.recInfo w) => if v == w then replayAll envU ns k
        else .error s!"recursor {nm (userName n)} differs from the kernel's"
      | _ => .error s!"recursor {nm (userName n)} has no inductive"
    | some (.quotInfo _) => .error "a quotient declaration"
    | none => .error s!"unknown constant {nm (userName n)}"

/-- The leaves of the constants reachable from `todo` in `k`: axioms (L: not
from the library, I: from the library's modules), unsafe constants (U) and
names the kernel lacks (N); "F" when the walk ran out of fuel. The walk does
not enter the library's own definitions (the library is trusted: nothing of
it depends on `sorryAx` or native evaluation), only what the text added. -/
meta def leaves (lib : Environment) (k : Kernel.Environment) :
    Nat → List Name → NameSet → List String → List String
  | 0, _, _, acc => "F:fuel" :: acc
  | _, [], _, acc => acc
  | fuel + 1, n :: rest, seen, acc =>
    if seen.contains n then leaves lib k fuel rest seen acc
    else
      let seen' := seen.insert n
      let imported := (lib.getModuleIdxFor? n).isSome
      let loc := if imported then "I" else "L"
      match k.find? n with
      | none => leaves lib k fuel rest seen' (("N:" ++ nm n) :: acc)
      | some ci =>
        if ci.isUnsafe then leaves lib k fuel rest seen' (("U:" ++ nm n) :: acc)
        else match ci with
          | .axiomInfo _ => leaves lib k fuel rest seen' ((loc ++ ":" ++ nm n) :: acc)
          | _ => if imported then leaves lib k fuel rest seen' acc
                 else leaves lib k fuel (app (usedBy ci) rest) seen' acc

/-! ## The premise rule of a theorem posed in a library module (`Theorem.module`) -/

/-- The direct imports of module `m` in `env`'s header (Lean's own data). -/
meta def importsOf (env : Environment) (m : Name) : List Name :=
  match env.getModuleIdx? m with
  | some i =>
    let ds := env.header.moduleData
    if h : i.toNat < ds.size then
      let imps := ds[i.toNat].imports
      let rec go : Nat → List Name → List Name
        | 0, acc => acc
        | k + 1, acc => go k ((imps.getD k { module := .anonymous }).module :: acc)
      go imps.size []
    else []
  | none => []

/-- The modules reachable from `todo` by imports, added to `s`. -/
meta def closeImports (env : Environment) : Nat → List Name → NameSet → NameSet
  | 0, _, s => s
  | _, [], s => s
  | fuel + 1, m :: rest, s =>
    if s.contains m then closeImports env fuel rest s
    else closeImports env fuel (app (importsOf env m) rest) (s.insert m)

/-- The modules a theorem posed in library module `m` may use: those `m`
imports, transitively (never `m` itself nor anything after it); none when `m`
is not a module of the environment. -/
meta def allowedModules (env : Environment) (m : Name) : Option NameSet :=
  match env.getModuleIdx? m with
  | some _ => some (closeImports env 1000000 (importsOf env m) {})
  | none => none

meta def moduleOf (env : Environment) (c : Name) : Name :=
  match env.getModuleIdxFor? c with
  | some i => env.header.moduleNames.getD i.toNat .anonymous
  | none => .anonymous

/-- Library constants that the declarations `ns` of `envU` use directly and
that live outside the modules `allowed`, as `name (module)`. -/
meta def outside (envU lib : Environment) (allowed : NameSet) : List Name → List String
  | [] => []
  | c :: cs =>
    let rest := outside envU lib allowed cs
    match envU.find? c with
    | none => rest
    | some ci =>
      let rec bad : List Name → List String
        | [] => rest
        | d :: ds =>
          if (lib.getModuleIdxFor? d).isSome && !allowed.contains (moduleOf lib d) then
            (nm d ++ " (" ++ nm (moduleOf lib d) ++ ")") :: bad ds
          else bad ds
      bad (usedBy ci)

meta def lookupMeaning (n : Name) : List (Name × List String) → Option (List String)
  | [] => none
  | (m, fs) :: rest => if m == n then some fs else lookupMeaning n rest

meta def findRec (n : Name) : List CmdRec → Option CmdRec
  | [] => none
  | r :: rs => if mem n r.news then some r else findRec n rs

/-- Everything that makes `n`'s statement mean more than its text, as the
checker's flags: the scope its command was elaborated in (`variable`s,
`open … renaming`), meta code the file declared or commands that ran code
before it, and what its elaborated type reaches (`meaningWalk`). -/
meta def flagsOf (env0 envU : Environment) (recs : List CmdRec) (n : Name) : List String :=
  let scope := match findRec n recs with
    | some r =>
      let v := if r.vars then ["variables"] else []
      let rn := prefixAll "renaming " r.renames
      let ms := match r.metasBefore with
        | [] => []
        | ms => ["meta " ++ joinNames (revN ms [])]
      let cs := match r.ranBefore with
        | [] => []
        | cs => ["code " ++ joinS (dedupS cs [])]
      appS v (appS rn (appS ms cs))
    | none => []
  let atEnd := match envU.find? n with
    | some ci => let t := ci.type.getUsedConstants; meaningWalk env0 envU 100000 (arrList t t.size []) {} []
    | none => []
  let walk := match findRec n recs with
    | some r => match lookupMeaning n r.meaning with
      | some fs => fs
      | none => atEnd
    | none => atEnd
  appS scope (dedupS walk [])

/-! ## The judge -/

meta def msgFields : List Message → IO (List String)
  | [] => pure []
  | m :: ms => do
    let sev := match m.severity with | .error => "error" | .warning => "warning" | .information => "info"
    let txt ← m.data.toString
    let rest ← msgFields ms
    let e := match m.endPos with | some p => p | none => m.pos
    return "M" :: sev :: toString (m.pos.line - 1) :: toString m.pos.column :: toString (e.line - 1) ::
      toString e.column :: txt :: rest

meta def anyError : List Message → Bool
  | [] => false
  | m :: ms => m.severity == .error || anyError ms

structure Ctx where
  env0 : Environment
  envU : Environment
  base : Environment
  k0 : Kernel.Environment
  envT? : Option Environment
  allowed? : Option NameSet

/-- The verdict on the declaration `n` of `envU`: replayed through the kernel
with every constant it needs that `base` lacks (preamble included, unless the
preamble is trusted), its type compared with the trusted `expected`
declaration's, the premise rule, and the leaves of its axioms. -/
meta def judgeOne (c : Ctx) (kAcc : Kernel.Environment) (idx : Nat) (n : Name) :
    List String × Option Kernel.Environment :=
  let out (status : String) (ls : List String) :=
    ("D" :: toString idx :: status :: toString (lenS ls) :: ls, none)
  match c.envU.find? n with
  | none => out "missing" []
  | some _ =>
    match closure c.envU (fun d => c.base.contains d || (kAcc.find? d).isSome) 100000 [n] [] with
    | .error e => out "closure" [e]
    | .ok ns => match replayAll c.envU ns kAcc with
      | .error e => out "kernel" [e]
      | .ok k => match k.find? n with
        | some (.thmInfo v) =>
          let typeOk := match c.envT? with
            | none => true
            | some envT => match envT.find? n with
              | some ci => ci.type == v.type && ci.levelParams == v.levelParams
              | none => false
          if !typeOk then out "type_differs" []
          else match c.allowed? with
            | some allowed => match dedupS (outside c.envU c.env0 allowed ns) [] with
              | [] => out "ok" (leaves c.env0 k 1000000 [n] {} [])
              | bad => out "premise" bad
            | none => let ls := leaves c.env0 k 1000000 [n] {} []
              ("D" :: toString idx :: "ok" :: toString (lenS ls) :: ls, some k)
        | _ => out "not_theorem" []

meta def flagFields (idx : Nat) : List String → List String
  | [] => []
  | t :: ts => "W" :: toString idx :: t :: flagFields idx ts

/-- Every judged name's verdict and flags. What the kernel accepted for one
theorem (it and what it needs) is kept for the next: each declaration of the
file is replayed once, not once per theorem that needs it (never with a
premise rule, whose check reads each theorem's own replay list). -/
meta def judgeAll (c : Ctx) (recs : List CmdRec) (kAcc : Kernel.Environment) : Nat → List Name → List String
  | _, [] => []
  | i, n :: ns =>
    let (ds, k?) := judgeOne c kAcc i n
    let next := match k? with
      | some k => k
      | none => kAcc
    appS ds (appS (flagFields i (flagsOf c.env0 c.envU recs n)) (judgeAll c recs next (i + 1) ns))

/-- A confusable identifier of the text, sent as the name
`_burnqed_look.«1».«Νat».«::».«Nat»` (always flag, identifier parts, `::`,
skeleton parts): none for any other name. -/
meta def lookOf (n : Name) : Option (Name × Name × Bool) :=
  match revN (partsRev n) [] with
  | .str _ "_burnqed_look" :: .str _ force :: rest =>
    let rec split : List Name → List Name → Option (List Name × List Name)
      | [], _ => none
      | .str _ "::" :: sk, acc => some (revN acc [], sk)
      | p :: ps, acc => split ps (p :: acc)
    match split rest [] with
    | some (w, sk) => some (ofParts w .anonymous, ofParts sk .anonymous, force == "1")
    | none => none
  | _ => none

meta def looksOf : List Name → List (Name × Name × Bool)
  | [] => []
  | n :: ns => match lookOf n with
    | some l => l :: looksOf ns
    | none => looksOf ns

meta def notLooks : List Name → List Name
  | [] => []
  | n :: ns => match lookOf n with
    | some _ => notLooks ns
    | none => n :: notLooks ns

meta def qualifyAll (ns : Name) : List Name → List Name
  | [] => []
  | n :: rest => qualify ns n :: qualifyAll ns rest

meta def spaceOf (st : Command.State) : Name :=
  match st.scopes with
  | sc :: _ => sc.currNamespace
  | [] => .anonymous

/-- The theorem-like declarations of the text, in order: (constant or the
written name, `T` fields). -/
meta partial def listed (envU : Environment) (ns : Name) : List CmdRec → List (Name × List String)
  | [] => []
  | r :: rs =>
    let rec each : List (Name × String × Nat × Nat) → List (Name × List String)
      | [] => listed envU ns rs
      | (w, kind, l, c) :: more =>
        let d := declaredName r.ns w
        let (n, found) := match resolve d r.news with
          | some n => (n, "1")
          | none => (d, "0")
        (n, [nm (userName n), kind, found, toString l, toString c, toString r.line, toString r.endLine]) :: each more
    each r.thms

/-- `m` printed as Lean prints messages, in the environment `env` with the
metavariables of `mctx` (no `MetaM` run: the exported-level library lacks the
helpers that lifting needs here). -/
meta def ppIn (env : Environment) (opts : Options) (mctx : MetavarContext) (m : MessageData) : IO String :=
  (MessageData.withContext { env, mctx, lctx := {}, opts } m).toString

/-- Whether `e` holds a numeral of a type other than `Nat` (`(1 : Νat)`): its
statement is then printed with every numeral's type. -/
meta def oddNumeral : Nat → Expr → Bool
  | 0, _ => false
  | f + 1, .app g a =>
    let here := match g with
      | .app (.app (.const c _) ty) _ => c == ``OfNat.ofNat && !(ty.isConstOf ``Nat)
      | _ => false
    here || oddNumeral f g || oddNumeral f a
  | f + 1, .lam _ t b _ => oddNumeral f t || oddNumeral f b
  | f + 1, .forallE _ t b _ => oddNumeral f t || oddNumeral f b
  | f + 1, .letE _ t v b _ => oddNumeral f t || oddNumeral f v || oddNumeral f b
  | f + 1, .mdata _ b => oddNumeral f b
  | f + 1, .proj _ _ b => oddNumeral f b
  | _, _ => false

/-- The type of `n` (a constant of `env`) as Lean prints it in `printEnv`:
the file's environment, or the library's alone when the file declared meta
code (its notations and unexpanders could print a statement as another). -/
meta def ppType (env printEnv : Environment) (opts : Options) (n : Name) : CommandElabM String := do
  match env.find? n with
  | none => return ""
  | some ci =>
    let opts := if oddNumeral 100000 ci.type then opts.setBool `pp.numericTypes true else opts
    liftIO <| ppIn printEnv opts {} (.ofExpr ci.type)

meta def typeFields (env printEnv : Environment) (opts : Options) : Nat → List (Name × List String) →
    CommandElabM (List String)
  | _, [] => pure []
  | i, (n, fs) :: rest => do
    let t ← ppType env printEnv opts n
    let more ← typeFields env printEnv opts (i + 1) rest
    return appS ("T" :: toString i :: appS fs [t]) more

/-! ## Goals at positions (the states of a checked proof, from its own run) -/

/-- The outermost tactic whose syntax starts at `pos`, with its context. -/
meta def findTac (pos : String.Pos.Raw) : Nat → Option ContextInfo → List InfoTree →
    Option (ContextInfo × TacticInfo)
  | 0, _, _ => none
  | _, _, [] => none
  | fuel + 1, ctx?, t :: ts =>
    let here : Option (ContextInfo × TacticInfo) := match t with
      | .context pci t' => findTac pos fuel (pci.mergeIntoOuter? ctx?) [t']
      | .node (.ofTacticInfo ti) cs =>
        if ti.stx.getPos? == some pos then
          match ctx? with
          | some c => some (c, ti)
          | none => none
        else findTac pos fuel ctx? (paToList cs)
      | .node _ cs => findTac pos fuel ctx? (paToList cs)
      | .hole _ => none
    match here with
    | some r => some r
    | none => findTac pos fuel ctx? ts

meta def ppGoals (env : Environment) (opts : Options) (mctx : MetavarContext) : List MVarId → IO (List String)
  | [] => pure []
  | g :: gs => do
    let s ← ppIn env opts mctx (.ofGoal g)
    let rest ← ppGoals env opts mctx gs
    return s :: rest

meta def stateFields (fm : FileMap) (opts : Options) (trees : List InfoTree) : Nat → List (Nat × Nat) →
    IO (List String)
  | _, [] => pure []
  | i, (l, c) :: rest => do
    let pos := fm.ofPosition ⟨l + 1, c⟩
    let here ← match findTac pos 1000000 none trees with
      | some (ci, ti) => do
        let gs ← ppGoals ci.env opts ti.mctxBefore ti.goalsBefore
        pure ("S" :: toString i :: toString (lenS gs) :: gs)
      | none => pure ["S", toString i, "none"]
    let more ← stateFields fm opts trees (i + 1) rest
    return appS here more

/-! ## The preamble cache: a preamble elaborated and replayed once per worker

A file's shared preamble (its definitions) is the same text in every request
about its theorems (each final check, each search start's audit, each chunk of
`lean check`). Its elaboration (`sP`, `lpP`) and the kernel replay of its
declarations onto the library (`replay`) are values: the first request keeps
them, and a later request with the same preamble, in the same checker
environment (the same object: the document's unchanged header), starts from
them. Nothing is shared that a request could change (environments and states
are immutable values), so a hit gives the verdicts a fresh run gives.

Lean runs no `initialize` in a document, and a constant's value is computed
afresh at each evaluation, so the store lives where Lean keeps values for the
process: `burnqed_store_init` (run once, in the header, at the worker's start)
adds a linter that holds it. The linter does nothing but answer a probe
(syntax that no text can produce, `probe`); `findStore` asks it. A preamble that ran code, declared meta code or failed
is not kept. At most `storeSize` preambles are kept, the most recent first. -/

meta def addInfo (text : String) : CommandElabM Unit := do
  let ctx ← read
  let msg : Message := { fileName := ctx.fileName, pos := ⟨1, 0⟩, severity := .information, data := .ofFormat (.text text) }
  modify fun st => { st with messages := st.messages.add msg }

structure PreEntry where
  env0 : Environment
  key : String
  sP : Command.State
  lpP : Loop
  /-- every declaration of the preamble replayed through the kernel onto the library's (`k0`), or why not -/
  replay : Except String Kernel.Environment

structure Store where
  entries : IO.Ref (List PreEntry)
  hits : IO.Ref Nat
deriving Nonempty

meta def storeSize : Nat := 32
meta def storeName : Name := `BurnqedJudge.preambleStore
meta def probeKind : SyntaxNodeKind := `BurnqedJudge.preambleStoreProbe

meta unsafe def toTreeImpl (s : Store) : Language.SnapshotTree := unsafeCast s
@[implemented_by toTreeImpl] meta opaque toTree : Store → Language.SnapshotTree
meta unsafe def ofTreeImpl (t : Language.SnapshotTree) : Store := unsafeCast t
@[implemented_by ofTreeImpl] meta opaque ofTree : Language.SnapshotTree → Store
meta unsafe def sameEnvImpl (a b : Environment) : Bool := ptrAddrUnsafe a == ptrAddrUnsafe b
/-- The same object (not merely an equal environment). -/
@[implemented_by sameEnvImpl] meta opaque sameEnv : Environment → Environment → Bool

/-- The probe: a node of `probeKind` whose one atom has synthetic positions that end before they start.
Lean's parser gives every atom of a text its original positions, and a linter sees only the commands a
parser produced, so no text can make one. -/
meta def probe : Syntax :=
  .node .none probeKind #[.atom (.synthetic ⟨7⟩ ⟨3⟩) "burnqed"]

meta def probeOk (stx : Syntax) : Bool :=
  stx.getKind == probeKind && match stx.getArg 0 with
    | .atom (.synthetic p q _) t => p.byteIdx == 7 && q.byteIdx == 3 && t == "burnqed"
    | _ => false

/-- The linter that holds the store: silent on every command; on the probe it adds the store to the
state's snapshot tasks (a field that `runLinters` restores after every linter, and that the caller
restores at once). -/
meta def storeLinter (s : Store) : Linter where
  name := storeName
  run := fun stx => if probeOk stx then
      modify fun st => { st with snapshotTasks := st.snapshotTasks.push ⟨none, .skip, none, Task.pure (toTree s)⟩ }
    else pure ()

meta def lastTask : List (Language.SnapshotTask Language.SnapshotTree) → Option Language.SnapshotTree
  | [] => none
  | [t] => some t.task.get
  | _ :: ts => lastTask ts

/-- The store, from the first linter that holds one (none before `burnqed_store_init`, e.g. in a
Pantograph run that elaborates the checker per request). -/
meta def findStore : List Linter → CommandElabM (Option Store)
  | [] => pure none
  | l :: ls => if l.name == storeName then do
      let saved := (← get).snapshotTasks
      l.run probe
      let tasks := (← get).snapshotTasks
      modify fun st => { st with snapshotTasks := saved }
      if tasks.size == saved.size + 1 then
        pure (match lastTask tasks.toList with
          | some t => some (ofTree t)
          | none => none)
      else pure none
    else findStore ls

meta def findEntry (env0 : Environment) (key : String) : List PreEntry → Option PreEntry
  | [] => none
  | e :: es => if sameEnv e.env0 env0 && e.key == key then some e else findEntry env0 key es

/-- `es` without `key`'s entry, at most `k` of them. -/
meta def keepOthers (key : String) : Nat → List PreEntry → List PreEntry
  | 0, _ => []
  | _, [] => []
  | k + 1, e :: es => if e.key == key then keepOthers key (k + 1) es else e :: keepOthers key k es

meta def namesS : List Name → List String
  | [] => []
  | n :: ns => nm n :: namesS ns

meta def lookNames : List Name → List Name
  | [] => []
  | n :: ns => match lookOf n with
    | some _ => n :: lookNames ns
    | none => lookNames ns

/-- Every declaration of the preamble's environment `sP` replayed through the kernel onto `k0` (what
`base`, the library's environment, lacks): the kernel environment, or why not. -/
meta def replayPreamble (env0 base : Environment) (sP : Environment) (k0 : Kernel.Environment) :
    Except String Kernel.Environment :=
  match closure sP (fun d => base.contains d) 1000000 (newNames env0 sP) [] with
  | .error e => .error e
  | .ok ns => replayAll sP ns k0

syntax (name := storeInitCmd) "burnqed_store_init" : command

/-- `burnqed_store_init`: the preamble store of this process, made once (the header runs it when the
worker starts; a second run finds the first store). -/
@[command_elab storeInitCmd] public meta def elabStoreInit : CommandElab := fun _ => do
  match ← findStore (← lintersRef.get).toList with
  | some _ => pure ()
  | none => do
    let entries ← IO.mkRef ([] : List PreEntry)
    let hits ← IO.mkRef 0
    addLinter (storeLinter { entries, hits })

syntax (name := storeStatsCmd) "burnqed_store_stats " str : command

meta def lenE : List PreEntry → Nat
  | [] => 0
  | _ :: es => lenE es + 1

/-- `burnqed_store_stats "nonce"`: how many preambles the store keeps and how many requests it has
answered, answered like `burnqed_judge` (`none` without a store). -/
@[command_elab storeStatsCmd] public meta def elabStoreStats : CommandElab := fun stx => do
  let nonce := ((stx.getArg 1).isStrLit?).getD ""
  let fields ← match ← findStore (← lintersRef.get).toList with
    | some s => do
      let es ← s.entries.get
      pure [toString (lenE es), toString (← s.hits.get)]
    | none => pure ["none"]
  addInfo (nonce ++ nets (appS ("v2" :: fields) ["end"]))

meta def isNilS : List String → Bool
  | [] => true
  | _ => false

meta def isNilN : List Name → Bool
  | [] => true
  | _ => false

/-- The preamble's state: from the store when this process elaborated the same preamble in the same
checker environment before, else elaborated now (and kept, with its replay, when it is clean). -/
meta def preambleState (env0 : Environment) (st0 : Command.State) (fileName trust preamble : String)
    (names0 : List Name) (doc : Bool := false) :
    CommandElabM (Command.State × Loop × Option (Except String Kernel.Environment)) := do
  let store? ← findStore (← lintersRef.get).toList
  -- A search document's preamble (`doc`) keeps the document's options (parallel elaboration) and needs no
  -- replay: kept apart from the judge's.
  -- Netstrings: no two (trust, file, preamble, look-alike names) give one key, whatever their text holds.
  let key := nets ((if doc then "doc" else trust) :: fileName :: preamble :: namesS (lookNames names0))
  let hit? ← match store? with
    | some s => pure (findEntry env0 key (← s.entries.get))
    | none => pure none
  match hit?, store? with
  | some e, some s => do
    s.hits.modify (· + 1)
    s.entries.modify fun es => e :: keepOthers key (storeSize - 1) es
    return (e.sP, e.lpP, some e.replay)
  | _, _ => do
    let (sS, _) ← runC st0 fileName "@[expose] public section\n" {}
    let (sP, lpP) ← runC sS fileName preamble { lib := some env0, looks := looksOf names0 }
    let clean := !preamble.isEmpty && !anyError sP.messages.toList && isNilS lpP.ran && isNilN lpP.effects &&
      isNilN lpP.unsafeDecls
    match store?, clean with
    | some s, true => do
      let base := if trust == "trusted" then sP.env else env0
      let replay := if doc then .error "a document's preamble is not replayed"
        else replayPreamble env0 base sP.env base.toKernelEnv
      s.entries.modify fun es => { env0, key, sP, lpP, replay } :: keepOthers key (storeSize - 1) es
      return (sP, lpP, some replay)
    | _, _ => return (sP, lpP, none)

meta def firstError : List Message → Option Message
  | [] => none
  | m :: ms => if m.severity == .error then some m else firstError ms

syntax (name := preambleCmd) "burnqed_preamble " str : command

/-- `burnqed_preamble "text"`: the rest of a search document reads as if `text` stood here. The text is
elaborated by this checker's loop (as a judged preamble is), or its state is taken from the store when this
process has elaborated it before, and that state becomes the document's: a search's documents, one after
another with judge requests between them, never elaborate a file's definitions again. An error of the text
is reported at this command, as Lean words it. The documents of a search are not a verdict (its proofs are
judged again by `burnqed_judge`); this only spares the time. -/
@[command_elab preambleCmd] public meta def elabPreamble : CommandElab := fun stx => do
  let text := ((stx.getArg 1).isStrLit?).getD ""
  let env0 ← getEnv
  let ctx ← read
  let opts0 := match (← get).scopes with
    | sc :: _ => sc.opts
    | [] => {}
  let st0 := Command.mkState env0 {} opts0
  let (sP, _, _) ← preambleState env0 st0 ctx.fileName "replay" text [] (doc := true)
  match firstError sP.messages.toList with
  | some m => do
    let txt ← liftIO m.data.toString
    let pos := ctx.fileMap.toPosition (stx.getPos?.getD 0)
    let msg : Message := { fileName := ctx.fileName, pos, severity := .error, data := .ofFormat (.text txt) }
    modify fun st => { st with messages := st.messages.add msg }
  | none =>
    let cur ← get
    set { sP with messages := cur.messages, infoState := cur.infoState, traceState := cur.traceState,
                  snapshotTasks := cur.snapshotTasks }

/-- The verdict on `candidate`, elaborated after `preamble` (both untrusted
unless `trust` is "trusted": a preamble of the package's own sets, by hash),
as one message: the nonce, then netstrings. `mode`: "names" judges `names`
(qualified by the preamble's namespace); "list" judges every theorem-like
declaration of the candidate, listed with its range and elaborated type
(`T`); "audit" replays every declaration of the preamble and reports what
makes `expected`'s statement mean more than its text. -/
meta def judge (env0 : Environment) (fileName : String) (opts0 : Options)
    (nonce mode trust module preamble expected candidate : String)
    (positions : List (Nat × Nat)) (names0 : List Name) : CommandElabM String := do
  let names := notLooks names0
  let opts : Options := opts0.setBool `Elab.async false
  let st0 := Command.mkState env0 {} opts
  -- The worker's document is a `module` (for `meta import`): public and
  -- exposed by default, so that names and unfolding are those of a plain file.
  let (sP, lpP, replay?) ← preambleState env0 st0 fileName trust preamble names0
  let pMsgs ← liftIO <| msgFields sP.messages.toList
  if anyError sP.messages.toList then
    return nonce ++ nets (appS ("v2" :: "P" :: pMsgs) ["end"])
  let allowed? := if module.isEmpty then none else allowedModules env0 module.toName
  if !module.isEmpty && allowed?.isNone then
    return nonce ++ nets ["v2", "U", module, "end"]
  let (envT?, lpT) ← if expected.isEmpty then pure (none, lpP) else do
    let (sT, lpT) ← runC sP fileName expected lpP
    pure (if anyError sT.messages.toList then none else some sT.env, lpT)
  if !expected.isEmpty && envT?.isNone then
    return nonce ++ nets ["v2", "E", "end"]
  let trusted := trust == "trusted"
  let base := if trusted then sP.env else env0
  let k0 := base.toKernelEnv
  let codeFlags (lp : Loop) : List String :=
    appS (match lp.ran with | [] => [] | cs => ["R", "commands " ++ joinS (dedupS cs [])])
      (appS (match lp.effects with | [] => [] | ms => ["R", "meta " ++ joinNames ms])
        (match lp.unsafeDecls with | [] => [] | us => ["Z", joinNames us]))
  if mode == "audit" || mode == "meaning" then
    -- "meaning": the statement's flags alone (its preamble's replay is audited once per preamble, "audit")
    let replay := if mode != "audit" then [] else
      match (match replay? with
        | some r => r
        | none => replayPreamble env0 base sP.env k0) with
      | .error e => ["A", e]
      | .ok _ => []
    let flags := match envT? with
      | some envT => flagFields 0 (flagsOf env0 envT lpT.cmds `burnqed_checked)
      | none => []
    return nonce ++ nets (appS ("v2" :: "X" :: (if lpP.complete then "1" else "0") :: replay)
      (appS flags (appS (codeFlags lpP) ["end"])))
  let (sU, lpU) ← runC sP fileName candidate { lpP with cmds := [] } (infoTrees := match positions with
    | [] => false
    | _ => true)
  let c : Ctx := { env0, envU := sU.env, base, k0, envT?, allowed? }
  let recs := appCmd lpU.cmds lpP.cmds
  -- The preamble's declarations replayed once (kept with it): no theorem replays them again. Not with a
  -- premise rule, whose check reads each theorem's own replay list.
  let kStart := match replay?, allowed? with
    | some (.ok k), none => k
    | _, _ => k0
  let (ds, ts) ← if mode == "list" then do
      let ls := listed sU.env (spaceOf sP) (revCmd lpU.cmds [])
      let printEnv := match lpU.metas with
        | [] => sU.env
        | _ => env0
      let ts ← typeFields sU.env printEnv opts 0 ls
      pure (judgeAll c recs kStart 0 (firsts ls), ts)
    else pure (judgeAll c recs kStart 0 (qualifyAll (spaceOf sP) names), [])
  let fm := (Parser.InputContext.mk candidate fileName).fileMap
  let ss ← match positions with
    | [] => pure []
    | _ => liftIO (stateFields fm opts lpU.trees 0 positions)
  let ms ← liftIO <| msgFields sU.messages.toList
  return nonce ++ nets (appS ("v2" :: "X" :: (if lpU.complete then "1" else "0") :: ts)
    (appS ds (appS ss (appS (codeFlags lpU) (appS ms ["end"])))))
where
  firsts : List (Name × List String) → List Name
    | [] => []
    | (n, _) :: rest => n :: firsts rest
  appCmd : List CmdRec → List CmdRec → List CmdRec
    | [], ys => ys
    | x :: xs, ys => x :: appCmd xs ys
  revCmd : List CmdRec → List CmdRec → List CmdRec
    | [], acc => acc
    | x :: xs, acc => revCmd xs (x :: acc)

syntax (name := judgeCmd) "burnqed_judge " str str str str str str str num* ident* : command

meta def idents (a : Array Syntax) : Nat → List Name → List Name
  | 0, acc => acc
  | k + 1, acc => idents a k ((a.getD k Syntax.missing).getId :: acc)

meta def pairs (a : Array Syntax) : Nat → List (Nat × Nat) → List (Nat × Nat)
  | 0, acc => acc
  | 1, acc => acc
  | k + 2, acc => pairs a k (((a.getD k .missing).isNatLit?.getD 0, (a.getD (k + 1) .missing).isNatLit?.getD 0) :: acc)

/-- `burnqed_judge "nonce" "mode" "trust" "module" "preamble" "expected" "candidate" (line col)* name*` -/
@[command_elab judgeCmd] public meta def elabJudge : CommandElab := fun stx => do
  let arg (i : Nat) := ((stx.getArg i).isStrLit?).getD ""
  let env ← getEnv
  let ctx ← read
  let opts := match (← get).scopes with
    | sc :: _ => sc.opts
    | [] => {}
  let ps := (stx.getArg 8).getArgs
  let ids := (stx.getArg 9).getArgs
  let out ← judge env ctx.fileName opts (arg 1) (arg 2) (arg 3) (arg 4) (arg 5) (arg 6) (arg 7)
    (pairs ps (ps.size - ps.size % 2) []) (idents ids ids.size [])
  addInfo out

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
  let nonce := ((stx.getArg 1).isStrLit?).getD ""
  let cs := (stx.getArg 2).getArgs
  addInfo (nonce ++ nets (appS ("v2" :: seqAll (← getEnv) cs cs.size []) ["end"]))

/-! ## The goal reader of a batch block -/

open Tactic in
meta def stepMessage (text : String) : TacticM Unit := do
  let ref ← getRef
  let msg : Message := { fileName := (← getFileName), pos := (← getFileMap).toPosition (ref.getPos?.getD 0),
                         severity := .information, data := .ofFormat (.text text) }
  modifyThe Core.State fun st => { st with messages := st.messages.add msg }

meta def keepHyps (lctx : LocalContext) (a : Array Expr) : Nat → List Expr → List Expr
  | 0, acc => acc
  | k + 1, acc =>
    let e := a.getD k (.bvar 0)
    match lctx.find? e.fvarId! with
    | some d => if d.isImplementationDetail then keepHyps lctx a k acc else keepHyps lctx a k (e :: acc)
    | none => keepHyps lctx a k acc

/-- The verdict on a step's proof term `V : T` (closed: the statement's
binders abstracted), with the candidate's auxiliary declarations (those
`before` lacks) replayed through the kernel onto `before`'s: ok or why not,
and the leaves of its axioms. -/
meta def stepVerdict (before after : Environment) (lps : List Name) (T V : Expr) : List String :=
  let us := V.getUsedConstants
  let ts := T.getUsedConstants
  match closure after (fun d => before.contains d) 100000 (app (arrList us us.size []) (arrList ts ts.size [])) [] with
  | .error e => ["closure", e, "0"]
  | .ok ns => match replayAll after ns before.toKernelEnv with
    | .error e => ["kernel", e, "0"]
    | .ok k =>
      let d : Declaration := .thmDecl { name := `BurnqedJudge.stepCheck, levelParams := lps, type := T, value := V }
      match kadd k d `BurnqedJudge.stepCheck with
      | .error e => ["kernel", e, "0"]
      | .ok k' => let ls := leaves before k' 1000000 [`BurnqedJudge.stepCheck] {} []; "ok" :: "" :: toString (lenS ls) :: ls

syntax (name := stepTac) "burnqed_step " str num ppLine tacticSeq : tactic

/-- `burnqed_step "nonce" k <tactics>`: the block's candidate as a nested
tactic sequence of its own. After it, this code reports the goals left (as
Lean prints them) in one message (the nonce, then netstrings), whatever
layout the candidate has: nothing follows the candidate in the block for a
focusing tactic to capture. When no goal is left, the proof term is replayed
through the kernel (with the auxiliary declarations the candidate made) and
the leaves of its axioms are reported; else the leaves of the partial term's
constants. -/
@[tactic stepTac] public meta def evalStep : Tactic.Tactic := fun stx => do
  let nonce := ((stx.getArg 1).isStrLit?).getD ""
  let idx := ((stx.getArg 2).isNatLit?).getD 0
  let root ← match (← get).goals with
    | g :: _ => pure g
    | [] => throwError "burnqed_step: no goals"
  let before ← getEnv
  let say (fs : List String) := stepMessage (nonce ++ nets (appS ("v2" :: toString idx :: fs) ["end"]))
  -- A failing candidate throws: Lean reports its error in the block (no answer
  -- of this reader is needed). (No `try … catch` here: `Tactic.tryCatch` needs
  -- a helper the exported-level library lacks, `saveState._redArg`.)
  Tactic.evalTactic (stx.getArg 3)
  let gs ← Tactic.getUnsolvedGoals
  let after ← getEnv
  let opts ← getOptions
  let strs ← ppGoals after opts (← getMCtx) gs
  let pf ← instantiateMVars (mkMVar root)
  let ty ← instantiateMVars (← root.getType)
  let lctx := (← root.getDecl).lctx
  let xs := (keepHyps lctx lctx.getFVars lctx.getFVars.size []).toArray
  let T := lctx.mkForall xs ty
  let V := lctx.mkLambda xs pf
  let closed := match gs with
    | [] => true
    | _ => false
  let verdict := if closed then
      let lps := (collectLevelParams (collectLevelParams {} T) V).params
      stepVerdict before after (arrList lps lps.size []) T V
    else
      let us := V.getUsedConstants
      let ls := leaves before after.toKernelEnv 1000000 (arrList us us.size []) {} []
      "open" :: "" :: toString (lenS ls) :: ls
  say (appS ["ok", toString (lenS strs)] (appS strs verdict))


burnqed_store_init

end BurnqedJudge
