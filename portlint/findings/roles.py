"""The role step: a finding in a file that is not library code (a test, a benchmark, an
example, a conversion tool, a script; portlint/index/roles.py decides which) is a note.

Applied once per file, in the engine's post-processing beside the guard and target steps,
so the command line, the language server and stdin scans all see the same severities. The
finding keeps the role (`Finding.role`: the JSON `role` key, the SARIF `role` property);
the text summary and the migration report count these notes apart, and at the default fail
level (warning) they never set the exit code. `roles` in the config can make any path
library code again (`{ "tools/**" = "library" }`).

Kept as they are, whatever the role (rules/vocabulary/file_roles.toml says why): findings in
CUDA/C++ sources, which the project's build compiles for ROCm wherever they sit (but for the
tests of a bundled project the package's build never configures: FileRole.never_built), and the
tool's own findings (internal errors, suppression hygiene)."""

from __future__ import annotations

from portlint.core.catalog import load_rules
from portlint.core.model import Finding, Severity
from portlint.core.vocabulary import file_roles
from portlint.index.roles import MAIN_BLOCK_ROLE, main_block, role_of


def demote_by_role(ctx, findings: list[Finding]) -> None:
    """Turn the findings of a non-library file into notes that name its role; in a library
    module, those of its `if __name__ == "__main__":` block (a script's)."""
    if not findings:
        return
    vocab = file_roles()
    role = role_of(ctx)
    block = None
    if role.library:
        block = main_block(ctx)
        if block is None:
            return
        role = MAIN_BLOCK_ROLE
    elif ctx.language in vocab.keep_severity_languages and role.name not in vocab.every_language \
            and not role.never_built:
        return
    rules = load_rules()
    for f in findings:
        rule = rules.get(f.rule_id)
        if rule is not None and rule.family in vocab.keep_severity_families:
            continue
        if block is not None and not block[0] <= f.span.start_line <= block[1]:
            continue
        f.role = role.name
        note = f"a note, not a blocker: {role.name} code ({role.why}); `roles` in the config can make it library code"
        f.suggestion = note + ("\n" + f.suggestion if f.suggestion else "")
        f.targets = {t: Severity.NOTE for t in f.targets}
        f.severity = Severity.NOTE
