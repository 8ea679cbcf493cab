"""C++ compute-capability gates that choose an NVIDIA-only path on AMD GPUs (PTL311).

HIP reports the GFX version as the compute capability: MI210 9.0, MI300X/MI325X 9.4,
MI350X/MI355X 9.5. A host-side test written for NVIDIA architectures (`prop.major >= 9`,
`sm >= 90 && sm < 100`, `if (major == 8) ampere(); else hopper();`) therefore sends an AMD
Instinct GPU down the Hopper branch. `gates(ctx)` finds such tests: conditions of `if` /
`while`, `bool` initialisers and `switch` labels over a capability value, which is a
`major`/`minor` member of a device-properties object, a variable filled by
`cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, ...)`, or a variable computed
from these (`int sm = prop.major * 10 + prop.minor;`).

A condition is evaluated for NVIDIA Ampere (8.0), Hopper (9.0), Blackwell (10.0) and the AMD
Instinct values; other operands of the condition (`use_tma`, `n > 128`) are free booleans.
It is a misfiring gate when, for some value of those, an AMD GPU takes the outcome of a
Hopper-or-newer NVIDIA architecture that differs from Ampere's. So `major >= 7` (true on all)
and `major >= 10` (false on every Instinct GPU) stay quiet. Also quiet: gates an AMD build
does not compile (under `#ifndef USE_ROCM`), gates whose condition or function tests the
vendor (`is_hip`, `USE_ROCM`, `gcnArchName`), and gates whose branch only logs.

Conditions are evaluated by a small interpreter over a whitelisted Python syntax tree of the
translated expression; scanned text is never executed."""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass

AMD_INSTINCT = ((9, 4, "MI300X"), (9, 0, "MI210"), (9, 5, "MI355X"))
AMPERE = (8, 0)
NEWER = ((9, 0, "sm_90 (Hopper)"), (10, 0, "sm_100 (Blackwell)"))

_PROP_DECL = re.compile(r"\b(?:cudaDeviceProp|hipDeviceProp_t|hipDeviceProp)\s*(?:const\s*)?[*&]*\s*(\w+)\s*[;=,)\[]")
_ATTR = re.compile(r"\b(?:cudaDeviceGetAttribute|hipDeviceGetAttribute|cuDeviceGetAttribute)\s*\(\s*&\s*(\w+)\s*,\s*(?:\w+::)*(\w+)")
_MAJOR_ATTR = {"cudaDevAttrComputeCapabilityMajor", "hipDeviceAttributeComputeCapabilityMajor", "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"}
_MINOR_ATTR = {"cudaDevAttrComputeCapabilityMinor", "hipDeviceAttributeComputeCapabilityMinor", "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"}
_ASSIGN = re.compile(r"(?<![\w.>])(\w+)\s*=(?!=)\s*([^;{}]+);")
_PROPS_CALL = re.compile(r"(?:^|::)(?:getCurrentDeviceProperties|getDeviceProperties)\s*\([^()]*\)\s*->\s*(major|minor)$")
_CHAIN = re.compile(r"(?:::)?[A-Za-z_]\w*(?:\s*(?:\.|->|::)\s*[A-Za-z_]\w*|\s*\([^()]*\))*")
_TOKEN = re.compile(r"\s*(?:(\d+)[uUlL]*|(&&|\|\||==|!=|<=|>=|<<|>>|[<>!+\-*/%()])|(\S))")
_VENDOR = re.compile(r"hip|rocm|amd|gcnArch|__HIP|HIP_PLATFORM", re.I)
_LOGGING = re.compile(r"^\s*(?:std::)?(?:printf|fprintf|puts|cout|cerr|clog|LOG\w*|VLOG|DLOG|TORCH_WARN\w*|spdlog::\w+|fmt::print|std::cout|std::cerr)\b")
_LOG_CALL = re.compile(r"\b(?:printf|fprintf|puts|LOG\w*|VLOG|TORCH_WARN\w*|fmt::print|spdlog::\w+)\s*\(|\bstd::(?:cout|cerr)\b")
_CONDITION = re.compile(r"\b(if|while)\s*\(")
_BOOL_INIT = re.compile(r"\b(?:const\s+|static\s+)*bool\s+(\w+)\s*=\s*([^;{}]+);")
_SWITCH = re.compile(r"\bswitch\s*\(")
_RETURN = re.compile(r"\breturn\s+([^;{}]+);")
_FUNCTION = re.compile(r"\b(\w+)\s*\([^(){};]*\)\s*(?:const\s*)?(?:noexcept\s*)?\{")
_KEYWORDS = {"if", "while", "for", "switch", "catch", "return", "sizeof", "decltype", "alignof"}


@dataclass(frozen=True)
class Gate:
    start: int  # offsets of the condition in the file
    end: int
    expr: str
    nvidia: str  # the NVIDIA architecture whose outcome the AMD GPU takes
    amd: str  # e.g. "MI300X (9.4)"
    effect: str


def _balanced(code: str, open_at: int) -> int:
    """Offset just past the parenthesis or brace that closes the one at `open_at`."""
    pair = {"(": ")", "{": "}"}[code[open_at]]
    depth = 0
    for i in range(open_at, len(code)):
        ch = code[i]
        if ch == code[open_at]:
            depth += 1
        elif ch == pair:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(code)


class _Facts:
    """What the file says about capability values: which names hold device properties, and
    the expression each variable was last given before a point."""

    def __init__(self, code: str):
        self.props = set(_PROP_DECL.findall(code))
        self.assigns: dict[str, list[tuple[int, str]]] = {}
        for m in _ATTR.finditer(code):
            kind = "M" if m.group(2) in _MAJOR_ATTR else "m" if m.group(2) in _MINOR_ATTR else None
            if kind:
                self.assigns.setdefault(m.group(1), []).append((m.start(), f"@{kind}"))
        for m in _ASSIGN.finditer(code):
            self.assigns.setdefault(m.group(1), []).append((m.start(), m.group(2).strip()))
        for v in self.assigns.values():
            v.sort()
        # helpers that compute a capability value (`int sm_version() { ...; return major * 10
        # + minor; }`): a call to one reads as the expression it returns
        self.helpers: dict[str, str] = {}
        for m in _FUNCTION.finditer(code):
            if m.group(1) in _KEYWORDS:
                continue
            body_end = _balanced(code, m.end() - 1)
            returns = list(_RETURN.finditer(code, m.end(), body_end))
            if len(returns) != 1 or re.search(r"[<>=!]=|[<>]|&&|\|\|", returns[0].group(1)):
                continue  # a helper returning a comparison is a gate itself (reported at its return)
            inner = translate(returns[0].group(1), self, returns[0].start())
            if inner is not None and ("M" in inner or "m" in inner):
                self.helpers[m.group(1)] = inner

    def value_of(self, name: str, at: int) -> str | None:
        best = None
        for pos, expr in self.assigns.get(name, ()):
            if pos < at:
                best = expr
        return best

    def atom(self, chain: str, at: int, depth: int = 0) -> str | None:
        """The translation of one name chain: "M" / "m" (major / minor), a parenthesised
        translated expression for a variable computed from them, or None."""
        flat = re.sub(r"\s+", "", chain)
        m = re.fullmatch(r"(\w+)(?:\.|->)(major|minor)", flat)
        if m and m.group(1) in self.props:
            return "M" if m.group(2) == "major" else "m"
        if _PROPS_CALL.search(chain.strip()):
            return "M" if flat.endswith("major") else "m"
        call = re.fullmatch(r"(?:\w+::)*(\w+)\(\w*\)", flat)
        if call and call.group(1) in getattr(self, "helpers", {}):
            return f"({self.helpers[call.group(1)]})"
        if re.fullmatch(r"\w+", flat) and depth < 4:
            expr = self.value_of(flat, at)
            if expr is None:
                return None
            if expr in ("@M", "@m"):
                return expr[1]
            if re.search(r"[<>=!]=|[<>]|&&|\|\|", expr):
                return None  # a bool computed from a gate: the gate itself is reported
            inner = translate(expr, self, at, depth + 1)
            return f"({inner})" if inner is not None and ("M" in inner or "m" in inner) else None
        return None


def translate(expr: str, facts: _Facts, at: int, depth: int = 0) -> str | None:
    """The C condition as a Python expression over M, m and free names u0, u1, ...; None when
    it cannot be read."""
    out: list[str] = []
    pos = 0
    unknown = 0
    while pos < len(expr):
        if expr[pos].isspace():
            pos += 1
            continue
        m = _CHAIN.match(expr, pos)
        if m and m.end() > pos:
            a = facts.atom(m.group(0), at, depth)
            if a is None:
                out.append(f"u{unknown}")
                unknown += 1
            else:
                out.append(a)
            pos = m.end()
            continue
        t = _TOKEN.match(expr, pos)
        if t is None:
            break
        if t.group(3):
            return None  # ?:, [], casts and the like: not a plain condition
        if t.group(1):
            out.append(t.group(1))
        elif t.group(2):
            out.append({"&&": " and ", "||": " or ", "!": " not ", "/": "//"}.get(t.group(2), t.group(2)))
        pos = t.end()
    return "".join(out)


_ALLOWED = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.BinOp, ast.Add, ast.Sub,
            ast.Mult, ast.FloorDiv, ast.Mod, ast.Compare, ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq, ast.NotEq,
            ast.Constant, ast.Name, ast.Load)


def _uses_capability(node) -> bool:
    return any(isinstance(n, ast.Name) and n.id in ("M", "m") for n in ast.walk(node))


def _free_leaves(node, out: list) -> None:
    """Sub-expressions without M/m that act as booleans: each one is a free variable."""
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            _free_leaves(v, out)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _free_leaves(node.operand, out)
    elif not _uses_capability(node):
        out.append(node)


def _eval(node, env: dict, free: dict):
    if id(node) in free:
        return free[id(node)]
    if isinstance(node, ast.Expression):
        return _eval(node.body, env, free)
    if isinstance(node, ast.BoolOp):
        vals = [bool(_eval(v, env, free)) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, free)
        return (not v) if isinstance(node.op, ast.Not) else -v
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env, free), _eval(node.right, env, free)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if b == 0:
            raise ValueError("division by zero")
        return a // b if isinstance(node.op, ast.FloorDiv) else a % b
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, free)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env, free)
            ok = {ast.Gt: left > right, ast.GtE: left >= right, ast.Lt: left < right, ast.LtE: left <= right,
                  ast.Eq: left == right, ast.NotEq: left != right}[type(op)]
            if not ok:
                return False
            left = right
        return True
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    raise ValueError("not a capability expression")


def misfire(py: str) -> tuple[str, str] | None:
    """(NVIDIA architecture, AMD GPU) when some AMD Instinct GPU gets the outcome of a
    Hopper-or-newer architecture that differs from Ampere's; None otherwise."""
    try:
        tree = ast.parse(py.strip(), mode="eval")
    except SyntaxError:
        return None
    if not all(isinstance(n, _ALLOWED) for n in ast.walk(tree)) or not _uses_capability(tree):
        return None
    if not any(isinstance(n, ast.Compare) and _uses_capability(n) for n in ast.walk(tree)):
        return None
    leaves: list = []
    _free_leaves(tree.body, leaves)
    if len(leaves) > 6:
        return None
    try:
        for values in itertools.product((False, True), repeat=len(leaves)):
            free = {id(n): v for n, v in zip(leaves, values)}

            def f(major: int, minor: int) -> bool:
                return bool(_eval(tree, {"M": major, "m": minor}, free))

            ampere = f(*AMPERE)
            for nv_major, nv_minor, nv_name in NEWER:
                target = f(nv_major, nv_minor)
                if target == ampere:
                    continue
                for a_major, a_minor, a_name in AMD_INSTINCT:
                    if f(a_major, a_minor) == target:
                        return nv_name, f"{a_name} ({a_major}.{a_minor})"
    except (ValueError, TypeError, KeyError):
        return None
    return None


def _only_logs(code: str, after: int) -> bool:
    """The statement or block after `after` (an if condition) only logs, with no else."""
    i = after
    while i < len(code) and code[i].isspace():
        i += 1
    if i >= len(code):
        return False
    if code[i] == "{":
        end = _balanced(code, i)
        body = code[i + 1 : end - 1]
    else:
        end = code.find(";", i)
        end = len(code) if end < 0 else end + 1
        body = code[i:end]
    if re.match(r"\s*else\b", code[end:]):
        return False
    stmts = [s for s in re.split(r";", body) if s.strip()]
    return bool(stmts) and all(_LOGGING.match(s) for s in stmts)


def _inside_log_call(code: str, at: int) -> bool:
    line_start = code.rfind("\n", 0, at) + 1
    for m in _LOG_CALL.finditer(code, max(0, line_start - 200), at):
        if m.group(0).endswith("("):
            if _balanced(code, m.end() - 1) > at:
                return True
        elif code.find(";", m.end(), at) < 0:
            return True  # a std::cout << ... chain that has not ended
    return False


class _Blocks:
    """The opening offset of the top-level block (function body) around any offset."""

    def __init__(self, code: str):
        self.starts: list[tuple[int, int]] = []  # (open, close) of top-level braces
        depth, open_at = 0, -1
        for i, ch in enumerate(code):
            if ch == "{":
                if depth == 0:
                    open_at = i
                depth += 1
            elif ch == "}" and depth > 0:
                depth -= 1
                if depth == 0:
                    self.starts.append((open_at, i))

    def start_of(self, at: int) -> int:
        for a, b in self.starts:
            if a <= at <= b:
                return a
        return 0


_VENDOR_TEST_BEFORE = re.compile(r"#\s*if\w*[^\n]*(?:HIP|ROCM|AMD)|\bif\s*\([^)]*(?:hip|rocm|amd|gcnArch|HIP|ROCM|AMD)", re.I)


def gates(ctx) -> list[Gate]:
    """ctx.fact(gates): the misfiring capability gates of a CUDA/C++ file."""
    from portlint.frontends.cuda.guards import guard_map
    from portlint.frontends.cuda.symbols import code_text

    ct = ctx.fact(code_text)
    code = ct.code
    if "major" not in code and "ComputeCapability" not in code and "COMPUTE_CAPABILITY" not in code:
        return []
    facts = _Facts(code)
    guards = ctx.fact(guard_map)
    blocks = _Blocks(code)
    raw = ctx.text
    candidates: list[tuple[int, int, str, int | None]] = []  # (start, end, expr, condition end for if)
    for m in _CONDITION.finditer(code):
        close = _balanced(code, m.end() - 1)
        candidates.append((m.end(), close - 1, code[m.end() : close - 1], close if m.group(1) == "if" else None))
    for m in _BOOL_INIT.finditer(code):
        uses = [u for u in re.finditer(r"\b" + re.escape(m.group(1)) + r"\b", code[m.end() :])]
        if uses and all(_inside_log_call(code, m.end() + u.start()) for u in uses):
            continue  # the flag is only printed
        candidates.append((m.start(2), m.end(2), m.group(2), None))
    for m in _RETURN.finditer(code):
        # `return prop.major >= 9;`: a helper whose answer is the gate (its callers branch on it)
        candidates.append((m.start(1), m.end(1), m.group(1), None))
    for m in _SWITCH.finditer(code):
        close = _balanced(code, m.end() - 1)
        subject = code[m.end() : close - 1]
        if close < len(code) and code[close:].lstrip().startswith("{"):
            body_at = code.index("{", close)
            body = code[body_at : _balanced(code, body_at)]
            for c in re.finditer(r"\bcase\s+(\d+)\s*:", body):
                candidates.append((m.end(), close - 1, f"({subject}) == {c.group(1)}", None))
    out: list[Gate] = []
    seen: set[int] = set()
    for start, end, expr, if_close in candidates:
        if _VENDOR.search(expr) or not re.search(r"[<>]=?|[!=]=", expr):
            continue
        line = ct.line_of(start)
        if line in seen or guards.dead_for_amd(line) is not None:
            continue
        py = translate(expr, facts, start)
        hit = misfire(py) if py else None
        if hit is None:
            continue
        if _inside_log_call(code, start) or (if_close is not None and _only_logs(code, if_close)):
            continue
        if _VENDOR_TEST_BEFORE.search(code, blocks.start_of(start), start):
            continue  # the function tests the vendor before the gate
        seen.add(line)
        nvidia, amd = hit
        shown = " ".join(raw[start:end].split())
        out.append(Gate(start, end, shown if len(shown) <= 80 else shown[:77] + "...", nvidia, amd, f"takes the {nvidia} branch"))
    return out
