"""Derive labels for tests/realcode/dynamo/ from torch._dynamo's graph breaks (issue 24, item 3).

An oracle nobody labelled: small random-weight models of Hugging Face transformers are run
under `torch._dynamo.explain` -- (a) a train-mode forward with labels, so the loss is
computed, and (b) `model.generate` with greedy search, beam search and sampling. Every graph
break dynamo reports is a site where tracing could not keep the computation in one graph (a
`Tensor.item()`, a Python branch on a tensor value, an operator whose output shape depends on
the data, ...): the sites XLA's lazy tracing cannot keep on the device either. The innermost
frame of a break that lies inside transformers' own source becomes a `flag` label.

The traps (`quiet` labels) come from the same run, mechanically: the source lines of the
operators dynamo *did* capture into its graphs (each FX node's recorded stack trace), inside
the same functions as the breaks, that are not breaks themselves. dynamo traced through them
without leaving the graph, so they are device code a tracer keeps. The script picks them, not
a person: per function, captured lines in source order, spread evenly, as many as that
function has flag labels.

Run it in its own virtual environment, never portlint's (this script imports and runs the
library -- that is the oracle's job; portlint never imports the trees it scans):

    python3.11 -m venv /tmp/dynamo-venv
    /tmp/dynamo-venv/bin/pip install torch==2.13.0 transformers==4.46.3
    /tmp/dynamo-venv/bin/python scripts/derive_dynamo_labels.py \
        --tree tests/realcode/dynamo/trees/transformers-4.46.3 \
        --out tests/realcode/dynamo/labels.csv --breaks tests/realcode/dynamo/breaks.csv

The tree is the pinned sdist (tests/realcode/dynamo/packages.toml); every labelled file of
the installed package is compared byte for byte with the tree's copy, so the line numbers are
the tree's.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import re
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch._dynamo
import transformers

PACKAGE = Path(transformers.__file__).resolve().parent  # .../site-packages/transformers
SEED = 0


# --------------------------------------------------------------------------- models

def tiny_models():
    """(name, causal?, constructor) of the architectures measured; every config is tiny."""
    from transformers import (BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel, LlamaConfig,
                              LlamaForCausalLM, MixtralConfig, MixtralForCausalLM, OPTConfig, OPTForCausalLM,
                              T5Config, T5ForConditionalGeneration)
    vocab = 128
    return [
        ("gpt2", "causal", lambda: GPT2LMHeadModel(GPT2Config(
            vocab_size=vocab, n_positions=64, n_embd=32, n_layer=2, n_head=2))),
        ("llama", "causal", lambda: LlamaForCausalLM(LlamaConfig(
            vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64))),
        # a mixture of experts: the router's token-to-expert dispatch is data-dependent
        ("mixtral", "causal", lambda: MixtralForCausalLM(MixtralConfig(
            vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, sliding_window=16,
            num_local_experts=4, num_experts_per_tok=2))),
        ("opt", "causal", lambda: OPTForCausalLM(OPTConfig(
            vocab_size=vocab, hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=2,
            max_position_embeddings=64, word_embed_proj_dim=32))),
        ("t5", "seq2seq", lambda: T5ForConditionalGeneration(T5Config(
            vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
            decoder_start_token_id=0, pad_token_id=0, eos_token_id=1))),
        ("bert", "masked", lambda: BertForMaskedLM(BertConfig(
            vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64))),
    ]


def phases(kind: str):
    """(phase, runner(model) -> callable and its kwargs) for one kind of model."""
    g = torch.Generator().manual_seed(SEED)
    ids = torch.randint(2, 128, (2, 8), generator=g)
    mask = torch.ones_like(ids)
    mask[1, :2] = 0  # one padded row, so attention-mask code runs its padded path

    def train(model):
        model.train()
        if kind == "seq2seq":
            return model, dict(input_ids=ids, attention_mask=mask, labels=torch.randint(2, 128, (2, 5), generator=g))
        return model, dict(input_ids=ids, attention_mask=mask, labels=ids.clone())

    out = [("train", train)]
    if kind == "masked":
        return out  # an encoder: no generate

    def gen(**how):
        def run(model):
            model.eval()
            from transformers import GenerationConfig
            # a config object, not loose keywords: generate's keyword split runs under dynamo too
            config = GenerationConfig(max_new_tokens=3, min_new_tokens=1, pad_token_id=0, eos_token_id=1,
                                      decoder_start_token_id=0 if kind == "seq2seq" else None, **how)
            return model.generate, dict(input_ids=ids, attention_mask=mask, generation_config=config)
        return run

    # each mode with a logits processor or two, so their per-step calls run as generate makes them
    out += [
        ("generate-greedy", gen(do_sample=False, num_beams=1, repetition_penalty=1.2, no_repeat_ngram_size=2)),
        ("generate-beam", gen(do_sample=False, num_beams=2, early_stopping=True, num_return_sequences=2,
                              length_penalty=0.8, no_repeat_ngram_size=2)),
        ("generate-group-beam", gen(do_sample=False, num_beams=4, num_beam_groups=2, diversity_penalty=0.5)),
        ("generate-sample", gen(do_sample=True, top_k=8, top_p=0.9, temperature=0.8, repetition_penalty=1.2)),
    ]
    return out


# --------------------------------------------------------------------------- explain

def in_package(filename: str) -> str | None:
    """The path relative to the transformers package of a frame's file, or None outside it."""
    try:
        return Path(filename).resolve().relative_to(PACKAGE).as_posix()
    except ValueError:
        return None


def innermost_own(frames) -> tuple[str, int] | None:
    """The innermost frame of a stack (outermost first) that lies in transformers' source."""
    for fr in reversed(list(frames)):
        rel = in_package(fr.filename)
        if rel is not None:
            return rel, fr.lineno
    return None


STACK_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def captured_lines(graphs) -> set[tuple[str, int]]:
    """(file, line) of the innermost transformers frame of every captured FX node."""
    out = set()
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op not in ("call_function", "call_method", "call_module"):
                continue
            trace = node.meta.get("stack_trace") or ""
            own = None
            for path, line in STACK_LINE.findall(trace):
                rel = in_package(path)
                if rel is not None:
                    own = (rel, int(line))  # frames print outermost first: keep the last
            if own:
                out.add(own)
    return out


def short_reason(reason: str) -> str:
    """A one-line form of dynamo's break reason."""
    text = " ".join(reason.split())
    text = text.split(" The branch condition involves")[0]  # the tensor's provenance: long, and paths
    text = re.sub(r'/\S*/site-packages/', '', text).replace('"', "'")
    return text[:240]


def kind_of(reason: str) -> str:
    r = reason.lower()
    if "_local_scalar_dense" in r or "data dependent operator" in r:
        return "Tensor.item / scalar output"  # .item(), .tolist(), int()/float() of a tensor
    if "item" in r and ("tensor.item" in r or "scalar" in r or "capture_scalar_outputs" in r):
        return "Tensor.item / scalar output"
    if "dynamic shape operator" in r or "capture_dynamic_output_shape_ops" in r or "data-dependent output shape" in r \
            or "dynamic_output_shape" in r:
        return "dynamic-shape operator"
    if "data-dependent" in r or "generic_jump" in r or "jump" in r or "data dependent" in r:
        return "data-dependent jump"
    if "tolist" in r or "numpy" in r:
        return "tensor to Python/numpy"
    if "unsupported" in r or "skip" in r or "not supported" in r:
        return "unsupported call"
    return "other"


# the break kinds that are XLA's too: a device value read or branched on by the host, or a shape
# that depends on the data
DEVICE_KINDS = {"Tensor.item / scalar output", "dynamic-shape operator", "data-dependent jump",
                "tensor to Python/numpy"}


@dataclass
class Break:
    file: str
    line: int
    reasons: Counter = field(default_factory=Counter)
    where: set = field(default_factory=set)  # "model phase"


def eager_paths() -> int:
    """Make transformers take the code paths it takes outside torch.compile.

    transformers asks `is_torchdynamo_compiling()` and, under dynamo, skips its data-dependent
    shortcuts (`torch.all(mask == 1)` before dropping a causal mask, ...). torch_xla's lazy
    tracing never answers yes there, so the oracle must see the eager paths: every module's
    imported copy of the function is replaced by one that says no. Returns how many were."""
    def no() -> bool:
        return False
    n = 0
    for name, mod in list(sys.modules.items()):
        if (name == "transformers" or name.startswith("transformers.")) and mod is not None:
            if callable(mod.__dict__.get("is_torchdynamo_compiling")):
                mod.is_torchdynamo_compiling = no
                n += 1
    return n


def explain_all(only: set[str] | None, eager: bool = True) -> tuple[dict, dict, dict]:
    """Run every model/phase; return breaks by (file, line), captured lines, per-run counts."""
    breaks: dict[tuple[str, int], Break] = {}
    captured: dict[tuple[str, int], set] = defaultdict(set)
    per_run: dict[str, dict] = {}
    for name, kind, build in tiny_models():
        if only and name not in only:
            continue
        torch.manual_seed(SEED)
        model = build()
        if eager:
            print(f"{name}: is_torchdynamo_compiling patched in {eager_paths()} modules", file=sys.stderr)
        for phase, runner in phases(kind):
            torch._dynamo.reset()
            torch.manual_seed(SEED)
            fn, kwargs = runner(model)
            tag = f"{name} {phase}"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    report = torch._dynamo.explain(fn)(**kwargs)
            except Exception as exc:  # a run that fails is reported, never silently dropped
                print(f"{tag}: explain failed: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr)
                per_run[tag] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
                continue
            own = outside = 0
            kinds = Counter()
            for br in report.break_reasons:
                site = innermost_own(br.user_stack)
                if site is None:
                    outside += 1
                    continue
                own += 1
                b = breaks.setdefault(site, Break(*site))
                b.reasons[short_reason(br.reason)] += 1
                b.where.add(tag)
                kinds[kind_of(br.reason)] += 1
            for site in captured_lines(report.graphs):
                captured[site].add(tag)
            per_run[tag] = {"graphs": report.graph_count, "breaks": report.graph_break_count,
                            "own": own, "outside": outside, "kinds": dict(kinds),
                            "sites": len({innermost_own(br.user_stack) for br in report.break_reasons} - {None})}
            print(f"{tag}: {report.graph_count} graphs, {report.graph_break_count} breaks, "
                  f"{own} in transformers at {per_run[tag]['sites']} sites, {outside} outside; {dict(kinds)}",
                  file=sys.stderr)
    return breaks, captured, per_run


# --------------------------------------------------------------------------- source spans

class Source:
    """Statements and functions of one file of the tree, for spans and enclosing functions."""

    def __init__(self, path: Path):
        self.text = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.text)
        self.stmts: list[ast.stmt] = [n for n in ast.walk(self.tree) if isinstance(n, ast.stmt)]
        self.funcs = [n for n in ast.walk(self.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def span(self, line: int) -> tuple[int, int] | None:
        """The lines of the innermost statement holding `line`; for a compound statement
        (if/for/while/with/...), only its header. None for a def/class header or no statement."""
        best = None
        for s in self.stmts:
            if s.lineno <= line <= (s.end_lineno or s.lineno):
                if best is None or (s.lineno >= best.lineno and (s.end_lineno or 0) <= (best.end_lineno or 0)):
                    best = s
        if best is None or isinstance(best, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        body = getattr(best, "body", None)
        if isinstance(body, list) and body:
            header_end = body[0].lineno - 1
            # the header ends at its own expression, not at comments before the body
            for attr in ("test", "iter", "items", "subject"):
                node = getattr(best, attr, None)
                if isinstance(node, list) and node:
                    header_end = max(n.end_lineno for n in node)
                elif isinstance(node, ast.AST):
                    header_end = node.end_lineno
            if line > header_end:
                return None  # an else/elif line or a line between header and body
            return best.lineno, header_end
        return best.lineno, best.end_lineno or best.lineno

    def function(self, line: int) -> tuple[int, int] | None:
        """(first, last) line of the innermost function holding `line`."""
        best = None
        for f in self.funcs:
            if f.lineno <= line <= f.end_lineno:
                if best is None or f.lineno >= best.lineno:
                    best = f
        return (best.lineno, best.end_lineno) if best else None


# --------------------------------------------------------------------------- labels

def spread(items: list, k: int) -> list:
    """k items spread evenly over a sorted list (deterministic)."""
    if k >= len(items):
        return list(items)
    step = len(items) / k
    return [items[int(i * step + step / 2)] for i in range(k)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, required=True, help="the unpacked transformers-4.46.3 sdist")
    ap.add_argument("--out", type=Path, required=True, help="labels.csv to write")
    ap.add_argument("--breaks", type=Path, help="also write every break site with counts here")
    ap.add_argument("--models", default="", help="comma-separated subset of the models")
    ap.add_argument("--mode", default="trainium")
    ap.add_argument("--compile-paths", action="store_true",
                    help="leave is_torchdynamo_compiling alone (the torch.compile paths, not XLA's)")
    args = ap.parse_args(argv)

    package = args.tree.name  # NAME-VERSION
    if package != f"transformers-{transformers.__version__}":
        raise SystemExit(f"tree {package} is not the installed transformers {transformers.__version__}")
    src_root = args.tree / "src" / "transformers"

    breaks, captured, per_run = explain_all(set(filter(None, args.models.split(","))), eager=not args.compile_paths)

    sources: dict[str, Source] = {}

    def source(rel: str) -> Source | None:
        if rel not in sources:
            tree_file = src_root / rel
            if not tree_file.is_file():
                sources[rel] = None
            else:
                if tree_file.read_bytes() != (PACKAGE / rel).read_bytes():
                    raise SystemExit(f"{rel}: the installed file differs from the tree's copy")
                sources[rel] = Source(tree_file)
        return sources[rel]

    # flags: one per statement span, reasons and runs merged
    flags: dict[tuple[str, tuple[int, int]], list[Break]] = defaultdict(list)
    dropped = Counter()
    for (rel, line), b in sorted(breaks.items()):
        if kind_of(b.reasons.most_common(1)[0][0]) not in DEVICE_KINDS:
            # a limit of dynamo's tracer (a logger call, an unsupported builtin), not a device
            # value read on the host: kept in breaks.csv, not a label
            dropped["not a device-value break"] += 1
            print(f"drop {rel}:{line}: {b.reasons.most_common(1)[0][0][:100]}", file=sys.stderr)
            continue
        s = source(rel)
        if s is None:
            dropped["file not in the tree"] += 1
            continue
        sp = s.span(line)
        if sp is None:
            dropped["not on a statement line"] += 1
            print(f"drop {rel}:{line}: not a statement line ({b.reasons.most_common(1)[0][0][:80]})", file=sys.stderr)
            continue
        flags[(rel, sp)].append(b)

    # quiet: captured lines of the same functions, not overlapping any flag span
    taken: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for rel, sp in flags:
        taken[rel].append(sp)

    def free(rel, sp):
        return all(sp[1] < a or sp[0] > b for a, b in taken[rel])

    per_func: dict[tuple[str, tuple[int, int]], int] = Counter()
    for rel, sp in flags:
        fn = source(rel).function(sp[0])
        if fn:
            per_func[(rel, fn)] += 1
    quiet: list[tuple[str, tuple[int, int], set]] = []
    short = 0
    for (rel, fn), want in sorted(per_func.items()):
        s = source(rel)
        cands = {}
        for (crel, line), tags in captured.items():
            if crel != rel or not (fn[0] < line <= fn[1]) or (rel, line) in breaks:
                continue
            sp = s.span(line)
            if sp is None or s.function(sp[0]) != fn:
                continue
            cands.setdefault(sp, set()).update(tags)
        ordered = [sp for sp in sorted(cands) if free(rel, sp)]
        # spans of one function may nest or touch: keep the first of any that overlap
        kept = []
        for sp in ordered:
            if all(sp[1] < a or sp[0] > b for a, b in kept):
                kept.append(sp)
        chosen = spread(kept, want)
        short += want - len(chosen)
        for sp in chosen:
            taken[rel].append(sp)
            quiet.append((rel, sp, cands[sp]))

    rows = []
    for (rel, sp), bs in sorted(flags.items()):
        reasons = Counter()
        where = set()
        for b in bs:
            reasons.update(b.reasons)
            where |= b.where
        top = reasons.most_common(1)[0][0]
        runs = ", ".join(sorted(where))
        why = f"dynamo graph break: {top} [{kind_of(top)}; seen in: {runs}]"
        rows.append(dict(package=package, file=f"src/transformers/{rel}", line=span_text(sp), expect="flag",
                         rules="PTL8", mode=args.mode, why=why))
    for rel, sp, tags in sorted(quiet, key=lambda q: (q[0], q[1])):
        why = (f"dynamo captured this line's operators in its graph without a break (traced in: "
               f"{', '.join(sorted(tags))}), in the same function as a break site")
        rows.append(dict(package=package, file=f"src/transformers/{rel}", line=span_text(sp), expect="quiet",
                         rules="PTL8", mode=args.mode, why=why))
    rows.sort(key=lambda r: (r["file"], int(r["line"].split("-")[0])))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["package", "file", "line", "expect", "rules", "mode", "why"],
                           lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    if args.breaks:
        with open(args.breaks, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(["file", "line", "count", "kind", "runs", "reason"])
            for (rel, line), b in sorted(breaks.items()):
                top = b.reasons.most_common(1)[0][0]
                w.writerow([f"src/transformers/{rel}", line, sum(b.reasons.values()), kind_of(top),
                            "; ".join(sorted(b.where)), top])

    nflag = sum(r["expect"] == "flag" for r in rows)
    print(f"\n{len(breaks)} break sites in transformers -> {nflag} flag labels "
          f"(dropped: {dict(dropped)}); {len(rows) - nflag} quiet labels ({short} functions' quota unfilled)",
          file=sys.stderr)
    print("per run:", file=sys.stderr)
    for tag, d in per_run.items():
        print(f"  {tag:28} {d}", file=sys.stderr)
    return 0


def span_text(sp: tuple[int, int]) -> str:
    return str(sp[0]) if sp[0] == sp[1] else f"{sp[0]}-{sp[1]}"


if __name__ == "__main__":
    sys.exit(main())
